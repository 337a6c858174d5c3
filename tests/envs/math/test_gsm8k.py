"""GSM8K-v1 on the real test set (../shared/data/gsm8k/test.jsonl, MIT), and its errors."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlenvs.data import DataFormatError, DataNotFoundError
from rlenvs.envs.math.gsm8k import FORMAT_REMINDER, GSM8KEnv
from tests.conftest import GSM8K_TEST

ROWS = [json.loads(line) for line in GSM8K_TEST.read_text().splitlines()]
FINAL_LINE = re.compile(r"####\s*(.+)\s*$")


def gold_number(row: dict) -> str:
    return FINAL_LINE.search(row["answer"]).group(1).strip()


def with_final_line(row: dict, final: str) -> str:
    return FINAL_LINE.sub(lambda _: final, row["answer"])


@pytest.fixture(scope="module")
def env() -> GSM8KEnv:
    return gym.make("rlenvs/GSM8K-v1", split="test").unwrapped


def reward_for(env: GSM8KEnv, index: int, reply: str) -> float:
    env.reset(options={"task_index": index})
    return env.step(reply)[1]


@pytest.mark.full_data
def test_the_test_split_is_the_real_one(env: GSM8KEnv) -> None:
    assert len(env.tasks) == len(ROWS) == 1319
    assert env.tasks.get(0).prompt == ROWS[0]["question"].strip()


def test_every_gold_solution_scores_one(env: GSM8KEnv) -> None:
    failures = [i for i, row in enumerate(ROWS) if reward_for(env, i, row["answer"]) != 1.0]
    assert failures == []


@pytest.mark.full_data
@pytest.mark.parametrize("split", ["train", "test"])
def test_the_oracle_reply_is_a_boxed_worked_solution_on_every_row(split: str) -> None:
    """oracle_action (what `rlenvs sft-data` and `rlenvs eval --policy oracle` play) answers as
    the prompt asks: GSM8K's reasoning without its <<...>> calculator annotations, ending in
    \\boxed{gold}, and it scores 1 on every row of both splits."""
    env = gym.make("rlenvs/GSM8K-v1", split=split).unwrapped
    failures = []
    for index in range(len(env.tasks)):
        env.reset(options={"task_index": index})
        reply = env.oracle_action()
        gold = env.task.answer
        good_form = (
            reply.endswith(f"The final answer is \\boxed{{{gold}}}.") and "<<" not in reply and "####" not in reply
        )
        if not good_form or env.step(reply)[1] != 1.0:
            failures.append((index, reply[-80:]))
    assert failures == []
    assert len(env.tasks) == {"train": 7473, "test": 1319}[split]


def test_same_reasoning_ending_in_boxed_gold_scores_one(env: GSM8KEnv) -> None:
    failures = [
        i
        for i, row in enumerate(ROWS)
        if reward_for(env, i, with_final_line(row, f"The final answer is \\boxed{{{gold_number(row)}}}.")) != 1.0
    ]
    assert failures == []


def test_same_reasoning_ending_in_gold_plus_one_scores_zero(env: GSM8KEnv) -> None:
    failures = []
    for i, row in enumerate(ROWS):
        wrong = int(gold_number(row).replace(",", "")) + 1
        if reward_for(env, i, with_final_line(row, f"#### {wrong}")) != 0.0:
            failures.append(i)
    assert failures == []


def test_hedging_between_gold_and_another_answer_scores_zero(env: GSM8KEnv) -> None:
    for i in range(0, len(ROWS), 97):
        gold = gold_number(ROWS[i])
        reply = with_final_line(ROWS[i], f"It is \\boxed{{{gold}}} or maybe \\boxed{{{gold}1}}.")
        assert reward_for(env, i, reply) == 0.0


def test_info_reports_the_parsed_answer(env: GSM8KEnv) -> None:
    env.reset(options={"task_index": 0})
    *_, info = env.step("So she makes \\boxed{\\$18} a day.")
    assert info["correct"] is True and info["parsed_answer"] == "\\$18" and info["hedged"] is False
    assert info["stop_reason"] == "answered"


def test_multi_turn_reminds_of_the_format_then_scores() -> None:
    env = gym.make("rlenvs/GSM8K-v1", split="test", max_turns=3).unwrapped
    env.reset(options={"task_index": 0})
    obs, reward, terminated, truncated, info = env.step("Let me think about the eggs.")
    assert obs == FORMAT_REMINDER and reward == 0.0 and not terminated and not truncated
    assert info["messages"] == [{"role": "user", "content": FORMAT_REMINDER}]
    assert info["stop_reason"] is None
    obs, reward, terminated, truncated, info = env.step("\\boxed{18}")
    assert (obs, reward, terminated, truncated) == ("", 1.0, True, False)
    assert env.turn == 2


def test_multi_turn_without_any_answer_is_truncated() -> None:
    env = gym.make("rlenvs/GSM8K-v1", split="test", max_turns=2).unwrapped
    env.reset(seed=0)
    env.step("hmm")
    obs, reward, terminated, truncated, info = env.step("hmm")
    assert (obs, reward, terminated, truncated) == ("", 0.0, False, True)
    assert info["stop_reason"] == "max_turns" and info["correct"] is False


def test_a_wrong_answer_ends_a_multi_turn_episode() -> None:
    env = gym.make("rlenvs/GSM8K-v1", split="test", max_turns=3).unwrapped
    env.reset(options={"task_index": 0})
    _, reward, terminated, _, info = env.step("\\boxed{17}")
    assert reward == 0.0 and terminated and info["correct"] is False


def test_custom_task_through_options(env: GSM8KEnv) -> None:
    row = {"question": "What is 6 times 7?", "answer": "6 * 7 = 42\n#### 42"}
    obs, info = env.reset(options={"task": row})
    assert obs == "What is 6 times 7?" and info["task_id"].startswith("gsm8k/custom-")
    assert env.reset(options={"task": row})[1]["task_id"] == info["task_id"]
    assert env.step("\\boxed{42}")[1] == 1.0
    env.reset(options={"task": {"question": "What is 2+2?", "answer": "4", "id": "mine-1"}})
    assert env.task.task_id == "mine-1"
    assert env.step(env.oracle_action())[1] == 1.0


def test_task_selection_by_index_and_id(env: GSM8KEnv) -> None:
    _, info = env.reset(options={"task_index": 5})
    assert info["task_id"] == "gsm8k/test/5"
    obs, info = env.reset(options={"task_id": "gsm8k/test/5"})
    assert obs == ROWS[5]["question"].strip()


@pytest.mark.parametrize(
    "options,error,match",
    [
        pytest.param({"task_index": 1319}, IndexError, "0..1318", marks=pytest.mark.full_data),
        ({"task_index": "3"}, TypeError, "int"),
        ({"task_id": "gsm8k/train/0"}, KeyError, "no task"),
        ({"task": {"question": "q"}}, ValueError, "answer"),
        ({"task": {"question": "q", "answer": "#### many"}}, ValueError, "#### N"),
        ({"task": "What is 2+2?"}, TypeError, "dict"),
        ({"task_idx": 3}, ValueError, "unknown reset option"),
        ({"task_index": 1, "task_id": "gsm8k/test/1"}, ValueError, "only one"),
    ],
)
def test_bad_reset_options(env: GSM8KEnv, options: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        env.reset(options=options)


def test_unknown_split() -> None:
    with pytest.raises(ValueError, match=r"unknown GSM8K split 'validation'.*\['train', 'test'\]"):
        gym.make("rlenvs/GSM8K-v1", split="validation")


def test_missing_data_names_the_three_ways(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("RLENVS_DATA_DIR", str(tmp_path))
    with pytest.raises(DataNotFoundError) as raised:
        gym.make("rlenvs/GSM8K-v1", split="test")
    message = str(raised.value)
    assert "data_files=" in message and "RLENVS_DATA_DIR" in message and "hub" in message


def test_missing_data_file() -> None:
    with pytest.raises(DataNotFoundError, match="nowhere.jsonl"):
        gym.make("rlenvs/GSM8K-v1", data_files="/nowhere.jsonl")


def test_malformed_jsonl_line_names_file_and_line(tmp_path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps(ROWS[1]) + "\n{not json\n")
    with pytest.raises(DataFormatError, match=rf"{re.escape(str(path))}:3: not valid JSON"):
        gym.make("rlenvs/GSM8K-v1", data_files=str(path))


def test_row_without_final_answer_names_file_and_line(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({"question": "q", "answer": "no marker"}) + "\n")
    with pytest.raises(DataFormatError, match=r"rows.jsonl:2: .*#### N"):
        gym.make("rlenvs/GSM8K-v1", data_files=str(path))


def test_parquet_gives_the_same_tasks_as_jsonl(tmp_path, env: GSM8KEnv) -> None:
    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    from_parquet = gym.make("rlenvs/GSM8K-v1", data_files={"test": str(path)}, split="test").unwrapped
    assert from_parquet.tasks.tasks == env.tasks.tasks


def test_data_files_mapping_without_the_split(tmp_path) -> None:
    with pytest.raises(DataNotFoundError, match="not 'train'"):
        gym.make("rlenvs/GSM8K-v1", data_files={"test": str(GSM8K_TEST)})


def test_system_prompt_is_configurable() -> None:
    env = gym.make("rlenvs/GSM8K-v1", split="test", system_prompt="Answer tersely.").unwrapped
    assert env.reset(seed=0)[1]["messages"][0] == {"role": "system", "content": "Answer tersely."}
    env = gym.make("rlenvs/GSM8K-v1", split="test", system_prompt=None).unwrapped
    assert [m["role"] for m in env.reset(seed=0)[1]["messages"]] == ["user"]
