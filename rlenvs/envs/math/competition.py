"""rlenvs/MATH-v1: competition mathematics (the MATH / MATH-500 row format).

Rows: `{"problem", "solution", "answer", "subject", "level"}`; `answer` may be missing, in
which case the last `\\boxed{}` of `solution` is the answer. Answers are any LaTeX
(fractions, radicals, intervals, tuples, matrices, expressions), checked by
`rlenvs.rewards.math.check_answer`, whose symbolic part runs in a worker process under a
time budget. Data: `data_files=`, `$RLENVS_DATA_DIR/math/{train,test}.jsonl`, or for the
test split the hub's MATH-500 (`HuggingFaceH4/MATH-500`) through `datasets`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.task import DatasetSource, content_task_id
from rlenvs.data import DataFiles, DataSpec, HubDataset
from rlenvs.envs.math.tasks import MathTask
from rlenvs.rewards.math import check_answer, gold_answer, math_answer_score, warm_up
from rlenvs.rewards.math.extraction import boxed_contents, unclosed_box
from rlenvs.rewards.math.restating import restates_question
from rlenvs.rewards.math.scoring import quoted_boxes
from rlenvs.rewards.math.symbolic import DEFAULT_BUDGET

DATASET = "math"
SPLITS = ("train", "test")
HUB = {"test": HubDataset("HuggingFaceH4/MATH-500")}
DATA = DataSpec(
    DATASET,
    SPLITS,
    hub=HUB,
    source="https://github.com/hendrycks/math (the release's problem files as JSONL rows: problem, solution, "
    "level, type; MIT); the hub's test copy is the 500-problem MATH-500 subset",
)
SUBJECTS = (
    "Algebra",
    "Counting & Probability",
    "Geometry",
    "Intermediate Algebra",
    "Number Theory",
    "Prealgebra",
    "Precalculus",
)
LEVELS = (1, 2, 3, 4, 5)

DEFAULT_SYSTEM_PROMPT = (
    "Solve the competition math problem. Reason step by step, then give the final answer "
    "in simplest exact form as \\boxed{...} at the end of your reply."
)
FORMAT_REMINDER = "I could not find a final answer in your reply. End your reply with the final answer as \\boxed{...}."


@dataclass(frozen=True)
class CompetitionTask(MathTask):
    subject: str
    level: int | None


def competition_task(row: Mapping[str, Any], task_id: str) -> CompetitionTask:
    """One MATH row as a task; raises ValueError naming the field that is wrong."""
    problem, solution = row.get("problem"), row.get("solution", "")
    if not isinstance(problem, str) or not problem.strip():
        raise ValueError(f"MATH row needs a non-empty string 'problem', got {problem!r}")
    if not isinstance(solution, str):
        raise ValueError(f"MATH row 'solution' must be a string, got {type(solution).__name__}")
    answer = row.get("answer")
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        if "\\boxed" not in solution and "\\fbox" not in solution:
            raise ValueError(
                "MATH row has no 'answer' and its 'solution' has no \\boxed{} answer: add an 'answer' field"
            )
        # Two rows of MATH's train split box nothing (`\\boxed{}`): no answer to score
        # against. They get an empty answer, which the env leaves out, saying so.
        answerable = boxed_contents(solution) or unclosed_box(solution) is not None
        answer = gold_answer(solution, quoted_boxes(problem)) if answerable else ""
    if not isinstance(answer, str):
        answer = str(answer)
    unique_id = row.get("unique_id")
    return CompetitionTask(
        task_id=unique_id if isinstance(unique_id, str) and unique_id else task_id,
        prompt=problem.strip(),
        answer=answer.strip(),
        solution=solution.strip() or f"The answer is $\\boxed{{{answer.strip()}}}$.",
        subject=str(row.get("subject") or row.get("type") or ""),
        level=_level(row.get("level")),
    )


def _level(value: Any) -> int | None:
    """MATH writes "Level 3", MATH-500 writes 3."""
    if value is None or value == "":
        return None
    match = re.search(r"\d+", str(value))
    return int(match.group()) if match else None


class CompetitionMathEnv(TextEnv[CompetitionTask]):
    """Competition math (MATH); reply with reasoning and a final `\\boxed{answer}`."""

    data_spec = DATA

    def __init__(
        self,
        split: str = "train",
        data_files: DataFiles | None = None,
        subjects: Sequence[str] | str | None = None,
        levels: Sequence[int] | int | None = None,
        max_turns: int = 1,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
        check_budget: float = DEFAULT_BUDGET,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown MATH split {split!r}: choose one of {list(SPLITS)}")
        chosen_subjects = _chosen(subjects, SUBJECTS, "subject")
        chosen_levels = _chosen(levels, LEVELS, "level")
        tasks = DATA.load(split, data_files=data_files, task_from_row=competition_task)
        unanswerable = [t.task_id for t in tasks if not t.answer]
        if unanswerable:
            warnings.warn(
                f"MATH {split}: left out {len(unanswerable)} row(s) whose solution boxes no answer (an empty "
                f"\\boxed{{}}) and that have no 'answer' field: {', '.join(unanswerable[:10])}",
                stacklevel=2,
            )
        chosen = [
            t
            for t in tasks
            if t.answer
            and (chosen_subjects is None or t.subject in chosen_subjects)
            and (chosen_levels is None or t.level in chosen_levels)
        ]
        if not chosen:
            raise ValueError(
                f"no MATH {split} task has subject in {chosen_subjects} and level in {chosen_levels}: "
                f"the data has subjects {sorted({t.subject for t in tasks})} and levels {sorted({t.level for t in tasks if t.level})}"
            )
        name = f"{DATASET}/{split}"
        super().__init__(
            DatasetSource(chosen, name=name), max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode
        )
        self.split = split
        self.check_budget = check_budget
        warm_up()  # start the symbolic worker now, not inside the first episode

    def task_from_row(self, row: Mapping[str, Any]) -> CompetitionTask:
        task = competition_task(row, content_task_id(DATASET, row))
        if not task.answer:
            raise ValueError("MATH row's solution boxes no answer (an empty \\boxed{}): add an 'answer' field")
        return task

    def judge(self, task: CompetitionTask, reply: str) -> Judgement:
        check = check_answer(reply, task.answer, budget=self.check_budget, problem=task.prompt)
        # Only an answer equal to the gold can be a restatement (a second check costs a budget).
        # A correct check always has its answer: `check.answer is not None` only says so to mypy.
        restated = (
            restates_question(check.answer, task.answer, task.prompt, self.check_budget)
            if check.correct and check.answer is not None
            else None
        )
        correct = check.correct and not restated
        info = {"parsed_answer": check.answer, "hedged": check.hedged, "restated_problem": restated}
        if check.answer is None and not check.hedged:
            return Judgement(0.0, resolved=False, correct=False, feedback=FORMAT_REMINDER, info=info)
        return Judgement(float(correct), resolved=True, correct=correct, stop_reason="answered", info=info)

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        # The gold solution when it states the answer checkably, else the answer itself.
        if math_answer_score(task.solution, task.answer, budget=self.check_budget) == 1.0:
            return task.solution
        return f"The answer is $\\boxed{{{task.answer}}}$."


def _chosen(value: Any, valid: tuple, what: str) -> frozenset | None:
    if value is None:
        return None
    values = [value] if isinstance(value, (str, int)) else list(value)
    unknown = [v for v in values if v not in valid]
    if unknown or not values:
        raise ValueError(f"unknown MATH {what}(s) {unknown or values}: choose from {list(valid)}")
    return frozenset(values)
