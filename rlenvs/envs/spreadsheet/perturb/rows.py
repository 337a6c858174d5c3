"""Steps that move rows, columns and runs: what a hand-picked cell, group or restart relies on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import (
    Change,
    Sheets,
    Starting,
    _cycle,
    _get,
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

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        from rlenvs.workbook.cells import column_number

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

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        columns = [
            [_get(rows, r, c) for r in range(area.top, area.bottom + 1)] for c in range(area.left, area.right + 1)
        ]
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

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        keys = [_get(rows, r, area.left) for r in range(area.top, area.bottom + 1)]
        names: list[object] = []
        lengths: list[int] = []
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

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
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
