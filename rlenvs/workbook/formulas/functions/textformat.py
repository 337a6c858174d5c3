"""The number formats TEXT(value, format) understands.

Supported (anything else is #VALUE!, so that a task never silently depends on a format
we would render differently from Excel):

- numbers: `0`, `0.00` (any count of decimals), `#,##0`, `#,##0.00`, each optionally
  with a leading `$` and/or a trailing `%` (`0%`, `0.0%`): rounded half away from zero,
  minus sign first (`-$1,234.50`); zeros before the point pad the whole part to that many
  digits (`00` writes 5 as 05, a month number as 01-12; `000.0` writes 3.14 as 003.1);
- `General`: the number as `&` would write it;
- dates: any sequence of `yyyy`, `yy`, `mmmm` (January), `mmm` (Jan), `mm`, `m`,
  `dddd` (Monday), `ddd` (Mon), `dd`, `d`, separated by `-`, `/`, `.`, `,` or spaces — e.g.
  `yyyy-mm-dd`, `dd/mm/yyyy`, `mmm yyyy`, `mmmm d, yyyy`. Month and day names are English.
  No times (`h`, `s`, AM/PM), no colours, no sections (`0;-0;0`).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

from rlenvs.workbook.values import (
    VALUE,
    ErrorValue,
    EvalError,
    number_to_text,
    serial_to_ymd,
)

_NUMBER_RE = re.compile(r"(\$?)(#,##0|0+)(?:\.(0+))?(%?)")
_DATE_TOKEN_RE = re.compile(r"yyyy|yy|mmmm|mmm|mm|m|dddd|ddd|dd|d|[-/., ]", re.IGNORECASE)
_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


def _number(x: float, m: re.Match[str]) -> str:
    dollar, integer, decimals, pct = m.groups()
    if pct:
        x *= 100
    places = len(decimals or "")
    d = Decimal(f"{x:.15g}").quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    negative = d < 0
    width = len(integer) + (places + 1 if places else 0)  # "00.0": at least 2 digits before the point
    body = f"{abs(d):,.{places}f}" if integer == "#,##0" else f"{abs(d):0{width}.{places}f}"
    return ("-" if negative else "") + dollar + body + pct


def _date(x: float, fmt: str) -> str | None:
    tokens = _DATE_TOKEN_RE.findall(fmt)
    if "".join(tokens) != fmt or not any(t[0].lower() in "ymd" for t in tokens):
        return None
    y, mo, d = serial_to_ymd(x)
    weekday = (int(x) - 1) % 7  # serial 1 (1900-01-01) is a Sunday in Excel's calendar
    out = []
    for t in tokens:
        k = t.lower()
        if k == "yyyy":
            out.append(f"{y:04d}")
        elif k == "yy":
            out.append(f"{y % 100:02d}")
        elif k == "mmmm":
            out.append(_MONTHS[mo - 1])
        elif k == "mmm":
            out.append(_MONTHS[mo - 1][:3])
        elif k == "mm":
            out.append(f"{mo:02d}")
        elif k == "m":
            out.append(str(mo))
        elif k == "dddd":
            out.append(_DAYS[weekday])
        elif k == "ddd":
            out.append(_DAYS[weekday][:3])
        elif k == "dd":
            out.append(f"{d:02d}")
        elif k == "d":
            out.append(str(d))
        else:
            out.append(t)
    return "".join(out)


def format_number(x: float, fmt: str) -> str | ErrorValue:
    """x in one of the supported formats (module docstring), else #VALUE!."""
    m = _NUMBER_RE.fullmatch(fmt)
    if m:
        return _number(x, m)
    if fmt.lower() == "general":
        return number_to_text(x)
    try:
        out = _date(x, fmt)
    except EvalError:
        return VALUE
    return VALUE if out is None else out
