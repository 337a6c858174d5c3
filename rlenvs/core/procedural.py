"""Procedural task families: what every generated env (math, terminal, spreadsheet) shares.

A family is a named generator of tasks at a few difficulty levels. Task `index` of a family
at `level` is a pure function of (family, level, index): all its randomness comes from
`task_rng`, so an id such as `terminal/csv-column/L2/17` rebuilds the same task in any
process (vector workers, a later eval run, someone reading a paper's appendix). What a
generator returns (a `Scenario` of the env's own shape: files and expectations, sheets and
target cells, a problem and its answer) is the env's business; turning it into a task with
an id is one small function in the env's tasks module.

The env side is `ProceduralEnv`: the check of `families=` and `level=` every procedural env
needs, with errors that list what is valid, and the source that interleaves families.

Why one module: the families, their levels, their seeding and their checks used to be
written once per env, each slightly differently, so a new procedural env began by copying
the least fitting one. The pinned hashes of tests/project/test_task_hashes.py hold every generated
task byte for byte across this sharing.
"""

from __future__ import annotations

import abc
import functools
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from rlenvs.core.checks import is_int
from rlenvs.core.task import FamilyMixSource, GeneratorSource, Task

ScenarioT = TypeVar("ScenarioT")
TaskT = TypeVar("TaskT", bound=Task)

FAMILY_NAME = re.compile(r"[a-z0-9-]+")
"""What a family name may hold: it is a part of task ids (`FamilyMixSource.find` reads it)."""


def task_rng(family: str | int, level: int, index: int) -> np.random.Generator:
    """The only source of randomness of task `index` at `level` of `family`.

    `family` is the family's name, seeded through its CRC-32 (stable across processes and
    Python versions, unlike `hash`), or an int seed of its own (the math families, whose
    streams began that way and stay so). Either keeps two families' task 0 apart.
    """
    key = zlib.crc32(family.encode()) if isinstance(family, str) else int(family)
    return np.random.default_rng([key, level, index])


@dataclass(frozen=True)
class Level(Generic[ScenarioT]):
    """One level of a family whose levels each have a generator of their own."""

    summary: str
    """What the level asks, in words (shown by `rlenvs info` and in level errors)."""
    generate: Callable[[np.random.Generator], ScenarioT]
    """rng -> scenario; all randomness from `rng`."""


@dataclass(frozen=True)
class Family(Generic[ScenarioT]):
    """A procedural task family: its name, its levels and its generator."""

    name: str
    """Used in task ids, e.g. terminal/{name}/L{level}/{index}."""
    summary: str
    levels: Mapping[int, str]
    """Level number -> what that level asks, in words."""
    generate: Callable[[np.random.Generator, int], ScenarioT]
    """(rng, level) -> scenario. All randomness from `rng`; only levels in `levels` are asked."""
    tags: tuple[str, ...] = field(default=())
    seed: int | None = None
    """The int that seeds the family's tasks (`task_rng`); None: its name does."""

    def __post_init__(self) -> None:
        if not FAMILY_NAME.fullmatch(self.name):
            raise ValueError(
                f"family name {self.name!r} must be lower-case letters, digits and '-': it is part of task ids"
            )
        if not self.levels or not all(type(level) is int for level in self.levels):
            raise ValueError(f"family {self.name}: levels must map int level numbers to summaries, got {self.levels!r}")
        if not callable(self.generate):
            raise TypeError(f"family {self.name}: generate must be a function (rng, level) -> scenario")

    @classmethod
    def of_levels(
        cls,
        name: str,
        summary: str,
        levels: Mapping[int, Level[ScenarioT]],
        *,
        tags: tuple[str, ...] = (),
        seed: int | None = None,
    ) -> Family[ScenarioT]:
        """A family whose every level has its own generator: the common case, written as a
        table of `Level`s instead of a function that branches on the level."""
        generators = {number: level.generate for number, level in levels.items()}
        return cls(
            name=name,
            summary=summary,
            levels={number: level.summary for number, level in levels.items()},
            generate=functools.partial(_generate_at_level, generators),
            tags=tags,
            seed=seed,
        )

    def check_level(self, level: Any) -> int:
        """`level` if the family has it, else a ValueError that lists the levels it has."""
        if not is_int(level) or int(level) not in self.levels:
            raise ValueError(f"family {self.name} has no level {level!r}: levels are {sorted(self.levels)}")
        return int(level)

    def rng(self, level: int, index: int) -> np.random.Generator:
        return task_rng(self.name if self.seed is None else self.seed, level, index)

    def scenario(self, level: int, index: int) -> ScenarioT:
        """What the generator makes of task `index` at `level`, from that task's own stream."""
        level = self.check_level(level)
        return self.generate(self.rng(level, index), level)

    def task_id(self, level: int, index: int, prefix: str | None = None) -> str:
        """`{prefix}/{name}/L{level}/{index}`, or without the prefix where the family is
        the env's only one (arithmetic/L2/17)."""
        head = self.name if prefix is None else f"{prefix}/{self.name}"
        return f"{head}/L{level}/{index}"


