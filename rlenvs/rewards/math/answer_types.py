"""The type of a math answer, read from the same structure the verifier compares.

`answer_type("\\left( 3, \\frac{\\pi}{2} \\right)")` is "tuple"; a leaf is typed by what it
is written as: "integer", "fraction", "radical", "expression", "choice", ... The types are
not a list someone wrote down of what answers look like: they are the kinds `read_form`
already tells apart, with a leaf's kind read from its text. `rlenvs certify` draws tasks
so that every type a data set holds is tried, and reports its findings by type.
"""

from __future__ import annotations

import functools
import re

from rlenvs.rewards.math.equivalence import (
    BASE_NUMERAL,
    CHOICE,
    CHOICE_WITH_TEXT,
    COMMAND,
    PROSE_WORD,
    WORDS,
    Form,
    read_form,
)
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import has_mixed_number, parse_number

_VARIABLE = re.compile(r"(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])")
_CONSTANT_FUNCTIONS = re.compile(r"\\(?:pi|log|ln|sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan|binom|dbinom|e)\b")
_ROOT = re.compile(r"\\sqrt|\^\s*\{?\s*\\?(?:frac|\d+\s*/)")
_TEXT_UNIT = re.compile(r"\\(?:text|mbox|mathrm)\s*\{\s*[A-Za-z]")
_DEGREE = re.compile(r"\\circ|\\degree|°")

COMPOSITE = ("list", "set", "plus-minus", "tuple", "interval", "union", "matrix", "equation", "assignment")
"""Answer types made of parts (each part has a type of its own)."""


@functools.lru_cache(maxsize=65536)
def answer_type(text: str) -> str:
    """The type of an answer as written (module docstring)."""
    normal = normalize_answer(text)
    form = read_form(normal)
    if form.kind == "list":
        if "\\pm" in normal or "\\mp" in normal:
            return "plus-minus"
        return "set" if normal.startswith("\\{") else "list"
    if form.kind in ("relation", "chain"):
        return "inequality"
    if form.kind != "leaf":
        return form.kind
    return leaf_type(text, form)


def leaf_type(text: str, form: Form | None = None) -> str:
    """The type of one value (a leaf of the structure): see `answer_type`."""
    leaf = (form.parts[0] if form is not None else normalize_answer(text)).strip()
    compact = re.sub(r"\s+", "", leaf)
    if _DEGREE.search(text):
        return "degrees"
    if _TEXT_UNIT.search(text) and parse_number(leaf) is not None:
        return "number with unit"
    if CHOICE_WITH_TEXT.fullmatch(leaf):
        return "choice with text"
    if CHOICE.fullmatch(compact) and (compact.startswith("(") or compact.isupper()):
        return "choice"
    if BASE_NUMERAL.fullmatch(leaf):
        return "base numeral"
    number = parse_number(leaf, letter_units=False)
    if number is not None:
        if "%" in text:
            return "percent"
        if has_mixed_number(text):
            return "mixed number"
        if "." in leaf:
            return "decimal"
        if number.denominator != 1 if hasattr(number, "denominator") else False:
            return "fraction"
        return "integer" if ("frac" not in leaf and "/" not in leaf) else "fraction"
    if "\\infty" in leaf and not _VARIABLE.search(COMMAND.sub(" ", leaf)):
        return "infinity"
    if (WORDS.fullmatch(leaf) and len(leaf) > 1) or PROSE_WORD.search(COMMAND.sub(" ", leaf)):
        return "text"  # `\\text{Sunday}`, `CBAD`, `June 20`
    letters = set(_VARIABLE.findall(COMMAND.sub(" ", leaf)))
    if letters == {"i"}:
        return "complex"
    if letters - {"e"}:
        return "expression"
    if _ROOT.search(leaf):
        return "radical"
    if _CONSTANT_FUNCTIONS.search(leaf) or letters:
        return "constant"
    return "numeric expression"
