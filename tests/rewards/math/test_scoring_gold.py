"""Every MATH gold solution scores 1 against its own answer, as MATH-v1 judges it.

The real data set (../shared/data/math: train 7,500, test 5,000, MATH-500; MIT) is the
widest sample of how correct competition answers are written: any rule of extraction,
hedging, comparison or restating that refuses one of them refuses real correct replies.
"""

from __future__ import annotations

import json

import pytest

from rlenvs.envs.math.competition import competition_task
from rlenvs.rewards.math import check_answer
from rlenvs.rewards.math.restating import restates_question
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.full_data  # the whole of each split, not the samples

UNANSWERABLE = {
    "train/number_theory/7115.json": "the solution's box is empty (`there are $\\boxed{}$ primes`): no answer to score",
    "train/number_theory/7117.json": "the solution's box is empty (`the answer is $\\boxed{}$`): no answer to score",
}
"""Rows MATH-v1 leaves out, with a warning, and why."""


@pytest.mark.parametrize("split", ["train", "test", "math500"])
def test_every_gold_solution_scores_one_against_its_answer(split: str) -> None:
    rows = [json.loads(line) for line in (SHARED_DATA / "math" / f"{split}.jsonl").read_text().splitlines()]
    assert len(rows) == {"train": 7500, "test": 5000, "math500": 500}[split]
    refused, unanswerable = {}, set()
    for row in rows:
        task = competition_task(row, row["unique_id"])
        if not task.answer:
            unanswerable.add(task.task_id)
            continue
        check = check_answer(task.solution, task.answer, problem=task.prompt)
        if not check.correct or restates_question(check.answer, task.answer, task.prompt):
            refused[task.task_id] = (task.answer, check)
    assert refused == {}
    assert unanswerable == {task_id for task_id in UNANSWERABLE if task_id.startswith(f"{split}/")}
