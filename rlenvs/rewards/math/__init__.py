"""Math answers: final-answer extraction, number parsing, and reward functions.

`numeric_answer_score(completion, "72")` is the GSM8K reward; see `extraction` for what
counts as a final answer and `numbers` for what counts as a number.
"""

from rlenvs.rewards.completions import completion_text
from rlenvs.rewards.math.extraction import Extraction, FinalAnswer, extract_final_answer
from rlenvs.rewards.math.numbers import Number, parse_number
from rlenvs.rewards.math.scoring import (
    gold_value,
    is_correct,
    numeric_answer_reward,
    numeric_answer_score,
)

__all__ = [
    "Extraction",
    "FinalAnswer",
    "Number",
    "completion_text",
    "extract_final_answer",
    "gold_value",
    "is_correct",
    "numeric_answer_reward",
    "numeric_answer_score",
    "parse_number",
]
