"""Tasks and where they come from, with the one selection rule every env uses.

A task is an immutable record (a frozen dataclass): envs, vector workers and the data cache
share task objects freely, and GRPO groups rely on "same seed, same task" which only holds
if nobody can edit a task after it was drawn.

A task source is either a dataset (a fixed, indexable list of tasks) or a procedural
generator (task `i` is a pure function of `i`, optionally with a size). Both answer
`len`, `get(index)` and `find(task_id)`; `select_task` turns reset's `options` and the
env's `np_random` into one task, the same way for every env.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from rlenvs.core.checks import is_int


@dataclass(frozen=True)
class Task:
    """Fields every task has. Env families subclass it with their own ground truth."""

    task_id: str
    """Stable name of the task: the same task gets the same id in every process and run."""
    prompt: str
    """The user message that poses the task."""


TaskT = TypeVar("TaskT", bound=Task)


def content_task_id(prefix: str, row: Mapping[str, Any]) -> str:
    """An id for a task posed by the user (`options["task"]`): the row's own `id` if it has
    one, else a hash of its content, so the same problem gets the same id in every run."""
    if isinstance(row.get("id"), (str, int)):
        return str(row["id"])
    digest = hashlib.sha1(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()
    return f"{prefix}/custom-{digest[:12]}"


TASK_OPTIONS = ("task", "task_index", "task_id")
"""The keys of reset's `options` that choose a task; at most one may be given."""

INFINITE_DRAW_RANGE = 1 << 62
"""Indices drawn from an unsized generator lie in [0, this)."""


class DatasetSource(Generic[TaskT]):
    """A fixed list of tasks, e.g. the rows of a JSONL or Parquet file."""

    def __init__(self, tasks: Sequence[TaskT], name: str) -> None:
        if not tasks:
            raise ValueError(f"task source {name!r} is empty: check the data file it was read from")
        self.tasks = tuple(tasks)
        self.name = name
        self._by_id: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.tasks)

    @property
    def sized(self) -> bool:
        return True

    def get(self, index: int) -> TaskT:
        _check_index(index, len(self.tasks), self.name)
        return self.tasks[index]

    def find(self, task_id: str) -> TaskT:
        if self._by_id is None:  # built on first use: most runs never look tasks up by id
            self._by_id = {task.task_id: i for i, task in enumerate(self.tasks)}
        try:
            return self.tasks[self._by_id[task_id]]
        except KeyError:
            example = self.tasks[0].task_id
            raise KeyError(
                f"no task with task_id={task_id!r} in {self.name} ({len(self.tasks)} tasks, ids look like {example!r})"
            ) from None


class GeneratorSource(Generic[TaskT]):
    """Procedural tasks: `generate(index)` builds task `index` deterministically.

    `generate` must derive all its randomness from the index (for example
    `np.random.default_rng(index)`), so a task can be rebuilt anywhere from its id alone.
    Task ids are `"{name}/{index}"`.
    """

    def __init__(self, generate: Callable[[int], TaskT], name: str, size: int | None = None) -> None:
        if size is not None and size <= 0:
            raise ValueError(f"size of generator {name!r} must be positive or None, got {size}")
        self.generate = generate
        self.name = name
        self.size = size

    @property
    def sized(self) -> bool:
        return self.size is not None

    def __len__(self) -> int:
        if self.size is None:
            raise TypeError(f"generator {self.name!r} is infinite and has no length")
        return self.size

    def task_id(self, index: int) -> str:
        return f"{self.name}/{index}"

    def get(self, index: int) -> TaskT:
        _check_index(index, INFINITE_DRAW_RANGE if self.size is None else self.size, self.name)
        return self.generate(index)

    def find(self, task_id: str) -> TaskT:
        match = re.fullmatch(re.escape(self.name) + r"/(\d+)", task_id)
        if match is None:
            raise KeyError(f"task_id {task_id!r} is not from {self.name}: ids look like {self.name}/17")
        return self.get(int(match.group(1)))


