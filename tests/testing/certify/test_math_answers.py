"""`rlenvs certify` on every math id: no generated attack earns a reward, no equivalent correct
form loses one. And the engine itself: on a user's env with a lax verdict it finds the
attacks that pay and the correct forms refused, each with a reproduction that replays."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.cli import main
from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.task import DatasetSource
from rlenvs.envs.math.tasks import MathTask
from rlenvs.rewards.math.answer_types import answer_type
from rlenvs.testing.certify import ATTACK, EQUIVALENT, CertifyReport, Subject, certify
from rlenvs.testing.certify.math_answers import math_probes
from tests.conftest import MAKE_KWARGS, SHARED_DATA

PROCEDURAL = [
    (env_id, {"level": level}) for env_id in ("rlenvs/Arithmetic-v1", "rlenvs/Algebra-v1") for level in range(1, 6)
] + [("rlenvs/Arithmetic-Tool-v1", {"level": level}) for level in (1, 3, 5)]


def _clean(report: CertifyReport) -> None:
    assert report.tasks > 0
    assert report.wrong == [], "\n" + str(report)


@pytest.mark.parametrize("env_id,kwargs", PROCEDURAL, ids=[f"{e.split('/')[1]}-L{k['level']}" for e, k in PROCEDURAL])
def test_procedural_math_envs_certify_clean(env_id: str, kwargs: dict) -> None:
    report = certify(env_id, env_kwargs=kwargs, tasks=6, seed=11)
    _clean(report)
    kinds = set(report.by("kind"))
    assert {"notation", "near miss", "restatement", "hedge", "misplaced answer", "tool turns", "garbage"} <= kinds


def test_the_math_sample_certifies_clean_on_every_answer_type_it_holds() -> None:
    report = certify("rlenvs/MATH-v1", env_kwargs=MAKE_KWARGS["rlenvs/MATH-v1"], per_type=50)
    _clean(report)
    env = gym.make("rlenvs/MATH-v1", **MAKE_KWARGS["rlenvs/MATH-v1"]).unwrapped
    held = {answer_type(env.tasks.get(i).answer) for i in range(len(env.tasks))}
    assert set(report.answer_types.values()) == held


@pytest.mark.full_data
@pytest.mark.parametrize("split", ["train", "test"])
def test_math_certifies_clean_on_every_answer_type_of_its_data(split: str) -> None:
    """Two tasks of each of the ~24 answer types the split holds (its gold answers' types)."""
    report = certify("rlenvs/MATH-v1", env_kwargs={"split": split}, per_type=2, seed=3)
    _clean(report)
    types = set(report.answer_types.values())
    assert {"integer", "fraction", "radical", "expression", "tuple", "interval", "union", "matrix", "choice"} <= types
    assert len(types) >= 20


@pytest.mark.full_data
@pytest.mark.parametrize("env_id", ["rlenvs/GSM8K-v1", "rlenvs/GSM8K-Tool-v1"])
def test_gsm8k_certifies_clean(env_id: str) -> None:
    """Six tasks of each answer type GSM8K's test golds hold (integers, and the few decimals)."""
    report = certify(env_id, env_kwargs={"split": "test"}, per_type=6, seed=5)
    _clean(report)
    assert "integer" in report.answer_types.values()


@pytest.mark.full_data
@pytest.mark.sandbox
def test_gsm8k_python_certifies_clean() -> None:
    _clean(certify("rlenvs/GSM8K-Python-v2", env_kwargs={"split": "test"}, tasks=4, seed=5))


# --- the engine finds what a lax verdict pays for -----------------------------------------------


class DigitsEnv(TextEnv[MathTask]):
    """A user's own env with the verdict a quick reward function has: 1 if the gold's text
    appears inside any \\boxed{} of the reply. It pays for hedges, for answers inside code
    blocks and for a list with an item too many, and refuses correct notations."""

    def __init__(self) -> None:
        tasks = [
            MathTask("digits/0", "What is $\\frac{3}{4} + \\frac{1}{2}$?", "\\frac{5}{4}", "$\\boxed{\\frac{5}{4}}$"),
            MathTask("digits/1", "Find the ordered pair $(x, y)$.", "(2, 7)", "$\\boxed{(2, 7)}$"),
        ]
        super().__init__(DatasetSource(tasks, name="digits"))

    def task_from_row(self, row: Mapping[str, Any]) -> MathTask:
        raise ValueError("digits tasks are fixed")

    def judge(self, task: MathTask, reply: str) -> Judgement:
        boxes = re.findall(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}", reply)
        correct = any(task.answer in box for box in boxes)
        return Judgement(float(correct), resolved=True, correct=correct, stop_reason="answered")

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        return task.solution


DIGITS = "rlenvs_tests/Digits-v0"


def _registered_digits() -> str:
    if DIGITS not in gym.registry:
        gym.register(DIGITS, entry_point=DigitsEnv)
    return DIGITS


def test_a_lax_verdict_is_caught_with_reproductions_that_replay() -> None:
    env_id = _registered_digits()
    report = certify(env_id, per_type=1)
    found = {(check.probe.kind, check.probe.expect) for check in report.wrong}
    assert {("hedge", ATTACK), ("misplaced answer", ATTACK), ("near miss", ATTACK), ("notation", EQUIVALENT)} <= found
    env = gym.make(env_id)
    for case in report.as_json()["findings"]:
        env.reset(seed=case["seed"], options=case["reset_options"])
        reward = sum(env.step(reply)[1] for reply in case["replies"][:1])
        assert reward == case["reward"] != case["expected"]


def test_math_probes_never_offer_the_gold_as_a_near_miss() -> None:
    """The generator's own claim: a near miss differs from the gold in value. Checked here for
    numbers exactly, independently of the verifier."""
    for gold in ("18", "-\\frac{7}{2}", "0.25", "1000", "(3, 4)", "\\{1, 2, 3\\}", "[2, 5)"):
        subject = Subject("x", 0, None, "t", "Compute it.", gold, ("\\boxed{x}",), 1.0, 0.0)
        for probe in math_probes(subject):
            if probe.kind == "near miss":
                (reply,) = probe.turns
                assert reply != f"The final answer is $\\boxed{{{gold}}}$.", probe.why


# --- the command ---------------------------------------------------------------------------------


def test_certify_command_prints_a_json_report_and_exits_zero_when_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["certify", "rlenvs/Algebra-v1", "--env-arg", "level=3", "--tasks", "2", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["tasks"] == 2 and report["wrong_verdicts"] == 0 and report["findings"] == []
    assert report["equivalents_accepted"] == report["equivalents"] > 0
    assert set(report["timing"]) == {"median_s", "p99_s", "max_s"}
    assert report["by_answer_type"]["tuple"]["checks"] > 0


def test_certify_command_exits_one_on_a_wrong_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", _registered_digits(), "--tasks", "1"]) == 1
    assert "WRONG [hedge]" in capsys.readouterr().out


def test_certify_command_refuses_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "rlenvs/Arithmetic-v1", "--tasks", "0"]) == 2
    assert "--tasks must be at least 1" in capsys.readouterr().err
    assert main(["certify", "rlenvs/Arithmetic-v1", "--per-type", "1"]) == 2
    assert "pass tasks=N instead" in capsys.readouterr().err


