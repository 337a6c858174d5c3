"""Restatements: answers equal to the gold that do no work, the problem's own expressions
(bare or inside a wrapper worth 1) and the gold with work left undone at one leaf."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from fractions import Fraction

from rlenvs.rewards.math.answer_types import leaf_type
from rlenvs.rewards.math.equivalence import Form
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import parse_number
from rlenvs.rewards.math.restating import question_expressions
from rlenvs.testing.certify.answer_tree import leaf, render, replace, top_terms
from rlenvs.testing.certify.math_answers.values import (
    WORDY,
    number_text,
    position_of,
    value_leaves,
    written_key,
)


def restatements(gold: str, tree: Form, problem: str) -> Iterator[tuple[str, str]]:
    """(why, answer) for answers equal to the gold in value (or not even that) that do no
    work: the problem's own expressions, bare or wrapped in something worth 1, and the gold
    with arithmetic left undone or such a wrapper at one leaf. The problem is read as the
    verifier reads it (`restating.question_expressions`)."""
    gold_key = written_key(render(tree))
    copied = [
        expression
        for expression in question_expressions(problem, as_written=True)
        if written_key(expression) != gold_key and re.search(r"[\d\\]", expression)
    ]
    for expression in copied:
        if parse_number(expression, letter_units=False) is None:
            yield "an expression of the problem, copied", expression
            for why, text in wrapped(expression):
                yield f"an expression of the problem, copied: {why}", text
        elif not re.fullmatch(r"-?\d+(?:\.\d+)?", expression.strip()):
            yield "an expression of the problem, copied", expression  # a plain number is no restating
    for path, node in value_leaves(tree):
        where = f" at {position_of(path)}" if path else ""
        for why, text in undone(node.parts[0]):
            yield why + where, render(replace(tree, path, leaf(text)))
        if parse_number(node.parts[0], letter_units=False) is None and leaf_type(node.parts[0]) not in WORDY:
            for why, text in wrapped(node.parts[0]):
                yield why + where, render(replace(tree, path, leaf(text)))


def undone(text: str) -> Iterator[tuple[str, str]]:
    """The leaf with work left undone that a correct answer has done: `19 - 1` for 18."""
    value = parse_number(text, letter_units=False)
    if value is not None:
        value = Fraction(value)
        if value.denominator == 1:
            yield from _integer_undone(int(value))
        elif "." in text:
            yield "a subtraction left undone", f"{number_text(value + 1, True)} - 1"
        else:
            yield "a fraction not in lowest terms", f"\\frac{{{2 * value.numerator}}}{{{2 * value.denominator}}}"
            numerator, denominator = value.numerator, value.denominator
            yield (
                "a sum over a common denominator left undone",
                (f"\\frac{{{numerator - 1}}}{{{denominator}}} + \\frac{{1}}{{{denominator}}}"),
            )
        for why, rewritten in _trigonometric(value):
            yield why, rewritten
        return
    kind = leaf_type(text)
    if kind in WORDY or kind == "infinity":
        return
    yield "a cancelling sum left in", f"{text} + 1 - 1" if top_terms(text) else f"{text}+1-1"
    yield "a factor and its inverse left in", f"\\frac{{2\\left({text}\\right)}}{{2}}"
    root = re.fullmatch(r"(\d*)\\sqrt\{(\d+)\}", text.replace(" ", ""))
    if root:
        outside, inside = int(root[1] or 1), int(root[2])
        if outside > 1:
            yield "a square factor moved under the root", f"\\sqrt{{{outside * outside * inside}}}"
        whole = outside * outside * inside
        factor = next((d for d in range(2, math.isqrt(whole) + 1) if whole % d == 0 and d * d != whole), None)
        if factor is not None:
            yield "a product of roots left unmultiplied", f"\\sqrt{{{factor}}}\\sqrt{{{whole // factor}}}"
    for why, rewritten in _trigonometric(normalize_answer(text).replace(" ", "")):
        yield why, rewritten
    if kind == "complex":
        yield "a complex product left unmultiplied", f"\\frac{{\\left({text}\\right)\\left(2+i\\right)}}{{2+i}}"
        yield "a difference of complex numbers left undone", f"\\left({text} + 3 + 2i\\right) - \\left(3 + 2i\\right)"


WRAPPERS = (
    ("a factor i^4 left in", "i^{{4}}\\left({}\\right)"),
    ("a factor t^0 left in", "t^{{0}}\\left({}\\right)"),
    ("a reciprocal of a reciprocal", "\\frac{{1}}{{\\frac{{1}}{{{}}}}}"),
    ("a one-term sum", "\\sum_{{k=1}}^{{1}}\\left({}\\right)"),
    ("e to the log of it", "e^{{\\ln\\left({}\\right)}}"),
    ("a factor sin^2 + cos^2 left in", "\\left(\\sin^2 t + \\cos^2 t\\right)\\left({}\\right)"),
)
"""Wrappers worth 1 around a value: what is inside is not simplified by them."""


def wrapped(text: str) -> Iterator[tuple[str, str]]:
    for why, wrapper in WRAPPERS:
        yield why, wrapper.format(text)


def _integer_undone(value: int) -> Iterator[tuple[str, str]]:
    """An integer written as the arithmetic that gives it: a sum, a quotient, and where its
    value allows a power, a root, a logarithm, a factorial or a binomial coefficient."""
    yield "a subtraction left undone", f"{value + 7} - 7"
    yield "a quotient left undone", f"\\frac{{{2 * value}}}{{2}}"
    if value > 1:
        yield "a root of a square left unevaluated", f"\\sqrt{{{value * value}}}"
        yield "a binomial coefficient left unevaluated", f"\\binom{{{value}}}{{1}}"
    if 1 <= value <= 60:
        yield "a logarithm left unevaluated", f"\\log_{{2}} {{2^{{{value}}}}}"
    for base in range(2, 10):  # not 10: `10^{6}` is how numbers are written (scientific notation)
        exponent = round(math.log(value, base)) if value > 1 else 0
        if exponent >= 2 and base**exponent == value:
            yield "a power left unevaluated", f"{base}^{{{exponent}}}"
            break
    if value and value % 12 == 0:
        yield "a product by 12 written as dozens", f"{value // 12} \\text{{ dozen}}"
    if abs(value) >= 100 and value % 10 == 0:
        yield "a product by ten written as unnormalised scientific notation", f"{value // 10}\\times10^{{1}}"
    factorial = {6: 3, 24: 4, 120: 5, 720: 6, 5040: 7}.get(value)
    if factorial is not None:
        yield "a factorial left unevaluated", f"{factorial}!"


_TRIG_VALUES = {
    "\\frac{1}{2}": ("\\sin\\frac{\\pi}{6}", "\\cos\\frac{\\pi}{3}"),
    "\\frac{\\sqrt{3}}{2}": ("\\sin\\frac{\\pi}{3}", "\\cos\\frac{\\pi}{6}"),
    "\\frac{\\sqrt{2}}{2}": ("\\sin\\frac{\\pi}{4}", "\\cos\\frac{\\pi}{4}"),
    "\\sqrt{3}": ("\\tan\\frac{\\pi}{3}",),
    "\\frac{\\sqrt{3}}{3}": ("\\tan\\frac{\\pi}{6}",),
    "1": ("\\tan\\frac{\\pi}{4}", "\\sin^2 1 + \\cos^2 1"),
}
"""Values a trigonometric function of a standard angle has, written as that function."""


def _trigonometric(value: Fraction | str) -> Iterator[tuple[str, str]]:
    """The gold written as a trigonometric function it is the value of, left unevaluated."""
    key = "1" if value == 1 else (value if isinstance(value, str) else number_text(value, False))
    for written in _TRIG_VALUES.get(key, ()):
        yield "a trigonometric value left unevaluated", written
