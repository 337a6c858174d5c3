"""The procedural spreadsheet task families, by name. Adding a family: write its generator in
one of these modules (or a new one) and list it in that module's FAMILIES."""

from __future__ import annotations

from rlenvs.envs.spreadsheet.families import formulas, tables
from rlenvs.envs.spreadsheet.tasks import Family

FAMILIES: dict[str, Family] = {family.name: family for family in (*formulas.FAMILIES, *tables.FAMILIES)}
