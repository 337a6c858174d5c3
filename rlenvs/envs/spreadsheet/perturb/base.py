"""What every step of the check shares: reading and writing the changed rows, the
column's step, the one-cycle permutation, and the `Change` base class."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import Area

Sheets = dict[str, list[list[Any]]]


# --- cells of the rows the check changes --------------------------------------------------


def _rows_of(sheets: Sheets, area: Area) -> list[list[Any]]:
    return sheets[area.sheet or next(iter(sheets))]


def _get(rows: list[list[Any]], row: int, col: int) -> Any:
    """The value at 1-based (row, col); None beyond the data."""
    if row - 1 >= len(rows) or col - 1 >= len(rows[row - 1]):
        return None
    return rows[row - 1][col - 1]


def _put(rows: list[list[Any]], row: int, col: int, value: Any) -> None:
    """Set 1-based (row, col), growing the rows with None where they are short."""
    while len(rows) < row:
        rows.append([])
    line = rows[row - 1]
    if len(line) < col:
        line.extend([None] * (col - len(line)))
    line[col - 1] = value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _step(values: Sequence[Any]) -> float:
    """The smallest difference the column's numbers show: 1 for whole numbers, else 0.1 or
    0.01 by the decimals written (so a value put beside a threshold looks like the data)."""
    numbers = [v for v in values if _is_number(v)]
    if all(isinstance(v, int) for v in numbers):
        return 1
    decimals = max((len(repr(float(v)).partition(".")[2]) for v in numbers), default=2)
    return 0.1 if decimals <= 1 else 0.01


def _like(value: float, step: float) -> int | float:
    """A value in the column's kind: whole where the step is 1, else rounded to the step."""
    return round(value) if step == 1 else round(value, 1 if step == 0.1 else 2)


def _cycle(n: int, rng: np.random.Generator) -> list[int]:
    """A permutation of range(n) that is one cycle through all n (Sattolo's algorithm): no
    element stays and no smaller set maps onto itself."""
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(rng.integers(0, i))
        order[i], order[j] = order[j], order[i]
    return order


@dataclass(frozen=True)
class Change:
    """One step of a task's changes; `area` is the range it may write (see the module
    docstring for what each step is for)."""

    area: str

    def apply(self, changed: Sheets, original: Mapping[str, Sequence[Sequence[Any]]], rng: np.random.Generator) -> None:
        raise NotImplementedError
