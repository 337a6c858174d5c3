"""How the formula check changes a task's data, and why each change is there.

Where a task asks for formulas, the env judges the agent's workbook on the starting data and
again on changed copies of it (`env.SpreadsheetEnv.verify`): each copy's data go into the
agent's workbook, it is recalculated, and every formula cell must equal `truth` of the
copy. A formula that hard-codes what it was asked to find (a cell, a row choice, a group, a
key, a comparison) is right on the starting data, so the copies must move exactly what such
a formula relies on, and nothing that would make an honest formula's answer ambiguous.

A task names the ranges its copies change in two ways:

- `inputs`: the data the targets are computed from. Numbers are scaled by 0.5-1.5 (whole
  numbers stay whole, signs stay), dates moved by up to 40 days either way, texts shuffled
  within their column. This alone catches a value typed in, or a constant dressed as a
  formula.
- `changes`: steps run after that, for what scaling does not move (`Change` subclasses):
  - `CycleRows`: the rows of an area move along one cycle through all of them (and
    `CycleColumns` the columns). Every row moves and no set of rows maps onto itself, so a
    hand-picked sum (`=D4+D6+D9` for one region), a hand-found row of a lookup table
    (`=Prices!C5`), a criterion copied from a listing (`"East"` instead of `F2`) or a blank
    found by eye read other data; what holds row by row (a key is unique, every group has a
    row, every value has its own label) stays true.
  - `OnThreshold`: values put exactly on a threshold the task states, and just across it
    from where they were, so that `>` where "at least" is asked (or `>=` for "more than"),
    or a branch of an IF chosen by hand per row, fails.
  - `Runs`: contiguous runs of one key get other lengths, so a running total that restarts
    on hand-picked rows fails.
  - `SwapColumns`: some rows' value changes column (a debit becomes a credit).
  - `Ties`, `Distinct`: a score column gets ties where the task is about ties, and none
    where it promises none (a rank must have one answer).
  - `SameDay`: dates put on an anniversary (the same day of the month, or of the year, as
    a reference date) and the days beside it, where whole months or years are counted.
  - `DateEdges`: dates put on the first and last day of their month, and a year away, where
    totals are grouped by year and month.
  - `Remap`: each text through a family's function (messy text made messy again in every
    way the cleaning handles, so that a cleaning step left out on rows that did not need it
    fails).

Every step is deterministic given its random generator (the env seeds one per task and
round), touches only its own area, and keeps the kinds of values (whole numbers stay
whole). The env writes every cell of `written_areas(...)` into the agent's workbook.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import Area, parse_area

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


# --- the default change of `inputs` ------------------------------------------------------


def scale_inputs(changed: Sheets, inputs: Sequence[str], rng: np.random.Generator) -> None:
    """Numbers scaled by 0.5-1.5 (whole numbers stay whole and nonzero ones nonzero, signs
    stay), dates moved by up to 40 days, texts shuffled among the column's text cells;
    formulas and empty cells stay."""
    for text in inputs:
        area = parse_area(text)
        rows = _rows_of(changed, area)
        for col in range(area.left, area.right + 1):
            cells = [(r, _get(rows, r, col)) for r in range(area.top, min(area.bottom, len(rows)) + 1)]
            texts = [r for r, value in cells if isinstance(value, str) and not value.startswith("=")]
            shuffled = [_get(rows, r, col) for r in texts]
            rng.shuffle(shuffled)
            for r, value in zip(texts, shuffled, strict=True):
                _put(rows, r, col, value)
            for r, value in cells:
                if not isinstance(value, str):
                    _put(rows, r, col, _changed_number_or_date(value, rng))


def _changed_number_or_date(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return round(value * rng.uniform(0.5, 1.5)) or value
    if isinstance(value, float):
        return round(value * rng.uniform(0.5, 1.5), 2)
    if isinstance(value, dt.date):
        return value + dt.timedelta(days=int(rng.integers(-40, 41)))
    return value


# --- the steps -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One step of a task's changes; `area` is the range it may write (see the module
    docstring for what each step is for)."""

    area: str

    def apply(self, changed: Sheets, original: Mapping[str, Sequence[Sequence[Any]]], rng: np.random.Generator) -> None:
        raise NotImplementedError


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