class FamilyMixSource(Generic[TaskT]):
    """Procedural tasks of several families at one level, interleaved: index i is task
    i // n of family i % n, so any run of indices mixes the families evenly. Task ids are
    `{prefix}/{family}/L{level}/{index}`; `task_at(family, level, index)` builds one."""

    def __init__(
        self, prefix: str, families: Sequence[str], level: int, task_at: Callable[[str, int, int], TaskT]
    ) -> None:
        if not families:
            raise ValueError(f"{prefix} needs at least one task family")
        self.prefix, self.families, self.level, self.task_at = prefix, tuple(families), level, task_at
        self.name = f"{prefix}/L{level}"

    @property
    def sized(self) -> bool:
        return False

    def __len__(self) -> int:
        raise TypeError(f"{self.name} is procedural and has no length")

    def get(self, index: int) -> TaskT:
        _check_index(index, INFINITE_DRAW_RANGE, self.name)
        return self.task_at(self.families[index % len(self.families)], self.level, index // len(self.families))

    def find(self, task_id: str) -> TaskT:
        match = re.fullmatch(re.escape(self.prefix) + r"/([a-z0-9-]+)/L(\d+)/(\d+)", task_id)
        if match is None or match.group(1) not in self.families or int(match.group(2)) != self.level:
            raise KeyError(
                f"task_id {task_id!r} is not from these tasks: ids look like "
                f"{self.prefix}/{self.families[0]}/L{self.level}/17 (families {list(self.families)}, level {self.level})"
            )
        return self.task_at(match.group(1), self.level, int(match.group(3)))


TaskSource = DatasetSource[TaskT] | GeneratorSource[TaskT] | FamilyMixSource[TaskT]


def _check_index(index: Any, size: int, name: str) -> None:
    if not is_int(index):
        raise TypeError(f"task_index must be an int, got {type(index).__name__} ({index!r})")
    if not 0 <= index < size:
        raise IndexError(f"task_index {index} is out of range for {name}: valid is 0..{size - 1}")


def task_source(env: Any, env_id: str, needed_by: str) -> Any:
    """The task source of an rlenvs env (`env.unwrapped.tasks`), for tools that pick tasks
    by index (`needed_by` names the tool in the error): anything else cannot be reset on a
    chosen task with `options={"task_index": i}`."""
    source = getattr(getattr(env, "unwrapped", env), "tasks", None)
    if source is None or not hasattr(source, "sized"):
        raise TypeError(
            f"{env_id} is not an rlenvs TextEnv with a task source (env.unwrapped.tasks): {needed_by} needs an env "
            "whose reset takes options={'task_index': i}; see rlenvs.core.env.TextEnv"
        )
    return source


def select_task(
    source: TaskSource[TaskT],
    options: Mapping[str, Any] | None,
    np_random: np.random.Generator,
    task_from_row: Callable[[Mapping[str, Any]], TaskT],
) -> TaskT:
    """Choose the episode's task from reset's `options`, else draw one with `np_random`.

    `options["task"]` is a row in the env's own dataset format (a user's own problem),
    `options["task_index"]` an index into the source, `options["task_id"]` a task id.
    Unknown keys and more than one of these are errors rather than silently ignored, since
    either usually means the caller expected a different task than the one they would get.
    """
    options = options or {}
    unknown = sorted(set(options) - set(TASK_OPTIONS))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}: valid options are {list(TASK_OPTIONS)}")
    given = [key for key in TASK_OPTIONS if key in options]
    if len(given) > 1:
        raise ValueError(f"reset options {given} each choose a task: pass only one of them")
    if "task" in options:
        row = options["task"]
        if not isinstance(row, Mapping):
            raise TypeError(f"options['task'] must be a dict in the env's row format, got {type(row).__name__}")
        return task_from_row(row)
    if "task_index" in options:
        return source.get(options["task_index"])
    if "task_id" in options:
        return source.find(options["task_id"])
    upper = len(source) if source.sized else INFINITE_DRAW_RANGE
    return source.get(int(np_random.integers(upper)))
