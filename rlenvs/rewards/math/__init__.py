"""Math answers: final-answer extraction, equivalence, and reward functions.

`math_answer_score(completion, gold)` is the verifier every math env uses. See `extraction`
for what counts as a final answer, `equivalence` for when two answers are the same, and
`symbolic` for how sympy is kept on a time budget.
"""

from rlenvs.rewards.completions import completion_text
from rlenvs.rewards.math.equivalence import answers_equivalent
from rlenvs.rewards.math.extraction import Extraction, FinalAnswer, extract_final_answer
from rlenvs.rewards.math.numbers import Number, parse_number
from rlenvs.rewards.math.scoring import (
    AnswerCheck,
    check_answer,
    final_answer,
    gold_answer,
    gold_value,
    is_correct,
    math_answer_reward,
    math_answer_score,
    numeric_answer_reward,
    numeric_answer_score,
)
from rlenvs.rewards.math.symbolic import warm_up

__all__ = [
    "AnswerCheck",
    "Extraction",
    "FinalAnswer",
    "Number",
    "answers_equivalent",
    "check_answer",
    "completion_text",
    "extract_final_answer",
    "final_answer",
    "gold_answer",
    "gold_value",
    "is_correct",
    "math_answer_reward",
    "math_answer_score",
    "numeric_answer_reward",
    "numeric_answer_score",
    "parse_number",
    "warm_up",
]