def _generate_at_level(
    generators: Mapping[int, Callable[[np.random.Generator], ScenarioT]], rng: np.random.Generator, level: int
) -> ScenarioT:
    """`Family.of_levels`' generator: module level (a partial of it pickles, a closure does not)."""
    return generators[level](rng)


class ProceduralEnv(abc.ABC):
    """Mixin of an env whose tasks come from procedural families: one check of `families=`
    and `level=`, with errors that name what is valid, and the source that mixes families.

    The env sets `env_name` (its id without the namespace, for messages) and
    `task_families` (name -> Family), and says how it builds a task (`task_of`).
    """

    env_name: ClassVar[str]
    task_families: ClassVar[Mapping[str, Family[Any]]]

    @classmethod
    @abc.abstractmethod
    def task_of(cls, family: str, level: int, index: int) -> Task:
        """Task `index` at `level` of `family`, exactly as the env poses it: what tools that
        walk every procedural env use (tests/project/test_task_hashes.py pins them all through it)."""

    @classmethod
    def choose_families(cls, families: str | Sequence[str] | None) -> tuple[str, ...]:
        """`families=` (a name, a list of names, or None for all) as a tuple of names."""
        registry = cls.task_families
        names = tuple(registry) if families is None else (families,) if isinstance(families, str) else tuple(families)
        unknown = [name for name in names if name not in registry]
        if not names or unknown:
            raise ValueError(
                f"unknown {cls.env_name} task families {unknown or names!r}: choose from {sorted(registry)}"
            )
        return names

    @classmethod
    def check_level(cls, level: Any, names: Sequence[str] | None = None) -> int:
        """`level=` as an int that every chosen family (all where `names` is None) has."""
        chosen = [cls.task_families[name] for name in (names or cls.task_families)]
        valid = sorted({number for family in chosen for number in family.levels})
        described = f" ({'; '.join(f'{n} = {s}' for n, s in chosen[0].levels.items())})" if len(chosen) == 1 else ""
        if not is_int(level):
            raise TypeError(
                f"{cls.env_name} level must be an int, got {type(level).__name__} {level!r}: levels are {valid}{described}"
            )
        missing = [family.name for family in chosen if int(level) not in family.levels]
        if missing:
            which = f" for families {missing}" if len(chosen) > 1 else ""
            raise ValueError(f"{cls.env_name} has no level {level!r}{which}: pass level= one of {valid}{described}")
        return int(level)

    @classmethod
    def family_mix(
        cls,
        prefix: str,
        families: str | Sequence[str] | None,
        level: Any,
        task_at: Callable[[str, int, int], TaskT],
    ) -> FamilyMixSource[TaskT]:
        """The chosen families' tasks at `level`, interleaved (`FamilyMixSource`).
        `task_at(name, level, index)` must be a module-level function, so the env pickles."""
        names = cls.choose_families(families)
        return FamilyMixSource(prefix, names, cls.check_level(level, names), task_at)

    @classmethod
    def level_source(cls, level: Any, task_at: Callable[[int, int], TaskT]) -> GeneratorSource[TaskT]:
        """The tasks at `level` of an env with one family (ids `{family}/L{level}/{index}`,
        as `Family.task_id` without a prefix writes them). `task_at(level, index)` must be a
        module-level function, so the env pickles."""
        if len(cls.task_families) != 1:
            raise TypeError(f"{cls.env_name} has {len(cls.task_families)} families: use family_mix, not level_source")
        (family,) = cls.task_families.values()
        level = cls.check_level(level)
        return GeneratorSource(functools.partial(task_at, level), name=f"{family.name}/L{level}")
