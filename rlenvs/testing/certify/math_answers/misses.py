"""Near misses: the gold with one leaf changed or one item dropped, added or moved, each a
wrong answer one slip away from it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction

from rlenvs.rewards.math.answer_types import leaf_type
from rlenvs.rewards.math.equivalence import BASE_NUMERAL, Form
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import parse_number
from rlenvs.testing.certify.answer_tree import leaf, render, replace, top_terms
from rlenvs.testing.certify.math_answers.values import (
    digit,
    extra_item,
    interval_end,
    number_text,
    pi_degrees,
    position_of,
    transposed,
    value_leaves,
)


def near_misses(gold: str, tree: Form) -> Iterator[tuple[str, str]]:
    """(why, answer) for answers one slip away from the gold: each is wrong."""
    for path, node in value_leaves(tree):
        where = f" at {position_of(path)}" if path else ""
        end = interval_end(tree, path)
        if end is not None:
            # An interval's end moves outwards only: moved inwards, `(3, 4]` could become the
            # empty `(4, 4]`, which a union or an "or" adds nothing to.
            text = node.parts[0]
            value = parse_number(text, letter_units=False)
            step = -1 if end == 0 else 1
            if value is not None:
                moved = number_text(Fraction(value) + step, "." in text)
            elif leaf_type(text) != "infinity":
                moved = f"{text} {'-' if step < 0 else '+'} 1"
            else:
                continue
            yield (
                f"the interval's {'lower' if step < 0 else 'upper'} end moved out{where}",
                render(replace(tree, path, leaf(moved))),
            )
            continue
        for why, text in _leaf_misses(node.parts[0], gold if not path else node.parts[0]):
            yield why + where, render(replace(tree, path, leaf(text)))
    yield from _structure_misses(tree)
    yield from _separator_misses(tree)
    if tree.kind == "list" and ("\\pm" in gold or "\\mp" in gold) and len(tree.parts) == 2:
        for part in tree.parts:
            yield "one of the two signs of a ±", render(part)


def _leaf_misses(text: str, raw: str) -> Iterator[tuple[str, str]]:
    kind = leaf_type(raw)
    value = parse_number(text, letter_units=False)
    if kind in ("choice", "choice with text"):
        letter = re.sub(r"[^A-Ea-e]", "", text.split()[0] if kind == "choice with text" else text).upper()[:1]
        if letter:
            other = "ABCDE"[("ABCDE".index(letter) + 1) % 5]
            yield "another option's letter", f"({other})"
        return
    if kind == "base numeral" and (numeral := BASE_NUMERAL.fullmatch(text)):
        digits, base = numeral[1], int(numeral[2])
        yield "another base", f"{digits}_{{{base + 1}}}"
        last = int(digits[-1], 36) if digits[-1].isalnum() else 0
        changed = digits[:-1] + digit((last + 1) % base)
        if changed != digits:
            yield "another last digit", f"{changed}_{{{base}}}"
        return
    if kind == "text":
        word = text.strip()
        if (number := re.search(r"\d+", word)) is not None:
            yield (
                "the number in the text changed",
                f"\\text{{{word[: number.start()]}{int(number[0]) + 1}{word[number.end() :]}}}",
            )
        elif word[::-1].lower() != word.lower():
            yield "the word reversed", f"\\text{{{word[::-1]}}}"
        return
    if value is not None:
        value = Fraction(value)
        decimal = "." in text
        yield "the value plus one", number_text(value + 1, decimal)
        if value != 0:
            yield "the sign flipped", number_text(-value, decimal)
        if value.denominator == 1 and (swapped := transposed(int(value))) is not None:
            yield "two digits transposed", str(swapped)
        if value.denominator != 1 and abs(value) != 1 and value != 0:
            yield "the fraction upside down", number_text(1 / value, False)
        return
    if kind == "infinity":
        return  # an interval's infinite end: its brackets and the other end are changed instead
    yield "the value plus one", f"{text} + 1" if top_terms(text) else f"{text}+1"
    yield "the value negated", f"-\\left({text}\\right)"
    yield "the value doubled", f"2\\left({text}\\right)"
    degrees = pi_degrees(text)
    if degrees is not None:
        yield "degrees given for radians", number_text(degrees, False)


def _structure_misses(tree: Form) -> Iterator[tuple[str, str]]:
    parts = tree.parts
    if tree.kind in ("tuple", "list", "union") and len(parts) >= 2:
        kept = tree.__class__(tree.kind, parts[:-1], tree.detail, tree.source)
        if len(parts) >= 3 or tree.kind != "tuple":
            yield f"the {tree.kind} without its last item", render(kept)
        extra = extra_item(tree)
        if extra is not None:
            added = tree.__class__(tree.kind, (*parts, leaf(extra)), tree.detail, tree.source)
            yield f"the {tree.kind} with an item too many", render(added)
    if (
        tree.kind == "tuple"
        and len(parts) >= 2
        and normalize_answer(render(parts[0])) != normalize_answer(render(parts[1]))
    ):
        swapped = tree.__class__(tree.kind, (parts[1], parts[0], *parts[2:]), tree.detail, tree.source)
        yield "the first two items of an ordered tuple swapped", render(swapped)
    if tree.kind == "interval":
        low, high = (render(part) for part in parts)
        flips = {"[": "(", "(": "["} if "\\infty" not in low else {}
        if tree.detail[0] in flips:
            yield (
                "the left bracket flipped",
                render(tree.__class__("interval", parts, flips[tree.detail[0]] + tree.detail[1])),
            )
        if "\\infty" not in high:
            closing = {"]": ")", ")": "]"}[tree.detail[1]]
            yield "the right bracket flipped", render(tree.__class__("interval", parts, tree.detail[0] + closing))
    if tree.kind == "matrix" and len(parts) >= 2 and all(len(row) == len(parts) for row in parts):
        transposed = tuple(zip(*parts))
        if transposed != tuple(parts):
            yield "the matrix transposed", render(tree.__class__("matrix", transposed))
    if tree.kind == "assignment" and re.fullmatch(r"[A-Za-z]", tree.parts[0].strip()):
        name = tree.parts[0].strip()
        other = "y" if name != "y" else "x"
        yield "the value given another variable's name", f"{other} = {render(tree.parts[2])}"
    if tree.kind == "relation":
        right, left = tree.parts
        flipped = {"<": ">", "<=": "\\ge", "!=": "="}[tree.detail]
        yield "the inequality reversed", f"{left} {flipped} {right}"
    if tree.kind == "equation" and re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", " ".join(tree.parts))):
        left, right = tree.parts  # an equation in variables (`0.56 = 56\%` states numbers)
        yield "the equation's constant changed", f"{left} = {right} + 1"


def _separator_misses(tree: Form) -> Iterator[tuple[str, str]]:
    """A pair of whole numbers read as a decimal, and a decimal read as a pair."""
    if tree.kind in ("tuple", "interval") and len(tree.parts) == 2:
        texts = [render(part) for part in tree.parts]
        if all(re.fullmatch(r"\d+", text) for text in texts):
            yield "the pair read as a decimal", f"{texts[0]}.{texts[1]}"
    if tree.kind == "leaf" and (decimal := re.fullmatch(r"(\d+)\.(\d+)", tree.parts[0])):
        yield "the decimal read as a pair", f"({decimal[1]}, {decimal[2]})"


def hedge_partner(tree: Form, misses: list[tuple[str, str]]) -> str:
    """The wrong answer to offer beside the gold. For a list, set or union it is one with an
    item too many: a list that drops or repeats an item adds nothing to the gold offered
    beside it (`4, 5, 7` or `5, 5, 7` is the set {4, 5, 7})."""
    if tree.kind in ("list", "union"):
        for why, text in misses:
            if "item too many" in why:
                return text
    return misses[0][1]
