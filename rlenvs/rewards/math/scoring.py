"""Math reward functions: (completion, ground truth) -> 0.0 or 1.0, and TRL's shape."""

from __future__ import annotations

import functools
from typing import Any

from rlenvs.rewards.completions import completion_text
from rlenvs.rewards.math.extraction import Extraction, extract_final_answer
from rlenvs.rewards.math.numbers import Number, parse_number


def numeric_answer_score(completion: str, ground_truth: str) -> float:
    """1.0 iff the completion's single final answer equals `ground_truth` as a number, else 0.0.

    `ground_truth` is a number ("72", "1,000", "0.5") or a whole gold solution ending in a
    final-answer marker (GSM8K's "... #### 72").
    """
    return 1.0 if is_correct(extract_final_answer(completion), gold_value(ground_truth)) else 0.0


def is_correct(extraction: Extraction, gold: Number) -> bool:
    """A single, unhedged final answer whose value is exactly `gold`."""
    answer = extraction.answer
    return not extraction.hedged and answer is not None and answer.value == gold


def numeric_answer_reward(completions: list[Any], answer: list[str], **_columns: Any) -> list[float]:
    """`numeric_answer_score` in TRL's reward-function shape.

    Accepts plain completions (`list[str]`) and conversational ones (`list[list[message]]`,
    scored on the last message's content); `answer` is the dataset column with the truth.
    """
    if len(completions) != len(answer):
        raise ValueError(f"got {len(completions)} completions but {len(answer)} answers: they must pair up")
    return [numeric_answer_score(completion_text(c), str(a)) for c, a in zip(completions, answer)]



@functools.lru_cache(maxsize=65536)
def gold_value(ground_truth: str) -> Number:
    """The numeric value of a ground truth: a number, or a gold solution's final answer."""
    value = parse_number(ground_truth)
    if value is None:
        extraction = extract_final_answer(ground_truth)
        if extraction.answer is not None and not extraction.hedged:
            value = extraction.answer.value
    if value is None:
        raise ValueError(
            f"ground truth {ground_truth[:80]!r} is neither a number nor a solution ending in "
            "'#### N' or '\\boxed{N}'"
        )
    return value

