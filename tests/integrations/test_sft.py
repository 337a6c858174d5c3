"""`rlenvs sft-data` and `rlenvs.integrations.sft`: oracle conversations from real envs, written as JSONL."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import textwrap

import gymnasium as gym
import pytest

from rlenvs.envs.math.gsm8k import worked_solution
from rlenvs.evaluation.tasks import choose_task_indices
from rlenvs.integrations.sft import oracle_conversations, write_jsonl
from tests.conftest import GSM8K_TEST

GSM8K = "rlenvs/GSM8K-v1"
ARITHMETIC = "rlenvs/Arithmetic-v1"
GSM8K_TOOL = "rlenvs/GSM8K-Tool-v1"

NO_ORACLE_MODULE = '''
"""Envs without an oracle, registered for the sft-data tests."""
import gymnasium as gym

from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.task import DatasetSource, Task
from rlenvs.core.spaces import UnicodeText


class EchoEnv(gym.Env):
    """A plain gymnasium env: no oracle_action at all."""

    def __init__(self):
        self.observation_space = self.action_space = UnicodeText(100)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return "say hi", {}

    def step(self, action):
        return "", 1.0, True, False, {}


class NoOracleTextEnv(TextEnv):
    """A TextEnv whose oracle says it has none."""

    def __init__(self):
        super().__init__(DatasetSource([Task("t/0", "say hi")], name="t"))

    def task_from_row(self, row):
        return Task("t/custom", row["prompt"])

    def judge(self, task, reply):
        return Judgement(1.0, resolved=True)

    def oracle_reply(self, task, turn):
        raise NotImplementedError


gym.register("Echo-v0", entry_point=EchoEnv)
gym.register("NoOracleText-v0", entry_point=NoOracleTextEnv)
'''


def rlenvs_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlenvs.cli", *args], check=False, capture_output=True, text=True, timeout=300, env=env
    )


def assert_conversation(record: dict, max_reward: float = 1.0) -> None:
    """system?, user, then assistant/user alternating, ending with the assistant; one
    assistant message per turn; the maximum reward."""
    roles = [m["role"] for m in record["messages"]]
    if roles[0] == "system":
        roles = roles[1:]
    assert roles[0] == "user" and roles[-1] == "assistant", roles
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    assert set(roles) == {"user", "assistant"}
    assert roles.count("assistant") == record["turns"]
    assert all(isinstance(m["content"], str) and m["content"] for m in record["messages"])
    assert record["total_reward"] == max_reward


@pytest.fixture
def no_oracle_module(tmp_path, monkeypatch):
    (tmp_path / "no_oracle_envs.py").write_text(textwrap.dedent(NO_ORACLE_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_gsm8k_conversations_are_the_env_chat_and_the_gold_reply() -> None:
    """A data split's episodes are distinct tasks, drawn as `rlenvs eval` draws them, each
    reset with its own seed too."""
    records = oracle_conversations(GSM8K, 20, seed=5, env_kwargs={"split": "test"})
    assert len(records) == 20
    env = gym.make(GSM8K, split="test")
    test_rows = [json.loads(line) for line in GSM8K_TEST.read_text().splitlines()]
    indices = [int(record["task_id"].rsplit("/", 1)[1]) for record in records]
    assert indices == choose_task_indices(len(test_rows), 20, 5, GSM8K)
    for episode, (record, index) in enumerate(zip(records, indices, strict=True)):
        assert_conversation(record)
        _, info = env.reset(seed=5 + episode, options={"task_index": index})
        assert record["env_id"] == GSM8K and record["task_id"] == info["task_id"] and record["turns"] == 1
        assert record["messages"][:-1] == info["messages"]
        reply = record["messages"][-1]
        assert reply == {"role": "assistant", "content": worked_solution(test_rows[index]["answer"])}
    env.close()


def test_cli_gsm8k_replies_are_in_the_format_the_prompt_asks_for(tmp_path) -> None:
    """`rlenvs sft-data rlenvs/GSM8K-v1`: the prompt asks for a final \\boxed{N}; the replies
    were GSM8K's raw answers (`<<48/2=24>>` calculator annotations, a `#### N` line)."""
    output = tmp_path / "sft.jsonl"
    result = rlenvs_cli("sft-data", GSM8K, "--episodes", "20", "--output", str(output), "--env-arg", "split=test")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(records) == 20
    test_rows = [json.loads(line) for line in GSM8K_TEST.read_text().splitlines()]
    for record in records:
        assert "\\boxed{N}" in record["messages"][0]["content"]  # what the system prompt asks for
        reply = record["messages"][-1]["content"]
        row = test_rows[int(record["task_id"].rsplit("/", 1)[1])]
        gold = row["answer"].rsplit("####", 1)[1].strip()
        assert reply.endswith(f"\nThe final answer is \\boxed{{{gold}}}.")
        assert "<<" not in reply and "####" not in reply and record["total_reward"] == 1.0
        assert reply.splitlines()[0] == re.sub(r"<<[^<>]*>>", "", row["answer"].splitlines()[0]).strip()


