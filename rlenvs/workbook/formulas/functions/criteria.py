"""Criteria of COUNTIF/SUMIF/... and Excel's wildcard text matching (also used by
MATCH/VLOOKUP/HLOOKUP in exact mode).

A criterion is a value or text with an optional leading operator: `">5"`, `"<>x"`,
`"=x"`, `"x"`, `"<=2024-01-31"`. As in Excel:

- text comparison ignores case; `*` matches any run of characters, `?` one character,
  `~` escapes the next `*`, `?` or `~`; wildcards apply to `=` and `<>` only;
- a numeric operand compares with numbers; for equality, text cells that read as that
  number also match (Excel coerces them, which is why COUNTIF confuses long digit
  strings); `<`, `>`, `<=`, `>=` never match text or empty cells;
- `""` matches empty cells and cells holding ""; `"="` matches only empty cells; `"<>"`
  matches every non-empty cell; `"<>x"` matches everything that is not x, empty included;
- a criterion that is a reference to an empty cell means 0 (Microsoft's SUMIFS docs);
- a criterion "TRUE"/"FALSE" matches booleans; an error code ("#N/A") matches that error;
- a date written as text is that date (its serial): `">=2024-01-01"`, `">=1/1/2024"` and
  `">="&TEXT(DATE(2024,1,1),"m/d/yyyy")` all compare with the dates of the range, as in
  Excel and LibreOffice in an en-US locale (`datetext`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from rlenvs.workbook.formulas.datetext import text_date
from rlenvs.workbook.values import (
    ERRORS,
    ErrorValue,
    Scalar,
    approx_equal,
    date_to_serial,
    is_number,
    text_to_number,
)


@lru_cache(maxsize=1024)
def wildcard_regex(pattern: str) -> re.Pattern[str]:
    """The case-insensitive regular expression of an Excel wildcard pattern."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "~" and i + 1 < len(pattern) and pattern[i + 1] in "*?~":
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def has_wildcards(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?~")


def text_matches(pattern: str, value: str) -> bool:
    """Excel's text equality with wildcards, ignoring case."""
    if not has_wildcards(pattern):
        return pattern.lower() == value.lower()
    return wildcard_regex(pattern).fullmatch(value) is not None


Matcher = Callable[[Scalar], bool]


def _equal_to(operand: Scalar) -> Matcher:
    if isinstance(operand, ErrorValue):
        return lambda v: v == operand
    if isinstance(operand, bool):
        return lambda v: isinstance(v, bool) and v == operand
    if isinstance(operand, float):
        x = operand

        def eq_num(v: Scalar) -> bool:
            if is_number(v):
                return approx_equal(float(v), x)  # type: ignore[arg-type]
            if isinstance(v, str):
                y = text_to_number(v)
                return y is not None and approx_equal(y, x)
            return False

        return eq_num
    pattern = str(operand)
    return lambda v: isinstance(v, str) and text_matches(pattern, v)


def _ordered(op: str, operand: Scalar) -> Matcher:
    test = {"<": lambda c: c < 0, ">": lambda c: c > 0, "<=": lambda c: c <= 0, ">=": lambda c: c >= 0}[op]
    if isinstance(operand, float):
        x = operand

        def cmp_num(v: Scalar) -> bool:
            if not is_number(v):
                return False
            y = float(v)  # type: ignore[arg-type]
            return test(0 if approx_equal(y, x) else (-1 if y < x else 1))

        return cmp_num
    if isinstance(operand, bool):
        b = operand
        return lambda v: isinstance(v, bool) and test((v > b) - (v < b))
    if isinstance(operand, ErrorValue):
        return lambda v: False
    s = str(operand).lower()

    def cmp_text(v: Scalar) -> bool:
        if not isinstance(v, str):
            return False
        t = v.lower()
        return test((t > s) - (t < s))

    return cmp_text


def _operand(raw: str) -> Scalar:
    x = text_to_number(raw)
    if x is not None:
        return x
    day = text_date(raw)
    if day is not None:  # ">=1/1/2024": a date, as typed input is read (en-US)
        return date_to_serial(day)
    u = raw.strip().upper()
    if u in ("TRUE", "FALSE"):
        return u == "TRUE"
    if u in ERRORS:
        return ERRORS[u]
    return raw


def make_matcher(criterion: Scalar) -> Matcher:
    """A predicate over cell values for one criterion (see the module docstring)."""
    if criterion is None:
        criterion = 0.0
    if isinstance(criterion, (ErrorValue, bool)):
        return _equal_to(criterion)
    if is_number(criterion):
        return _equal_to(float(criterion))
    s = str(criterion)
    for op in ("<=", ">=", "<>", "<", ">", "="):
        if s.startswith(op):
            rest = s[len(op) :]
            break
    else:
        op, rest = "", s
    if rest == "":
        if op == "":
            return lambda v: v is None or v == ""
        if op == "=":
            return lambda v: v is None
        if op == "<>":
            return lambda v: v is not None
        return lambda v: False
    operand = _operand(rest)
    if op in ("", "="):
        return _equal_to(operand)
    if op == "<>":
        eq = _equal_to(operand)
        return lambda v: not eq(v)
    return _ordered(op, operand)
