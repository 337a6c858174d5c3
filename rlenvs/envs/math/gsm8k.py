"""rlenvs/GSM8K-v1: grade-school math word problems with a single numeric answer.

Data: the official GSM8K JSONL rows `{"question": ..., "answer": "<reasoning> #### 72"}`
(or Parquet with the same columns); a user's own row may give `answer` as the bare number.
The reply is scored by `rlenvs.rewards.math`: 1.0 iff its one final answer equals the gold
number, 0.0 otherwise, and 0.0 for a reply that hedges between several final answers.
With `max_turns > 1`, a reply with no final answer at all gets a reminder of the format
and another turn; any reply with a final answer ends the episode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.task import DatasetSource, content_task_id
from rlenvs.data import DataFiles, DataSpec, HubDataset
from rlenvs.envs.math.tasks import MathTask, row_string
from rlenvs.rewards.math import check_answer, parse_number

DATASET = "gsm8k"
HUB = HubDataset("openai/gsm8k", "main")
SPLITS = ("train", "test")
DATA = DataSpec(
    DATASET,
    SPLITS,
    hub=dict.fromkeys(SPLITS, HUB),
    source="https://github.com/openai/grade-school-math (grade_school_math/data/{train,test}.jsonl, MIT)",
)

DEFAULT_SYSTEM_PROMPT = (
    "Solve the math word problem. Reason step by step, then give the final answer, "
    "a number only, as \\boxed{N} at the end of your reply."
)
FORMAT_REMINDER = (
    "I could not find a final answer in your reply. End your reply with the final answer, a number only, as \\boxed{N}."
)


CALCULATOR_ANNOTATION = re.compile(r"<<[^<>]*>>")
"""GSM8K's `<<48/2=24>>` calculator annotations: the tool calls its authors' model was
trained to make, not part of a worked solution a reader or a model should imitate."""


def worked_solution(solution: str) -> str:
    """A GSM8K gold answer as the reply the env's prompt asks for: the reasoning without its
    calculator annotations, ending in `\\boxed{N}` instead of GSM8K's `#### N` line. This is
    what `oracle_action` (and so `rlenvs sft-data`) gives, so SFT data teaches the format the
    prompt asks for. An answer without `####` (a user's own row) is returned as it is."""
    reasoning, marker, final = solution.rpartition("####")
    if not marker:
        return solution
    text = CALCULATOR_ANNOTATION.sub("", reasoning).strip()
    boxed = f"The final answer is \\boxed{{{final.strip()}}}."
    return f"{text}\n{boxed}" if text else boxed


def gsm8k_task(row: Mapping[str, Any], task_id: str) -> MathTask:
    """One GSM8K row as a task; raises ValueError naming the field that is wrong."""
    question = row_string(row.get("question"), "question", "GSM8K")
    answer = row_string(row.get("answer"), "answer", "GSM8K")
    if "####" in answer:
        final = answer.rsplit("####", 1)[1].strip()
        solution = answer
    else:
        final = answer.strip()
        solution = f"The answer is \\boxed{{{final}}}."
    if parse_number(final) is None:
        raise ValueError(
            f"GSM8K answer must end in '#### N' with N a number (or be the number itself), got {answer[-60:]!r}"
        )
    return MathTask(task_id=task_id, prompt=question.strip(), answer=final, solution=solution)


class GSM8KEnv(TextEnv[MathTask]):
    """Grade-school math word problems (GSM8K); reply with reasoning and a final `\\boxed{N}`."""

    data_spec = DATA

    def __init__(
        self,
        split: str = "train",
        data_files: DataFiles | None = None,
        max_turns: int = 1,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown GSM8K split {split!r}: choose one of {list(SPLITS)}")
        tasks = DATA.load(split, data_files=data_files, task_from_row=gsm8k_task)
        super().__init__(
            DatasetSource(tasks, name=f"{DATASET}/{split}"),
            max_turns=max_turns,
            system_prompt=system_prompt,
            render_mode=render_mode,
        )
        self.split = split

    def task_from_row(self, row: Mapping[str, Any]) -> MathTask:
        return gsm8k_task(row, content_task_id(DATASET, row))

    def judge(self, task: MathTask, reply: str) -> Judgement:
        check = check_answer(reply, task.answer, problem=task.prompt)
        info = {"parsed_answer": check.answer, "hedged": check.hedged}
        if check.answer is None and not check.hedged:
            return Judgement(0.0, resolved=False, correct=False, feedback=FORMAT_REMINDER, info=info)
        return Judgement(float(check.correct), resolved=True, correct=check.correct, stop_reason="answered", info=info)

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        return worked_solution(task.solution)
