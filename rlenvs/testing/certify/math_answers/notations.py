"""Equivalent correct forms of the gold: every notation style, the spellings of its type,
those the problem suggests, number forms, and checks written after the box."""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction

from rlenvs.rewards.math.equivalence import BASE_NUMERAL, Form
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import parse_number
from rlenvs.rewards.math.scoring import OPTION, option_lines
from rlenvs.rewards.math.units import is_value_word
from rlenvs.testing.certify.answer_tree import (
    Style,
    braced,
    commuted,
    display_fractions,
    explicit_products,
    render,
    signed_numerators,
    spaced,
    tight,
    unbraced,
)
from rlenvs.testing.certify.math_answers.values import WORDY, number_text, terminates

REPLY_SHAPES = (
    "\\boxed{{{}}}",
    "The final answer is $\\boxed{{{}}}$.",
    "So the answer is\n\\[\n\\boxed{{{}}}\n\\]",
    "**Final answer:** $\\boxed{{ {} }}$",
)
"""Where a reply puts its final answer; every notation is written in one of them."""

_STYLES = (
    Style("plain"),
    Style("spaced", separator=" , ", leaf=spaced),
    Style("tight", separator=",", union="\\cup", leaf=tight),
    Style("left-right", left="\\left", right="\\right"),
    Style("reordered", reverse_sets=True, leaf=commuted),
    Style("set braces", set_braces=True),
    Style("display fractions", matrix="bmatrix", leaf=display_fractions),
    Style("braced arguments", leaf=braced),
    Style("bare arguments", leaf=unbraced),
    Style("signed numerators", leaf=signed_numerators),
    Style("explicit products", leaf=explicit_products),
    Style("swapped equation", swap_equation=True),
)
_NO_ARITHMETIC_STYLES = ("explicit products", "reordered")
"""Styles that change how a leaf's operations are written: not applied to a word, a choice
letter or a numeral in a base, whose letters are no variables."""


