"""Steps that move rows, columns and runs: what a hand-picked cell, group or restart relies on."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import (
    Change,
    _cycle,
    _get,
    _is_number,
    _put,
    _rows_of,
)


@dataclass(frozen=True)
class CycleRows(Change):
    """The area's rows, as wholes, along one cycle through all of them. On one column of
    keys it reassigns the keys (each group keeps its number of rows); with `within` (a
    column letter) the rows cycle only among rows with the same value there, so that what
    holds per value of that column (every category has a row with Status "Pending") stays
    true."""

    within: str = ""

    def apply(self, changed, original, rng):
        from rlenvs.envs.spreadsheet.cells import column_number

        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        lines = [[_get(rows, r, c) for c in range(area.left, area.right + 1)] for r in range(area.top, area.bottom + 1)]
        strata: dict[Any, list[int]] = {}
        for i in range(len(lines)):
            stratum = _get(rows, area.top + i, column_number(self.within)) if self.within else None
            strata.setdefault(stratum, []).append(i)
        for members in strata.values():
            for i, j in zip(members, [members[k] for k in _cycle(len(members), rng)], strict=True):
                for offset, value in enumerate(lines[j]):
                    _put(rows, area.top + i, area.left + offset, value)


@dataclass(frozen=True)
class CycleColumns(Change):
    """The area's columns, as wholes, along one cycle through all of them."""

    def apply(self, changed, original, rng):
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        columns = [[_get(rows, r, c) for r in range(area.top, area.bottom + 1)] for c in range(area.left, area.right + 1)]
        for i, j in enumerate(_cycle(len(columns), rng)):
            for offset, value in enumerate(columns[j]):
                _put(rows, area.top + offset, area.left + i, value)


@dataclass(frozen=True)
class Runs(Change):
    """The area's first column holds runs of equal keys (a table sorted by them): the runs
    keep their keys and order but get other lengths (each 1 to `longest`, the same total,
    at least one boundary moved). Where the area has a second column, it is numbered again
    within each run with `labels` (Jan, Feb, ...)."""

    labels: tuple[str, ...] = ()
    longest: int = 12

    def apply(self, changed, original, rng):
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        keys = [_get(rows, r, area.left) for r in range(area.top, area.bottom + 1)]
        names, lengths = [], []
        for key in keys:
            if names and names[-1] == key:
                lengths[-1] += 1
            else:
                names.append(key)
                lengths.append(1)
        total, k = len(keys), len(names)
        if k < 2 or total > k * self.longest:
            return
        for _ in range(100):
            cuts = sorted(int(i) + 1 for i in rng.permutation(total - 1)[: k - 1])
            new = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
            if new != lengths and max(new) <= self.longest:
                break
        else:
            return
        r = area.top
        for name, length in zip(names, new, strict=True):
            for i in range(length):
                _put(rows, r, area.left, name)
                if area.right > area.left and self.labels:
                    _put(rows, r, area.left + 1, self.labels[i % len(self.labels)])
                r += 1


@dataclass(frozen=True)
class SwapColumns(Change):
    """A two-column area where each row has a value in one column (debit or credit): about
    a quarter of the rows, and at least one each way, have it moved to the other column."""

    def apply(self, changed, original, rng):
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        a, b = area.left, area.left + 1
        spans = range(area.top, area.bottom + 1)
        left = [r for r in spans if _get(rows, r, a) is not None and _get(rows, r, b) is None]
        right = [r for r in spans if _get(rows, r, b) is not None and _get(rows, r, a) is None]
        chosen = []
        for pool in (left, right):
            if pool:
                count = max(1, len(pool) // 4)
                chosen += [pool[int(i)] for i in rng.permutation(len(pool))[:count]]
        for r in chosen:
            x, y = _get(rows, r, a), _get(rows, r, b)
            _put(rows, r, a, y)
            _put(rows, r, b, x)


@dataclass(frozen=True)
class Blanks(Change):
    """A column of values with blanks (to be filled by a rule): up to two more rows blanked,
    chosen among rows whose group (column `against`, compared with the starting data's row
    at the same place) changed, so that a group typed into the formula instead of read from
    the row meets a blank of another group. Every group keeps a value (its average stays
    defined).

    With `rounded` (the decimals the task asks a filled average rounded to), more rows (up
    to three) are blanked while no blank's average has more decimals than that: the
    averages of whole numbers over 2, 4 or 5 rows (6.5, 6.25, 6.2) do not, and leaving
    ROUND out would not show. (Where every group keeps a single known value no blank can
    be added, and the averages are those values: there ROUND changes nothing.)"""

    against: str = ""
    rounded: int = -1

    def apply(self, changed, original, rng):
        from rlenvs.envs.spreadsheet.cells import column_number

        area = parse_area(self.area)
        rows, before = _rows_of(changed, area), _rows_of(original, area)  # type: ignore[arg-type]
        col, key = area.left, column_number(self.against) if self.against else 0
        span = list(range(area.top, area.bottom + 1))

        def group(sheet: list[list[Any]], r: int) -> Any:
            return _get(sheet, r, key) if key else None

        def known(r: int) -> list[float]:
            return [float(v) for q in span if group(rows, q) == group(rows, r) and _is_number(v := _get(rows, q, col))]

        for r in [span[int(i)] for i in rng.permutation(len(span))]:
            if not _is_number(_get(rows, r, col)) or (key and group(rows, r) == group(before, r)):
                continue
            if len(known(r)) > 1:
                _put(rows, r, col, None)
                if sum(_get(rows, q, col) is None for q in span) >= 2 + sum(_get(before, q, col) is None for q in span):
                    break
        if self.rounded >= 0:
            self._one_average_to_round(rows, span, col, known, rng)

    def _one_average_to_round(self, rows, span, col, known, rng) -> None:
        from rlenvs.rewards.spreadsheet import rounded_to

        def to_round() -> bool:
            blanks = [r for r in span if _get(rows, r, col) is None]
            return any((xs := known(r)) and not rounded_to(math.fsum(xs) / len(xs), self.rounded) for r in blanks)

        for _ in range(3):  # a blank more each time no single one does (k - 1 known values: 10, 20 or 40)
            if to_round():
                return
            candidates = [r for r in (span[int(i)] for i in rng.permutation(len(span))) if _is_number(_get(rows, r, col)) and len(known(r)) > 1]
            for r in candidates:
                value = _get(rows, r, col)
                _put(rows, r, col, None)
                if to_round():
                    return
                _put(rows, r, col, value)
            if not candidates:
                return
            _put(rows, candidates[0], col, None)
