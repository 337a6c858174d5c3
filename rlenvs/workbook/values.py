"""Cell values, Excel's errors, and the coercions between them.

A value is one of: a number (`float`; `int` accepted on input), text (`str`), a boolean,
`None` (an empty cell), an `ErrorValue`, or — in input cells only — a `datetime.date`.
Dates are Excel serial numbers as soon as arithmetic touches them (`date_to_serial`).
Python's `bool` is a subclass of `int`, so every test below checks `bool` first.

Excel's conventions that the coercions implement (and that tasks rely on):

- arithmetic reads an empty cell as 0, TRUE/FALSE as 1/0, and text that looks like a
  number as that number ("3" + 1 = 4, " 1,000 " + 1 = 1001, "50%" + 0 = 0.5,
  "2024-01-31" + 0 = its date serial); any other text, including "", is #VALUE!;
- text contexts read an empty cell as "", booleans as "TRUE"/"FALSE" and numbers in
  General format (up to 15 significant digits, see `number_to_text`);
- comparisons order numbers < text < booleans, compare text case-insensitively, and read
  an empty cell as 0, "" or FALSE according to the other side;
- equality of numbers is Excel's and LibreOffice's "approximately equal" (0.1+0.2 = 0.3 is
  TRUE), and a + b of opposite signs that cancel to rounding noise is exactly 0.

Errors propagate: a function that needs a value and receives an error returns that error
(the leftmost one when several arguments are errors).

`#CIRCULAR!` is ours: Excel warns about a circular reference and shows 0 in the cell;
LibreOffice shows Err:522. A task must never pass by accident on a cycle, so the cells of
a cycle, and every cell computed from them, hold this error instead of a number.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True, slots=True)
class ErrorValue:
    """An error shown in a cell, such as `#DIV/0!`; compare with the constants below."""

    code: str

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"ErrorValue({self.code!r})"


DIV0 = ErrorValue("#DIV/0!")
REF = ErrorValue("#REF!")
NAME = ErrorValue("#NAME?")
VALUE = ErrorValue("#VALUE!")
NA = ErrorValue("#N/A")
NUM = ErrorValue("#NUM!")
NULL = ErrorValue("#NULL!")
CIRCULAR = ErrorValue("#CIRCULAR!")
ERRORS: dict[str, ErrorValue] = {e.code: e for e in (DIV0, REF, NAME, VALUE, NA, NUM, NULL, CIRCULAR)}
"""Every error by its code (Excel's own, plus #CIRCULAR!)."""

Scalar = float | int | str | bool | None | ErrorValue
"""One evaluated value (no dates: those are serial numbers once read)."""


class EvalError(Exception):
    """Raised inside function implementations to return an error value at once; the
    function dispatcher turns it back into the `ErrorValue`. Never escapes evaluation."""

    def __init__(self, error: ErrorValue):
        super().__init__(error.code)
        self.error = error


# --- dates -------------------------------------------------------------------------

_EPOCH = _dt.date(1899, 12, 30)  # serial 0 for dates from 1900-03-01 on
MAX_SERIAL = 2_958_465  # 9999-12-31


def date_to_serial(value: _dt.date) -> float:
    """Excel's serial of a date (a datetime adds its time as a fraction of a day).

    Serial 1 is 1900-01-01. Excel (copying Lotus 1-2-3) counts a 29 February 1900 that
    never existed as serial 60, so dates from 1900-03-01 on are days since 1899-12-30, and
    January and February 1900 are one less. LibreOffice agrees from 1900-03-01 on (it has
    no 29 February 1900 and counts earlier dates from 1899-12-30)."""
    d = value.date() if isinstance(value, _dt.datetime) else value
    days = (d - _EPOCH).days
    if d < _dt.date(1900, 3, 1):
        days -= 1
    if isinstance(value, _dt.datetime):
        t = value
        return days + (t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6) / 86400
    return float(days)


def serial_to_ymd(serial: float) -> tuple[int, int, int]:
    """(year, month, day) of a serial, as YEAR/MONTH/DAY give them: 0 is "1900-01-00",
    60 is the fictitious 1900-02-29. Raises EvalError(#NUM!) outside 0..9999-12-31."""
    if not 0 <= serial < MAX_SERIAL + 1:
        raise EvalError(NUM)
    n = int(serial)
    if n == 0:
        return 1900, 1, 0
    if n == 60:
        return 1900, 2, 29
    d = serial_to_date(n)
    return d.year, d.month, d.day


def serial_to_date(serial: float) -> _dt.date:
    """The date of a serial (its whole part), inverse of `date_to_serial` except for the
    fictitious 1900-02-29 (serial 60), which reads as 1900-02-28."""
    n = int(serial)
    if n < 1 or n > MAX_SERIAL:
        raise ValueError(f"serial {serial!r} is not a date between 1900-01-01 and 9999-12-31")
    if n < 61:
        n += 1 if n < 60 else 0
    return _EPOCH + _dt.timedelta(days=n)


# --- numbers <-> text ----------------------------------------------------------------

_NUMBER_TEXT_RE = re.compile(r"([+-]?)\$?((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)(%?)")
_ISO_DATE_RE = re.compile(r"([0-9]{4})[-/]([0-9]{1,2})[-/]([0-9]{1,2})")


def text_to_number(text: str) -> float | None:
    """The number that text stands for in arithmetic, or None: "3", " -1.5e3 ", "1,000",
    "$12.50", "50%", and ISO dates "2024-01-31" / "2024/01/31" (as their serial)."""
    s = text.strip()
    m = _NUMBER_TEXT_RE.fullmatch(s)
    if m and any(ch.isdigit() for ch in m.group(2)) and not m.group(2).startswith(("e", "E")):
        body = m.group(2).replace(",", "")
        if body.startswith("."):
            body = "0" + body
        try:
            x = float(body)
        except ValueError:
            return None
        if m.group(1) == "-":
            x = -x
        if m.group(3):
            x /= 100
        return x if math.isfinite(x) else None
    m = _ISO_DATE_RE.fullmatch(s)
    if m:
        try:
            return date_to_serial(_dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
        except ValueError:
            return None
    return None


def number_to_text(x: float) -> str:
    """A number as Excel's General format writes it in text contexts (`&`, LEN, CONCAT):
    at most 15 significant digits, no trailing zeros; plain notation from 1E-9 up to
    1E15, scientific like `1.5E+20` outside. (Excel's exact switch-over points for
    scientific notation are not documented; these are the ones we chose.)"""
    if x == 0:
        return "0"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    if 1e-9 <= abs(x) < 1e15:
        s = format(Decimal(f"{x:.15g}"), "f")
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        return s
    mant, _, exp = f"{x:.14E}".partition("E")
    mant = mant.rstrip("0").rstrip(".")
    e = int(exp)
    return f"{mant}E{'+' if e >= 0 else '-'}{abs(e):02d}"


# --- coercions ----------------------------------------------------------------------


def to_number(v: Scalar) -> float | ErrorValue:
    """Arithmetic's reading of a value (see the module docstring)."""
    t = type(v)
    if t is float:
        return v  # type: ignore[return-value]
    if t is bool:
        return 1.0 if v else 0.0
    if t is int:
        return float(v)  # type: ignore[arg-type]
    if v is None:
        return 0.0
    if t is str:
        x = text_to_number(v)  # type: ignore[arg-type]
        return VALUE if x is None else x
    if isinstance(v, ErrorValue):
        return v
    if isinstance(v, _dt.date):
        return date_to_serial(v)
    return VALUE


def to_text(v: Scalar) -> str | ErrorValue:
    """Text contexts' reading of a value (see the module docstring)."""
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        return number_to_text(float(v))
    if isinstance(v, ErrorValue):
        return v
    return VALUE


def to_bool(v: Scalar) -> bool | ErrorValue:
    """Logical contexts' reading: numbers are TRUE unless 0, empty is FALSE, the text
    "TRUE"/"FALSE" (any case) is itself, other text is #VALUE!."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v != 0
    if v is None:
        return False
    if isinstance(v, str):
        u = v.strip().upper()
        if u in ("TRUE", "FALSE"):
            return u == "TRUE"
        return VALUE
    if isinstance(v, ErrorValue):
        return v
    return VALUE


def is_number(v: object) -> bool:
    """A real number, not a boolean."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_REL = 2.0**-48


def approx_equal(a: float, b: float) -> bool:
    """Numbers equal up to the last few bits, as Excel and LibreOffice compare them."""
    if a == b:
        return True
    return abs(a - b) <= max(abs(a), abs(b)) * _REL


def approx_add(a: float, b: float) -> float:
    """a + b, made exactly 0 when opposite signs cancel to rounding noise (so that
    0.3 - 0.1 - 0.2 is 0, as spreadsheets show it)."""
    s = a + b
    if ((a < 0 < b) or (b < 0 < a)) and approx_equal(a, -b):
        return 0.0
    return s


def _rank(v: Scalar) -> int:
    if isinstance(v, bool):
        return 2
    if isinstance(v, str):
        return 1
    return 0


def compare(a: Scalar, b: Scalar) -> int | ErrorValue:
    """-1, 0 or 1 for a <, =, > b in Excel's ordering (numbers < text < booleans, text
    case-insensitive, empty as the other side's zero); an error operand is returned."""
    if isinstance(a, ErrorValue):
        return a
    if isinstance(b, ErrorValue):
        return b
    if a is None:
        a = "" if isinstance(b, str) else False if isinstance(b, bool) else 0.0
    if b is None:
        b = "" if isinstance(a, str) else False if isinstance(a, bool) else 0.0
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 1:
        x, y = a.lower(), b.lower()  # type: ignore[union-attr]
        return 0 if x == y else (-1 if x < y else 1)
    x, y = float(a), float(b)
    if approx_equal(x, y):
        return 0
    return -1 if x < y else 1


def normalize_input(value: object) -> Scalar | _dt.date:
    """Check a constant entered into a cell: numbers (not NaN/inf), text, booleans, None,
    dates and ErrorValues pass; anything else is a TypeError that says what is allowed."""
    if value is None or isinstance(value, (str, bool, ErrorValue)):
        return value
    if isinstance(value, (int, float)):
        x = float(value)
        if not math.isfinite(x):
            raise ValueError(f"cell value {value!r} is not a finite number")
        return value if isinstance(value, int) else x
    if isinstance(value, _dt.date):
        return value
    item = getattr(value, "item", None)  # numpy scalars: np.float64(2.5).item() == 2.5
    if callable(item) and type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
        return normalize_input(item())
    raise TypeError(
        f"cell value {value!r} of type {type(value).__name__}: expected a number, str, bool, "
        "None, datetime.date or ErrorValue (a formula is a str starting with '=')"
    )
