"""A task's starting files: names drawn different from each other (two files must never share
a path, and a name drawn twice would silently shrink a count), and files as workspace
entries in path order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from rlenvs.envs.terminal.tasks import Entry


def distinct(
    rng: np.random.Generator, k: int, make: Callable[[np.random.Generator], str], taken: Iterable[str] = ()
) -> list[str]:
    """`k` different values of `make(rng)`, none already in `taken`: two files must never
    share a path, and a name drawn twice would silently shrink a count."""
    seen = set(taken)
    out: list[str] = []
    for _ in range(100 * k + 100):
        if len(out) == k:
            return out
        value = make(rng)
        if value not in seen:
            seen.add(value)
            out.append(value)
    if len(out) == k:
        return out
    raise RuntimeError(f"could not draw {k} different names")  # a pool too small for the level: a bug here


def entries(files: Mapping[str, str | bytes]) -> tuple[Entry, ...]:
    """The files as workspace entries, in path order."""
    return tuple(Entry(path, content) for path, content in sorted(files.items()))
