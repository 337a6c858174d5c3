"""The env contract as a function: `check_text_env` runs it on any text `gymnasium.Env`.

rlenvs holds every registered id to one contract (docs/design.md, "The env contract"): text
spaces that admit any reply, seeded tasks, an oracle that earns the maximum reward, any
string a valid action, episodes that end within their turn budget, fresh objects on every
call, clear errors for misuse. Users writing their own env want the same guarantees, and the
package's own tests want them for every id without copying a test per property, so the
whole contract lives here and returns a report instead of raising at the first problem:

    from rlenvs.testing.envs import check_text_env
    report = check_text_env("rlenvs/GSM8K-v1", make_kwargs={"split": "test"})
    print(report)            # one line per check, failures with a counterexample
    assert report.passed

What it accepts, and what each form needs:

- an id (`"rlenvs/GSM8K-v1"`, `"my_pkg:MyEnv-v0"`): every check runs, including the ones
  that make the env with other arguments (`max_turns` variants, render modes) and the
  vector-env checks. `make_kwargs` are passed to every `gym.make`.
- a zero-argument factory (`MyEnv`, `lambda: MyEnv(level=2)`): called for every fresh env.
  Checks that need other constructor arguments or a registered id are skipped, and say so.
- an instance: each check works on a `copy.deepcopy` of it, so the instance must deep-copy
  (the contract requires that anyway) and is left untouched. Skips as for a factory.

Checks work on `env.unwrapped`, as gymnasium's `check_env` does: the env itself must keep
the contract, not a wrapper around it. Optional knowledge is used where the env has it:
`oracle_action()` for oracle maximality (skipped without it), `reward_range` for reward
bounds (else rewards need only be finite), `max_turns` for the episode-length bound (else
`max_episode_steps`, default `EPISODE_STEP_CAP`), and rlenvs' chat convention (`messages`,
`stop_reason` in `info`) only for envs whose `reset` info has `messages`.

Garbage actions come from `GARBAGE_CORPUS`, a fixed list (empty, 100 KB, unicode, control
characters, lone surrogates, unbalanced braces, markup), plus `garbage_examples` episodes of
hypothesis-generated text when hypothesis is installed (derandomized and without an example
database, so reruns in the same setting draw the same text; hypothesis also mixes in
constants from the modules loaded, so another process may draw a little differently).
Without hypothesis the corpus alone runs and the report says so.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import gymnasium as gym

from rlenvs.testing.envs.checks.conventions import CHAT_ROLES_AT_RESET
from rlenvs.testing.envs.checks.objects import TAMPER_MARK
from rlenvs.testing.envs.checks.seeding import STEP_DETERMINISM_SEEDS
from rlenvs.testing.envs.checks.vector import VECTOR_ENVS, VECTOR_SEED
from rlenvs.testing.envs.play import STEP_PARTS
from rlenvs.testing.envs.registry import CHECKS
from rlenvs.testing.envs.replies import (
    GARBAGE_CORPUS,
    NON_ANSWER,
    NORMAL_REPLIES,
    garbage_text_strategy,
)
from rlenvs.testing.envs.reports import (
    CheckReport,
    EnvReport,
    _exception_summary,
    _Failed,
)
from rlenvs.testing.envs.subjects import EPISODE_STEP_CAP, _Settings, _Target, _target

__all__ = [
    "CHAT_ROLES_AT_RESET",
    "CHECKS",
    "DEFAULT_GARBAGE_EXAMPLES",
    "DEFAULT_SEEDS",
    "EPISODE_STEP_CAP",
    "GARBAGE_CORPUS",
    "NON_ANSWER",
    "NORMAL_REPLIES",
    "STEP_DETERMINISM_SEEDS",
    "STEP_PARTS",
    "TAMPER_MARK",
    "VECTOR_ENVS",
    "VECTOR_SEED",
    "CheckReport",
    "EnvReport",
    "check_text_env",
    "garbage_text_strategy",
]

DEFAULT_SEEDS: tuple[int, ...] = (*range(20), 12345, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1)
"""25 seeds: the first twenty, and large ones where a seed could overflow a 32-bit int."""

DEFAULT_GARBAGE_EXAMPLES = 40
"""Hypothesis-generated garbage episodes per `max_turns` variant."""


def check_text_env(
    env_or_id: str | gym.Env | Callable[[], gym.Env],
    *,
    make_kwargs: Mapping[str, Any] | None = None,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    garbage_examples: int = DEFAULT_GARBAGE_EXAMPLES,
    max_turns_to_try: Sequence[int] = (1, 3),
    vector: bool = True,
    max_episode_steps: int | None = None,
    skip: Collection[str] = (),
) -> EnvReport:
    """Run every check of the env contract on an env and report each outcome.

    `env_or_id` is a registered id, a zero-argument factory or an instance (see the module
    docstring for what each needs). `seeds` drive determinism, variety and the oracle;
    `garbage_examples` is the number of hypothesis episodes per `max_turns` variant (0 for
    the corpus only); `max_turns_to_try` are extra budgets the garbage and length checks
    make the env with (ids only); `vector=False` leaves out the vector-env check (which
    starts worker processes); `max_episode_steps` bounds episodes of an env without
    `max_turns`; `skip` names checks to leave out (see `CHECKS`).

    Raises ValueError for bad input (an unknown id, kwargs given with an instance, an
    unknown check name); problems of the env itself are in the report, never raised.
    """
    unknown = sorted(set(skip) - set(CHECKS))
    if unknown:
        raise ValueError(f"skip={unknown} names no check: the checks are {list(CHECKS)}")
    seeds = tuple(int(seed) for seed in seeds)
    if not seeds or any(seed < 0 for seed in seeds):
        raise ValueError(f"seeds must be non-empty and non-negative (reset(seed=...) needs that), got {seeds}")
    settings = _Settings(seeds, int(garbage_examples), tuple(max_turns_to_try), max_episode_steps)
    target = _target(env_or_id, make_kwargs, settings)
    start = time.perf_counter()
    made = _make_check(target)
    first, target.made = target.made, []  # the first env lives until the end: every check reads it
    reports = [made]
    try:
        for name, run in CHECKS.items():
            why_not = _why_not_run(name, made, target, vector, skip)
            reports.append(CheckReport(name, True, f"skipped: {why_not}", skipped=True) if why_not else run(target))
    finally:
        target.made += first
        target.close_made()
    return EnvReport(target.label, tuple(reports), time.perf_counter() - start)


def _why_not_run(name: str, made: CheckReport, target: _Target, vector: bool, skip: Collection[str]) -> str | None:
    if not made.passed:
        return "the env could not be made"
    if name in skip:
        return "asked to (skip=...)"
    if name == "vector_envs" and target.env_id is None:
        return f"gym.make_vec needs a registered id; {target.label} has none"
    if name == "vector_envs" and not vector:
        return "vector=False"
    return None


def _make_check(target: _Target) -> CheckReport:
    """Make the first env (what the other checks learn the env's shape from)."""
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            target.sample = target.make()
    except _Failed as failure:
        return CheckReport("make", False, failure.message, seconds=time.perf_counter() - start)
    except Exception as error:  # reported
        message = f"making the env raised {_exception_summary(error)}"
        if target.env_id is not None:
            message += f"\n(make_kwargs={target.make_kwargs})"
        return CheckReport("make", False, message, seconds=time.perf_counter() - start)
    return CheckReport("make", True, f"made {type(target.sample).__name__}", seconds=time.perf_counter() - start)
