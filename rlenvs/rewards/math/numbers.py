"""Reading one number from an answer as people and models write it.

`1,234`, `$1,234.50`, `1{,}234`, `1\\,234`, trailing `.0`, fractions `3/4` and
`\\frac{3}{4}`, unicode minus and fullwidth digits, `%` and `\\%` dropped, currency signs
(`1,000.99€`, `£5`) and trailing units ("72 clips", "18 dollars", "5 cm", "3 m²", "4 m/s").
Anything else around the number ("5 or 6", "x + 1", "about 5") makes it not a number, and
so does a letter that reads as a factor rather than a unit: `5x`, `5e`, `5i`, `5 \\pi` are
not 5. Values are exact: ints, or Fractions where not integral.
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
_UNIT_WORD = r"[^\W\d_]+(?:\^-?\d)?"
"""A unit word, with a power after its letters (`m^2`, `s^-1`)."""
_NUMBER = re.compile(
    r"(?P<sign>[-+]?)\s*"
    r"(?P<int>[1-9]\d{0,2}(?:,\d{3})+|\d+)?(?:\.(?P<frac>\d*))?"
    r"(?:\s*/\s*(?P<den>\d+))?"
    rf"\s*(?P<unit>{_UNIT_WORD}(?:(?:[\s'’-]|\s*/\s*){_UNIT_WORD})*)?\s*"
)
_SHORT_UNITS = frozenset({
    "m", "g", "s", "h", "l", "L", "K", "N", "V", "W", "J", "A", "Hz", "Pa", "cm", "mm", "km", "nm", "um", "kg",
    "mg", "ml", "mL", "cl", "dl", "ft", "yd", "mi", "lb", "oz", "hr", "ms", "kW", "kJ", "mV", "mA", "ha", "in",
    "C", "F", "yr", "am", "pm", "st", "nd", "rd", "th",
})
"""Units of one or two letters. Any other word that short after a number is a factor or a
variable (`5x`, `5 e`, `5i`, `5k`, `2ab`), or a word such as "or", not a unit."""
_NOT_UNITS = frozenset({
    "pi", "sqrt", "sin", "cos", "tan", "sec", "csc", "cot", "log", "exp", "and", "or", "not", "plus", "minus",
})
"""Longer words that are constants or functions (`5 pi` is 5π) or join a list (`5 and x`)."""
_CURRENCY = re.compile("^[€£¥₹₩₽¢₺₪₫₴₦]|[€£¥₹₩₽¢₺₪₫₴₦]$")
THOUSANDS_BRACES = re.compile(r"\s*\{\s*,\s*\}\s*")
"""`14{,}916` and `14 {, }916`: a comma in braces is a thousands separator (LaTeX ignores
the spaces in math)."""


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
    if not text.isascii():
        text = _CURRENCY.sub("", text.strip()).strip()
    match = _NUMBER.fullmatch(text)
    if match is None or (match.group("int") is None and not match.group("frac")):
        return None
    if match.group("unit") and not _is_unit(match.group("unit")):
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


def _is_unit(unit: str) -> bool:
    """Whether the words after a number are a unit (`cm`, `clips`, `m/s`), not a factor."""
    words = re.findall(r"[^\W\d_]+", unit)
    if any(word.lower() in _NOT_UNITS for word in words):
        return False
    return len(words[0]) > 2 or words[0] in _SHORT_UNITS


def strip_latex(text: str) -> str:
    text = THOUSANDS_BRACES.sub(",", text.replace("\\$", "").replace("$", "")).replace("\\%", "%")
    for spacing in ("\\,", "\\!", "\\;", "\\ ", "\\left", "\\right"):
        text = text.replace(spacing, "" if spacing in ("\\,", "\\!") else " ")
    text = _TEXT_COMMANDS.sub(r" \1", text)
    text = _FRAC.sub(lambda m: f"{m[1] or m[2]}/{m[3] or m[4]}", text)
    return text.replace("{", "").replace("}", "")

