"""Whole episodes played by a scripted policy: the oracle, or replies read from a file.

This is what `rlenvs eval` runs (a model's evaluation, with generation, is
`rlenvs_train.evaluate`; this module needs no model). It measures an env (does the oracle reach the maximum
reward on every task, how long the reward check takes) and scores completions a model
produced elsewhere, without any model in the process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Protocol, cast

import gymnasium as gym

from rlenvs.data import DataFormatError, read_rows


class _OracleEnv(Protocol):
    """An env with a gold reply for its current state, as every rlenvs `TextEnv` has."""

    def oracle_action(self) -> str: ...


@dataclass(frozen=True)
class EpisodePlan:
    """How to run one episode: reset arguments, and the replies (None: ask the oracle)."""

    reset: dict[str, Any]
    replies: tuple[str, ...] | None


@dataclass(frozen=True)
class EpisodeResult:
    episode: int
    task_id: str
    total_reward: float
    turns: int
    stop_reason: str
    """The env's stop reason, or "policy_exhausted" if the file had no more replies."""
    correct: bool | None
    check_seconds: float
    """Time spent inside `env.step`, i.e. judging the replies."""
    failed_checks: tuple[str, ...] = ()
    """Why the last step's verdict failed, where the env says (`info["failed_checks"]`): the
    difference between "the oracle did not reach the maximum" and knowing which check it missed."""


@dataclass(frozen=True)
class Summary:
    episodes: int
    mean_reward: float
    success_rate: float
    mean_turns: float
    mean_check_seconds_per_step: float

    def table(self) -> str:
        header = ("episodes", "mean reward", "success rate", "mean turns", "reward check per step")
        values = (
            str(self.episodes),
            f"{self.mean_reward:.4f}",
            f"{100 * self.success_rate:.1f}%",
            f"{self.mean_turns:.2f}",
            _format_seconds(self.mean_check_seconds_per_step),
        )
        widths = [max(len(h), len(v)) for h, v in zip(header, values)]
        row = lambda cells: "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
        return "\n".join([row(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", row(values)])


def plan_episodes(policy: str, episodes: int | None, seed: int) -> list[EpisodePlan]:
    """Episode plans for a policy spec: `oracle` or `file:COMPLETIONS.jsonl`.

    The oracle runs `episodes` episodes seeded `seed, seed+1, ...`. A completions file has
    one episode per line: `{"task_id": ..., "completion": "..."}` (or `"task_index"`
    instead of `"task_id"`, and `"completions": [...]` for one reply per turn); it runs the
    first `episodes` lines, or all of them.
    """
    if episodes is not None and episodes < 1:
        raise ValueError(f"--episodes must be at least 1, got {episodes}")
    if policy == "oracle":
        if episodes is None:
            raise ValueError("--episodes is required with --policy oracle (how many tasks to draw)")
        return [EpisodePlan(reset={"seed": seed + i}, replies=None) for i in range(episodes)]
    if policy.startswith("file:"):
        plans = list(_plans_from_file(Path(policy.removeprefix("file:"))))
        return plans if episodes is None else plans[:episodes]
    raise ValueError(f"unknown policy {policy!r}: use 'oracle' or 'file:COMPLETIONS.jsonl'")


def run_episode(env: gym.Env, plan: EpisodePlan, episode: int) -> EpisodeResult:
    _, info = env.reset(**plan.reset)
    task_id = info["task_id"]
    total, turns, check_seconds = 0.0, 0, 0.0
    stop_reason, correct = "policy_exhausted", None
    failed: tuple[str, ...] = ()
    while True:
        if plan.replies is None:
            # Duck-typed (an env of another package may have one too); one without raises AttributeError.
            reply = cast(_OracleEnv, env.unwrapped).oracle_action()
        elif turns < len(plan.replies):
            reply = plan.replies[turns]
        else:
            break
        started = time.perf_counter()
        _, reward, terminated, truncated, info = env.step(reply)
        check_seconds += time.perf_counter() - started
        total += float(reward)
        turns += 1
        correct = info.get("correct")
        failed = tuple(str(check) for check in info.get("failed_checks") or ())
        if terminated or truncated:
            stop_reason = info["stop_reason"]
            break
    return EpisodeResult(episode, task_id, total, turns, stop_reason, correct, check_seconds, failed)


def evaluate(
    env: gym.Env,
    plans: Sequence[EpisodePlan],
    *,
    output: IO[str] | None = None,
    progress: bool = False,
) -> Summary:
    """Run every plan; each result is written to `output` (JSONL) as soon as it exists, so
    an interrupted run keeps every finished episode."""
    results = []
    for result in _with_progress((run_episode(env, plan, i) for i, plan in enumerate(plans)), len(plans), progress):
        results.append(result)
        if output is not None:
            output.write(json.dumps(asdict(result)) + "\n")
            output.flush()
    return summarize(results)


def summarize(results: Sequence[EpisodeResult]) -> Summary:
    if not results:
        raise ValueError("no episodes to summarize")
    steps = sum(r.turns for r in results)
    return Summary(
        episodes=len(results),
        mean_reward=sum(r.total_reward for r in results) / len(results),
        success_rate=sum(r.correct is True for r in results) / len(results),
        mean_turns=steps / len(results),
        mean_check_seconds_per_step=sum(r.check_seconds for r in results) / max(steps, 1),
    )


def _plans_from_file(path: Path) -> Iterator[EpisodePlan]:
    if not path.is_file():
        raise FileNotFoundError(f"completions file not found: {path}")
    for row, location in read_rows(path):
        where = str(location)
        yield EpisodePlan(reset={"options": _task_option(row, where)}, replies=_replies(row, where))


def _task_option(row: dict, where: str) -> dict[str, Any]:
    if "task_id" in row:
        return {"task_id": row["task_id"]}
    if "task_index" in row:
        return {"task_index": row["task_index"]}
    raise DataFormatError(f"{where}: each line needs 'task_id' or 'task_index' to say which task it answers")


def _replies(row: dict, where: str) -> tuple[str, ...]:
    if "completion" in row:
        replies = [row["completion"]]
    elif "completions" in row and isinstance(row["completions"], list):
        replies = row["completions"]
    else:
        raise DataFormatError(f"{where}: each line needs 'completion' (a string) or 'completions' (a list of strings)")
    if not all(isinstance(r, str) for r in replies):
        raise DataFormatError(f"{where}: completions must be strings")
    return tuple(replies)


def _with_progress(items: Iterator[EpisodeResult], total: int, enabled: bool) -> Iterator[EpisodeResult]:
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, total=total, unit="episode", dynamic_ncols=True)


def _format_seconds(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"
