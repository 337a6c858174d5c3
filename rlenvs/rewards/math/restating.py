"""Whether a correct answer restates the question instead of answering it.

"Simplify $\\sqrt{50} + \\sqrt{18}$" is answered by `8\\sqrt{2}`; the question's own
expression has that value too, so an equality check alone would pay for copying it into the
box. An answer restates the question when it is, as written or up to rewrites that simplify
nothing (operand order, `+0`, `\\cdot 1`, `2\\cdot 9` for 18: see `trees`), one of the
expressions the question's math spans state; it is no simpler than the gold when it breaks
a rule of simplest form the gold keeps (like terms combined, common factors taken out,
functions of constants evaluated, lowest terms, no square factor under a root, a rational
denominator: `trees.form_faults`), or writes a decimal in an exact expression the gold
writes without one (`0.5\\sqrt3`), or a decimal where the question asks for a fraction (a fraction where
it asks for a decimal). Such an answer scores 0 in
MATH-v1, whose tasks ask to simplify, compute or evaluate and whose prompt asks for the
simplest exact form. An answer that reads as the gold answer never restates, and neither
does a plain number (`0.5`, `-12`).
"""

from __future__ import annotations

import json
import math
import re

from rlenvs.rewards.math import symbolic
from rlenvs.rewards.math.equivalence import (
    CHOICE,
    CHOICE_WITH_TEXT,
    PROSE_WORD,
    WORDS,
    Form,
    answers_equivalent,
    read_form,
    split_top_level,
    stated_value,
)
from rlenvs.rewards.math.extraction import MATH_WORDS
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import has_mixed_number, mixed_numbers, parse_number

_SPANS = re.compile(r"\$\$(.+?)\$\$|\$((?:[^$\\]|\\.)+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_RELATION = re.compile(r"<=|>=|!=|<|>|\\approx|\\equiv")
_ASKS = {
    "factor": re.compile(r"\bfactor", re.IGNORECASE),
    "expand": re.compile(r"\b(?:expand|multiply out|distribute)", re.IGNORECASE),
    "mixed": re.compile(r"(?<!not )(?<!no )(?<!or )\bmixed numbers?\b", re.IGNORECASE),
    "improper": re.compile(r"(?<!not )\bimproper fractions?\b", re.IGNORECASE),
    "fraction": re.compile(r"(?<!not )\b(?:common|improper)\s+fractions?\b|\bas a fraction\b", re.IGNORECASE),
    "decimal": re.compile(
        r"(?<!not )\bas a decimal\b|\bin decimal form\b|\bnearest (?:tenth|hundredth|thousandth)\b|\bdecimal places?\b",
        re.IGNORECASE,
    ),
}
_DECIMAL_POINT = re.compile(r"\d?\.\d")
_FRACTION_MARK = re.compile(r"\\frac|\d\s*/\s*\d")
_WRITTEN_FRACTION = re.compile(r"\\frac\{\s*(-?\d+)\s*\}\{\s*(\d+)\s*\}|(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")
"""What a question asks of the answer's form (see `trees.form_faults`)."""
_PLAIN_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)")
_BRACELESS_FRACTION = re.compile(r"\\frac(?:\{([^{}]*)\}|(\d))(?:\{([^{}]*)\}|(\d))")
MAX_EXPRESSION_CHARS = 300
"""Question expressions longer than this are not compared (no answer restates them)."""


def question_expressions(question: str, *, as_written: bool = False) -> list[str]:
    """The expressions the question's math spans state, normalised: each side of an
    equation or relation and each item of a list (`f(x) = 3x+2` gives `f(x)` and `3x+2`)."""
    expressions: list[str] = []
    for span in _SPANS.finditer(question):
        text = normalize_answer(next(group for group in span.groups() if group is not None), as_written=as_written)
        for side in _RELATION.split(text):
            for part in split_top_level(side, "=,;"):
                part = part.strip()
                if part and len(part) <= MAX_EXPRESSION_CHARS and part not in expressions:
                    expressions.append(part)
    return expressions


MAX_PARTS_COMPARED = 64
"""Pairs of parts a structured answer's restating check compares, at most (a list's items
are paired with every gold item they may equal)."""


def restates_question(answer: str, gold: str, question: str, budget: float = symbolic.DEFAULT_BUDGET) -> bool:
    """Whether `answer`, already found equal to `gold`, restates `question` or is no
    simpler than the gold (module docstring), anywhere in its structure: a tuple, interval,
    matrix, list or union restates if one of its parts does against the gold's part it
    stands for (`(-5, \\sqrt{26}+1-1]` for `(-5, \\sqrt{26}]`)."""
    pairs = _part_pairs(
        read_form(normalize_answer(answer, as_written=True)), read_form(normalize_answer(gold, as_written=True))
    )
    if pairs is None:
        return _leaf_restates(answer, gold, question, budget)
    # Parts are paired by position, or every way for a list; only parts of equal value stand
    # for each other (`2\\pi` in a list of solutions is not a restated `0`).
    return any(
        _leaf_restates(part, gold_part, question, budget)
        for part, gold_part in pairs[:MAX_PARTS_COMPARED]
        if answers_equivalent(part, gold_part, budget)
    )


