"""Reading one number from an answer as people and models write it.

`1,234`, `$1,234.50`, `1{,}234`, `1\\,234`, trailing `.0`, fractions `3/4` and
`\\frac{3}{4}`, unicode minus and fullwidth digits, `%` and `\\%` dropped, and trailing unit
words ("72 clips", "18 dollars"). Anything else around the number ("5 or 6", "x + 1",
"about 5") makes it not a number. Values are exact: ints, or Fractions where not integral.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction
from typing import Union

NUMBER_MAX_CHARS = 200
"""A text longer than this is not a number; skip normalising it."""

_TEXT_COMMANDS = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dtc]?frac\s*(?:\{([^{}]*)\}|(\d))\s*(?:\{([^{}]*)\}|(\d))")
"""`\\frac{3}{4}`, and the brace-less `\\frac34`, `\\frac3{4}`."""
_NUMBER = re.compile(
    r"(?P<sign>[-+]?)\s*"
    r"(?P<int>[1-9]\d{0,2}(?:,\d{3})+|\d+)?(?:\.(?P<frac>\d*))?"
    r"(?:\s*/\s*(?P<den>\d+))?"
    r"\s*(?P<unit>[^\W\d_]+(?:[\s'’-][^\W\d_]+)*)?\s*"
)


_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+")
_SUBSCRIPT_RUN = re.compile("[₀₁₂₃₄₅₆₇₈₉]+")
_SCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻₀₁₂₃₄₅₆₇₈₉", "0123456789+-0123456789")


def unicode_to_ascii(text: str) -> str:
    """Fullwidth and other compatibility characters as ASCII (NFKC), unicode minus as `-`,
    but superscript and subscript digits as `^{..}` and `_{..}`: NFKC alone would read the
    power `2⁵` as the number 25."""
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SCRIPT_DIGITS) + "}", text)
    text = _SUBSCRIPT_RUN.sub(lambda m: "_{" + m.group().translate(_SCRIPT_DIGITS) + "}", text)
    return unicodedata.normalize("NFKC", text).replace("−", "-")


Number = Union[int, Fraction]
"""Integral values are plain ints (the common case, and much cheaper than Fraction)."""


def parse_number(text: str) -> Number | None:
    """The single number `text` states (units, currency, separators allowed), else None."""
    if len(text) > NUMBER_MAX_CHARS:
        return None
    if text.isdigit() and text.isascii():
        return int(text)
    if not text.isascii():
        text = unicode_to_ascii(text)
    if "\\" in text or "{" in text or "$" in text:
        text = strip_latex(text)
    text = text.strip().rstrip(".,;:!").replace("%", "").replace("*", "")
    match = _NUMBER.fullmatch(text)
    if match is None or (match.group("int") is None and not match.group("frac")):
        return None
    integer = (match.group("int") or "0").replace(",", "")
    fraction_digits = match.group("frac") or ""
    value = Fraction(int(integer + fraction_digits), 10 ** len(fraction_digits))
    if match.group("den") is not None:
        if fraction_digits or int(match.group("den")) == 0:
            return None
        value /= int(match.group("den"))
    if match.group("sign") == "-":
        value = -value
    return value.numerator if value.denominator == 1 else value


def strip_latex(text: str) -> str:
    text = text.replace("\\$", "").replace("$", "").replace("{,}", ",").replace("\\%", "%")
    for spacing in ("\\,", "\\!", "\\;", "\\ ", "\\left", "\\right"):
        text = text.replace(spacing, "" if spacing in ("\\,", "\\!") else " ")
    text = _TEXT_COMMANDS.sub(r" \1", text)
    text = _FRAC.sub(lambda m: f"{m[1] or m[2]}/{m[3] or m[4]}", text)
    return text.replace("{", "").replace("}", "")

