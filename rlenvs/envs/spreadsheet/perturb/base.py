"""What every step of the check shares: reading and writing the changed rows, the
column's step, the one-cycle permutation, which copy of an episode is being made (`Copy`),
and the `Change` base class."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from rlenvs.envs.spreadsheet.actions import Area

Sheets = dict[str, list[list[Any]]]
"""A changed copy being made: rows of cell values, sheet by sheet (the steps write into it)."""
Starting = Mapping[str, Sequence[Sequence[Any]]]
"""The task's starting data, sheet by sheet: what the steps read and never write."""

_Rows = TypeVar("_Rows", bound=Sequence[Sequence[Any]])


# --- cells of the rows the check changes --------------------------------------------------


def _rows_of(sheets: Mapping[str, _Rows], area: Area) -> _Rows:
    """The rows of the area's sheet (the first sheet where the area names none)."""
    return sheets[area.sheet or next(iter(sheets))]


def _get(rows: Sequence[Sequence[Any]], row: int, col: int) -> Any:
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
class Copy:
    """Which of an episode's changed copies a step is making: `number` (0, 1, ...) and
    `key`, the same for every copy of one episode.

    Why: some shortcuts can only be told apart from the honest answer across copies. A
    row's label changed in every copy lets "not the starting data, so the other label" pass;
    one kept in every copy lets a typed label pass. So a step that must change a thing in
    one copy and keep it in the other draws its plan from `key` (`plan`), the same in every
    copy, and follows it by the copy's `number`; all else it draws from the copy's own
    generator."""

    number: int = 0
    key: tuple[int, ...] = ()

    def plan(self, *salt: int) -> np.random.Generator:
        """The generator of the episode's plan for one step (`salt` names the step): the
        same draws in every copy of the episode."""
        return np.random.default_rng([*self.key, *salt])

    @property
    def even(self) -> bool:
        """The first, third, ... copy: a planned change happens in the even copies or in the
        odd ones."""
        return self.number % 2 == 0

    @classmethod
    def alone(cls, rng: np.random.Generator) -> Copy:
        """A copy made on its own (no episode around it): its plan drawn from `rng`."""
        return cls(0, (int(rng.integers(2**32)),))


@dataclass(frozen=True)
class Change:
    """One step of a task's changes; `area` is the range it may write (see the module
    docstring for what each step is for)."""

    area: str

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def apply_to_copy(self, changed: Sheets, original: Starting, rng: np.random.Generator, copy: Copy) -> None:
        """The step on copy `copy` of an episode. Most steps draw everything from `rng` and
        ignore which copy it is; those that plan across copies (`Copy`) override this."""
        self.apply(changed, original, rng)
