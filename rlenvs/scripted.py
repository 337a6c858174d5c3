"""One episode played by a scripted policy: the oracle, or a fixed list of replies.

The task-folder coverage check (`rlenvs.envs.terminal.coverage`) plays its reference runs with
it. `rlenvs eval` and `rlenvs.evaluate` are `rlenvs.evaluation`, which adds task plans without
replacement, samples, policies and the statistics.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol, cast

import gymnasium as gym


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
