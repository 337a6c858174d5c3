"""Steps on date columns: anniversaries and the days beside them, month edges."""

from __future__ import annotations

import calendar
import datetime as dt
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import Change, Copy, Sheets, Starting, _get, _put, _rows_of

AVERAGE_YEAR = 365.2425
AVERAGE_MONTH = 365 / 12
"""The average lengths a formula might divide a day count by instead of counting whole
years or months (365.25 and 30.4375 are longer still, 365 and 30 shorter)."""


def _fits(unit: str, shift: int, days: int, whole: int) -> bool:
    """Whether an anniversary `days` after its start, `whole` years or months, is one where
    dividing by an average length gives the wrong count for the row `shift` days from it.

    On the day (shift 0): a span shorter than `whole` average years (months), so that
    `INT(days/365.25)` or `INT(days/30.4375)` falls one short (a year without 29 February,
    months over February). For years, the hire a day after (+1, a year still to complete):
    a span holding a 29 February, so that `INT(days/365)` counts the year. For months, the
    end a day before (-1): a span of long months, so that `INT((days-1)/30.4375)` or
    `/30` counts the month not yet complete."""
    if shift == 0:
        return days < (AVERAGE_YEAR if unit == "Y" else AVERAGE_MONTH) * whole
    if unit == "Y" and shift == 1:
        return days - 1 >= 365 * whole
    if unit == "M" and shift == -1:
        return days - 1 >= 30.4375 * whole
    return True


def _leap_day_within_a_year_before(date: dt.date) -> bool:
    """Whether a 29 February lies in the year that ends on `date` (after its start)."""
    start = date.replace(year=date.year - 1, day=min(date.day, 28))
    return any(start < dt.date(y, 2, 29) <= date for y in (date.year - 1, date.year) if calendar.isleap(y))


def _next_in_phase(date: dt.date, leap_within: bool) -> dt.date:
    """The first date from `date` on, never a 29 February, whose past year holds a 29
    February (`leap_within`) or holds none: the 1 March after the next 29 February, or after
    the first anniversary of the last one."""
    if _leap_day_within_a_year_before(date) == leap_within and (date.month, date.day) != (2, 29):
        return date
    if leap_within:
        year = date.year if (date.month, date.day) <= (2, 29) else date.year + 1
        while not calendar.isleap(year):
            year += 1
        return dt.date(year, 3, 1)
    year = date.year if (date.month, date.day) >= (2, 29) else date.year - 1
    while not calendar.isleap(year):
        year -= 1
    return dt.date(year + 1, 3, 1)


@dataclass(frozen=True)
class LeapPhase(Change):
    """A reference date (one cell, a report date) moved later, in the even copies of an
    episode to the first date whose past year holds a 29 February, in the odd ones to the
    first whose past year holds none (`Copy`); never onto a 29 February. Moving it later
    keeps every start before it.

    Why: whole years counted by an average length, `INT((report-hire+a)/L)`, are right on
    every hire date for a report date in one phase of the leap cycle when `a` is chosen for
    it (with a 29 February in the report date's past year, days/365.25 is exact; a year on,
    (days+0.25)/365.25 is). No row of one copy can refute such a rule, so the copies of an
    episode put the report date in both phases, and `SameDay` puts a hire on and a day
    after the same anniversary in each: with L = 365.25 the counts there hold for a < 0.25
    in the one copy and a >= 0.25 in the other, and for any other L the two windows of `a`
    are as far apart, since the anniversary is the same."""

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        self.apply_to_copy(changed, original, rng, Copy.alone(rng))

    def apply_to_copy(self, changed: Sheets, original: Starting, rng: np.random.Generator, copy: Copy) -> None:
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        date = _get(rows, area.top, area.left)
        if isinstance(date, dt.date):
            _put(rows, area.top, area.left, _next_in_phase(date, leap_within=copy.even))


PLANNED_YEARS = (5, 9, 13, 17, 21)
"""Where `SameDay` puts its hires on and a day after an anniversary: 4k+1 years before the
report date, which hold k+1 29 Februaries where the report date's past year holds one and k
where it does not (`LeapPhase`); 5 or more, so that the span holds one either way (and
`INT(days/365)` counts the year not yet complete)."""


