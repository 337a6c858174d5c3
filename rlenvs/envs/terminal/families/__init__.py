"""The procedural terminal task families, by name. Adding a family: write its generator in
one of these modules (or a new one) and list it in that module's FAMILIES."""

from __future__ import annotations

from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families import files, text

FAMILIES: dict[str, Family] = {family.name: family for family in (*files.FAMILIES, *text.FAMILIES)}