def _part_pairs(answer: Form, gold: Form) -> list[tuple[str, str]] | None:
    """(answer leaf, gold leaf) for each pair of leaves that stand for each other in two
    answers of one structure: in order for tuples, intervals and matrices, every pairing for
    lists and unions (whose order says nothing); None where either answer is one value."""
    if answer.kind in LEAF_KINDS or gold.kind in LEAF_KINDS:
        return None
    if answer.kind != gold.kind:
        return []
    if answer.kind == "assignment":
        return _part_pairs(answer.parts[2], gold.parts[2]) or [(answer.parts[1], gold.parts[1])]
    if answer.kind == "matrix":
        cells = [cell for row in answer.parts for cell in row]
        gold_cells = [cell for row in gold.parts for cell in row]
        matched = zip(cells, gold_cells) if len(cells) == len(gold_cells) else iter(())
    elif answer.kind in ("list", "union"):
        matched = ((part, gold_part) for part in answer.parts for gold_part in gold.parts)
    else:
        matched = zip(answer.parts, gold.parts) if len(answer.parts) == len(gold.parts) else iter(())
    pairs: list[tuple[str, str]] = []
    for part, gold_part in matched:
        inner = _part_pairs(part, gold_part)
        pairs.extend([(part.parts[0], gold_part.parts[0])] if inner is None else inner)
    return pairs


LEAF_KINDS = ("leaf", "approx", "equation", "relation", "chain")
"""Forms judged as one value by `_leaf_restates`."""


def _leaf_restates(answer: str, gold: str, question: str, budget: float) -> bool:
    """`restates_question` for one value."""
    # The value the answer states: `x = \\sqrt{50}+\\sqrt{18}` states what the question asks.
    value = stated_value(normalize_answer(answer, as_written=True))
    gold_as_written, gold_normal = normalize_answer(gold, as_written=True), normalize_answer(gold)
    written, gold_written = _compact(value), _compact(gold_as_written)
    asks = [form for form, pattern in _ASKS.items() if pattern.search(question)]
    if "fraction" in asks and _DECIMAL_POINT.search(written) and not _DECIMAL_POINT.search(gold_written):
        return True  # `5.5` where the question asks for a fraction
    if "decimal" in asks and _FRACTION_MARK.search(written) and not _FRACTION_MARK.search(gold_written):
        return True  # `\\frac{11}{2}` where the question asks for a decimal
    if written == gold_written or CHOICE.fullmatch(written) or CHOICE_WITH_TEXT.fullmatch(value.strip()):
        return False  # the gold's own form; a choice letter, with or without its option's text
    if _text(value) and _text(gold_normal):
        return False  # words (`Odd` for `\\text{odd}`, `june 20`): no arithmetic to leave undone
    if _left_undone(value) - _left_undone(gold_as_written):
        return True  # `\\sum_{k=1}^{1}(E)`, `\\binom{n}{1}`: an operation the gold has done, written out
    if ("mixed" in asks and not has_mixed_number(value)) or ("improper" in asks and has_mixed_number(value)):
        return True  # `\\frac{11}{2}` or `5.5` where a mixed number is asked, `5\\frac12` where an improper fraction is
    if _PLAIN_NUMBER.fullmatch(written):
        return False  # a number as plain as numbers get (`0.5`, `-12`)
    if written in {_compact(e) for e in question_expressions(question, as_written=True)}:
        return True  # one of the question's expressions, copied (`6\\frac{1}{4}` to write as a fraction)
    if parse_number(value) is not None:
        return _unreduced(value)  # a number (`6.72\\times10^{-5}`, `12 \\text{ ways}`): only its fraction's terms
    if _DECIMAL_POINT.search(written) and not _DECIMAL_POINT.search(gold_written) and read_form(value).kind == "leaf":
        return True  # `0.5\\sqrt{3}` for `\\frac{\\sqrt3}{2}`: a decimal in an exact expression (not `(1, 4.5)`)
    # The gold's value too: a gold `x = 9` states 9, which `i^4(\\log_{\\sqrt[3]{5}} 125)` must not restate.
    gold_form = read_form(gold_normal)
    gold_value = gold_form.parts[1] if gold_form.kind == "assignment" else gold_normal
    spec = json.dumps({"gold": gold_value, "question": question_expressions(question), "asks": asks})
    return symbolic.compare([("restates", mixed_numbers(value), spec)], budget).results[0] is True


_OPERATIONS = re.compile(
    r"\\(sum|prod|int|iint|oint|lim|binom|dbinom|tbinom|choose|max|min|gcd|lcm|lfloor|lceil|det|operatorname)(?![A-Za-z])"
)
"""Operations an answer leaves to the reader: read (and evaluated) by the parser, they would
launder any form: `\\sum_{k=1}^{1}\\left((2+3i)(1-2i)\\right)` is read as `8 - i`."""


def _text(answer: str) -> bool:
    """An answer in words (`Odd`, `June 20`): one of three letters or more, not a function's name."""
    return WORDS.fullmatch(answer.strip()) is not None or any(
        word.lower() not in MATH_WORDS for word in PROSE_WORD.findall(answer)
    )


def _left_undone(text: str) -> set[str]:
    """The operations of `_OPERATIONS` a text writes out."""
    return set(_OPERATIONS.findall(text)) if "\\" in text else set()


def _unreduced(number: str) -> bool:
    """A number written as a fraction of integers with a common factor (`\\frac{36}{99}`)."""
    for match in _WRITTEN_FRACTION.finditer(_compact(number)):
        numerator, denominator = int(match[1] or match[3]), int(match[2] or match[4])
        if math.gcd(numerator, denominator) > 1:
            return True
    return False


def _compact(text: str) -> str:
    """Spaces out, and `\\frac12` spelt `\\frac{1}{2}`: the same writing of an answer."""
    return _BRACELESS_FRACTION.sub(lambda m: f"\\frac{{{m[1] or m[2]}}}{{{m[3] or m[4]}}}", text.replace(" ", ""))