def test_shared_data_is_where_the_tests_read() -> None:
    assert SHARED_DATA.is_dir()


def test_the_testing_kit_page_shows_what_certify_prints_on_its_quiz_env(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/testing-kit.md's user env, run as the page says: the counts it shows are the
    counts certify prints, and the verdict the page recommends instead certifies clean."""
    page = (Path(__file__).resolve().parents[3] / "docs" / "testing-kit.md").read_text()
    module = re.search(r"```python\n(# my_quiz\.py\n.*?)```", page, re.DOTALL)
    shown = re.search(r"\$ PYTHONPATH=\. rlenvs certify (\S+) --tasks (\d+).*\n(certify .*)\n", page)
    assert module and shown
    (tmp_path / "my_quiz.py").write_text(module.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["certify", shown.group(1), "--tasks", shown.group(2)]) == 1
    assert capsys.readouterr().out.splitlines()[0] == shown.group(3)
    fixed = module.group(1).replace(
        'correct = f"\\\\boxed{{{task.answer}}}" in reply  # the quick check many envs ship',
        "correct = math_answer_score(reply, task.answer) == 1.0",
    )
    fixed = "from rlenvs.rewards.math import math_answer_score\n" + fixed.replace("Quiz-v0", "Quiz-v1")
    assert fixed != module.group(1)
    (tmp_path / "my_quiz_fixed.py").write_text(fixed)
    assert main(["certify", "my_quiz_fixed:my_quiz/Quiz-v1", "--tasks", shown.group(2)]) == 0
    clean = re.search(r"reports `(\d+ checks, 0 wrong)`", page)
    assert clean and clean.group(1) in capsys.readouterr().out
