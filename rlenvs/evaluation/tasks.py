"""Which tasks an evaluation runs: every task of a split once, or N distinct tasks.

A benchmark number is an average over a split's tasks; drawing tasks with replacement (one
seeded reset per episode) covers only ~63% of a split in as many episodes as it has tasks
(839 of GSM8K's 1,319), so the number mixes repeats and gaps. Here a sized source runs task
0..N-1 in order by default, and `episodes=N` draws N distinct indices with a seeded generator.
A procedural source has no "every task", so it needs `episodes`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlenvs.core.checks import check_int
from rlenvs.core.task import INFINITE_DRAW_RANGE, task_source


def source_size(env: Any, env_id: str) -> int | None:
    """The number of tasks of an rlenvs env's task source, None for a procedural (unsized) one;
    TypeError for an env without one (`rlenvs.core.task.task_source`)."""
    source = task_source(env, env_id, "evaluation")
    return len(source) if source.sized else None


def choose_task_indices(size: int | None, episodes: int | None, seed: int, what: str) -> list[int]:
    """Task indices to run, each once: 0..size-1 when `episodes` is None; else `episodes`
    distinct indices drawn with `numpy.random.default_rng(seed)`, in increasing order.

    `what` names the tasks in errors (the env id and its split). A procedural source
    (`size` None) needs `episodes`; asking for more tasks than a split has is an error, since
    repeats are what `samples` is for."""
    if episodes is None:
        if size is None:
            raise ValueError(
                f"{what} is procedural (an unbounded task generator): there is no 'every task' to run; pass "
                "--episodes N (episodes=N) to draw N distinct tasks"
            )
        return list(range(size))
    check_int("episodes (--episodes)", episodes, at_least=1, meaning="how many distinct tasks to run")
    check_int("seed (--seed)", seed, at_least=0, meaning="the seed of the task draw")
    rng = np.random.default_rng(seed)
    if size is None:
        drawn: set[int] = set()
        while len(drawn) < episodes:
            drawn.update(int(i) for i in rng.integers(INFINITE_DRAW_RANGE, size=episodes - len(drawn)))
        return sorted(drawn)
    if episodes > size:
        raise ValueError(
            f"--episodes {episodes} is more than the {size} tasks of {what}: leave --episodes out to run every task "
            "once, or attempt each task K times for repeats (--samples K; rlenvs-train eval: --k K)"
        )
    if episodes == size:
        return list(range(size))
    return sorted(int(i) for i in rng.choice(size, size=episodes, replace=False))
