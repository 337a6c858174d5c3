"""Reading one number from an answer as people and models write it.

`1,234`, `1 234`, `$1,234.50`, `1{,}234`, `1\\,234`, trailing `.0`, fractions `3/4` and
`\\frac{3}{4}`, mixed numbers `3\\frac{1}{2}` and `3 1/2` (7/2), scientific notation `1e1`,
`1.0\\times10^{1}` and powers of ten (`10^{-12}`), repeating decimals (`0.\\overline{36}`),
unicode minus and fullwidth digits, invisible format characters (zero-width spaces,
bidirectional marks) dropped, `%` and `\\%` dropped, currency signs (`1,000.99€`, `£5`),
scale words (`18 million`, `$60K`) and a trailing unit from the fixed list in `units`
("72 clips", "18 dollars", "5 cm", "3 m²", "4 m/s", "18 cups of flour"). Anything else around
the number ("5 or 6", "x + 1", "about 5", "3 halves", "18 squared", "4!") makes it not a
number, and so does a letter that reads as a factor rather than a unit: `5x`, `5e`, `5i`,
`5 \\pi` are not 5. Values are exact: ints, or Fractions where not integral.

A gold answer is read with `letter_units=False`: a unit of one or two letters counts there
only when written as text (`3\\text{ m}`), so a gold `3s^2` is an expression in s, not 3
seconds squared; and any words written as text after its number are its unit, listed or not
(`12 \\text{ gm}`).

Mixed numbers: an integer written directly before a proper fraction of two integers is
their sum (`2\\frac{3}{4}` and `2 3/4` are 11/4); with an explicit operator it is a product
(`2 \\cdot \\frac34` is 3/2). An integer before an improper fraction (`2\\frac{5}{4}`) is
ambiguous and not a number.
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction

from rlenvs.rewards.math.units import (
    COMPARATIVES,
    MAX_MODIFIERS,
    MEASURES,
    POWER_SUFFIXES,
    SCALES,
    UNIT_JOINERS,
    UNIT_PREFIXES,
    UNIT_SUFFIXES,
    is_short_unit,
    is_unit_word,
    is_value_word,
)

NUMBER_MAX_CHARS = 200
"""A text longer than this is not a number; skip normalising it."""
MAX_EXPONENT = 400
"""Largest power of ten scientific notation may write (`1e400`); beyond it, not a number."""

_TEXT_COMMANDS = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dtc]?frac\s*(?:\{([^{}]*)\}|(\d))\s*(?:\{([^{}]*)\}|(\d))")
"""`\\frac{3}{4}`, and the brace-less `\\frac34`, `\\frac3{4}`."""
_MIXED_LATEX = re.compile(
    r"(?<![\w.^_}\\)\]|!])(\d+)\s*\\[dtc]?frac\s*(?:\{\s*(\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))"
)
"""An integer directly before `\\frac` of two integers: `3\\frac{1}{2}`, `3\\tfrac12`."""
_MIXED_PLAIN = re.compile(r"(?<![\w.^_}\\)\]|!/])(\d+)[ \t]+(\d+)[ \t]*/[ \t]*(\d+)(?![\d.])")
"""An integer, a space, then a fraction of two integers: `3 1/2`."""
_AMBIGUOUS = "\\ambiguousmixednumber"
_REPEATING = re.compile(r"([-+]?)\s*(\d*)\.(\d*)\s*\\overline\s*\{\s*(\d+)\s*\}")
"""`4.\\overline{6}`, `0.1\\overline{6}`: a repeating decimal, as the exact fraction it is."""
_POWER_OF_TEN = re.compile(r"([-+]?)\s*10\s*\^\s*(?:\{\s*([-+]?\d+)\s*\}|([-+]?\d))")
_PERCENT_WORD = re.compile(r"\s*\b(?:percent|per cent|pct)\b", re.IGNORECASE)
"""`25 percent` is 25, as `25%` is (the envs state percentages as plain numbers)."""
_GOLD_TEXT_UNIT = re.compile(
    r"(?<=[\d}])\s*\\(?:text|mbox|mathrm|textrm)\s*\{\s*(?![aApP]\.?\s?[mM]\b)[A-Za-z][A-Za-z .'-]*\}\s*$"
)
"""A unit written as text after a gold number, but not a time of day (`9\\text{ a.m.}`)."""
_GROUPED_DIGITS = re.compile(r"[1-9]\d{0,2}(?:,\d{3})+")
_TEXT_MARKUP = ("\\text", "\\mathrm", "\\mbox", "\\textrm")
"""What an integer before an improper fraction becomes: a command no reader knows."""
_UNIT_WORD = r"[^\W\d_]+(?:\^-?\d)?"
"""A unit word, with a power after its letters (`m^2`, `s^-1`)."""
_NUMBER = re.compile(
    r"(?P<sign>[-+]?)\s*"
    r"(?P<int>[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d{0,2}(?: \d{3})+(?![\d/])|\d+)?(?:\.(?P<frac>\d*))?"
    r"(?:\s*/\s*(?P<den>\d+)|[eE](?P<exp>[-+]?\d+)|\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*(?P<power>[-+]?\d+))?"
    rf"\s*(?P<unit>{_UNIT_WORD}(?:(?:[\s'’-]|\s*/\s*){_UNIT_WORD})*)?\s*"
)
_CURRENCY = re.compile("^[€£¥₹₩₽¢₺₪₫₴₦]|[€£¥₹₩₽¢₺₪₫₴₦]$")
THOUSANDS_BRACES = re.compile(r"\s*\{\s*,\s*\}\s*")
"""`14{,}916` and `14 {, }916`: a comma in braces is a thousands separator (LaTeX ignores
the spaces in math)."""


_BIDI_OVERRIDES = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Characters that reorder what is displayed (`\\u202e27` shows as 72): an answer holding one is
read as no number, not as the digits in either order."""
_VULGAR = {
    "½": " 1/2", "⅓": " 1/3", "⅔": " 2/3", "¼": " 1/4", "¾": " 3/4", "⅕": " 1/5", "⅖": " 2/5", "⅗": " 3/5",
    "⅘": " 4/5", "⅙": " 1/6", "⅚": " 5/6", "⅛": " 1/8", "⅜": " 3/8", "⅝": " 5/8", "⅞": " 7/8",
}  # fmt: skip
"""Vulgar fractions as the fractions they are, apart from a digit before them (`3½` is 3 1/2)."""
_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+")
_SUBSCRIPT_RUN = re.compile("[₀₁₂₃₄₅₆₇₈₉]+")
_SCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻₀₁₂₃₄₅₆₇₈₉", "0123456789+-0123456789")


