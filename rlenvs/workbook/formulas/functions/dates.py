"""Date functions: DATE, YEAR, MONTH, DAY, DAYS, DATEDIF, EDATE, EOMONTH, WEEKDAY, DATEVALUE.

Dates are Excel serial numbers (`values.date_to_serial`: serial 1 is 1900-01-01, with
Excel's fictitious 1900-02-29 as serial 60). Text that reads as an ISO date
("2024-01-31") is accepted wherever a date is. TODAY and NOW are volatile (`volatile`): a
judged value computed from one is refused, since a task's result must not depend on the day
it is checked.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math

from rlenvs.workbook.formulas.datetext import text_date
from rlenvs.workbook.formulas.functions.base import function, integer, num, text
from rlenvs.workbook.values import (
    MAX_SERIAL,
    NUM,
    VALUE,
    EvalError,
    Scalar,
    date_to_serial,
    serial_to_ymd,
)


def _serial(y: int, m: int, d: int) -> float:
    """Serial of day d of month m of year y, months and days overflowing as in DATE."""
    y += (m - 1) // 12
    m = (m - 1) % 12 + 1
    if not 1900 <= y <= 9999:
        raise EvalError(NUM)
    s = date_to_serial(dt.date(y, m, 1)) + d - 1
    if not 0 <= s <= MAX_SERIAL:
        raise EvalError(NUM)
    return s


def _ymd(v: Scalar) -> tuple[int, int, int]:
    return serial_to_ymd(num(v))


@function("DATE", min_args=3, max_args=3)
def date(year: Scalar, month: Scalar, day: Scalar) -> float:
    """Serial of a date. Years 0..1899 mean 1900..3799 (Excel's rule); months and days
    outside their range roll over (DATE(2024,13,1) is 2025-01-01, DATE(2024,3,0) is
    2024-02-29); #NUM! before serial 0 or after 9999-12-31."""
    y, m, d = integer(year), integer(month), integer(day)
    if 0 <= y < 1900:
        y += 1900
    if not 1900 <= y <= 9999:
        raise EvalError(NUM)
    return _serial(y, m, d)


@function("YEAR", min_args=1, max_args=1)
def year(serial: Scalar) -> float:
    """Year of a date serial."""
    return float(_ymd(serial)[0])


@function("MONTH", min_args=1, max_args=1)
def month(serial: Scalar) -> float:
    """Month (1..12) of a date serial."""
    return float(_ymd(serial)[1])


@function("DAY", min_args=1, max_args=1)
def day(serial: Scalar) -> float:
    """Day of the month of a date serial."""
    return float(_ymd(serial)[2])


@function("DAYS", min_args=2, max_args=2)
def days(end: Scalar, start: Scalar) -> float:
    """Whole days from start to end (negative when end is earlier)."""
    e, s = num(end), num(start)
    serial_to_ymd(e), serial_to_ymd(s)  # range check
    return float(math.floor(e) - math.floor(s))


@function("DATEDIF", min_args=3, max_args=3)
def datedif(start: Scalar, end: Scalar, unit: Scalar) -> float:
    """Complete days ("d"), months ("m"), years ("y") or months beyond whole years ("ym")
    from start to end. #NUM! when start is after end or for other units ("md" and "yd"
    are documented by Microsoft as unreliable and are not provided)."""
    s, e = math.floor(num(start)), math.floor(num(end))
    u = text(unit).strip().lower()
    if s > e:
        raise EvalError(NUM)
    y1, m1, d1 = serial_to_ymd(s)
    y2, m2, d2 = serial_to_ymd(e)
    months = (y2 - y1) * 12 + (m2 - m1) - (1 if d2 < d1 else 0)
    if u == "d":
        return float(e - s)
    if u == "m":
        return float(months)
    if u == "y":
        return float(months // 12)
    if u == "ym":
        return float(months % 12)
    raise EvalError(NUM)


def _add_months(serial: Scalar, months: Scalar, end_of_month: bool) -> float:
    y, m, d = _ymd(serial)
    total = y * 12 + (m - 1) + integer(months)
    y, m = divmod(total, 12)
    m += 1
    if not 1900 <= y <= 9999:
        raise EvalError(NUM)
    last = calendar.monthrange(y, m)[1]
    return _serial(y, m, last if end_of_month else min(d, last))


@function("EDATE", min_args=2, max_args=2, ranges=False)
def edate(start: Scalar, months: Scalar) -> float:
    """The same day months later (or earlier), clamped to the month's end
    (EDATE(2024-01-31, 1) is 2024-02-29). A range of several cells is #VALUE!, as in Excel
    (an Analysis ToolPak function); an array lifts (`EDATE(+B2:B9,1)`)."""
    return _add_months(start, months, False)


@function("EOMONTH", min_args=2, max_args=2, ranges=False)
def eomonth(start: Scalar, months: Scalar) -> float:
    """The last day of the month months later (or earlier). A range of several cells is
    #VALUE!, as in Excel; an array lifts (`EOMONTH(+B2:B9,0)`)."""
    return _add_months(start, months, True)


@function("WEEKDAY", min_args=1, max_args=2)
def weekday(serial: Scalar, return_type: Scalar = None) -> float:
    """Day of the week: type 1 (default) Sunday=1..Saturday=7, type 2 Monday=1..Sunday=7,
    type 3 Monday=0..Sunday=6, types 11 to 17 1..7 from Monday (11) to Sunday (17); #NUM!
    for other types."""
    x = num(serial)
    serial_to_ymd(x)
    sunday0 = (math.floor(x) - 1) % 7  # serial 1 is a Sunday in Excel's calendar
    t = 1 if return_type is None else integer(return_type)
    if t == 1:
        return float(sunday0 + 1)
    if t == 2:
        return float((sunday0 - 1) % 7 + 1)
    if t == 3:
        return float((sunday0 - 1) % 7)
    if 11 <= t <= 17:
        return float((sunday0 - 1 - (t - 11)) % 7 + 1)
    raise EvalError(NUM)


@function("DATEVALUE", min_args=1, max_args=1)
def datevalue(date_text: Scalar) -> float:
    """The serial of a date written as text ("2024-01-31", "1/31/2024", "31-Jan-2024",
    "January 31, 2024"); #VALUE! for other text, and for a number or a date (Excel wants
    text: DATEVALUE(TEXT(C2,"yyyy-mm-dd")))."""
    if not isinstance(date_text, str):
        raise EvalError(VALUE)
    day = text_date(date_text)
    if day is None:
        raise EvalError(VALUE)
    return date_to_serial(day)
