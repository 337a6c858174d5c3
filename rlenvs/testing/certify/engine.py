"""Certify an env: draw tasks, write probes from each task's own data, play every probe through
the env as a policy would, and keep each verdict that went the wrong way with what reproduces it.

Tasks are drawn by seed (`tasks=N`: seeds `seed .. seed+N-1`, as `reset(seed=...)` draws
them) or, for an env whose tasks carry a gold answer, so that every answer type its data holds
is tried (`per_type=K`: the first K tasks of each type in a seeded order of the whole source).
Each probe is played on a fresh `reset` of its task, reply by reply, until the episode ends or
the replies run out; the episode's total reward is the verdict.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import gymnasium as gym

from rlenvs.rewards.math.answer_types import answer_type
from rlenvs.testing.certify.code_programs import code_probes
from rlenvs.testing.certify.generic import generic_probes
from rlenvs.testing.certify.math_answers import math_probes
from rlenvs.testing.certify.probes import EQUIVALENT, Generator, Probe, Reply, Subject
from rlenvs.testing.certify.report import CertifyReport, Check
from rlenvs.testing.certify.spreadsheet_moves import spreadsheet_probes
from rlenvs.testing.certify.terminal_plants import terminal_probes

DEFAULT_GENERATORS: tuple[Generator, ...] = (
    generic_probes,
    math_probes,
    code_probes,
    terminal_probes,
    spreadsheet_probes,
)
MAX_STEPS = 100
"""Turns an episode may take from the gold replies before certify gives up on it."""
SCAN_LIMIT = 20_000
"""Tasks read, at most, to find `per_type` tasks of every answer type."""


def certify(
    env_id: str,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    tasks: int = 10,
    seed: int = 0,
    per_type: int | None = None,
    every_task: bool = False,
    task_indices: Sequence[int] | None = None,
    generators: Sequence[Generator] = DEFAULT_GENERATORS,
    skip: Iterable[str] = (),
    progress: Callable[[str], None] | None = None,
) -> CertifyReport:
    """Play generated attacks and equivalent correct forms through `env_id` (module docstring).

    `every_task` certifies every task of the env's source instead (a data set's whole split),
    `task_indices` the tasks at those indices of it.
    `skip` leaves out probe kinds by name ("restatement" for an env that asks for no form).
    """
    kwargs = dict(env_kwargs or {})
    env = gym.make(env_id, **kwargs)
    skipped = frozenset(skip)
    report = CertifyReport(env_id, kwargs, seed)
    try:
        for subject in _subjects(env, env_id, tasks, seed, per_type, every_task, task_indices):
            report.tasks += 1
            report.answer_types[subject.task_id] = answer_type(subject.gold) if subject.gold is not None else ""
            for generate in generators:
                for probe in generate(subject):
                    if probe.kind in skipped:
                        continue
                    report.add(_play(env, subject, probe))
            if progress is not None:
                progress(f"{subject.task_id}: {report.summary_line()}")
    finally:
        env.close()
    return report


def _subjects(
    env: gym.Env,
    env_id: str,
    tasks: int,
    seed: int,
    per_type: int | None,
    every_task: bool,
    task_indices: Sequence[int] | None,
) -> Iterator[Subject]:
    """The tasks to certify, made one at a time (a whole split is not held at once)."""
    if per_type is None and not every_task and task_indices is None:
        yield from (_subject(env, env_id, seed + number, None) for number in range(tasks))
        return
    source = getattr(env.unwrapped, "tasks", None)
    if source is None or not getattr(source, "sized", False) or not hasattr(source, "get"):
        raise ValueError(
            f"per_type, every_task and task_indices need an env whose tasks are a sized source (env.unwrapped.tasks); {env_id} "
            "has none: pass tasks=N instead"
        )
    if every_task or task_indices is not None:
        indices = range(len(source)) if task_indices is None else task_indices
        for index in indices:
            if not 0 <= index < len(source):
                raise ValueError(f"task index {index} is outside {env_id}'s {len(source)} tasks")
            yield _subject(env, env_id, seed, index)
        return
    assert per_type is not None
    order = list(range(len(source)))
    random.Random(seed).shuffle(order)
    chosen: dict[str, list[int]] = {}
    for index in order[:SCAN_LIMIT]:
        gold = getattr(source.get(index), "answer", None)
        kind = answer_type(gold) if isinstance(gold, str) and gold.strip() else ""
        picked = chosen.setdefault(kind, [])
        if len(picked) < per_type:
            picked.append(index)
    yield from (_subject(env, env_id, seed, index) for indices in chosen.values() for index in indices)


def _subject(env: gym.Env, env_id: str, seed: int, task_index: int | None) -> Subject:
    options = None if task_index is None else {"task_index": task_index}
    prompt, info = env.reset(seed=seed, options=options)
    unwrapped = env.unwrapped
    task = getattr(unwrapped, "task", None)
    oracle, best = _play_oracle(env, seed, options)
    low, high = getattr(unwrapped, "reward_range", (0.0, 1.0))
    subject = Subject(
        env_id=env_id,
        seed=seed,
        task_index=task_index,
        task_id=str(info.get("task_id", f"seed {seed}")),
        prompt=prompt,
        gold=None,
        oracle=oracle,
        best=best if oracle else float(high),
        worst=float(low),
        max_turns=int(info.get("max_turns", 1)),
        task=task,
    )
    gold = getattr(task, "answer", None)
    if isinstance(gold, str) and gold.strip() and oracle:
        # The gold counts as a math answer where the env pays the gold reply's reward for it boxed.
        if math.isclose(_episode(env, subject, (f"The final answer is $\\boxed{{{gold}}}$.",))[0], subject.best):
            return dataclasses.replace(subject, gold=gold)
    return subject


def _play_oracle(env: gym.Env, seed: int, options: dict[str, Any] | None) -> tuple[tuple[str, ...], float]:
    oracle = getattr(env.unwrapped, "oracle_action", None)
    if not callable(oracle):
        return (), 0.0
    env.reset(seed=seed, options=options)
    turns: list[str] = []
    total = 0.0
    for _ in range(MAX_STEPS):
        try:
            reply = oracle()
        except Exception:
            return (), 0.0
        turns.append(reply)
        _, reward, terminated, truncated, _ = env.step(reply)
        total += float(reward)
        if terminated or truncated:
            return tuple(turns), total
    return (), 0.0


def _episode(env: gym.Env, subject: Subject, turns: tuple[Reply, ...]) -> tuple[float, str | None, tuple[str, ...]]:
    """The reward the replies earn on the subject's task, the error if the env raised, and
    the replies played (an adaptive reply as it was written)."""
    observation, _ = env.reset(seed=subject.seed, options=subject.reset_options)
    observations, played = [observation], []
    total = 0.0
    try:
        for turn in turns:
            reply = turn if isinstance(turn, str) else turn(tuple(observations))
            played.append(reply)
            observation, reward, terminated, truncated, _ = env.step(reply)
            observations.append(observation)
            total += float(reward)
            if terminated or truncated:
                break
    except Exception as error:
        return total, f"{type(error).__name__}: {error}", tuple(played)
    return total, None, tuple(played)


def _play(env: gym.Env, subject: Subject, probe: Probe) -> Check:
    started = time.perf_counter()
    reward, error, played = _episode(env, subject, probe.turns)
    seconds = time.perf_counter() - started
    expected = subject.best if probe.expect == EQUIVALENT else subject.worst
    wrong = error is not None or (
        reward < expected - 1e-9 if probe.expect == EQUIVALENT else reward > subject.worst + 1e-9
    )
    return Check(subject, probe, reward, expected, seconds, wrong, error, played)
