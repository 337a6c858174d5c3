"""Dates written as text, as Excel and LibreOffice read them in an en-US locale: what
DATEVALUE takes, and what a criterion such as `">=1/1/2024"` compares with.

Why one reader for both: `COUNTIF(dates,">=1/1/2024")` and
`SUMIFS(...,">="&TEXT(DATE(y,m,1),"m/d/yyyy"))` mean the date in both programs (the
operand is read as typed input is), and DATEVALUE reads the same texts; reading them two
ways would let one formula's date be another's text.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

_MONTH_NAMES = {name[:3].lower(): i for i, name in enumerate(calendar.month_name) if name}
_TIME = r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: ?[AaPp][Mm])?)?"
_DATE_TEXTS = (
    (re.compile(rf"(\d{{4}})[-/](\d{{1,2}})[-/](\d{{1,2}}){_TIME}"), ("y", "m", "d")),  # 2024-01-31, 2024-01-31 10:30
    (re.compile(rf"(\d{{1,2}})/(\d{{1,2}})/(\d{{2,4}}){_TIME}"), ("m", "d", "y")),  # 1/31/2024 (en-US)
    (re.compile(r"(\d{1,2})[- ]([A-Za-z]{3,9})[- ,]+(\d{2,4})"), ("d", "name", "y")),  # 31-Jan-2024, 31 January 2024
    (re.compile(r"([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{2,4})"), ("name", "d", "y")),  # January 31, 2024
)
"""ISO, and the en-US forms (month before day in 1/2/2024); a time after the date is read
and left out, as DATEVALUE leaves it. Two-digit years are 1930-2029, as in Excel."""


def text_date(text: str) -> dt.date | None:
    """The date a text writes (see `_DATE_TEXTS`), None for any other text."""
    for pattern, order in _DATE_TEXTS:
        m = pattern.fullmatch(text.strip())
        if m is None:
            continue
        parts = dict(zip(order, m.groups(), strict=True))
        month = _MONTH_NAMES.get(parts["name"][:3].lower()) if "name" in parts else int(parts["m"])
        if "name" in parts and (
            month is None or not calendar.month_name[month].lower().startswith(parts["name"].lower())
        ):
            return None
        year = int(parts["y"])
        if len(parts["y"]) == 2:
            year += 2000 if year < 30 else 1900
        try:
            return dt.date(year, month, int(parts["d"]))  # type: ignore[arg-type]
        except ValueError:
            return None
    return None
