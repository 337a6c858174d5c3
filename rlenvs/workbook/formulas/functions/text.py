"""Text functions: CONCAT, CONCATENATE, TEXTJOIN, LEN, UPPER, LOWER, PROPER, TRIM, LEFT,
RIGHT, MID, REPLACE, SUBSTITUTE, REPT, FIND, SEARCH, EXACT, TEXT, VALUE, CHAR, CLEAN.

Numbers are read as text in General format (`values.number_to_text`). Positions are
1-based characters. Results longer than Excel's 32,767 characters are #VALUE!.
"""

from __future__ import annotations

from rlenvs.workbook.formulas.functions.base import (
    boolean,
    check,
    flat,
    function,
    integer,
    num,
    text,
)
from rlenvs.workbook.formulas.functions.criteria import wildcard_regex
from rlenvs.workbook.formulas.functions.textformat import format_number
from rlenvs.workbook.formulas.grid import MAX_TEXT, Value
from rlenvs.workbook.values import (
    VALUE,
    ErrorValue,
    EvalError,
    Scalar,
    is_number,
    text_to_number,
    to_text,
)


def _limit(s: str) -> str:
    if len(s) > MAX_TEXT:
        raise EvalError(VALUE)
    return s


@function("CONCAT", min_args=1, scalar=())
def concat(*args: Value) -> str:
    """All values joined, ranges row by row (empty cells add nothing)."""
    return _limit("".join(check(to_text(v)) for a in args for v in flat(a)))


@function("CONCATENATE", min_args=1)
def concatenate(*args: Scalar) -> str:
    """The values joined; each argument is one value (a range argument is applied
    element by element, as Excel 365 does)."""
    return _limit("".join(text(a) for a in args))


@function("TEXTJOIN", min_args=3, scalar=(0, 1))
def textjoin(delimiter: Scalar, ignore_empty: Scalar, *args: Value) -> str:
    """The values joined with delimiter, skipping empty ones ("" included) when
    ignore_empty is TRUE."""
    sep, skip = text(delimiter), boolean(ignore_empty)
    parts = [check(to_text(v)) for a in args for v in flat(a)]
    if skip:
        parts = [p for p in parts if p != ""]
    return _limit(sep.join(parts))


@function("LEN", min_args=1, max_args=1)
def len_(value: Scalar) -> float:
    """Number of characters (LEN(123) = 3, LEN of an empty cell = 0)."""
    return float(len(text(value)))


@function("UPPER", min_args=1, max_args=1)
def upper(value: Scalar) -> str:
    """Upper case."""
    return text(value).upper()


@function("LOWER", min_args=1, max_args=1)
def lower(value: Scalar) -> str:
    """Lower case."""
    return text(value).lower()


@function("PROPER", min_args=1, max_args=1)
def proper(value: Scalar) -> str:
    """First letter of each word upper case, the others lower case; a letter starts a word
    when the character before it is not a letter ("o'neil 2nd" -> "O'Neil 2Nd")."""
    out, prev_letter = [], False
    for ch in text(value):
        is_letter = ch.isalpha()
        out.append((ch.lower() if prev_letter else ch.upper()) if is_letter else ch)
        prev_letter = is_letter
    return "".join(out)


@function("TRIM", min_args=1, max_args=1)
def trim(value: Scalar) -> str:
    """Spaces removed at both ends and runs of spaces inside made single (only the space
    character, as in Excel; tabs and non-breaking spaces stay)."""
    return " ".join(part for part in text(value).split(" ") if part)


@function("CLEAN", min_args=1, max_args=1)
def clean(value: Scalar) -> str:
    """The text without the control characters of codes 0 to 31 (line breaks, tabs), as in
    Excel; other characters, non-breaking spaces included, stay."""
    return "".join(ch for ch in text(value) if ord(ch) >= 32)


def _count(v: Scalar, default: int) -> int:
    n = default if v is None else integer(v)
    if n < 0:
        raise EvalError(VALUE)
    return n


@function("LEFT", min_args=1, max_args=2)
def left(value: Scalar, count: Scalar = None) -> str:
    """The first count characters (default 1); #VALUE! for a negative count."""
    return text(value)[: _count(count, 1)]


@function("RIGHT", min_args=1, max_args=2)
def right(value: Scalar, count: Scalar = None) -> str:
    """The last count characters (default 1); #VALUE! for a negative count."""
    s, n = text(value), _count(count, 1)
    return s[len(s) - n :] if n < len(s) else s


