"""The answer-form rule of the procedural math envs: an answer counts only in the form its gold
answer has (a number, a tuple of numbers, an expanded polynomial in x), so that a reply cannot
earn the reward by leaving the work undone ("7 + 9" for 16, "3(x^2 - 6x - 8)" for the expanded
product), while the verifier (`check_answer`) still decides equivalence. `verdict` is the whole
rule: equivalent to the gold answer and in its form."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

from rlenvs.rewards.math import AnswerCheck, check_answer, parse_number
from rlenvs.rewards.math.equivalence import read_form, stated_value
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.scoring import without_problem_nouns

NUMBER = "number"
NUMBER_TUPLE = "tuple of numbers"
EXPANDED_POLYNOMIAL = "expanded polynomial in x"
ANY_FORM = "any"

_LABEL = re.compile(r"\s*(?:[a-zA-Z](?:\([a-zA-Z]\))?|\(\s*[a-zA-Z](?:\s*,\s*[a-zA-Z])*\s*\))\s*=(?!=)")
"""A name in front of an answer, as in `x = 4`, `f(x) = x^2 + 1` or `(x, y) = (6, -7)`."""
_LAYOUT = ("\\$", "$", "\\left", "\\right", "\\,", "\\!", "\\;", "\\ ")
_LONE_LETTER = re.compile(r"(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])")
"""A one-letter name such as x: `parse_number` reads "25x" as 25 with a unit, but here it is a
term in x, not a number (unit words, "4 apples", have more letters)."""
_POLYNOMIAL_TERM = re.compile(r"([+-])?(\d+(?:\.\d+)?)?(?:x(?:\^(\d+))?)?")


def _bare(answer: str) -> str:
    """An answer without math delimiters, spacing commands and a leading label, read as the
    verifier reads its value: the last member of a chain (`4 + 5 = 9` states 9, and the
    verifier has checked it is true), unicode powers as `^{2}`, no `\\left`/`\\right`."""
    answer = stated_value(normalize_answer(answer))
    for layout in _LAYOUT:
        answer = answer.replace(layout, "")
    answer = answer.replace("−", "-").strip()
    label = _LABEL.match(answer)
    return answer[label.end() :].strip() if label else answer


def states_a_number(answer: str) -> bool:
    """One number, in any exact spelling: "-3", "3.5", "7/2", "\\frac{7}{2}", "x = 4"."""
    return _is_number(_bare(answer))


def _is_number(text: str) -> bool:
    return parse_number(text) is not None and _LONE_LETTER.search(text) is None


def states_a_tuple_of_numbers(answer: str) -> bool:
    """ "(6, -7)", "(x, y) = (6, -7)", "x = 6, y = -7": two or more numbers, not expressions,
    in parentheses or each named by its own variable (read as the verifier reads them)."""
    form = read_form(normalize_answer(answer))
    if form.kind == "assignment":
        form = form.parts[2]
    if form.kind == "tuple" and form.detail == "()":
        items = list(form.parts)
    elif form.kind == "list" and all(part.kind == "assignment" for part in form.parts):
        names = [part.parts[0].replace(" ", "") for part in form.parts]
        if len(set(names)) != len(names):
            return False
        items = [part.parts[2] for part in form.parts]
    else:
        return False
    return len(items) >= 2 and all(item.kind == "leaf" and _is_number(_bare(item.parts[0])) for item in items)


def states_an_expanded_polynomial(answer: str) -> bool:
    """A sum of terms c·x^k with each power of x at most once: "3x^2 - 18x - 24" (any order).

    Not "3(x^2 - 6x - 8)" (a product left), not "x^2 + 2x^2 - 18x - 24" (like terms apart).
    """
    text = _bare(answer)
    for layout in ("{", "}", "\\cdot", "\\times", "*", " "):
        text = text.replace(layout, "")
    if not text:
        return False
    powers: set[int] = set()
    position = 0
    while position < len(text):
        term = _POLYNOMIAL_TERM.match(text, position)
        assert term is not None  # every part of the pattern is optional: it matches, if only ""
        sign, coefficient, power = term.group(1), term.group(2), term.group(3)
        has_x = "x" in term.group()
        if (position > 0 and not sign) or not (coefficient or has_x):
            return False  # an operator other than + and -, or an empty term
        if coefficient is not None and float(coefficient) == 0:
            return False
        degree = int(power) if power else (1 if has_x else 0)
        if degree in powers:
            return False
        powers.add(degree)
        position = term.end()
    return True


FORM_CHECKS: dict[str, Callable[[str], bool]] = {
    NUMBER: states_a_number,
    NUMBER_TUPLE: states_a_tuple_of_numbers,
    EXPANDED_POLYNOMIAL: states_an_expanded_polynomial,
}


@functools.lru_cache(maxsize=4096)
def answer_form(gold: str) -> str:
    """The form a reply's answer must take: the first of FORM_CHECKS the gold answer has."""
    for form, check in FORM_CHECKS.items():
        if check(gold):
            return form
    return ANY_FORM


def has_form(answer: str, form: str) -> bool:
    return form == ANY_FORM or FORM_CHECKS[form](answer)


class Verdict(NamedTuple):
    check: AnswerCheck
    """The verifier's reading: the answer found, hedging, equivalence."""
    form: str
    in_form: bool

    @property
    def correct(self) -> bool:
        return self.check.correct and self.in_form


def verdict(reply: str, gold: str, problem: str | None = None) -> Verdict:
    """The reward rule of these envs: an answer equivalent to `gold` and in its form. With the
    `problem`, a number may name what it counts in the problem's words (`18 apples`)."""
    check = check_answer(reply, gold, problem=problem)
    form = answer_form(gold)
    answer = check.answer
    if answer is not None and problem and form == NUMBER and not has_form(answer, form):
        answer = without_problem_nouns(answer, problem) or answer
    return Verdict(check, form, answer is not None and has_form(answer, form))
