"""Normalising an answer's LaTeX before it is compared.

Removes what does not change the value: math delimiters, spacing commands, `\\left`/`\\right`,
`\\displaystyle`, `\\text{}` wrappers and units written as text after an answer
(`288\\pi\\text{ cm}^3`), degree signs (inside a trigonometric function a degree angle becomes
radians: `\\cos 13^\\circ` is not `\\cos 13`), `\\dfrac`/`\\tfrac`/`\\cfrac` spellings, thin
spaces between thousands, set-builder braces (`\\{x \\mid x > 2\\}` is `x > 2`), `\\mathbb{R}`
as `(-\\infty, \\infty)`, percent signs and words (28% and 28 compare equal: the math envs
state percentages as plain numbers), unicode operators, invisible format characters,
quotation marks (`\\"12\\"`) and a modulus after a remainder (`3 \\pmod{7}` is 3).
Relations become ASCII (`<=`, `>=`, `!=`). Mixed numbers become one fraction
(`3\\frac{1}{2}` is `\\frac{7}{2}`; see `numbers`).
"""

from __future__ import annotations

import re

from rlenvs.rewards.math.numbers import THOUSANDS_BRACES, is_unit_phrase, mixed_numbers, unicode_to_ascii

_UNICODE = {
    "−": "-", "–": "-", "≤": "<=", "≥": ">=", "≠": "!=", "∞": "\\infty", "π": "\\pi", "√": "\\sqrt",
    "∪": "\\cup", "±": "\\pm", "°": "^\\circ", "×": "\\times", "÷": "\\div", "·": "\\cdot", "∈": "\\in",
    "ℝ": "\\mathbb{R}",
}  # fmt: skip
_UNICODE_ROOT = re.compile(r"√\s*(\d+(?:\.\d+)?|[A-Za-z])")
"""`√13` is the root of 13 (TeX's one-token `\\sqrt13` would be `\\sqrt{1}3`)."""
_DELIMITERS = ("$$", "$", "\\(", "\\)", "\\[", "\\]")
_DROPPED_COMMANDS = re.compile(
    r"\\(?:displaystyle|left|right|bigl|bigr|Bigl|Bigr|big|Big|biggl|biggr|quad|qquad)(?![A-Za-z])|\\[!,;:]"
)
_SPACED_DIGIT_GROUPS = re.compile(r"(?<=\d)\\[,!;:]\s*(?=\d{3}(?!\d))")
"""`11\\,111\\,100`: thin spaces between groups of three digits separate thousands."""
_TRIG_DEGREES = re.compile(
    r"(\\(?:sin|cos|tan|sec|csc|cot)\s*[({]?\s*\(?\s*)(-?\d+(?:\.\d+)?)\s*"
    r"(?:\^\s*(?:\{\s*(?:\\circ|o)\s*\}|\\circ|o(?![A-Za-z]))|\\circ|\\degree|\s*\\text\s*\{\s*degrees?\s*\})"
)
"""`\\cos 13^\\circ`: an angle in degrees inside a trigonometric function, as radians."""
_TEXT_UNIT = re.compile(
    r"(?:/\s*)?\\(?:text|mbox|mathrm|textrm)\s*\{\s*([A-Za-z][A-Za-z .]*?)\s*\}(\s*\^\s*\{?\s*[23]\s*\}?)?"
)
"""A unit written as text after an answer (`288\\pi\\text{ cm}^3`, or a rate's `/\\text{day}`): not
part of its value."""
_SET_BUILDER = re.compile(r"\\\{\s*([A-Za-z])\s*(?:\\mid|\||:)\s*(.+)\\\}")
"""`\\{x \\mid x > 2\\}`: the set of x such that the condition holds, read as the condition."""
_TIME_OF_DAY = re.compile(r"(?<=[\d\s])([aApP])\.?\s?[mM]\.?(?![A-Za-z])")
"""`9 a.m.`, `9 AM` and `9 am` are one time of day."""
_REALS = re.compile(r"\\mathbb\s*\{?\s*R\s*\}?|\\R(?![A-Za-z])|^\s*all real numbers\s*$")
_TEXT_WRAPPERS = re.compile(
    r"\\(?:text|textbf|textit|textnormal|textrm|mathrm|mathbf|mathit|mbox|operatorname)\s*\{([^{}]*)\}"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|(?<=\d)\s*\^\s*\{?\s*o\s*\}?(?![A-Za-z])")
"""A degree sign: `^\\circ`, `\\degree`, and `^o` after a number (`30^o`)."""
_PERCENT = re.compile(r"\\%|%|\s*\b(?:percentage|percent|pct)\b")
_FRACTIONS = re.compile(r"\\(?:[dtc]|nice)frac(?![A-Za-z])")
_OVER = re.compile(r"\{([^{}]*?)\\over(?![A-Za-z])([^{}]*)\}")
_TOP_OVER = re.compile(r"^([^{}]*?)\\over(?![A-Za-z])([^{}]*)$")
"""TeX's `{1 \\over 2}` (or `1 \\over 2` once a box's braces are gone), read as `\\frac{1}{2}`."""
_ANGLE_BRACKETS = re.compile(r"\\langle(?![A-Za-z])|\\rangle(?![A-Za-z])")
"""`\\langle 1, -2 \\rangle`: a vector, read as the tuple `(1, -2)`."""
_BASE_WORDS = {
    word: str(base)
    for base, word in enumerate(
        "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen".split(), 2
    )
}
_BASE_NAMED = re.compile(
    r"_\s*\{\s*\\(?:text|mathrm|textrm)\s*\{\s*(" + "|".join(_BASE_WORDS) + r")\s*\}\s*\}", re.IGNORECASE
)
"""`1111_{\\text{two}}`, as MATH's problems write a base: `1111_{2}`."""
_BASE_PARENTHESISED = re.compile(r"\(\s*(-?[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)?)\s*\)\s*_")
"""`(1111)_2`: the digits in parentheses, then the base."""
_BASE_TEN = re.compile(r"^(-?\d+)\s*_\s*\{?\s*10\s*\}?$")
"""`15_{10}`: a numeral in base ten is the number."""
_INFINITY_WORD = re.compile(r"(?<![A-Za-z\\])inf(?:inity)?(?![A-Za-z])", re.IGNORECASE)
"""`inf` and `infinity` as words (`(-\\text{inf}, 2]`): infinity."""
_TRANSPOSED = re.compile(r"[\[(]([^\[\]()]*)[\])]\s*\^\s*\{?\s*(?:T|\\top|\\intercal)\s*\}?")
"""A bracketed row transposed (`[1, -2]^T`): the column it is, which compares as its tuple."""
_FRENCH_INTERVAL = re.compile(r"^\]\s*(.+?)\s*,\s*(.+?)\s*([\[\]])$|^\[\s*(.+?)\s*,\s*(.+?)\s*\[$")
"""`]-3, 2]` and `[1, 4[`: open ends written with the bracket turned out, as in France."""
_RELATIONS = (
    (re.compile(r"\\(?:leqslant|leq|le)(?![A-Za-z])"), "<="),
    (re.compile(r"\\(?:geqslant|geq|ge)(?![A-Za-z])"), ">="),
    (re.compile(r"\\(?:neq|ne)(?![A-Za-z])"), "!="),
    (re.compile(r"\\lt(?![A-Za-z])"), "<"),
    (re.compile(r"\\gt(?![A-Za-z])"), ">"),
)
_RESIDUE = re.compile(
    r"^(?:[A-Za-z]\w*\s*\\equiv\s*)?(\d+)\s*"
    r"(?:\\pmod\s*\{?\s*(\d+)\s*\}?|\(\s*(?:\\bmod|\\mod|mod)\s*(\d+)\s*\)|\\bmod\s*\{?\s*(\d+)\s*\}?)$"
)
"""`3 \\pmod{7}`, `3 (\\mathrm{mod}\\ 7)`: a remainder with its modulus, read as the remainder
when it is one (less than the modulus); `10 \\pmod{7}` is not a remainder and stays."""
_SPACES = re.compile(r"\s+")
_SINGLE_BACKSLASH = re.compile(r"(?<!\\)\\(?!\\)")
_ESCAPED_SPACE = re.compile(r"(?<!\\)\\ ")
"""`\\ ` is a space; `\\\\ ` (a matrix row break, then a space) is not."""
_SPACED_THOUSANDS = re.compile(r"(?<=\d),\s*\\[!,]\s*(?=\d{3}(?!\d))")
"""`11,\\! 111`: a thousands separator with a spacing command, not a list."""


def normalize_answer(text: str, *, as_written: bool = False) -> str:
    """The answer with every value-preserving decoration removed (see module docstring).
    `as_written=True` keeps mixed numbers as they are written (`6\\frac{1}{4}`), to tell
    a form the question asks to change from the answer."""
    if not text.isascii():
        text = _UNICODE_ROOT.sub(r"\\sqrt{\1}", unicode_to_ascii(text))
        for old, new in _UNICODE.items():
            text = text.replace(old, new)
    if "\\\\" in text and not _SINGLE_BACKSLASH.search(text):
        text = text.replace("\\\\", "\\")  # escaped twice throughout: `\\\\frac` is `\\frac`
    text = THOUSANDS_BRACES.sub(",", text.replace("\\$", " ").replace('\\"', " ").replace('"', " "))
    text = _SPACED_DIGIT_GROUPS.sub(",", _SPACED_THOUSANDS.sub(",", text))
    for delimiter in _DELIMITERS:
        text = text.replace(delimiter, " ")
    text = _ESCAPED_SPACE.sub(" ", text).replace("~", " ")
    text = _DROPPED_COMMANDS.sub(" ", text)
    if "circ" in text or "degree" in text or "^" in text:
        text = _TRIG_DEGREES.sub(r"\1\\frac{\2\\pi}{180}", text)
    if "_" in text:
        text = _BASE_PARENTHESISED.sub(r"\1_", _BASE_NAMED.sub(lambda m: "_{" + _BASE_WORDS[m[1].lower()] + "}", text))
    if "\\text" in text or "\\m" in text:
        text = _TEXT_UNIT.sub(_drop_unit, text)
    while True:  # nested wrappers: \text{\textbf{x}}
        unwrapped = _TEXT_WRAPPERS.sub(r" \1 ", text)
        if unwrapped == text:
            break
        text = unwrapped
    if "circ" in text or "degree" in text or "^" in text:
        text = _DEGREES.sub(" ", text)
    text = _PERCENT.sub("", text)
    text = _FRACTIONS.sub(r"\\frac", text)
    if "over" in text:
        text = _TOP_OVER.sub(r"\\frac{\1}{\2}", _OVER.sub(r"\\frac{\1}{\2}", text))
    if "angle" in text:
        text = _ANGLE_BRACKETS.sub(lambda m: "(" if "langle" in m.group() else ")", text)
    if not as_written:
        text = mixed_numbers(text)
    for pattern, replacement in _RELATIONS:
        text = pattern.sub(replacement, text)
    if "m" in text or "M" in text:
        text = _TIME_OF_DAY.sub(lambda m: m[1].lower() + "m", text)
    if "\\{" in text:
        text = _SET_BUILDER.sub(r"\2", text)
    if "inf" in text:
        text = _INFINITY_WORD.sub(r"\\infty", text)
    if "colon" in text:
        text = text.replace("\\colon", ":")
    if "^" in text:
        text = _TRANSPOSED.sub(r"(\1)", text)
    if "R" in text or "real" in text:
        text = _REALS.sub(lambda _: "(-\\infty, \\infty)", text)
    text = _SPACES.sub(" ", text).strip().rstrip(".,;: ").strip()
    if "mod" in text and (residue := _RESIDUE.match(text)):
        remainder, modulus = int(residue[1]), int(residue[2] or residue[3] or residue[4])
        if remainder < modulus:
            return residue[1]
    if "_" in text and (base_ten := _BASE_TEN.match(text)):
        return base_ten[1]
    if text.startswith("]") or text.endswith("["):
        text = _FRENCH_INTERVAL.sub(_french_interval, text)
    return text


def _french_interval(match: re.Match) -> str:
    if match[1] is not None:
        return f"({match[1]}, {match[2]}{')' if match[3] == '[' else ']'}"
    return f"[{match[4]}, {match[5]})"


def _drop_unit(match: re.Match) -> str:
    """Drops a unit written as text after something (not a text answer of its own)."""
    before = match.string[: match.start()].strip()
    if match.group().startswith("/") and not re.search(r"\d\s*$", before):
        return match.group()  # `x/\\text{y}`: a quotient of names, not a rate
    if re.fullmatch(r"[aApP]\.?\s?[mM]\.?", match.group(1).strip()):
        return match.group()  # `9\\text{ a.m.}`: a time of day, not 9 with a unit
    words = match.group(1).replace(".", " ").split()
    return " " if before and words and is_unit_phrase(words) else match.group()
