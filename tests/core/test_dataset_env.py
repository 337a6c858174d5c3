"""`rlenvs.dataset_env`: the env it writes keeps the whole contract and survives certify, and
every way a description or its data can be wrong fails at definition or at `make` with the
row and the fix, never in an episode.

Classes are defined at module level (as users must: entry points and pickling find them by
name); a test that needs one over its own files binds it into this module for its duration.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlenvs import dataset_env
from rlenvs.core.dataset_env import RETRY_FEEDBACK, RewardFunctionError
from rlenvs.core.registration import UnknownKeywordError
from rlenvs.rewards.math import math_answer_score
from rlenvs.rewards.text import text_answer_score
from rlenvs.testing.certify import certify
from rlenvs.testing.envs import check_text_env

ROWS = [
    {"country": "France", "capital": "Paris"},
    {"country": "Peru", "capital": "Lima"},
    {"country": "the United States", "capital": ["Washington, D.C.", "Washington"]},
    {"country": "Japan", "capital": "Tokyo"},
]
SUMS = [
    {"id": "sum-1", "question": "2 + 3 = ?", "answer": "5"},
    {"id": "sum-2", "question": "7 + 6 = ?", "answer": "13"},
]

CapitalsEnv = dataset_env(
    "CapitalsEnv",
    data=ROWS,
    prompt="What is the capital of {country}?",
    answer="capital",
    reward=text_answer_score,
    system_prompt="Answer with the city only, as \\boxed{City}.",
)
SumsEnv = dataset_env(
    "SumsEnv",
    data={"train": SUMS, "test": lambda: [{"question": "1 + 1 = ?", "answer": "2"}]},
    prompt="question",
    answer="answer",
    reward=math_answer_score,
    oracle=lambda answer: f"The sum is \\boxed{{{answer}}}.",
)


def _first_letter(reply: str, answer: str) -> float:
    """Half for the right first letter, all for the whole word: partial credit (numpy's
    numbers and bools count as Python's do)."""
    reply = reply.strip()
    return np.bool_(True) if reply == answer else np.float32(0.5) if reply[:1] == answer[:1] else 0.0


PartialEnv = dataset_env(
    "PartialEnv", data=ROWS[:2], prompt="country", answer="capital", reward=_first_letter, oracle=lambda gold: gold
)
RaisingEnv = dataset_env(  # a reward that chokes on any reply that is not ASCII
    "RaisingEnv",
    data=ROWS[:1],
    prompt="country",
    answer="capital",
    reward=lambda reply, gold: reply.encode("ascii") == gold.encode(),
    oracle=lambda gold: gold,
)
Misnamed = dataset_env("NotItsName", data=ROWS, prompt="country", answer="capital", reward=text_answer_score)


@pytest.fixture
def bind(monkeypatch: pytest.MonkeyPatch):
    """Binds a class made in a test to its name in this module for the test's duration."""

    def bound(cls):
        monkeypatch.setattr(sys.modules[__name__], cls.__qualname__, cls, raising=False)
        return cls

    return bound


@pytest.fixture(scope="module")
def capitals_id():
    env_id = "dataset-env-test/Capitals-v0"
    gym.register(env_id, entry_point=f"{__name__}:CapitalsEnv")
    yield env_id
    del gym.registry[env_id]


def test_the_env_keeps_the_contract_and_certify_finds_no_wrong_verdict(capitals_id: str) -> None:
    report = check_text_env(capitals_id, garbage_examples=5)
    assert report.passed, f"\n{report}"
    assert not [check.name for check in report.checks if check.skipped], f"\n{report}"
    certified = certify(capitals_id, tasks=4)
    assert certified.tasks == 4 and certified.passed, certified.summary_line()
    kinds = {check.probe.kind for check in certified.checks}
    assert {"hedge", "near miss", "notation", "echo", "garbage"} <= kinds  # the math probes ran on its words


def test_a_task_is_posed_judged_and_rebuilt_as_every_env_does(bind) -> None:
    env = CapitalsEnv()
    prompt, info = env.reset(options={"task_index": 0})
    assert prompt == "What is the capital of France?"
    assert info["messages"][0] == {"role": "system", "content": "Answer with the city only, as \\boxed{City}."}
    assert env.oracle_action() == "\\boxed{Paris}"
    assert env.step("\\boxed{Paris} or \\boxed{Lyon}")[1:3] == (0.0, True)
    clone = pickle.loads(pickle.dumps(env))  # by reference to the class: what vector workers and Ray do
    assert type(clone) is CapitalsEnv and clone.current_task == env.current_task
    task_id = info["task_id"]
    assert task_id.startswith("CapitalsEnv/")
    # ids are content: the same row in a reordered file, or posed as options["task"], is the same task
    reordered = bind(dataset_env("CapitalsEnv", data=ROWS[::-1], prompt="What is the capital of {country}?", answer="capital", reward=text_answer_score))()  # fmt: skip
    reordered.reset(options={"task_id": task_id})
    assert reordered.current_task == env.current_task
    env.reset(options={"task": {"country": "France", "capital": "Paris", "continent": "Europe"}})
    assert env.current_task.task_id == task_id
    env.reset(options={"task_id": task_id})
    assert env.current_task.prompt == prompt
    # aliases reach the reward as a tuple, and either is right
    env.reset(options={"task_index": 2})
    assert env.current_task.answer == ("Washington, D.C.", "Washington")
    assert env.step("\\boxed{Washington DC}")[1] == 1.0
    with pytest.raises(ValueError, match=r"options\['task'\]: no field 'capital' \(the row has \['country'\]\)"):
        env.reset(options={"task": {"country": "Chile"}})


def test_splits_ids_from_rows_and_the_keywords_a_class_takes() -> None:
    env = SumsEnv()
    assert env.split == "train" and len(env.tasks) == 2
    env.reset(options={"task_id": "sum-2"})
    assert env.step(env.oracle_action())[1] == 1.0
    test = SumsEnv(split="test")
    test.reset(seed=0)
    assert test.current_task.answer == "2" and test.step("\\boxed{3}")[1] == 0.0
    with pytest.raises(ValueError, match=r"SumsEnv has no split 'dev': choose one of \['train', 'test'\]"):
        SumsEnv(split="dev")
    with pytest.raises(UnknownKeywordError, match="unexpected keyword argument 'split'.*max_turns, system_prompt"):
        CapitalsEnv(split="train")
    assert SumsEnv(system_prompt="Add.").system_prompt == "Add."


def test_with_turns_to_spare_only_a_full_reward_ends_the_episode_and_only_the_last_reply_pays() -> None:
    env = PartialEnv(max_turns=2)
    env.reset(options={"task_index": 0})
    observation, reward, terminated, truncated, info = env.step("Prague")
    assert (observation, reward, terminated, truncated) == (RETRY_FEEDBACK, 0.0, False, False)
    assert info["reply_score"] == 0.5
    assert env.step("Pisa")[1:4] == (0.5, False, True)  # partial credit once, on the last turn
    env.reset(options={"task_index": 0})
    assert env.step("Paris")[1:3] == (1.0, True) and env.stop_reason == "solved"


def test_a_reward_function_that_raises_or_strays_is_named_not_scored_zero(bind) -> None:
    env = RaisingEnv()
    env.reset(seed=0)
    assert env.step("Lyon")[1] == 0.0
    env.reset(seed=0)
    with pytest.raises(
        RewardFunctionError, match=r"RaisingEnv's reward function <lambda> raised UnicodeEncodeError.*'Zürich'"
    ):
        env.step("Zürich")
    texts = bind(dataset_env("Texts", data=ROWS, prompt="country", answer="capital", reward=lambda r, a: "1"))
    with pytest.raises(RewardFunctionError, match=r"returned '1' on task .*: it must return a number in \[0, 1\]"):
        texts()


def test_make_fails_on_an_oracle_the_reward_does_not_pay_or_a_reward_that_pays_silence(bind) -> None:
    bare_only = bind(dataset_env("BareOnly", data=ROWS, prompt="country", answer="capital", reward=lambda r, a: float(r == a)))  # fmt: skip
    with pytest.raises(
        RewardFunctionError, match=r"pays 0.0 for the oracle's reply '\\\\boxed\{Paris\}'.*pass oracle="
    ):
        bare_only()
    swapped = bind(dataset_env("Swapped", data=ROWS[:2], prompt="country", answer="capital", reward=lambda answer, reply: float(answer in reply)))  # fmt: skip
    with pytest.raises(RewardFunctionError, match=r"pays 0.0 for the oracle's reply"):
        swapped()  # called as (reply, answer) whatever its parameters are named: `reply in answer`
    always = bind(dataset_env("Always", data=ROWS[:2], prompt="country", answer="capital", reward=lambda reply, answer: 1.0))  # fmt: skip
    with pytest.raises(RewardFunctionError, match=r"pays 1.0 for an empty reply.*\(reply, answer\)"):
        always()


def test_a_class_not_bound_to_its_name_is_refused_with_the_line_to_write() -> None:
    with pytest.raises(TypeError, match=r"write `NotItsName = dataset_env\('NotItsName', \.\.\.\)` at the top level"):
        Misnamed()


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"name": "Capitals Env"}, ValueError, "name must be a Python identifier"),
        ({"data": 42}, TypeError, "data must be a path to a JSONL, JSON or Parquet file, a list of rows"),
        ({"data": {}}, ValueError, r"data as a mapping is \{split name: rows\}"),
        ({"prompt": "Capital of {}?"}, ValueError, r"\[''\] are not field names"),
        ({"prompt": "Capital of {country.name}?"}, ValueError, r"\['country.name'\] are not field names"),
        ({"reward": "exact"}, TypeError, r"reward must be a function \(reply, answer\)"),
        ({"reward": lambda reply: 1.0}, TypeError, r"reward=.*<lambda> must take \(reply, answer\).*too many"),
        ({"oracle": lambda: "x"}, TypeError, r"oracle=.*must take answer -> the gold reply"),
        ({"system_prompt": 3}, TypeError, "system_prompt must be a str or None"),
    ],
)
def test_a_wrong_description_fails_where_it_is_written(keywords: dict, error: type, message: str) -> None:
    described = {"name": "E", "data": ROWS, "prompt": "country", "answer": "capital", "reward": text_answer_score}
    with pytest.raises(error, match=message):
        dataset_env(**{**described, **keywords})


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "FileEnv: the data has no rows"),
        ([{"land": "France", "capital": "Paris"}], r":1: no field 'country' \(the row has \['capital', 'land'\]\)"),
        ([ROWS[0], ROWS[1], ROWS[0]], r":3: the same prompt as .*:1 \('France'\); each task must be posed once"),
        ([{"country": "France", "capital": {"city": "Paris"}}], r"field 'capital' \(the answer\) must be a non-empty str"),
        ([{"country": "France", "capital": " "}], r"field 'capital' \(the answer\) must be"),
        ([{"country": 7, "capital": "Paris"}], r"field 'country' \(the prompt\) must be text, got int"),
        ([{"id": 1, "country": "France", "capital": "Paris"}, {"id": 1, "country": "Peru", "capital": "Lima"}],
         r":2: the same task id as .*:1"),
    ],
)  # fmt: skip
def test_bad_rows_fail_make_naming_file_and_line(tmp_path: Path, bind, rows, message) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    FileEnv = bind(dataset_env("FileEnv", data=path, prompt="country", answer="capital", reward=text_answer_score))
    with pytest.raises((ValueError, TypeError), match=message):
        FileEnv()


def test_files_are_read_on_make_not_on_definition_and_reread_when_edited(tmp_path: Path, bind) -> None:
    path = tmp_path / "capitals.parquet"
    FileEnv = bind(dataset_env("FileEnv", data=path, prompt="country", answer="capital", reward=text_answer_score))
    with pytest.raises(FileNotFoundError, match=r"capitals.parquet not found .*declare the file as package data"):
        FileEnv()
    pq.write_table(pa.Table.from_pylist(ROWS[:2]), path)
    assert len(FileEnv().tasks) == 2
    pq.write_table(pa.Table.from_pylist(ROWS[:1]), path)
    assert len(FileEnv().tasks) == 1
    relative = dataset_env(
        "Relative", data="capitals.jsonl", prompt="country", answer="capital", reward=text_answer_score
    )
    assert (
        relative.definition.source == Path(__file__).resolve().parent / "capitals.jsonl"
    )  # beside the defining module
