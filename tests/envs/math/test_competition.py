"""MATH-v1 on competition problems in the MATH row format (tests/data/math_sample.jsonl)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from rlenvs.data import DataFormatError
from rlenvs.envs.math.competition import CompetitionMathEnv
from tests.conftest import MATH_SAMPLE

ROWS = [json.loads(line) for line in MATH_SAMPLE.read_text().splitlines()]


@pytest.fixture(scope="module")
def env() -> CompetitionMathEnv:
    return gym.make("rlenvs/MATH-v1", data_files=str(MATH_SAMPLE)).unwrapped


def reward(env: CompetitionMathEnv, index: int, reply: str) -> float:
    env.reset(options={"task_index": index})
    return env.step(reply)[1]


def test_every_gold_solution_and_boxed_answer_scores_one(env: CompetitionMathEnv) -> None:
    for index, row in enumerate(ROWS):
        assert reward(env, index, row["solution"]) == 1.0, row["answer"]
        assert reward(env, index, f"So the answer is $\\boxed{{{row['answer']}}}$.") == 1.0, row["answer"]


@pytest.mark.parametrize(
    "index,reply",
    [
        (0, "\\boxed{\\dfrac{11}{12}}"),
        (0, "\\boxed{11/12}"),
        (2, "\\boxed{x = -12}"),
        (3, "$x \\in \\boxed{(2, 3)}$"),
        (4, "\\boxed{\\left(4, 3\\right)}"),
        (6, "\\boxed{-6 - x + x^2}"),
        (8, "\\boxed{1 - \\sqrt 2, 1 + \\sqrt 2}"),
        (11, "\\boxed{B}"),
        (12, "\\boxed{0.5}"),
        (13, "\\boxed{x \\geq 4}"),
    ],
)
def test_equivalent_answers_score_one(env: CompetitionMathEnv, index: int, reply: str) -> None:
    assert reward(env, index, reply) == 1.0


@pytest.mark.parametrize(
    "index,reply",
    [
        (0, "\\boxed{\\frac{12}{11}}"),
        (1, "\\boxed{8\\sqrt{3}}"),
        (3, "\\boxed{[2, 3]}"),
        (4, "\\boxed{(3, 4)}"),
        (6, "\\boxed{x^2 + x - 6}"),
        (8, "\\boxed{1 + \\sqrt{2}}"),
        (11, "\\boxed{A}"),
        (13, "\\boxed{(4, \\infty)}"),
        (9, "\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 0 & 1 \\end{pmatrix}}"),
    ],
)
def test_wrong_answers_score_zero(env: CompetitionMathEnv, index: int, reply: str) -> None:
    assert reward(env, index, reply) == 0.0


def test_filters_by_subject_and_level() -> None:
    algebra = gym.make("rlenvs/MATH-v1", data_files=str(MATH_SAMPLE), subjects="Algebra", levels=[1, 2]).unwrapped
    tasks = algebra.tasks.tasks
    assert tasks and all(t.subject == "Algebra" and t.level in (1, 2) for t in tasks)
    assert len(tasks) == sum(1 for r in ROWS if r["subject"] == "Algebra" and r["level"] in (1, 2))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"subjects": "Calculus"}, r"unknown MATH subject\(s\) \['Calculus'\]"),
        ({"levels": 6}, r"unknown MATH level\(s\) \[6\]"),
        ({"subjects": "Geometry", "levels": 5}, "no MATH train task"),
        ({"split": "validation"}, "unknown MATH split"),
    ],
)
def test_bad_filters_fail_clearly(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make("rlenvs/MATH-v1", data_files=str(MATH_SAMPLE), **kwargs)


def test_rows_without_an_answer(tmp_path) -> None:
    boxed_only = tmp_path / "boxed_only.jsonl"
    boxed_only.write_text(json.dumps({"problem": "1+1?", "solution": "It is $\\boxed{2}$.", "level": "Level 1"}) + "\n")
    env = gym.make("rlenvs/MATH-v1", data_files=str(boxed_only)).unwrapped
    assert env.tasks.get(0).answer == "2" and env.tasks.get(0).level == 1
    no_answer = tmp_path / "no_answer.jsonl"
    no_answer.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({"problem": "1+1?", "solution": "It is two."}) + "\n")
    with pytest.raises(DataFormatError, match=r"no_answer.jsonl:2: .*no 'answer'"):
        gym.make("rlenvs/MATH-v1", data_files=str(no_answer))


def test_custom_task_and_format_reminder(env: CompetitionMathEnv) -> None:
    multi = gym.make("rlenvs/MATH-v1", data_files=str(MATH_SAMPLE), max_turns=2).unwrapped
    multi.reset(options={"task": {"problem": "What is $\\frac{1}{2} + \\frac{1}{3}$?", "answer": "\\frac{5}{6}"}})
    obs, reward_, terminated, _, _ = multi.step("Let me think.")
    assert "\\boxed" in obs and reward_ == 0.0 and not terminated
    assert multi.step("\\boxed{\\frac56}")[1] == 1.0


@pytest.mark.parametrize(
    "index,echo",
    [(1, "\\sqrt{50} + \\sqrt{18}"), (6, "(x+2)(x-3)"), (0, "\\frac{3}{4} + \\frac{1}{6}")],
)
def test_copying_the_problem_into_the_box_scores_zero(env: CompetitionMathEnv, index: int, echo: str) -> None:
    env.reset(options={"task_index": index})
    _, reward_, _, _, info = env.step(f"\\boxed{{{echo}}}")
    # A copy of the question's arithmetic (`\\frac{3}{4} + \\frac{1}{6}` for the number 11/12) is no
    # number, so it is wrong before any restating check (`restated_problem` is None then).
    assert reward_ == 0.0 and info["restated_problem"] in (True, None)