@function("MID", min_args=3, max_args=3)
def mid(value: Scalar, start: Scalar, count: Scalar) -> str:
    """count characters from position start; #VALUE! when start < 1 or count < 0."""
    s, i, n = text(value), integer(start), integer(count)
    if i < 1 or n < 0:
        raise EvalError(VALUE)
    return s[i - 1 : i - 1 + n]


@function("REPLACE", min_args=4, max_args=4)
def replace(value: Scalar, start: Scalar, count: Scalar, new: Scalar) -> str:
    """value with count characters from position start replaced by new."""
    s, i, n, r = text(value), integer(start), integer(count), text(new)
    if i < 1 or n < 0:
        raise EvalError(VALUE)
    return _limit(s[: i - 1] + r + s[i - 1 + n :])


@function("SUBSTITUTE", min_args=3, max_args=4)
def substitute(value: Scalar, old: Scalar, new: Scalar, instance: Scalar = None) -> str:
    """value with old replaced by new (case-sensitive): every occurrence, or only the
    instance-th; #VALUE! for instance < 1. An empty old changes nothing."""
    s, o, r = text(value), text(old), text(new)
    if instance is None:
        return s if o == "" else _limit(s.replace(o, r))
    k = integer(instance)
    if k < 1:
        raise EvalError(VALUE)
    if o == "":
        return s
    pos = -1
    for _ in range(k):
        pos = s.find(o, pos + 1)
        if pos < 0:
            return s
    return _limit(s[:pos] + r + s[pos + len(o) :])


@function("REPT", min_args=2, max_args=2)
def rept(value: Scalar, count: Scalar) -> str:
    """value repeated count times; #VALUE! for a negative count or a result longer than
    32,767 characters."""
    s, n = text(value), integer(count)
    if n < 0 or len(s) * n > MAX_TEXT:
        raise EvalError(VALUE)
    return s * n


def _start(v: Scalar, within: str) -> int:
    i = 1 if v is None else integer(v)
    if i < 1 or i > len(within) + 1:
        raise EvalError(VALUE)
    return i - 1


@function("FIND", min_args=2, max_args=3)
def find(needle: Scalar, haystack: Scalar, start: Scalar = None) -> float:
    """Position of needle in haystack (case-sensitive, no wildcards) from start; #VALUE!
    when absent."""
    n, h = text(needle), text(haystack)
    pos = h.find(n, _start(start, h))
    if pos < 0:
        raise EvalError(VALUE)
    return float(pos + 1)


@function("SEARCH", min_args=2, max_args=3)
def search(needle: Scalar, haystack: Scalar, start: Scalar = None) -> float:
    """Position of needle in haystack ignoring case, with wildcards * ? ~; #VALUE! when
    absent."""
    n, h = text(needle), text(haystack)
    m = wildcard_regex(n).search(h, _start(start, h))
    if m is None:
        raise EvalError(VALUE)
    return float(m.start() + 1)


@function("EXACT", min_args=2, max_args=2)
def exact(a: Scalar, b: Scalar) -> bool:
    """TRUE when the two texts are identical, case included."""
    return text(a) == text(b)


@function("TEXT", min_args=2, max_args=2)
def text_(value: Scalar, fmt: Scalar) -> str | ErrorValue:
    """value formatted with a number or date format (see `textformat` for the formats
    supported; others are #VALUE!). Text that is not a number is returned unchanged, as
    Excel does."""
    f = text(fmt)
    if isinstance(value, ErrorValue):
        raise EvalError(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        x = text_to_number(value)
        if x is None:
            return value
    else:
        x = num(value)
    return format_number(x, f)


@function("VALUE", min_args=1, max_args=1)
def value_(v: Scalar) -> float:
    """The number a text stands for ("1,000" -> 1000, "50%" -> 0.5, "2024-01-31" -> its
    date serial); #VALUE! for other text and for booleans."""
    if isinstance(v, ErrorValue):
        raise EvalError(v)
    if is_number(v):
        return float(v)  # type: ignore[arg-type]
    if v is None:
        return 0.0
    if isinstance(v, str):
        x = text_to_number(v)
        if x is not None:
            return x
    raise EvalError(VALUE)


@function("CHAR", min_args=1, max_args=1)
def char(code: Scalar) -> str:
    """The character with code 1 to 255 in Excel's (Windows) character set, Windows-1252:
    CHAR(32) a space, CHAR(65) "A", CHAR(10) a line break, CHAR(128) "€" (the five codes
    Windows-1252 leaves out are their Latin-1 control characters). #VALUE! outside 1-255."""
    n = integer(code)
    if not 1 <= n <= 255:
        raise EvalError(VALUE)
    try:
        return bytes([n]).decode("cp1252")
    except UnicodeDecodeError:
        return chr(n)
