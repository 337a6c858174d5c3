"""`--policy model:PATH`: a local model as an evaluation policy (`rlenvs_train.model_policy`),
with the tiny random Qwen2 of `rlenvs_train.tiny` on real envs, and `rlenvs eval --config`
playing a run's final model as the run trained it."""

from __future__ import annotations

import json
import sys

import pytest

import rlenvs
from rlenvs.cli import main
from rlenvs_train.model_policy import ModelPolicy
from rlenvs_train.tiny import build_tiny_model

TOOL = "rlenvs/Arithmetic-Tool-v1"
KWARGS = {"level": 1, "max_turns": 3}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny")))


def test_a_round_is_one_batch_and_batching_does_not_change_the_episodes(tiny) -> None:
    """Greedy replies of 6 multi-turn episodes played one at a time and 6 at once (one batched
    generation per round, prompts of different lengths, left-padded) are the same replies."""
    runs = [
        rlenvs.evaluate(TOOL, ModelPolicy(tiny, max_tokens=12), episodes=6, env_kwargs=KWARGS, concurrency=width)
        for width in (1, 6)
    ]
    replies = [[t.messages for t in run.trajectories] for run in runs]
    assert replies[0] == replies[1]
    one = runs[0]
    assert all(t.turns >= 1 and len(t.finish_reasons) == t.turns for t in one.trajectories)
    assert set(one.finish_reasons()) <= {"stop", "length"} and one.infra_failures == 0


def test_the_episode_token_budget_ends_an_episode_as_the_rollout_engine_does(tiny) -> None:
    policy = ModelPolicy(tiny, max_tokens=16, max_episode_tokens=20)
    result = rlenvs.evaluate(TOOL, policy, episodes=4, env_kwargs=KWARGS)
    for trajectory in result.trajectories:
        assert trajectory.stop_reason in {"max_episode_tokens", "answered", "max_turns"}, trajectory.stop_reason
    assert result.stop_reasons()["max_episode_tokens"] >= 1  # 16 tokens of noise and a reminder overrun 20
    assert all(t.turns <= 2 for t in result.trajectories)


def test_rlenvs_eval_config_plays_the_runs_final_model_as_it_trained(tiny, tmp_path, capsys) -> None:
    """The quickstart's config: its env kwargs (system_prompt null: the first message is the
    problem), its token caps (16 a turn), its final model as the policy; the trajectories are
    the format `file:` re-scores."""
    from rlenvs_train.cli import quickstart_config_path
    from rlenvs_train.config import dump_config, load_config

    run = tmp_path / "run"
    config = load_config(quickstart_config_path(), [f"trainer.output_dir={run}"])
    dump_config(config, run / "config.yaml")
    argv = ["eval", "--config", str(run / "config.yaml"), "--episodes", "3", "--no-progress"]
    assert main(argv) == 2
    assert "final-model is not there" in capsys.readouterr().err
    (run / "final-model").symlink_to(tiny, target_is_directory=True)

    out = tmp_path / "t.jsonl"
    assert main([*argv, "--trajectories", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"policy model:{run / 'final-model'}" in printed and "max_tokens_per_turn 16" in printed
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 3 and all(line["messages"][0]["role"] == "user" for line in lines)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    replies = [m["content"] for line in lines for m in line["messages"] if m["role"] == "assistant"]
    assert replies and all(len(tokenizer(r, add_special_tokens=False).input_ids) <= 16 for r in replies)
    rescored = rlenvs.evaluate(config.data.env, f"file:{out}", env_kwargs=config.data.env_kwargs)
    assert [(t.reward, t.stop_reason) for t in rescored.trajectories] == [
        (line["reward"], line["stop_reason"]) for line in lines
    ]


def test_model_policy_input_errors_name_the_fix(tiny, monkeypatch, capsys) -> None:
    assert main(["eval", "rlenvs/Arithmetic-v1", "--policy", "model:./no-such-model", "--episodes", "1"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["eval", "rlenvs/Arithmetic-v1", "--policy", "oracle", "--backend", "hf", "--episodes", "1"]) == 2
    assert "--backend is for the model: policy" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "rlenvs_train.model_policy", None)  # as without the train extra
    assert main(["eval", "rlenvs/Arithmetic-v1", "--policy", f"model:{tiny}", "--episodes", "1"]) == 2
    assert 'pip install -e ".[train]"' in capsys.readouterr().err