@dataclass(frozen=True)
class SameDay(Change):
    """Dates of one column put on an anniversary of a reference date and beside it: with
    `unit` "Y" the reference's month and day in the date's own year (a year of service
    completed that day), with "M" the reference's day of the month in the date's own month
    (a month of a subscription completed). The reference is one cell (`cell`, "F2") or the
    same row's cell of column `against`. Three rows: on the day, the day before, the day
    after; only where the dates stay at least 31 days before (for "M": after) the reference,
    and for "M" on days 1-28 (where spreadsheet programs agree on whole months)."""

    unit: str = "Y"
    cell: str = ""
    against: str = ""

    def apply(self, changed, original, rng):
        from rlenvs.envs.spreadsheet.cells import column_number

        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        col = area.left
        fixed = parse_area(self.cell, single=True) if self.cell else None
        other = column_number(self.against) if self.against else 0

        def reference(r: int) -> Any:
            return _get(rows, fixed.top, fixed.left) if fixed else _get(rows, r, other)

        span = [r for r in range(area.top, area.bottom + 1) if isinstance(_get(rows, r, col), dt.date)]
        order = [span[int(i)] for i in rng.permutation(len(span))]
        shifts = [0, -1, 1]
        for r in order:
            if not shifts:
                return
            date, ref = _get(rows, r, col), reference(r)
            if not isinstance(ref, dt.date) or (self.unit == "M" and ref.day > 28):
                continue
            try:
                on = dt.date(date.year, ref.month, ref.day) if self.unit == "Y" else dt.date(date.year, date.month, ref.day)
            except ValueError:  # 29 February in a year without one
                continue
            moved = on + dt.timedelta(days=shifts[0])
            apart = (ref - moved).days if self.unit == "Y" else (moved - ref).days
            if apart >= 31 and (self.unit == "Y" or moved.day <= 28):
                _put(rows, r, col, moved)
                shifts.pop(0)


@dataclass(frozen=True)
class Blanks(Change):
    """A column of values with blanks (to be filled by a rule): up to two more rows blanked,
    chosen among rows whose group (column `against`, compared with the starting data's row
    at the same place) changed, so that a group typed into the formula instead of read from
    the row meets a blank of another group. Every group keeps a value (its average stays
    defined)."""

    against: str = ""

    def apply(self, changed, original, rng):
        from rlenvs.envs.spreadsheet.cells import column_number

        area = parse_area(self.area)
        rows, before = _rows_of(changed, area), _rows_of(original, area)  # type: ignore[arg-type]
        col, key = area.left, column_number(self.against) if self.against else 0
        span = list(range(area.top, area.bottom + 1))

        def group(sheet: list[list[Any]], r: int) -> Any:
            return _get(sheet, r, key) if key else None

        for r in [span[int(i)] for i in rng.permutation(len(span))]:
            if not _is_number(_get(rows, r, col)) or (key and group(rows, r) == group(before, r)):
                continue
            others = [q for q in span if q != r and group(rows, q) == group(rows, r) and _is_number(_get(rows, q, col))]
            if others:
                _put(rows, r, col, None)
                if sum(_get(rows, q, col) is None for q in span) >= 2 + sum(_get(before, q, col) is None for q in span):
                    return


@dataclass(frozen=True)
class DateEdges(Change):
    """A column of dates where some rows move to the first or the last day of their month,
    or to the same day a year later or earlier (at least one each)."""

    def apply(self, changed, original, rng):
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        span = [r for r in range(area.top, area.bottom + 1) if isinstance(_get(rows, r, area.left), dt.date)]
        if len(span) < 4:
            return
        chosen = [span[int(i)] for i in rng.permutation(len(span))[: max(4, len(span) // 4)]]
        for i, r in enumerate(chosen):
            date = _get(rows, r, area.left)
            kind = i % 4
            if kind == 0:
                new = date.replace(day=1)
            elif kind == 1:
                new = date.replace(day=calendar.monthrange(date.year, date.month)[1])
            else:
                new = date.replace(year=date.year + (1 if kind == 2 else -1), day=min(date.day, 28))
            _put(rows, r, area.left, new)


@dataclass(frozen=True)
class Remap(Change):
    """Each non-empty cell of the area through `function(rng, value, **keywords)`: a
    module-level function, so that a task still pickles and two tasks compare equal."""

    function: Callable[..., Any] | None = None
    keywords: tuple[tuple[str, Any], ...] = ()

    def apply(self, changed, original, rng):
        if self.function is None:
            raise ValueError(f"Remap({self.area!r}) needs a function: Remap(area, function, keywords)")
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        for r in range(area.top, area.bottom + 1):
            for c in range(area.left, area.right + 1):
                value = _get(rows, r, c)
                if value is not None:
                    _put(rows, r, c, self.function(rng, value, **dict(self.keywords)))


# --- the whole change ----------------------------------------------------------------------


def perturb(sheets: Mapping[str, Sequence[Sequence[Any]]], inputs: Sequence[str], rng: np.random.Generator,
            changes: Sequence[Change] = ()) -> Sheets:  # fmt: skip
    """A changed copy of the sheets: `inputs` scaled, moved and shuffled, then each of
    `changes` in order. The sheets given are not modified."""
    changed = {name: [list(row) for row in rows] for name, rows in sheets.items()}
    scale_inputs(changed, inputs, rng)
    for change in changes:
        change.apply(changed, sheets, rng)
    return changed


def written_areas(inputs: Sequence[str], changes: Sequence[Change]) -> list[Area]:
    """Every area a changed copy may differ in: what the env writes into the agent's workbook."""
    return [parse_area(text) for text in (*inputs, *(change.area for change in changes))]
