"""What a generator writes and what it is written from: `Subject` (one task, as the env poses
it) and `Probe` (a reply and the verdict a correct env gives it).

A probe says which way its verdict must go, not a number: an *equivalent* must earn what the
env's own gold reply earns on that task (a correct answer written another way loses nothing),
an *attack* must earn no more than the env's lowest reward (a reply that does not do the task
gains nothing). So the same generators judge any env, whatever its reward scale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

EQUIVALENT = "equivalent"
"""Must earn the gold reply's reward."""
ATTACK = "attack"
"""Must earn the env's lowest reward."""


@dataclass(frozen=True)
class Subject:
    """One task as the generators see it: what the env posed and what it knows."""

    env_id: str
    seed: int
    task_index: int | None
    """The task's index in the env's task source (reset with `options={"task_index": i}`);
    None where the task was drawn by `seed` alone."""
    task_id: str
    prompt: str
    """The observation `reset` returned (the problem as the agent sees it)."""
    gold: str | None
    """The task's gold final answer (`task.answer`) where the env's verifier reads it as one:
    the gold boxed earns the gold reply's reward. None otherwise (no math generators then)."""
    oracle: tuple[str, ...]
    """The env's gold replies, one per turn (empty where the env has none)."""
    best: float
    """What the gold replies earn (the env's highest reward where it has no oracle)."""
    worst: float
    """The env's lowest reward (`reward_range[0]`)."""
    max_turns: int = 1
    """The replies an episode allows (`info["max_turns"]`, 1 where the env does not say)."""
    task: Any = field(default=None, compare=False, repr=False)
    """The task object itself (`env.unwrapped.current_task`), for family generators."""

    @property
    def reset_options(self) -> dict[str, Any] | None:
        return None if self.task_index is None else {"task_index": self.task_index}


Reply = str | Callable[[Sequence[str]], str]
"""A reply as written, or written from the observations so far."""


@dataclass(frozen=True)
class Probe:
    """One reply to play on a subject's task, and how a correct env judges it."""

    kind: str
    """The generator's class: "near miss", "restatement", "hedge", "notation", ..."""
    expect: str
    """`EQUIVALENT` or `ATTACK`."""
    turns: tuple[Reply, ...]
    """The replies, one per turn; an episode still going when they run out is judged on what
    it earned so far (a policy that never finishes gains nothing more). A reply may be a
    function of the observations so far (the prompt, then each turn's feedback): an adaptive
    policy, which answers with what the feedback showed it."""
    why: str
    """One line: what the reply is, so a finding reads without the generator's code."""
    answer_type: str = ""
    """The gold's answer type (`rlenvs.rewards.math.answer_types`), "" where there is none."""

    def __post_init__(self) -> None:
        if self.expect not in (EQUIVALENT, ATTACK):
            raise ValueError(f"a probe expects {EQUIVALENT!r} or {ATTACK!r}, got {self.expect!r} ({self.why})")
        if not self.turns:
            raise ValueError(f"a probe needs at least one reply ({self.why})")


Generator = Callable[[Subject], Iterable[Probe]]
"""Writes probes from a subject. A generator that does not apply to a subject yields none."""


def equivalent(kind: str, reply: str, why: str, answer_type: str = "") -> Probe:
    return Probe(kind, EQUIVALENT, (reply,), why, answer_type)


def attack(kind: str, reply: str | tuple[str, ...], why: str, answer_type: str = "") -> Probe:
    return Probe(kind, ATTACK, (reply,) if isinstance(reply, str) else reply, why, answer_type)
