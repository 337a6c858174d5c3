"""People's names for procedural tasks: one pool, so that every env's families draw the
same kind of names the same way (a task depends on the pools' order: append, never reorder).
FIRST_NAMES and LAST_NAMES are the common pool; the other pools are those families drew before
this one existed, kept as they were because tests/project/test_task_hashes.py pins the tasks drawn
from them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rlenvs.core.draw import draw_distinct, draw_from

FIRST_NAMES = (
    "Anna", "Ben", "Carlos", "Dana", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    "Kemi", "Lars", "Maya", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Sami", "Tara",
    "Umar", "Vera", "Wei", "Yusuf", "Zoe",
)  # fmt: skip
LAST_NAMES = (
    "Kowalski", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Silva",
    "Brennan", "Fischer", "Ivanova", "Mensah", "Rossi", "Chen", "Patel", "Duarte",
    "Nakamura", "Osei", "Berg", "Keller",
)  # fmt: skip

SHORT_FIRST_NAMES = (
    "Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jo", "Kofi", "Lena",
    "Mia", "Noor", "Omar", "Priya",
)  # fmt: skip
"""Arithmetic-v1's level-4 word problems (rlenvs.envs.math.arithmetic)."""
WIDE_FIRST_NAMES = (
    "Aaliyah", "Anna", "Ben", "Carlos", "Chloe", "Dana", "Elif", "Farid", "Grace", "Hiro",
    "Ines", "Jonas", "Kemi", "Lars", "Liam", "Maya", "Nikhil", "Olga", "Pedro", "Priya",
    "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wei", "Yusuf", "Zoe", "Mateo",
)  # fmt: skip
WIDE_LAST_NAMES = (
    *LAST_NAMES, "Alvarez", "Nguyen", "Schmidt", "Jensen", "Hughes", "Romano", "Dubois", "Costa", "Sato", "Ward",
)  # fmt: skip
"""Spreadsheet-v1's table families (rlenvs.envs.spreadsheet.families.table_pools), with WIDE_FIRST_NAMES."""


def person(rng: np.random.Generator, first: Sequence[str] = FIRST_NAMES, last: Sequence[str] = LAST_NAMES) -> str:
    """ "First Last", the first name drawn first."""
    return f"{draw_from(rng, first)} {draw_from(rng, last)}"


def people(
    rng: np.random.Generator, count: int, first: Sequence[str] = FIRST_NAMES, last: Sequence[str] = LAST_NAMES
) -> list[str]:
    """`count` different full names, in the order drawn."""
    return draw_distinct(lambda: person(rng, first, last), count)
