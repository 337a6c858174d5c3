"""Drawing from a task's random stream: the few draws every procedural family makes.

Procedural tasks are pure functions of their id, drawn from one `numpy.random.Generator`
(see the families' `task_rng`). These draws use only `Generator.integers` and
`Generator.permutation`, the simplest calls and the least likely to change between numpy
releases: pin numpy to pin the tasks exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def draw_int(rng: np.random.Generator, low: int, high: int) -> int:
    """A uniform int in [low, high], both ends included."""
    return int(rng.integers(low, high + 1))


def draw_from(rng: np.random.Generator, choices: Sequence[T]) -> T:
    """One of `choices`, uniformly."""
    return choices[int(rng.integers(len(choices)))]


def draw_sample(rng: np.random.Generator, choices: Sequence[T], k: int) -> list[T]:
    """`k` different items of `choices`, in random order."""
    return [choices[int(i)] for i in rng.permutation(len(choices))[:k]]


def shuffled(rng: np.random.Generator, items: Sequence[T]) -> list[T]:
    """All of `items`, in random order."""
    return [items[int(i)] for i in rng.permutation(len(items))]


def draw_chance(rng: np.random.Generator, percent: int) -> bool:
    """True with probability percent / 100."""
    return int(rng.integers(100)) < percent


def coin(rng: np.random.Generator) -> bool:
    """True or False, evenly."""
    return bool(rng.integers(2))


def draw_distinct(draw: Callable[[], T], count: int) -> list[T]:
    """`count` different values of `draw()`, in the order drawn (redrawing repeats)."""
    values: list[T] = []
    while len(values) < count:
        value = draw()
        if value not in values:
            values.append(value)
    return values
