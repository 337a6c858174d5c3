"""Red-team corpus of the math family (`rlenvs.rewards.math`, MATH-v1, GSM8K-v1,
Arithmetic-v1, Arithmetic-Tool-v1, Algebra-v1).

A case's `task` is either a gold answer for the verifier alone, `{"gold": ..., "settings":
{...}}` (keyword arguments of `math_answer_score`), or an env and the row it is posed with,
`{"env": "rlenvs/MATH-v1", "row": {...}}` (through `options={"task": row}`), where the env's
own rules apply (a restated problem scores 0 in MATH-v1). The replies are played as turns;
the episode's total reward is what `replay` returns.
"""

from __future__ import annotations

import functools

import gymnasium as gym

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.rewards.math import math_answer_score
from tests.conftest import MAKE_KWARGS
from tests.support.redteam import Case


@functools.cache
def _env(env_id: str) -> gym.Env:
    return gym.make(env_id, **MAKE_KWARGS.get(env_id, {}))


def replay(case: Case) -> float:
    task = case.task
    if "env" not in task:
        (reply,) = case.replies
        return math_answer_score(reply, task["gold"], **task.get("settings", {}))
    env = _env(task["env"])
    env.reset(seed=0, options={"task": task["row"]})
    total = 0.0
    for reply in case.replies:
        _, reward, terminated, truncated, _ = env.step(reply)
        total += float(reward)
        if terminated or truncated:
            break
    return total