def notations(gold: str, tree: Form, kind: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for the gold written in every style and every spelling of its type."""
    seen: set[str] = set()
    written: list[tuple[str, str]] = []
    wordy = kind in WORDY
    for style in _STYLES:
        if wordy and style.name in _NO_ARITHMETIC_STYLES:
            continue
        written.append((f"the gold in the {style.name} style", render(tree, style)))
    written.extend(spellings(gold, tree, kind))
    for number, (why, text) in enumerate(written):
        if text in seen:
            continue
        seen.add(text)
        shape = REPLY_SHAPES[number % len(REPLY_SHAPES)]
        yield why, shape.format(text)


def spellings(gold: str, tree: Form, kind: str) -> list[tuple[str, str]]:
    """The other ways people write an answer of this type (its leaf as the data writes it)."""
    raw = gold.strip()
    text = render(tree)
    found: list[tuple[str, str]] = [("the gold exactly as the data writes it", raw)]
    if tree.kind == "tuple":
        found.append(
            ("the tuple as a vector in angle brackets", f"\\langle {', '.join(map(render, tree.parts))} \\rangle")
        )
    if tree.kind == "interval" and "\\infty" not in text and tree.detail != "[]":
        low, high = map(render, tree.parts)
        opening = "]" if tree.detail[0] == "(" else "["
        closing = "[" if tree.detail[1] == ")" else "]"
        found.append(("the interval's open ends turned out (French notation)", f"{opening}{low}, {high}{closing}"))
    if kind == "degrees":
        number = re.sub(r"\s*\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|°", "", raw).strip()
        found += [
            ("degrees with a braced sign", f"{number}^{{\\circ}}"),
            ("degrees as °", f"{number}°"),
            ("degrees as ^o", f"{number}^o"),
        ]
    elif kind == "choice":
        letter = re.sub(r"[^A-Ea-e]", "", normalize_answer(raw)).upper()
        found += [(f"the letter {spelt}", spelt) for spelt in (f"({letter})", letter, f"\\text{{({letter})}}")]
    elif kind == "text":
        found += [("the word without \\text", text), ("the word in \\textbf", f"\\textbf{{{text}}}")]
        if text[:1].isalpha() and not text.isupper():
            found.append(("the word with its first letter's case changed", text[0].swapcase() + text[1:]))
    elif kind == "percent":
        number = re.sub(r"\s*\\?%", "", raw)
        found += [("the percentage without its sign", number), ("a percent sign without backslash", f"{number}%")]
    elif kind == "number with unit":
        found += [("the number without its unit", text)]
    elif kind == "base numeral" and (numeral := BASE_NUMERAL.fullmatch(text)):
        digits, base = numeral[1], int(numeral[2])
        found += [("the base braced", f"{digits}_{{{base}}}"), ("the digits in parentheses", f"({digits})_{{{base}}}")]
        if 2 <= base <= len(_BASE_WORDS) + 1:
            found.append(("the base as a word", f"{digits}_{{\\text{{{_BASE_WORDS[base - 2]}}}}}"))
    elif kind == "integer" and (value := parse_number(text)) is not None and abs(int(value)) >= 1000:
        grouped = f"{int(value):,}"
        found += [("thousands with {,}", grouped.replace(",", "{,}")), ("thousands with commas", grouped)]
    elif kind == "decimal" and (value := parse_number(text)) is not None:
        found += [("a trailing zero", f"{text}0")]
    elif kind == "fraction" and (value := parse_number(text)) is not None and value.denominator != 1:
        found += [
            ("a slash fraction", f"{value.numerator}/{value.denominator}"),
            ("TeX's \\over", f"{{{value.numerator} \\over {value.denominator}}}"),
        ]
    return found


_BASE_WORDS = "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen".split()
_COUNTED = re.compile(
    r"\b[Hh]ow many (?:[a-z-]+ ){0,3}?([a-z]{3,}) (?:are|is|do|does|did|can|could|will|would|were|was|of|in|have|has|must)\b"
)
"""What a problem counts ("How many whole numbers are ..."): the noun before the verb, which a
reply may name with its count."""
_MODULUS = re.compile(r"(?:divided by|modulo|mod|\\pmod\s*\{?)\s*\$?\s*(\d+)")


def problem_spellings(tree: Form, kind: str, problem: str) -> Iterator[tuple[str, str]]:
    """Spellings the problem's own wording suggests: a remainder as a congruence modulo the
    problem's modulus, a number in base ten when the problem works in bases, a choice letter
    with its option's text."""
    text = render(tree)
    value = parse_number(text, letter_units=False) if kind == "integer" else None
    if value is not None and value >= 0:
        modulus = _MODULUS.search(problem)
        if modulus and "remainder" in problem.lower() and value < int(modulus[1]):
            yield "the remainder as a congruence", f"n \\equiv {value} \\pmod{{{modulus[1]}}}"
        if re.search(r"\bbase\b", problem):
            yield "the number with its base ten written", f"{value}_{{10}}"
    counted = _COUNTED.search(problem)
    if value is not None and counted is not None and not is_value_word(counted[1]):
        yield "the count with the problem's noun", f"{value} \\text{{ {counted[1]}}}"
    if kind == "choice":
        letter = re.sub(r"[^A-Ea-e]", "", normalize_answer(text)).upper()
        for option in OPTION.finditer(option_lines(problem)):
            if option[1].upper() == letter and option[2].strip():
                yield "the letter with its option's text", f"({letter}) {option[2].strip().rstrip('.,;')}"


_NAMED_TUPLE = re.compile(r"\(\s*([a-z])\s*,\s*([a-z])\s*(?:,\s*([a-z])\s*)?\)")


def option_mixups(tree: Form, kind: str, problem: str) -> Iterator[tuple[str, str]]:
    """A choice letter written with another option's text (`(C) e` where option C is `c`):
    a wrong answer that looks like the right letter."""
    if kind != "choice":
        return
    letter = re.sub(r"[^A-Ea-e]", "", normalize_answer(render(tree))).upper()
    texts = {option[1].upper(): option[2].strip().rstrip(".,;") for option in OPTION.finditer(option_lines(problem))}
    for other, option_text in texts.items():
        if other != letter and option_text and letter in texts and option_text != texts[letter]:
            yield "the letter with another option's text", f"({letter}) {option_text}"
            return


def named_tuples(tree: Form, problem: str) -> Iterator[tuple[str, str]]:
    """A tuple the problem names by its variables ("the ordered pair $(x, y)$") written as
    those variables' values: `x = 6, y = -7` and `(x, y) = (6, -7)`."""
    if tree.kind != "tuple":
        return
    for match in _NAMED_TUPLE.finditer(problem):
        names = [name for name in match.groups() if name]
        if len(names) == len(tree.parts) and len(set(names)) == len(names):
            values = [render(part) for part in tree.parts]
            yield "the tuple as its variables' values", ", ".join(f"{n} = {v}" for n, v in zip(names, values))
            yield "the tuple named by its variables", f"({', '.join(names)}) = {render(tree)}"
            if set(names) <= {"x", "y", "z"}:
                pairs = list(zip(names, values))[::-1]
                yield "the coordinates' values, last first", ", ".join(f"{n} = {v}" for n, v in pairs)
            return


_FORM_WORDS = {
    "fraction": re.compile(r"(?<!not )\b(?:common|improper) fractions?\b|\bas a fraction\b", re.IGNORECASE),
    "decimal": re.compile(r"\b(?:as|to|into|in) a decimal\b|\bnearest (?:tenth|hundredth|thousandth)\b", re.IGNORECASE),
    "mixed": re.compile(r"\b(?:as|to|into|in) a mixed number\b|\bmixed number form\b", re.IGNORECASE),
}
"""What a problem may say of its answer's form, read here on their own (not the verifier's
reading): the other forms of the same number are then no answer."""


def number_forms(tree: Form, problem: str) -> Iterator[tuple[bool, str, str]]:
    """(excluded, why, answer): the gold number in the other forms numbers take (a decimal, a
    fraction, a mixed number). A form the problem rules out ("Express your answer as a
    common fraction") is `excluded`, and must earn nothing; where the problem asks for no
    form, a terminating fraction's decimal is the same answer."""
    if tree.kind != "leaf" or (value := parse_number(tree.parts[0], letter_units=False)) is None:
        return
    value = Fraction(value)
    text = tree.parts[0]
    asks = {form for form, pattern in _FORM_WORDS.items() if pattern.search(problem)}
    if value.denominator == 1:
        return
    if "." not in text and terminates(value.denominator):
        decimal = number_text(value, True)
        if asks & {"fraction", "mixed"}:
            yield True, "a decimal where the problem asks for a fraction", decimal
        elif not asks:
            yield False, "a terminating fraction as its decimal", decimal
    if "." in text and "decimal" in asks:
        yield True, "a fraction where the problem asks for a decimal", number_text(value, False)
    whole = abs(value.numerator) // value.denominator
    if whole and "mixed" in asks and "frac" in text and not re.search(r"\d\s*\\frac", text):
        yield True, "an improper fraction where the problem asks for a mixed number", number_text(value, False)


def rechecks(gold: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for replies that check their answer after the box, the working's numbers
    in the check being no second answer: `\\boxed{7}` then "Hmm, 4 + 3 is indeed 7."."""
    value = parse_number(gold, letter_units=False)
    if value is None or Fraction(value).denominator != 1:
        return
    number = int(value)
    yield "a check after the box", f"$\\boxed{{{gold}}}$\n\nHmm, {number - 3} + 3 is indeed {number}."
    yield (
        "a check after the box, with an equation",
        f"$\\boxed{{{gold}}}$\n\nWait, let me check: {number + 2} - 2 = {number}. Yes.",
    )
    yield "the working after 'or'", f"So it is $\\boxed{{{gold}}}$, or {number - 1} + 1."
