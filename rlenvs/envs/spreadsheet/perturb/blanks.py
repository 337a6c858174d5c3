"""The step on a column with blanks to fill: where the blanks are, a real zero among the
values, and averages that tell the rounding rules apart."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import (
    Change,
    Copy,
    Sheets,
    Starting,
    _get,
    _is_number,
    _put,
    _rows_of,
    _step,
)


def rounding_side(value: float, decimals: int) -> str:
    """How `value` meets rounding to `decimals` (read to 15 significant digits, as a
    spreadsheet rounds): "exact" (nothing to round), "up" (past the half: ROUND rounds up,
    ROUNDDOWN and TRUNC do not), "down" (short of the half: ROUND rounds down, ROUNDUP does
    not) or "tie" (on the half, where rounding rules split)."""
    shown = abs(Decimal(f"{float(value):.15g}")).scaleb(decimals)
    rest = shown - shown.to_integral_value(rounding="ROUND_FLOOR")
    return "exact" if rest == 0 else "tie" if rest == Decimal("0.5") else "up" if rest > Decimal("0.5") else "down"


@dataclass(frozen=True)
class Blanks(Change):
    """A column of values with blanks (to be filled by a rule): up to two more rows blanked,
    chosen among rows whose group (column `against`, compared with the starting data's row
    at the same place) changed, so that a group typed into the formula instead of read from
    the row meets a blank of another group. Every group keeps a value (its average stays
    defined).

    With `zero`, one known value becomes 0 (a batch that yielded nothing, a week without
    sales), in a group that keeps another value: in a spreadsheet a blank equals 0, so
    `IF(D2=0,...)` fills it as a blank, and the data never showed a 0 (scaling keeps zeros
    and nonzero values as they are), so that passed every episode.

    With `rounded` (the decimals the task asks a filled average rounded to), some blank's
    average must need rounding, on the side the episode's plan gives the copy (`Copy`):
    past the half in the even copies, where ROUNDDOWN or TRUNC instead of ROUND is wrong,
    short of it in the odd ones, where ROUNDUP is (and where a copy has blanks of several
    groups, the other side too where a group allows it). Averages that need no rounding
    (whole numbers over 2, 4 or 5 rows: 6.5, 6.25, 6.2) would let ROUND be left out, and
    ones that only ever rounded down let ROUNDDOWN pass 50 of 240 episodes. It gets there by
    moving a known value of the blank's group by the column's step (a cent, a unit) at a
    time; where no group's average can reach that side (two amounts in cents average to
    whole or half cents), by blanking one more row of a group that keeps three values, or
    by giving a value back to a blank in a group that keeps another blank (never the last
    blank whose group changed). An average put on a side is never on a half (a tie, where
    rounding rules split)."""

    against: str = ""
    rounded: int = -1
    zero: bool = False

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        self.apply_to_copy(changed, original, rng, Copy.alone(rng))

    def apply_to_copy(self, changed: Sheets, original: Starting, rng: np.random.Generator, copy: Copy) -> None:
        from rlenvs.workbook.cells import column_number

        area = parse_area(self.area)
        rows, before = _rows_of(changed, area), _rows_of(original, area)
        key = column_number(self.against) if self.against else 0
        column = _Column(
            rows,
            before,
            list(range(area.top, area.bottom + 1)),
            area.left,
            key,
            _step([_get(before, r, area.left) for r in range(area.top, area.bottom + 1)]),
        )
        span, col = column.span, column.col
        for r in [span[int(i)] for i in rng.permutation(len(span))]:
            if not _is_number(_get(rows, r, col)) or column.same_group_as_before(r):
                continue
            if len(column.members(r)) > 1:
                _put(rows, r, col, None)
                if sum(_get(rows, q, col) is None for q in span) >= 2 + sum(_get(before, q, col) is None for q in span):
                    break
        for again in (
            False,
            True,
        ):  # the zero first; where no group could take it before steering gave values back, once more
            if again and (not self.zero or column.zero is not None):
                break
            if self.zero and column.zero is None:
                column.place_zero(rng)
            if self.rounded >= 0:
                column.steer("up" if copy.even else "down", self.rounded, rng)


@dataclass
class _Column:
    """The column a `Blanks` step changes: its rows, groups, blanks and the moves that put
    a blank's average on a side of rounding."""

    rows: list[list[Any]]
    before: Sequence[Sequence[Any]]
    span: list[int]
    col: int
    key: int
    step: float
    zero: int | None = None

    def __post_init__(self) -> None:
        # the groups stay as they are while the step runs (only the column's values change)
        self._group = {r: self.group(self.rows, r) for r in self.span}
        self._rows_of: dict[Any, list[int]] = {}
        for r in self.span:
            self._rows_of.setdefault(self._group[r], []).append(r)

    def group(self, sheet: Sequence[Sequence[Any]], r: int) -> Any:
        return _get(sheet, r, self.key) if self.key else None

    def same_group_as_before(self, r: int) -> bool:
        return bool(self.key) and self._group[r] == self.group(self.before, r)

    def group_rows(self, r: int) -> list[int]:
        """The rows of r's group."""
        return self._rows_of[self._group[r]]

    def members(self, r: int) -> list[int]:
        """The rows of r's group that hold a number."""
        return [q for q in self.group_rows(r) if _is_number(_get(self.rows, q, self.col))]

    def blanks(self) -> list[int]:
        return [r for r in self.span if _get(self.rows, r, self.col) is None and self.members(r)]

    def side(self, r: int, decimals: int) -> str:
        values = [float(_get(self.rows, q, self.col)) for q in self.members(r)]
        return rounding_side(math.fsum(values) / len(values), decimals) if values else "exact"

    def place_zero(self, rng: np.random.Generator) -> None:
        """One known value set to 0, in a group keeping another value."""
        for r in (self.span[int(i)] for i in rng.permutation(len(self.span))):
            if _is_number(value := _get(self.rows, r, self.col)) and len(self.members(r)) >= 2:
                _put(self.rows, r, self.col, 0 if isinstance(value, int) else 0.0)
                self.zero = r
                return

    def steer(self, wanted: str, decimals: int, rng: np.random.Generator) -> None:
        """Some blank's average on side `wanted`, then the other side where another group's
        blank allows it (see `Blanks`)."""
        for _ in range(6):
            if self._reach(wanted, self.blanks(), decimals, rng):
                break
            if not (self._blank_one_more(rng) or self._give_one_back(rng)):
                return
        blanks = self.blanks()
        first = next((r for r in blanks if self.side(r, decimals) == wanted), None)
        if first is not None:
            others = [r for r in blanks if self._group[r] != self._group[first]]
            self._reach(
                "down" if wanted == "up" else "up", others, decimals, rng, keep=frozenset(self.group_rows(first))
            )

    def _reach(
        self,
        wanted: str,
        blanks: list[int],
        decimals: int,
        rng: np.random.Generator,
        keep: frozenset[int] = frozenset(),
    ) -> bool:
        """Whether some blank's average is on `wanted`, or can be put there by moving one
        known value of its group by up to 12 steps (none of `keep`, not the zero)."""
        if any(self.side(r, decimals) == wanted for r in blanks):
            return True
        for r in (blanks[int(i)] for i in rng.permutation(len(blanks))):
            movable = [q for q in self.members(r) if q != self.zero and q not in keep]
            for q in (movable[int(i)] for i in rng.permutation(len(movable))):
                value = _get(self.rows, q, self.col)
                for k in sorted(range(-12, 13), key=lambda k: (abs(k), k)):
                    moved = self._like(value + k * self.step)
                    if k == 0 or moved <= 0:
                        continue
                    _put(self.rows, q, self.col, moved)
                    if self.side(r, decimals) == wanted:
                        return True
                    _put(self.rows, q, self.col, value)
        return False

    def _like(self, value: float) -> int | float:
        return round(value) if self.step == 1 else round(value, 2)

    def _blank_one_more(self, rng: np.random.Generator) -> bool:
        """One more known row blanked, in a group that keeps three values; False where none can be."""
        for r in (self.span[int(i)] for i in rng.permutation(len(self.span))):
            if _is_number(_get(self.rows, r, self.col)) and r != self.zero and len(self.members(r)) >= 4:
                _put(self.rows, r, self.col, None)
                return True
        return False

    def _give_one_back(self, rng: np.random.Generator) -> bool:
        """A value given back to a blank in a group that keeps another blank, never to the
        last blank whose group is not its starting row's (what a typed group misses): a
        known nonzero value of the group moved by a few steps. False where none can be."""
        telling = [r for r in self.blanks() if self.key and not self.same_group_as_before(r)]
        for r in (self.span[int(i)] for i in rng.permutation(len(self.span))):
            group = self.group_rows(r)
            known = [q for q in group if _is_number(_get(self.rows, q, self.col)) and q != self.zero]
            blank = [q for q in group if _get(self.rows, q, self.col) is None]
            if _get(self.rows, r, self.col) is None and known and len(blank) >= 2 and telling != [r]:
                like = _get(self.rows, known[int(rng.integers(len(known)))], self.col)
                _put(self.rows, r, self.col, self._like(like + int(rng.integers(1, 9)) * self.step))
                return True
        return False
