"""What the math generators share: the leaves of a gold's tree they rewrite, and numbers
written back as LaTeX."""

from __future__ import annotations

import re
from fractions import Fraction

from rlenvs.rewards.math.equivalence import Form
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import parse_number
from rlenvs.testing.certify.answer_tree import braced, leaves, node_at

MAX_LEAVES_REWRITTEN = 4
"""Leaves of a large structure (a matrix, a long list) rewritten one at a time, at most."""

WORDY = ("text", "choice", "choice with text", "base numeral", "number with unit", "degrees", "percent")
"""Answer types whose letters are no variables and whose leaf is no arithmetic: no operation
is rewritten or left undone in them."""


def value_leaves(tree: Form) -> list[tuple[tuple[int, ...], Form]]:
    """The leaves that hold one value (not an equation or inequality, rewritten whole), at most
    `MAX_LEAVES_REWRITTEN`."""
    return [(path, node) for path, node in leaves(tree) if node.kind == "leaf"][:MAX_LEAVES_REWRITTEN]


def interval_end(tree: Form, path: tuple[int, ...]) -> int | None:
    """0 or 1 where the leaf at `path` is the lower or upper end of an interval, else None."""
    parent = node_at(tree, path[:-1]) if path else None
    return path[-1] if parent is not None and parent.kind == "interval" else None


def position_of(path: tuple[int, ...]) -> str:
    return "item " + ".".join(str(step + 1) for step in path)


def number_text(value: Fraction, decimal: bool) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    if decimal and terminates(value.denominator):
        text = f"{float(value):.10f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def terminates(denominator: int) -> bool:
    while denominator % 2 == 0:
        denominator //= 2
    while denominator % 5 == 0:
        denominator //= 5
    return denominator == 1


def transposed(value: int) -> int | None:
    digits = list(str(abs(value)))
    for index in range(len(digits) - 1, 0, -1):
        if digits[index] != digits[index - 1] and not (index - 1 == 0 and digits[index] == "0"):
            digits[index], digits[index - 1] = digits[index - 1], digits[index]
            return int("".join(digits)) * (-1 if value < 0 else 1)
    return None


def digit(value: int) -> str:
    return "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[value]


_PI_MULTIPLE = re.compile(r"(-?)(?:\\frac\{(\d*)\\pi\}\{(\d+)\}|(\d*)\\pi|\\frac\{(\d+)\}\{(\d+)\}\\pi)")


def pi_degrees(text: str) -> Fraction | None:
    """The degrees of an angle written as a rational multiple of π (`\\frac{\\pi}{6}` is 30)."""
    match = _PI_MULTIPLE.fullmatch(text.replace(" ", ""))
    if match is None:
        return None
    numerator = match[2] if match[3] else match[4] if match[4] is not None else match[5]
    denominator = match[3] or match[6] or "1"
    value = Fraction(int(numerator or 1), int(denominator)) * 180
    return -value if match[1] else value


def extra_item(tree: Form) -> str | None:
    """A number not in the structure, to add as an item: one more than its first number."""
    for _, node in leaves(tree):
        value = parse_number(node.parts[0], letter_units=False)
        if value is not None:
            return number_text(Fraction(value) + 1000, False)
    return "1000"


def written_key(text: str) -> str:
    """An answer's spelling with notation aside (spaces, `\\dfrac`, one-token braces)."""
    return braced(normalize_answer(text, as_written=True)).replace(" ", "")
