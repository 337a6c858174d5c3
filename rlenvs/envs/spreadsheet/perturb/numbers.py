"""Steps on numeric columns: values on and across a threshold, ties and distinct scores."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
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
    """Rows of `area` (the table's data rows) put on and across each threshold of `tests`,
    and the other rows moved so that half of them change their label and half keep it with
    other values: which half is planned for the episode and swaps between its copies.

    For each test, one row exactly on the threshold (where `>` and `>=` disagree), one row
    where the condition held moved one step to where it fails, and one where it failed moved
    one step to where it holds. The rows differ between tests, and on each of them the other
    tests are made neutral, so they cannot hide the one being tested: true where the
    conditions are combined with AND, false with OR (`combine`). Each of these rows is one
    whose label the move changes, taken among the rows planned to change in this copy where
    one fits; a move across that changes no row's label is left to the next step, and the
    row on the threshold is placed even where it changes none. The step is the column's
    (`_step`); whole numbers stay whole.

    Every other row gets new values in its tested columns (drawn between the column's
    smallest and largest value and a tenth beyond each of the row's thresholds, each side of
    a threshold as likely as the other) until its label is as planned: another than its
    starting row's, or the same with every tested value moved. The label is
    `label(*label_args, values of the row from column A)` as the task states it (a
    module-level function, so that a task pickles and compares equal), or, without `label`,
    which of the tests hold.

    Why the plan (`Copy`): scaling by 0.5-1.5 never moves a value far from a threshold
    across it, so a label typed on such a row (even dressed as a formula) would pass if
    labels only changed by chance; and where every row's label changed in every copy, a
    per-row `IF(B2=57,"Fail","Pass")` (the starting value, its label, else the other
    label) passed every time, since with two labels "not the starting data" then meant
    "the other label". The episode's rows are split in two halves, one changing its label
    in the even copies and keeping it (values moved) in the odd ones, the other the other
    way round: over two copies every row's label both changes and stays, so each of these
    typed forms fails on every row."""

    tests: tuple[Test, ...] = ()
    combine: str = "and"
    label: Callable[..., Any] | None = None
    label_args: tuple[Any, ...] = ()

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        self.apply_to_copy(changed, original, rng, Copy.alone(rng))

    def apply_to_copy(self, changed: Sheets, original: Starting, rng: np.random.Generator, copy: Copy) -> None:
        from rlenvs.workbook.cells import column_number

        area = parse_area(self.area)
        rows, before = _rows_of(changed, area), _rows_of(original, area)
        span = range(area.top, area.bottom + 1)
        relabel = self._planned(span, copy)

        def threshold(sheet: Sequence[Sequence[Any]], r: int, test: Test) -> float | None:
            value = _get(sheet, r, column_number(test[2])) if isinstance(test[2], str) else test[2]
            return float(value) if _is_number(value) else None

        def holds(sheet: Sequence[Sequence[Any]], r: int, test: Test) -> bool | None:
            value, limit = _get(sheet, r, column_number(test[0])), threshold(sheet, r, test)
            return None if not _is_number(value) or limit is None else _HOLDS[test[1]](float(value), limit)

        def label(sheet: Sequence[Sequence[Any]], r: int) -> Any:
            if self.label is not None:
                return self.label(*self.label_args, list(sheet[r - 1]) if r - 1 < len(sheet) else [])
            return tuple(holds(sheet, r, test) for test in self.tests)

        def relabelled(r: int) -> bool:
            return label(rows, r) != label(before, r)

        steps = {test[0]: _step([_get(before, r, column_number(test[0])) for r in span]) for test in self.tests}

        def put(r: int, test: Test, where: str) -> None:
            col, op, step = column_number(test[0]), test[1], steps[test[0]]
            limit = threshold(rows, r, test)
            if limit is None:
                return
            up = op in (">=", ">")
            offset = 0 if where == "on" else (step if (where == "true") == up else -step)
            _put(rows, r, col, _like(limit + offset, step))

        def place(r: int, test: Test, where: str) -> None:
            put(r, test, where)
            for other in self.tests:
                if other[0] != test[0] and holds(rows, r, other) is not (self.combine == "and"):
                    put(r, other, "true" if self.combine == "and" else "false")

        used: set[int] = set()
        for test in self.tests:
            on_truth = _HOLDS[test[1]](0, 0)  # what the condition says exactly on the threshold
            for where, was in (("on", not on_truth), ("false", True), ("true", False)):
                pool = [r for r in span if r not in used and holds(before, r, test) is was]
                if where == "on":  # a value on the threshold, whatever row it takes
                    pool = pool or [r for r in span if r not in used and holds(before, r, test) is not None]
                order = [pool[int(i)] for i in rng.permutation(len(pool))]
                order.sort(key=lambda r: not relabel[r])  # the rows planned to change first
                chosen = None
                for r in order:  # a row whose label this move changes (on the threshold: one planned to)
                    saved = list(rows[r - 1])
                    place(r, test, where)
                    if relabelled(r) and (relabel[r] or where != "on"):
                        chosen = r
                        break
                    rows[r - 1] = saved
                if chosen is None and where == "on" and order:
                    chosen = next((r for r in order if not relabel[r]), order[0])  # on it, its label kept as planned
                    place(chosen, test, where)
                if chosen is not None:
                    used.add(chosen)
        todo = [r for r in span if r not in used]
        self._as_planned(rows, before, todo, relabel, relabelled, threshold, rng)

    def _planned(self, span: range, copy: Copy) -> dict[int, bool]:
        """Whether each row's label changes in this copy: the episode's rows in two halves
        drawn once for the episode (`Copy.plan`), the first changing in the even copies, the
        second in the odd ones."""
        order = [span[int(i)] for i in copy.plan(zlib.crc32(self.area.encode())).permutation(len(span))]
        first = set(order[: (len(order) + 1) // 2])
        return {r: (r in first) == copy.even for r in span}

    def _as_planned(self, rows, before, todo, relabel, relabelled, threshold, rng) -> None:
        """New values for the tested columns of each row of `todo` until its label is as
        planned (`relabel`): changed, or kept with every tested value other than it was
        (see the class docstring)."""
        from rlenvs.workbook.cells import column_number

        columns = sorted({column_number(test[0]) for test in self.tests})
        ranges = {}
        for col in columns:
            values = [float(v) for r in todo if _is_number(v := _get(before, r, col))]
            ranges[col] = (
                min(values, default=0.0),
                max(values, default=0.0),
                _step([_get(before, r, col) for r in todo]),
            )

        def as_planned(r: int) -> bool:
            if relabel[r]:
                return relabelled(r)
            return not relabelled(r) and all(_get(rows, r, col) != _get(before, r, col) for col in columns)

        for r in todo:
            if as_planned(r) or not all(_is_number(_get(rows, r, col)) for col in columns):
                continue
            pieces = {}  # each column's range cut at the row's thresholds: every side of each equally likely
            for col, (low, high, step) in ranges.items():
                limits = [
                    limit
                    for t in self.tests
                    if column_number(t[0]) == col and (limit := threshold(rows, r, t)) is not None
                ]
                margins = [(x, max(step, abs(x) / 10)) for x in limits]  # room on both sides of each threshold
                low, high = min([low, *(x - m for x, m in margins)]), max([high, *(x + m for x, m in margins)])
                cuts = sorted({low, high, *limits})
                pieces[col] = ([(a, b) for a, b in pairwise(cuts) if b > a] or [(low, high)], step)
            for _ in range(100):
                for col, (sides, step) in pieces.items():
                    low, high = sides[int(rng.integers(len(sides)))]
                    _put(rows, r, col, _like(float(rng.uniform(low, high)), step))
                if as_planned(r):
                    break


@dataclass(frozen=True)
class Ties(Change):
    """A column of numbers where some rows take another row's value: at least two ties."""

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
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

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        col = area.left
        span = [r for r in range(area.top, area.bottom + 1) if _is_number(_get(rows, r, col))]
        step = _step([_get(_rows_of(original, area), r, col) for r in span])
        seen: set[float] = set()
        for r in span:
            value = _get(rows, r, col)
            while float(value) in seen:
                value = _like(value + step, step)
            seen.add(float(value))
            _put(rows, r, col, value)
