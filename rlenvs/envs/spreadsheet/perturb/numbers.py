"""Steps on numeric columns: values on and across a threshold, ties and distinct scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import (
    Change,
    _get,
    _is_number,
    _like,
    _put,
    _rows_of,
    _step,
)

Test = tuple[str, str, "float | str"]
"""(column letter, comparison, threshold): the condition a task states, e.g. ("B", ">=", 60)
for "at least 60", ("B", ">=", "C") for "at least their Quota" (the same row's C)."""

_HOLDS = {">=": lambda v, t: v >= t, ">": lambda v, t: v > t, "<": lambda v, t: v < t, "<=": lambda v, t: v <= t}


@dataclass(frozen=True)
class OnThreshold(Change):
    """Rows of `area` (the table's data rows) put on and across each threshold of `tests`:
    for each test, one row exactly on the threshold (where `>` and `>=` disagree), one row
    where the condition held moved one step to where it fails, and one where it failed moved
    one step to where it holds (a branch chosen by hand per row then fails). The rows differ
    between tests, and on each of them the other tests are made neutral, so they cannot hide
    the one being tested: true where the conditions are combined with AND, false with OR
    (`combine`). The step is the column's (`_step`); whole numbers stay whole."""

    tests: tuple[Test, ...] = ()
    combine: str = "and"

    def apply(self, changed, original, rng):
        from rlenvs.envs.spreadsheet.cells import column_number

        area = parse_area(self.area)
        rows, before = _rows_of(changed, area), _rows_of(original, area)  # type: ignore[arg-type]
        span = range(area.top, area.bottom + 1)

        def threshold(sheet: list[list[Any]], r: int, test: Test) -> float | None:
            value = _get(sheet, r, column_number(test[2])) if isinstance(test[2], str) else test[2]
            return float(value) if _is_number(value) else None

        def holds(sheet: list[list[Any]], r: int, test: Test) -> bool | None:
            value, limit = _get(sheet, r, column_number(test[0])), threshold(sheet, r, test)
            return None if not _is_number(value) or limit is None else _HOLDS[test[1]](float(value), limit)

        steps = {test[0]: _step([_get(before, r, column_number(test[0])) for r in span]) for test in self.tests}

        def put(r: int, test: Test, where: str) -> None:
            col, op, step = column_number(test[0]), test[1], steps[test[0]]
            limit = threshold(rows, r, test)
            if limit is None:
                return
            up = op in (">=", ">")
            offset = 0 if where == "on" else (step if (where == "true") == up else -step)
            _put(rows, r, col, _like(limit + offset, step))

        used: set[int] = set()
        for test in self.tests:
            on_truth = _HOLDS[test[1]](0, 0)  # what the condition says exactly on the threshold
            for where, was in (("on", not on_truth), ("false", True), ("true", False)):
                pool = [r for r in span if r not in used and holds(before, r, test) is was]
                pool = pool or [r for r in span if r not in used and holds(before, r, test) is not None]
                if not pool:
                    continue
                r = pool[int(rng.integers(len(pool)))]
                used.add(r)
                put(r, test, where)
                for other in self.tests:
                    if other[0] != test[0] and holds(rows, r, other) is not (self.combine == "and"):
                        put(r, other, "true" if self.combine == "and" else "false")


@dataclass(frozen=True)
class Ties(Change):
    """A column of numbers where some rows take another row's value: at least two ties."""

    def apply(self, changed, original, rng):
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        span = [r for r in range(area.top, area.bottom + 1) if _is_number(_get(rows, r, area.left))]
        for _ in range(max(2, len(span) // 6)):
            if len(span) < 2:
                return
            source, target = (span[int(i)] for i in rng.permutation(len(span))[:2])
            _put(rows, target, area.left, _get(rows, source, area.left))


@dataclass(frozen=True)
class Distinct(Change):
    """A column of numbers made distinct again after scaling: each repeat moves by the
    column's step until it is new (a rank over distinct scores has one answer)."""

    def apply(self, changed, original, rng):
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        col = area.left
        span = [r for r in range(area.top, area.bottom + 1) if _is_number(_get(rows, r, col))]
        step = _step([_get(_rows_of(original, area), r, col) for r in span])  # type: ignore[arg-type]
        seen: set[float] = set()
        for r in span:
            value = _get(rows, r, col)
            while float(value) in seen:
                value = _like(value + step, step)
            seen.add(float(value))
            _put(rows, r, col, value)
