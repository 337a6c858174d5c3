"""Registering rlenvs' ids with gymnasium, lazily and idempotently.

Entry points are strings, so `import rlenvs` imports no env module: an env's code (and its
dependencies) load on the first `gym.make` of its id. gymnasium 1.x has no plugin entry
points, so `gym.make("rlenvs:rlenvs/GSM8K-v0")` (module prefix) is how to make an id
without importing rlenvs first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

NAMESPACE = "rlenvs"


@dataclass(frozen=True)
class EnvEntry:
    """One registered id and what `rlenvs list`, `rlenvs info` and the README say about it."""

    id: str
    entry_point: str
    family: str
    summary: str
    """One line: what the task is."""
    observes: str
    """What the agent sees."""
    acts: str
    """What the agent does."""
    reward: str
    turns: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    nondeterministic: bool = False
    """True where the reward is not a pure function of the actions (a judge, wall-clock)."""


def register(entries: Iterable[EnvEntry]) -> None:
    """Register every entry with gymnasium; calling it again is a no-op.

    No `max_episode_steps`: gymnasium's TimeLimit would report `terminated` and `truncated`
    together on a single-turn env, so each env enforces its own `max_turns`.
    """
    for entry in entries:
        if not entry.id.startswith(NAMESPACE + "/"):
            raise ValueError(f"env id {entry.id!r} must be in the {NAMESPACE!r} namespace")
        existing = gym.registry.get(entry.id)
        if existing is not None:
            if existing.entry_point != entry.entry_point:
                raise RuntimeError(
                    f"{entry.id} is already registered with entry point {existing.entry_point!r}, "
                    f"not {entry.entry_point!r}: remove the other registration"
                )
            continue
        gym.register(
            id=entry.id,
            entry_point=entry.entry_point,
            kwargs=dict(entry.kwargs),
            nondeterministic=entry.nondeterministic,
        )