def unicode_to_ascii(text: str) -> str:
    """Fullwidth and other compatibility characters as ASCII (NFKC), unicode minus as `-`,
    vulgar fractions as `1/2`, invisible format characters (zero-width spaces and joiners,
    bidirectional marks, the BOM) removed but reordering ones made unreadable, and
    superscript and subscript digits as `^{..}` and `_{..}`: NFKC alone would read the
    power `2⁵` as the number 25."""
    text = "".join(
        "\ufffd" if char in _BIDI_OVERRIDES else _VULGAR.get(char, char)
        for char in text
        if char in _BIDI_OVERRIDES or unicodedata.category(char) != "Cf"
    ).replace("\u2044", "/")
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SCRIPT_DIGITS) + "}", text)
    text = _SUBSCRIPT_RUN.sub(lambda m: "_{" + m.group().translate(_SCRIPT_DIGITS) + "}", text)
    return unicodedata.normalize("NFKC", text).replace("−", "-")


def mixed_numbers(text: str) -> str:
    """Mixed numbers written as one fraction (`3\\frac{1}{2}` and `3 1/2` as `\\frac{7}{2}`);
    an integer before an improper fraction as an unreadable command (see module docstring)."""
    if "frac" in text:
        text = _MIXED_LATEX.sub(lambda m: _mixed(m[1], m[2] or m[3], m[4] or m[5]), text)
    if "/" in text:
        text = _MIXED_PLAIN.sub(lambda m: _mixed(m[1], m[2], m[3]), text)
    return text


def has_mixed_number(text: str) -> bool:
    """Whether the text writes a mixed number (`5\\frac12`, `5 1/2`)."""
    return bool(("frac" in text and _MIXED_LATEX.search(text)) or ("/" in text and _MIXED_PLAIN.search(text)))


def _mixed(whole: str, numerator: str, denominator: str) -> str:
    whole_value, numerator_value, denominator_value = int(whole), int(numerator), int(denominator)
    if not 0 < numerator_value < denominator_value:
        return f"{whole}{_AMBIGUOUS}{{{numerator}}}{{{denominator}}}"
    return f"\\frac{{{whole_value * denominator_value + numerator_value}}}{{{denominator_value}}}"