def test_arithmetic_conversations_reach_the_maximum_reward() -> None:
    """A procedural source has no split to cover: episode i is the seeded reset seed + i, as
    the trainer's SFT warm-up data has always been."""
    records = oracle_conversations(ARITHMETIC, 30, env_kwargs={"level": 4})
    assert len(records) == 30
    env = gym.make(ARITHMETIC, level=4)
    for episode, record in enumerate(records):
        assert_conversation(record)
        assert record["messages"][:-1] == env.reset(seed=episode)[1]["messages"]
    env.close()
    assert len({r["task_id"] for r in records}) > 1  # seeds 0..29 pose different tasks


def test_a_small_split_gives_every_task_once_and_no_more(tmp_path) -> None:
    """As many episodes as a data file has rows pose each row exactly once (seeded resets
    alone would repeat some and miss others); more episodes than rows is refused."""
    rows = GSM8K_TEST.read_text().splitlines()[:6]
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(rows) + "\n")
    records = oracle_conversations(GSM8K, 6, seed=3, env_kwargs={"data_files": str(data)})
    assert sorted(r["task_id"] for r in records) == [f"gsm8k/train/{i}" for i in range(6)]
    fewer = [r["task_id"] for r in oracle_conversations(GSM8K, 4, seed=3, env_kwargs={"data_files": str(data)})]
    assert len(set(fewer)) == 4
    with pytest.raises(ValueError, match=r"--episodes 7 is more than the 6 tasks of rlenvs/GSM8K-v1: lower --episodes"):
        oracle_conversations(GSM8K, 7, env_kwargs={"data_files": str(data)})


def test_multi_turn_conversations_hold_the_tool_results() -> None:
    records = oracle_conversations(GSM8K_TOOL, 10, env_kwargs={"oracle_uses_calculator": True})
    assert len(records) == 10
    for record in records:
        assert_conversation(record)
    two_turn = [r for r in records if r["turns"] == 2]
    assert two_turn, "the calculator oracle calls the tool first on annotated GSM8K solutions"
    call, result, answer = two_turn[0]["messages"][-3:]
    assert "<calculator>" in call["content"] and call["role"] == "assistant"
    assert result["role"] == "user" and result["content"].startswith("<result>")
    assert answer["role"] == "assistant" and answer["content"].rstrip(".").endswith("}")
    assert "\\boxed{" in answer["content"] and "####" not in answer["content"]