@dataclass(frozen=True)
class SameDay(Change):
    """Dates of one column put on an anniversary of a reference date and beside it: with
    `unit` "Y" the reference's month and day in a year before it (a year of service
    completed that day), with "M" the reference's day of the month in a month after it (a
    month of a subscription completed). The reference is one cell (`cell`, "F2") or the
    same row's cell of column `against`. Three rows: on the day, the day before, the day
    after; only where the dates stay at least 31 days before (for "M": after) the reference,
    and for "M" on days 1-28 (where spreadsheet programs agree on whole months).

    For "Y", the rows on the day and the day after are on one anniversary, the same number
    of years back in every copy of the episode (`PLANNED_YEARS`, drawn from the episode's
    plan, `Copy`): with the report date in both phases of the leap cycle across the copies
    (`LeapPhase`), no count by an average year with any offset, `INT((days+a)/L)`, is right
    on both copies. Otherwise the year (month) is the one nearest the date's own where the
    span defeats a count by average lengths (`_fits`): whole years as days/365.25 pass
    wherever a span holds enough 29 Februaries, and the anniversary rows must be where it
    does not; where no year within reach fits, the nearest one is taken."""

    unit: str = "Y"
    cell: str = ""
    against: str = ""

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        self.apply_to_copy(changed, original, rng, Copy.alone(rng))

    def apply_to_copy(self, changed: Sheets, original: Starting, rng: np.random.Generator, copy: Copy) -> None:
        from rlenvs.workbook.cells import column_number

        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        col = area.left
        fixed = parse_area(self.cell, single=True) if self.cell else None
        other = column_number(self.against) if self.against else 0
        years = int(copy.plan(zlib.crc32(self.area.encode())).choice(PLANNED_YEARS)) if self.unit == "Y" else 0

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
            moved = self._planned(ref, shifts[0], years) or self._moved(date, ref, shifts[0])
            if moved is not None:
                _put(rows, r, col, moved)
                shifts.pop(0)

    def _planned(self, ref: dt.date, shift: int, years: int) -> dt.date | None:
        """For "Y", the day of the planned anniversary (`years` back) or the day after it;
        None for the other rows, or where the reference is a 29 February."""
        if not years or shift not in (0, 1) or (ref.month, ref.day) == (2, 29):
            return None
        return dt.date(ref.year - years, ref.month, ref.day) + dt.timedelta(days=shift)

    def _moved(self, date: dt.date, ref: dt.date, shift: int) -> dt.date | None:
        """The date `shift` days from an anniversary near `date` (see the class docstring),
        None where there is none at least 31 days from the reference."""
        first = None
        for on in self._anniversaries(date, ref):
            moved = on + dt.timedelta(days=shift)
            start, end = (on, ref) if self.unit == "Y" else (ref, on)
            if (end - start).days + (shift if self.unit == "M" else -shift) < 31 or (
                self.unit == "M" and moved.day > 28
            ):
                continue
            whole = (
                end.year - start.year if self.unit == "Y" else (end.year - start.year) * 12 + end.month - start.month
            )
            if _fits(self.unit, shift, (end - start).days, whole):
                return moved
            first = first or moved
        return first

    def _anniversaries(self, date: dt.date, ref: dt.date):
        """Dates on the reference's anniversary, nearest `date` first: its month and day in
        the 30 years before it (Y), or its day in the 24 months either side of `date` (M)."""
        if self.unit == "Y":
            for year in sorted(range(ref.year - 30, ref.year), key=lambda y: (abs(y - date.year), y)):
                try:
                    yield dt.date(year, ref.month, ref.day)
                except ValueError:  # 29 February in a year without one
                    continue
        else:
            base = date.year * 12 + date.month - 1
            for step in sorted(range(-24, 25), key=lambda k: (abs(k), k)):
                year, month = divmod(base + step, 12)
                if 1900 < year < 9999:
                    yield dt.date(year, month + 1, ref.day)


def _whole(unit: str, start: dt.date, end: dt.date) -> int:
    """DATEDIF's whole years ("Y") or months ("M") from start to end."""
    months = (end.year - start.year) * 12 + end.month - start.month - (end.day < start.day)
    return months // 12 if unit == "Y" else months