Number = int | Fraction
"""Integral values are plain ints (the common case, and much cheaper than Fraction)."""


def parse_number(text: str, *, letter_units: bool = True) -> Number | None:
    """The single number `text` states (units, currency, separators allowed), else None.
    `letter_units=False` (for gold answers) takes a one- or two-letter unit only when it is
    written as text (see the module docstring)."""
    if len(text) > NUMBER_MAX_CHARS:
        return None
    if text.isdigit() and text.isascii():
        return int(text)
    if not text.isascii():
        text = unicode_to_ascii(text)
    text = mixed_numbers(text)
    if _AMBIGUOUS in text:
        return None
    if "\\" in text or "^" in text:
        special = _special_number(text)
        if special is not None:
            return special
    if not letter_units and "\\" in text:
        # A gold answer's unit written as text is the unit the data set's author meant,
        # listed or not (`12 \\text{ gm}`, `65 \\text{ children tickets}`).
        text = _GOLD_TEXT_UNIT.sub("", text)
    letter_units = letter_units or any(markup in text for markup in _TEXT_MARKUP)
    if "\\" in text or "{" in text or "$" in text:
        text = strip_latex(text)
    text = _PERCENT_WORD.sub("", text.strip().rstrip(".,;:")).replace("%", "").replace("*", "")
    if not text.isascii():
        text = _CURRENCY.sub("", text.strip()).strip()
    if text.startswith("(") and text.endswith(")") and "," not in text:
        text = text[1:-1].strip()  # `(-22)`: a number in parentheses
    match = _NUMBER.fullmatch(text)
    if match is None or (match.group("int") is None and not match.group("frac")):
        return None
    integer = (match.group("int") or "0").replace(",", "").replace(" ", "")
    fraction_digits = match.group("frac") or ""
    value = Fraction(int(integer + fraction_digits), 10 ** len(fraction_digits))
    if match.group("den") is not None:
        denominator = int(match.group("den"))
        if fraction_digits or denominator == 0:
            return None
        if letter_units and denominator != 1 and math.gcd(value.numerator, denominator) > 1:
            return None  # `480/8`, `\\frac{6}{8}`: a division left undone, as `7 + 9` is a sum (a gold may)
        value /= denominator
    exponent = match.group("exp") or match.group("power")
    if exponent is not None:
        if abs(int(exponent)) > MAX_EXPONENT:
            return None
        if letter_units and not (1 <= abs(value) < 10) and match.group("den") is None:
            # `162\times10^{1}`, `0.162\times10^{4}`: a product left undone, not scientific
            # notation, whose mantissa is at least 1 and under 10 (a gold may write either).
            return None
        value *= Fraction(10) ** int(exponent)
    if match.group("unit"):
        in_unit = _with_unit(value, match.group("unit"), letter_units)
        if in_unit is None:
            return None
        value = in_unit
    if match.group("sign") == "-":
        value = -value
    return value.numerator if value.denominator == 1 else value


def _special_number(text: str) -> Number | None:
    """A repeating decimal or a power of ten, if that is all the text is."""
    body = text.strip().strip("$").strip()
    repeating = _REPEATING.fullmatch(body)
    if repeating:
        sign, whole, plain, period = repeating.groups()
        scale = 10 ** len(plain)
        value = (
            Fraction(int(whole or 0))
            + (Fraction(int(plain or 0)) + Fraction(int(period), 10 ** len(period) - 1)) / scale
        )
        value = -value if sign == "-" else value
        return value.numerator if value.denominator == 1 else value
    power = _POWER_OF_TEN.fullmatch(body)
    if power:
        exponent = int(power.group(2) or power.group(3))
        if abs(exponent) > MAX_EXPONENT:
            return None
        value = Fraction(10) ** exponent * (-1 if power.group(1) == "-" else 1)
        return value.numerator if value.denominator == 1 else value
    return None


def _with_unit(value: Fraction, unit: str, letter_units: bool) -> Fraction | None:
    """The value the words after a number give it: scaled (`million`), or kept, if the rest
    is a unit from the fixed list; None if any word is neither."""
    words = re.findall(r"[^\W\d_]+(?:\^-?\d)?", unit)
    first = words[0].lower()
    if first in SCALES and (letter_units or len(first) > 1):
        # A one-letter scale (`$60K`) only in a reply: a gold `2k` is 2 times k, not 2000.
        value, words = value * SCALES[first], words[1:]
    return value if is_unit_phrase(words, letter_units) else None