def test_episodes_whose_oracle_falls_short_are_skipped(tmp_path) -> None:
    """A data row whose gold solution the verifier rejects (it boxes another number than
    the one after ####) is played but not written."""
    good = json.loads(GSM8K_TEST.read_text().splitlines()[0])
    bad = {"question": "What is 2 + 2?", "answer": "It is \\boxed{5}.\n#### 4"}
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    records = oracle_conversations(GSM8K, 2, env_kwargs={"data_files": str(data)})
    assert [r["task_id"] for r in records] == ["gsm8k/train/0"]

    output = tmp_path / "sft.jsonl"
    result = rlenvs_cli(
        "sft-data", GSM8K, "--episodes", "2", "--output", str(output), "--env-arg", f"data_files={data}"
    )
    assert result.returncode == 0, result.stderr
    written = [json.loads(line) for line in output.read_text().splitlines()]
    assert written == records
    assert "wrote 1 conversations" in result.stdout and "skipped 1 of 2 episodes" in result.stdout


def test_cli_writes_one_conversation_per_line(tmp_path) -> None:
    output = tmp_path / "sft.jsonl"
    result = rlenvs_cli(
        "sft-data",
        GSM8K_TOOL,
        "--episodes",
        "8",
        "--seed",
        "3",
        "--output",
        str(output),
        "--env-arg",
        "oracle_uses_calculator=true",
        "--env-arg",
        "split=test",
    )
    assert result.returncode == 0, result.stderr
    assert f"wrote 8 conversations to {output}; skipped 0 of 8 episodes" in result.stdout
    written = [json.loads(line) for line in output.read_text().splitlines()]
    assert written == oracle_conversations(
        GSM8K_TOOL, 8, seed=3, env_kwargs={"oracle_uses_calculator": True, "split": "test"}
    )
    assert [p.name for p in tmp_path.iterdir()] == ["sft.jsonl"]  # no temporary file left


def test_write_jsonl_is_atomic(tmp_path) -> None:
    path = tmp_path / "sft.jsonl"
    write_jsonl([{"messages": [], "n": 1}], path)
    assert path.read_text() == '{"messages": [], "n": 1}\n'

    def interrupted():
        yield {"n": 2}
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_jsonl(interrupted(), path)
    assert path.read_text() == '{"messages": [], "n": 1}\n'  # the old file, whole
    assert [p.name for p in tmp_path.iterdir()] == ["sft.jsonl"]
    with pytest.raises(ValueError, match="is a folder"):
        write_jsonl([], tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_jsonl([], tmp_path / "missing" / "sft.jsonl")


def test_envs_without_an_oracle_are_refused(no_oracle_module) -> None:
    for env_id in ("no_oracle_envs:Echo-v0", "no_oracle_envs:NoOracleText-v0"):
        with pytest.raises(ValueError, match=rf"{env_id} \(\w+\) has no oracle"):
            oracle_conversations(env_id, 1)  # NoOracleText's source has one task

    output = no_oracle_module / "sft.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(no_oracle_module), *sys.path])}
    result = rlenvs_cli("sft-data", "no_oracle_envs:Echo-v0", "--episodes", "2", "--output", str(output), env=env)
    assert result.returncode == 2
    assert result.stderr.startswith("rlenvs sft-data: error: no_oracle_envs:Echo-v0 (EchoEnv) has no oracle")
    assert not output.exists()


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([GSM8K, "--episodes", "0"], "episodes (--episodes) must be an int >= 1"),
        ([GSM8K, "--episodes", "-3"], "episodes (--episodes) must be an int >= 1"),
        ([GSM8K, "--episodes", "2", "--seed", "-1"], "seed (--seed) must be an int >= 0"),
        (["rlenvs/Nope-v0", "--episodes", "2"], "unknown env id 'rlenvs/Nope-v0'"),
        ([GSM8K, "--episodes", "2", "--env-arg", "split=nope"], "unknown GSM8K split 'nope'"),
        (
            [GSM8K, "--episodes", "1320", "--env-arg", "split=test"],
            "--episodes 1320 is more than the 1319 tasks of rlenvs/GSM8K-v1 split=test: lower --episodes",
        ),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, message) -> None:
    output = tmp_path / "sft.jsonl"
    result = rlenvs_cli("sft-data", *args, "--output", str(output))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("rlenvs sft-data: error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not output.exists()