@dataclass(frozen=True)
class OtherCount(Change):
    """Dates of one column whose whole years ("Y", to a reference cell `cell`) or months
    ("M", from the same row's date in column `against`) came out as the row's starting
    count, moved by one year (month) to where the count differs: a count typed on a row
    far from its anniversary, which a move by up to 40 days never changes, then fails.
    Rows within a day of an anniversary (`SameDay`'s) stay; the moved date keeps at least
    31 days from the reference, and for "M" a day of 1 to 28."""

    unit: str = "Y"
    cell: str = ""
    against: str = ""

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        from rlenvs.workbook.cells import column_number

        area = parse_area(self.area)
        rows, starting = _rows_of(changed, area), _rows_of(original, area)
        fixed = parse_area(self.cell, single=True) if self.cell else None
        other = column_number(self.against) if self.against else 0

        def reference(sheet: Sequence[Sequence[Any]], r: int) -> Any:
            return _get(sheet, fixed.top, fixed.left) if fixed else _get(sheet, r, other)

        def count(date: dt.date, ref: dt.date) -> int:
            return _whole(self.unit, date, ref) if self.unit == "Y" else _whole(self.unit, ref, date)

        for r in range(area.top, area.bottom + 1):
            date, ref = _get(rows, r, area.left), reference(rows, r)
            was, was_ref = _get(starting, r, area.left), reference(starting, r)
            if not all(isinstance(d, dt.date) for d in (date, ref, was, was_ref)) or count(date, ref) != count(
                was, was_ref
            ):
                continue
            if self._beside_anniversary(date, ref):
                continue  # SameDay's row
            for step in (-1, 1) if self.unit == "Y" else (1, -1):
                moved = self._by(date, step)
                apart = (ref - moved).days if self.unit == "Y" else (moved - ref).days
                if moved is not None and apart >= 31:
                    _put(rows, r, area.left, moved)
                    break

    def _beside_anniversary(self, date: dt.date, ref: dt.date) -> bool:
        """Whether the date is on, or a day from, the reference's anniversary nearest it."""
        for year in (date.year - 1, date.year, date.year + 1):
            try:
                on = (
                    dt.date(year, ref.month, ref.day)
                    if self.unit == "Y"
                    else dt.date(date.year, date.month, min(ref.day, 28))
                )
            except ValueError:  # 29 February in a year without one
                continue
            if abs((date - on).days) <= 1:
                return True
        return False

    def _by(self, date: dt.date, step: int) -> dt.date | None:
        """The date one year (month) later or earlier, its day kept (28 at most)."""
        if self.unit == "Y":
            return date.replace(year=date.year + step, day=min(date.day, 28))
        year, month = divmod(date.year * 12 + date.month - 1 + step, 12)
        return dt.date(year, month + 1, min(date.day, 28))


@dataclass(frozen=True)
class DateEdges(Change):
    """A column of dates (orders totalled by year and month) where rows move to the edges of
    the months the starting dates fall in: for each month, its last day, and the first day
    of the month after it (on the first day of a month too); then one row to the same day a
    year later and one a year earlier; as many of these as there are rows, in that order of
    need. A month taken as 31 days (`<DATE(y,m,1)+31`) then takes in the 1st of the next
    month after every shorter month, one taken as 30 days misses the 31st, `<` EOMONTH
    misses the last day, `>` the first, and a total by MONTH alone takes in the other year."""

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        area = parse_area(self.area)
        rows, starting = _rows_of(changed, area), _rows_of(original, area)
        span = [r for r in range(area.top, area.bottom + 1) if isinstance(_get(rows, r, area.left), dt.date)]
        if len(span) < 4:
            return
        months = sorted({(d.year, d.month) for r in span if isinstance(d := _get(starting, r, area.left), dt.date)})
        edges = []
        for year, month in months:
            last = calendar.monthrange(year, month)[1]
            after = dt.date(year + month // 12, month % 12 + 1, 1)
            edges += [dt.date(year, month, last), after]
        edges = [edges[int(i)] for i in rng.permutation(len(edges))]
        order = [span[int(i)] for i in rng.permutation(len(span))]
        away = [(order.pop(), years) for years in (1, -1) if len(order) > 2]
        for r, years in away:
            date = _get(rows, r, area.left)
            _put(rows, r, area.left, date.replace(year=date.year + years, day=min(date.day, 28)))
        for r, date in zip(order, edges):
            _put(rows, r, area.left, date)


@dataclass(frozen=True)
class InOrder(Change):
    """A column of end dates kept after the same row's start date (column `after`), as in
    the data (a task ends after it starts, a rental comes back after it went out): moving
    both by up to 40 days each put some ends before their starts, where DATEDIF is #NUM!
    and an honest day count then differs from what the task's data could hold. A row whose
    end came to lie before its start or at its starting distance from it gets a new
    distance (1 day or more, never the one it had), so a day count typed per row still
    fails on every row."""

    after: str = ""

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        from rlenvs.workbook.cells import column_number

        area = parse_area(self.area)
        rows, starting = _rows_of(changed, area), _rows_of(original, area)
        begin = column_number(self.after)
        for r in range(area.top, area.bottom + 1):
            start, end = _get(rows, r, begin), _get(rows, r, area.left)
            was_start, was_end = _get(starting, r, begin), _get(starting, r, area.left)
            if not all(isinstance(d, dt.date) for d in (start, end, was_start, was_end)):
                continue
            gap, was = (end - start).days, (was_end - was_start).days
            if gap >= 1 and gap != was:
                continue
            choices = [days for days in range(1, max(3, 2 * was) + 1) if days != was]
            _put(rows, r, area.left, start + dt.timedelta(days=choices[int(rng.integers(len(choices)))]))