def is_unit_phrase(words: list[str], letter_units: bool = True) -> bool:
    """A unit phrase (see `units`): units, each maybe after a prefix (`square feet`), joined by
    `per`, `a` or `/` (`miles per hour`, `m/s`, `dollars an hour`); up to two words before the
    first unit that say what is counted, none a value word (`5 tennis balls`); words after
    the last that say nothing of the number (`units squared`, `18 years old`, `5 apples
    left`), or "of" and what it measures (`18 cups of flour`). No words at all is fine too."""
    if not words:
        return True
    if all(w.lower() in COMPARATIVES or w.lower() in UNIT_SUFFIXES - POWER_SUFFIXES for w in words):
        return True  # `$15 more`, `3 times`, `$7 each`, `5 left`: no unit, nothing said of the number
    kinds = [_unit_word_kind(word, letter_units) for word in words]
    if "unit" not in kinds:
        return False
    first = kinds.index("unit")
    modifiers = [word for word, kind in zip(words[:first], kinds[:first]) if kind != "link"]
    if len(modifiers) > MAX_MODIFIERS or any(len(word) < 3 or is_value_word(word) for word in modifiers):
        return False  # `4 x apples`: a variable; `3 halves apples`: a value word
    expect_unit = False
    for number in range(first, len(words)):
        kind, lowered = kinds[number], words[number].split("^")[0].lower()
        if lowered == "of" and number > first and kinds[number - 1] == "unit":
            return number + 1 < len(words) and not any(is_value_word(w) for w in words[number + 1 :])
        last = number == len(words) - 1
        if kind == "unit":
            expect_unit = False
        elif lowered in POWER_SUFFIXES:
            if expect_unit or (
                words[number - 1].split("^")[0].lower() not in MEASURES and not is_short_unit(words[number - 1])
            ):
                return False  # `7 apples squared` is no unit; `25 units squared` is
        elif lowered in UNIT_SUFFIXES and last and not expect_unit:
            continue  # `$7 each`: a joiner word, as the last word, says nothing of the number
        elif kind == "link":
            expect_unit = True
        elif (kind == "suffix" or (lowered in COMPARATIVES and last)) and not expect_unit:
            continue
        else:
            return False
    return not expect_unit


def _unit_word_kind(word: str, letter_units: bool) -> str:
    """ "unit", "link" (a prefix or joiner: `square`, `per`), "suffix" (`left`, `old`) or "other"."""
    bare = word.split("^")[0]
    lowered = bare.lower()
    if is_unit_word(bare) and (letter_units or not is_short_unit(bare)):
        return "unit"
    if lowered in UNIT_PREFIXES or lowered in UNIT_JOINERS:
        return "link"
    return "suffix" if lowered in UNIT_SUFFIXES else "other"


def _group(match: re.Match[str], braced: int, bare: int) -> str:
    """A `\\frac` argument: its braced form (maybe empty: `\\frac{1}{}`) or its one bare digit."""
    return match[braced] if match[braced] is not None else match[bare]


def _ungrouped(digits: str) -> str:
    """`5,525` inside a fraction is the number 5525 (MATH writes `\\frac{12}{5,\\!525}`)."""
    return digits.replace(",", "") if _GROUPED_DIGITS.fullmatch(digits.strip()) else digits


def strip_latex(text: str) -> str:
    text = THOUSANDS_BRACES.sub(",", text.replace("\\$", "").replace("$", "")).replace("\\%", "%")
    for spacing in ("\\,", "\\!", "\\;", "\\ ", "\\left", "\\right"):
        text = text.replace(spacing, "" if spacing in ("\\,", "\\!") else " ")
    text = _TEXT_COMMANDS.sub(r" \1", text)
    # A digit glued to a fraction is no mixed number here (those were read before): keep
    # them apart, so `2\frac{5}{4}` does not become 25/4.
    text = _FRAC.sub(lambda m: f" {_ungrouped(_group(m, 1, 2))}/{_ungrouped(_group(m, 3, 4))}", text)
    text = re.sub(r"10\s*\^\s*\{\s*([-+]?\d+)\s*\}", r"10^\1", text)
    return text.replace("{", "").replace("}", "")
