"""Checks of seeding: the same seed poses the same task (and the same step has the same
outcome), different seeds pose different tasks."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import gymnasium as gym

from rlenvs.testing.envs.play import STEP_PARTS, _first_difference, _oracle
from rlenvs.testing.envs.registry import _check
from rlenvs.testing.envs.replies import NON_ANSWER
from rlenvs.testing.envs.reports import _Failed
from rlenvs.testing.envs.subjects import _Target

STEP_DETERMINISM_SEEDS = 5
"""Seeds on which two instances also take the same step and must agree on its outcome."""


@_check("seeding_determinism")
def _seeding_determinism(target: _Target) -> str:
    """Same seed, same task: GRPO groups pose one task to several rollouts by seed. Two
    instances visit the seeds in opposite orders, so state carried across resets shows."""
    seeds = target.settings.seeds
    first, second = target.make(), target.make()
    # Snapshots, so that an env reusing its info objects shows up in fresh_objects, not here.
    forward = {seed: copy.deepcopy(first.reset(seed=seed)) for seed in seeds}
    backward = {seed: copy.deepcopy(second.reset(seed=seed)) for seed in reversed(seeds)}
    for seed in seeds:
        difference = _first_difference(forward[seed], backward[seed])
        if difference is not None:
            raise _Failed(
                f"two instances reset with seed={seed} disagree on {difference[0]}: draw every random choice "
                "from self.np_random after super().reset(seed=seed)",
                counterexample={"seed": seed, "first": difference[1], "second": difference[2]},
            )
    seed = seeds[0]
    first.reset(seed=seed)
    with contextlib.suppress(Exception):  # any exception here is the garbage check's to report
        first.step(NON_ANSWER)
    again = copy.deepcopy(first.reset(seed=seed))
    difference = _first_difference(forward[seed], again)
    if difference is not None:
        raise _Failed(
            f"resetting with seed={seed} after a step gives a different {difference[0]}: reset must not "
            "depend on the previous episode",
            counterexample={"seed": seed, "before": difference[1], "after": difference[2]},
        )
    if target.nondeterministic:
        return f"{len(seeds)} seeds reset identically (steps not compared: registered nondeterministic)"
    step_seeds = seeds[:STEP_DETERMINISM_SEEDS]
    for seed in step_seeds:
        first.reset(seed=seed)
        second.reset(seed=seed)
        actions = [_oracle(first, 0), _oracle(second, 0)] if target.has_oracle else [NON_ANSWER, NON_ANSWER]
        if actions[0] != actions[1]:
            raise _Failed(
                f"oracle_action differs between two instances reset with seed={seed}",
                counterexample={"seed": seed, "first": actions[0], "second": actions[1]},
            )
        outcomes = [copy.deepcopy(env.step(actions[0])[:4]) for env in (first, second)]
        difference = _first_difference(outcomes[0], outcomes[1], names=STEP_PARTS)
        if difference is not None:
            raise _Failed(
                f"the same reply on the same seed={seed} gives a different {difference[0]}: a reward that is not "
                "a pure function of the reply must be registered with nondeterministic=True",
                counterexample={"seed": seed, "action": actions[0], "first": difference[1], "second": difference[2]},
            )
    return f"{len(seeds)} seeds reset identically across instances and orders; {len(step_seeds)} steps agree"


@_check("seed_variety")
def _seed_variety(target: _Target) -> str:
    """Different seeds draw different tasks: an env that ignores the seed poses one task."""
    seeds = target.settings.seeds
    env = target.make()
    firsts: dict[tuple[Any, str], int] = {}  # (observation, task id) -> the first seed that drew it
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        firsts.setdefault((obs, str(info.get("task_id", ""))), seed)
    task_count = _task_count(env)
    needed = min(10, task_count // 2) if task_count is not None else min(10, len(seeds) // 2)
    if len(firsts) <= needed:
        raise _Failed(
            f"{len(seeds)} seeds gave only {len(firsts)} distinct task{'s' if len(firsts) != 1 else ''}, "
            f"expected more than {needed}"
            + (f" of {task_count}" if task_count is not None else "")
            + ": draw the task with self.np_random after super().reset(seed=seed)",
            counterexample={"seeds": list(seeds[:3]), "observations": [obs for obs, _ in list(firsts)[:3]]},
        )
    return f"{len(seeds)} seeds drew {len(firsts)} distinct tasks"


def _task_count(env: gym.Env) -> int | None:
    """How many tasks the env draws from, where it says (rlenvs' `env.tasks`)."""
    tasks = getattr(env, "tasks", None)
    try:
        return len(tasks) if tasks is not None else None
    except TypeError:  # an endless generator, or no length at all
        return None
