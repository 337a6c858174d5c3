"""Steps on date columns: anniversaries and the days beside them, month edges."""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass
from typing import Any

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import Change, _get, _put, _rows_of


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
