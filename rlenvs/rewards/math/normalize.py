"""Normalising an answer's LaTeX before it is compared.

Removes what does not change the value: math delimiters, spacing commands, `\\left`/`\\right`,
`\\displaystyle`, `\\text{}` wrappers, degree signs, `\\dfrac`/`\\tfrac`/`\\cfrac` spellings,
percent signs and words (28% and 28 compare equal: the math envs state percentages as
plain numbers), unicode operators, invisible format characters and quotation marks
(`\\"12\\"`). Relations become ASCII (`<=`, `>=`, `!=`). Mixed numbers become one fraction
(`3\\frac{1}{2}` is `\\frac{7}{2}`; see `numbers`).
"""

from __future__ import annotations

import re

from rlenvs.rewards.math.numbers import THOUSANDS_BRACES, mixed_numbers, unicode_to_ascii

_UNICODE = {
    "−": "-", "–": "-", "≤": "<=", "≥": ">=", "≠": "!=", "∞": "\\infty", "π": "\\pi", "√": "\\sqrt",
    "∪": "\\cup", "±": "\\pm", "°": "", "×": "\\times", "÷": "\\div", "·": "\\cdot", "∈": "\\in",
}
_DELIMITERS = ("$$", "$", "\\(", "\\)", "\\[", "\\]")
_DROPPED_COMMANDS = re.compile(
    r"\\(?:displaystyle|left|right|bigl|bigr|Bigl|Bigr|big|Big|biggl|biggr|!|,|;|:|quad|qquad)(?![A-Za-z])"
)
_TEXT_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|textnormal|textrm|mathrm|mathbf|mathit|mbox|operatorname)\s*\{([^{}]*)\}")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree")
_PERCENT = re.compile(r"\\%|%|\s*\b(?:percentage|percent|pct)\b")
_FRACTIONS = re.compile(r"\\[dtc]frac(?![A-Za-z])")
_RELATIONS = (
    (re.compile(r"\\(?:leqslant|leq|le)(?![A-Za-z])"), "<="),
    (re.compile(r"\\(?:geqslant|geq|ge)(?![A-Za-z])"), ">="),
    (re.compile(r"\\(?:neq|ne)(?![A-Za-z])"), "!="),
    (re.compile(r"\\lt(?![A-Za-z])"), "<"),
    (re.compile(r"\\gt(?![A-Za-z])"), ">"),
)
_SPACES = re.compile(r"\s+")
_SINGLE_BACKSLASH = re.compile(r"(?<!\\)\\(?!\\)")
_ESCAPED_SPACE = re.compile(r"(?<!\\)\\ ")
"""`\\ ` is a space; `\\\\ ` (a matrix row break, then a space) is not."""
_SPACED_THOUSANDS = re.compile(r"(?<=\d),\s*\\[!,]\s*(?=\d{3}(?!\d))")
"""`11,\\! 111`: a thousands separator with a spacing command, not a list."""


def normalize_answer(text: str) -> str:
    """The answer with every value-preserving decoration removed (see module docstring)."""
    if not text.isascii():
        text = unicode_to_ascii(text)
        for old, new in _UNICODE.items():
            text = text.replace(old, new)
    if "\\\\" in text and not _SINGLE_BACKSLASH.search(text):
        text = text.replace("\\\\", "\\")  # escaped twice throughout: `\\\\frac` is `\\frac`
    text = THOUSANDS_BRACES.sub(",", text.replace("\\$", " ").replace('\\"', " ").replace('"', " "))
    text = _SPACED_THOUSANDS.sub(",", text)
    for delimiter in _DELIMITERS:
        text = text.replace(delimiter, " ")
    text = _ESCAPED_SPACE.sub(" ", text).replace("~", " ")
    text = _DROPPED_COMMANDS.sub(" ", text)
    while True:  # nested wrappers: \text{\textbf{x}}
        unwrapped = _TEXT_WRAPPERS.sub(r" \1 ", text)
        if unwrapped == text:
            break
        text = unwrapped
    text = _DEGREES.sub("", text)
    text = _PERCENT.sub("", text)
    text = mixed_numbers(_FRACTIONS.sub(r"\\frac", text))
    for pattern, replacement in _RELATIONS:
        text = pattern.sub(replacement, text)
    text = _SPACES.sub(" ", text).strip()
    return text.rstrip(".,;: ").strip()
