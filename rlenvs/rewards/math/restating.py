"""Whether a correct answer restates the question instead of answering it.

"Simplify $\\sqrt{50} + \\sqrt{18}$" is answered by `8\\sqrt{2}`; the question's own
expression has that value too, so an equality check alone would pay for copying it into the
box. An answer restates the question when it is, verbatim or up to rewrites that simplify
nothing (operand order, `+0`, `\\cdot 1`, `2\\cdot 9` for 18: see `trees`), one of the
expressions the question's math spans state, or a constant padded to more operations than
both the gold and a question expression of its value. Such an answer scores 0 where the
task asks to simplify, compute or evaluate (MATH-v0). An answer that reads as the gold
answer never restates, and neither does a plain number.
"""

from __future__ import annotations

import json
import re

from rlenvs.rewards.math import symbolic
from rlenvs.rewards.math.equivalence import split_top_level
from rlenvs.rewards.math.normalize import normalize_answer

_SPANS = re.compile(r"\$\$(.+?)\$\$|\$((?:[^$\\]|\\.)+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_RELATION = re.compile(r"<=|>=|!=|<|>|\\approx|\\equiv")
MAX_EXPRESSION_CHARS = 300
"""Question expressions longer than this are not compared (no answer restates them)."""


def question_expressions(question: str) -> list[str]:
    """The expressions the question's math spans state, normalised: each side of an
    equation or relation and each item of a list (`f(x) = 3x+2` gives `f(x)` and `3x+2`)."""
    expressions: list[str] = []
    for span in _SPANS.finditer(question):
        text = normalize_answer(next(group for group in span.groups() if group is not None))
        for side in _RELATION.split(text):
            for part in split_top_level(side, "=,;"):
                part = part.strip()
                if part and len(part) <= MAX_EXPRESSION_CHARS and part not in expressions:
                    expressions.append(part)
    return expressions


def restates_question(answer: str, gold: str, question: str, budget: float = symbolic.DEFAULT_BUDGET) -> bool:
    """Whether `answer`, already found equal to `gold`, restates `question` (module docstring)."""
    stated, gold_text = normalize_answer(answer), normalize_answer(gold)
    compact = stated.replace(" ", "")
    if compact == gold_text.replace(" ", ""):
        return False
    if len(compact) >= 3 and compact in normalize_answer(question).replace(" ", ""):
        return True  # copied verbatim
    expressions = question_expressions(question)
    if not expressions:
        return False
    spec = json.dumps({"gold": gold_text, "question": expressions})
    return symbolic.compare([("restates", stated, spec)], budget).results[0] is True
