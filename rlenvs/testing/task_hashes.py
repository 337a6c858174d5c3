"""Task hashes: the `-vN` rule of docs/versioning.md made checkable, for rlenvs and for a user's package.

A task id such as `dates/shift/L2/17` names one task for good: GRPO groups, evaluation runs and
exported data sets rely on it. So the first `TASKS_PER_LEVEL` tasks of every family and level of
a procedural env (`rlenvs.core.procedural.ProceduralEnv`) are hashed byte for byte, the hashes
are pinned, and a generator change that moves them fails until the env's id is bumped and the
new id pinned. rlenvs pins its own envs in tests/project/test_task_hashes.py; a user's package
pins its envs in a JSON file beside its tests, checked by the `task_hashes` pytest fixture:

    def test_tasks_are_pinned(task_hashes):
        task_hashes.check("dates/DateShift-v0", "task_hashes.json")

`pytest --rlenvs-pin-hashes` writes what is not pinned yet (a new file, a new id, a new family
or level) and never overwrites a pinned hash: tasks that moved under a pinned id are a new env,
so the id's `-vN` goes up first. The functions here are plain (no pytest): `task_hashes(env)`
computes an env's table, `check_pinned(env, path)` compares it with a pinned file.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import hashlib
import json
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym

from rlenvs.core.procedural import ProceduralEnv
from rlenvs.core.registration import check_env_id
from rlenvs.core.task import Task

TASKS_PER_LEVEL = 8
"""Tasks hashed per family and level: enough that a change of any draw shows."""
FILE_FORMAT = "rlenvs-task-hashes/1"
"""The `format` of a pinned file, so a later layout can tell an old file from a broken one."""
PIN_OPTION = "--rlenvs-pin-hashes"
"""The pytest option that writes what is not pinned yet (rlenvs/testing/pytest_plugin.py)."""
_VERSION = re.compile(r"-v(\d+)$")


class TaskHashesError(AssertionError):
    """The env's tasks are not what its pinned file says, or are not pinned at all. An
    AssertionError, so that any test runner reports it as a failed check."""


# --- what a task's hash covers -------------------------------------------------------------------


def canonical(value: Any) -> Any:
    """`value` as plain JSON data that says exactly what it is: types are named (so 1, 1.0,
    True and "1" differ), floats by `repr` (every bit), bytes in hex, mappings in their own
    order (a workbook's sheet order is content). Callables are named by qualified name, not
    module, so that moving a family's module is not a change of its tasks."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return {"enum": f"{type(value).__name__}.{value.name}"}
    if isinstance(value, int):
        return {"int": str(value)} if type(value) is not int else value
    if isinstance(value, float):
        return {"float" if type(value) is float else type(value).__name__: repr(float(value))}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, (dt.datetime, dt.date, dt.time, dt.timedelta)):
        return {type(value).__name__: str(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return {"set": sorted(json.dumps(canonical(item), sort_keys=True) for item in value)}
    if isinstance(value, Mapping):
        return {"map": [[canonical(key), canonical(item)] for key, item in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: canonical(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"type": type(value).__name__, "fields": fields}
    if isinstance(value, functools.partial):
        keywords = {key: canonical(item) for key, item in sorted(value.keywords.items())}
        return {"partial": canonical(value.func), "args": canonical(value.args), "keywords": keywords}
    if callable(value) and hasattr(value, "__qualname__"):
        return {"function": value.__qualname__}
    if type(value).__module__ == "numpy":
        return canonical(value.item())
    raise TypeError(f"no canonical form for {type(value).__name__} {value!r}: teach `canonical` its content")


def task_record(task: Task) -> Any:
    """Everything that defines `task`. A spreadsheet task that recomputes its targets also
    records what its `truth` says on the verdict's first changed copy of the data: `truth` is
    code, and its spelling alone would not show an edit of the function it names. (Looked up
    in `sys.modules`: where the spreadsheet tasks module is not loaded, no task is one of them,
    and a user's task with a field of that name is hashed as it is.)"""
    record = canonical(task)
    spreadsheet = sys.modules.get("rlenvs.envs.spreadsheet.tasks")
    if spreadsheet is not None and isinstance(task, spreadsheet.SpreadsheetTask) and task.truth is not None:
        from rlenvs.envs.spreadsheet.verdict import changed_data

        changed, rand_seed = changed_data(task, seed=0, round_=0)
        record = {
            "task": record,
            "changed": canonical(changed),
            "rand_seed": rand_seed,
            "truth": canonical(task.truth(changed)),
        }
    return record


def level_digest(task_at: Callable[[int], Task], tasks: int = TASKS_PER_LEVEL) -> str:
    """The sha256 of tasks 0..tasks-1 of one family at one level (`task_at(index)`)."""
    digest = hashlib.sha256()
    for index in range(tasks):
        digest.update(json.dumps(task_record(task_at(index)), sort_keys=True, ensure_ascii=True).encode())
        digest.update(b"\n")
    return digest.hexdigest()


# --- an env's table ------------------------------------------------------------------------------


def procedural_class(env: str | type) -> type[ProceduralEnv]:
    """The `ProceduralEnv` class behind `env`: the class itself, or the class a registered id
    (`ns/Name-v0`, or `module:ns/Name-v0`, which imports the module first) makes."""
    loaded: Any = env
    if isinstance(env, str):
        entry = gym.spec(check_env_id(env).rpartition(":")[2]).entry_point
        loaded = entry if callable(entry) else gym.envs.registration.load_env_creator(str(entry))
    if not (isinstance(loaded, type) and issubclass(loaded, ProceduralEnv)):
        raise TypeError(
            f"{env!r} makes {loaded!r}, which is not a rlenvs.core.procedural.ProceduralEnv: task hashes pin "
            "generated tasks (family, level, index); an env over a data set pins its data file instead"
        )
    return loaded


def task_hashes(env: str | type, tasks: int = TASKS_PER_LEVEL) -> dict[str, str]:
    """{"family/L<level>": sha256 of its first `tasks` tasks} for every family and level of a
    procedural env (a class or a registered id), each task built as the env builds it (`task_of`)."""
    if type(tasks) is not int or tasks < 1:
        raise ValueError(f"tasks must be a whole number of tasks per level, at least 1, got {tasks!r}")
    cls = procedural_class(env)
    return {
        f"{name}/L{level}": level_digest(functools.partial(cls.task_of, name, level), tasks)
        for name, family in cls.task_families.items()
        for level in family.levels
    }


def registered_id(cls: type) -> str:
    """The one id gymnasium's registry makes `cls` under (by class or by its "module:Class")."""
    spelled = f"{cls.__module__}:{cls.__qualname__}"
    ids = [spec.id for spec in gym.registry.values() if spec.entry_point in (cls, spelled)]
    if len(ids) != 1:
        found = f"it is registered as {sorted(ids)}" if ids else "no registered id makes it"
        raise ValueError(f"cannot tell which id to pin {spelled} under ({found}): pass env_id='namespace/Name-vN'")
    return ids[0]


def bumped(env_id: str) -> str:
    """`env_id` with its version one up (`dates/DateShift-v0` -> `dates/DateShift-v1`)."""
    match = _VERSION.search(env_id)
    return f"{env_id}-v1" if match is None else f"{env_id[: match.start()]}-v{int(match.group(1)) + 1}"


# --- the pinned file -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PinnedFile:
    """A pinned file's content: env id -> {"family/L<level>": sha256}."""

    envs: Mapping[str, Mapping[str, str]]
    tasks_per_level: int = TASKS_PER_LEVEL


def read_pinned(path: Path) -> PinnedFile:
    """The pinned file at `path`; a ValueError that names the path and the fix if it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path} is not JSON ({error}): restore it from version control, or delete it and re-pin"
        ) from None
    tasks = data.get("tasks_per_level") if isinstance(data, dict) else None
    envs = data.get("envs") if isinstance(data, dict) else None
    valid_envs = isinstance(envs, dict) and all(
        isinstance(table, dict) and all(isinstance(v, str) for v in table.values()) for table in envs.values()
    )
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT or type(tasks) is not int or not valid_envs:
        raise ValueError(
            f"{path} is not a pinned task-hash file (a JSON object with format {FILE_FORMAT!r}, tasks_per_level and "
            f"envs: id -> {{'family/L1': sha256}}): restore it from version control, or delete it and re-pin ({PIN_OPTION})"
        )
    return PinnedFile(envs, tasks)  # type: ignore[arg-type]  # envs was checked to be a dict of dicts of str above


def write_pinned(path: Path, pinned: PinnedFile) -> None:
    """Write `pinned` to `path` as the JSON `read_pinned` reads, ids sorted, one hash a line."""
    data = {
        "format": FILE_FORMAT,
        "about": (
            f"sha256 of the first tasks_per_level tasks of each family and level (rlenvs.testing.task_hashes). "
            f"A change to what a generator outputs bumps the env id's -vN; then pytest {PIN_OPTION} pins the new id."
        ),
        "tasks_per_level": pinned.tasks_per_level,
        "envs": {env_id: dict(pinned.envs[env_id]) for env_id in sorted(pinned.envs)},
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


@dataclasses.dataclass(frozen=True)
class HashChanges:
    """How an env's table differs from its pinned one, by "family/L<level>"."""

    moved: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()

    @classmethod
    def between(cls, pinned: Mapping[str, str], now: Mapping[str, str]) -> HashChanges:
        return cls(
            moved=tuple(key for key in pinned if key in now and now[key] != pinned[key]),
            removed=tuple(key for key in pinned if key not in now),
            added=tuple(key for key in now if key not in pinned),
        )


def check_pinned(
    env: str | type,
    path: str | Path,
    *,
    env_id: str | None = None,
    pin: bool = False,
    pin_command: str = f"pytest {PIN_OPTION}",
) -> str:
    """Compare the tasks of `env` (a registered id, or a `ProceduralEnv` class) with the hashes
    `path` pins for its id (`env_id`, by default the id given or the one the class is
    registered under). Returns what was checked or pinned; raises `TaskHashesError` naming
    the families and levels that moved and the rule.

    `pin=True` (what `--rlenvs-pin-hashes` passes) writes what is not pinned yet: the file, the
    id, a family or level added. It never overwrites a pinned hash nor drops one: tasks that
    moved under a pinned id make a new env, whose id is bumped first.
    """
    path = Path(path)
    key = env_id or (env.rpartition(":")[2] if isinstance(env, str) else registered_id(env))
    pinned = read_pinned(path) if path.exists() else None
    tasks = pinned.tasks_per_level if pinned is not None else TASKS_PER_LEVEL
    now = task_hashes(env, tasks)
    before = pinned.envs.get(key) if pinned is not None else None
    if before is None:
        if not pin:
            where = f"{path} does not exist" if pinned is None else f"{path} pins no tasks for {key}"
            raise TaskHashesError(
                f"{where}: pin {key}'s tasks with `{pin_command}`, then commit {path.name} (a new -vN is a "
                "new entry; keep the old ones, they record what the old ids mean)"
            )
        envs = {**(pinned.envs if pinned is not None else {}), key: now}
        write_pinned(path, PinnedFile(envs, tasks))
        return f"pinned {key}: {len(now)} family levels in {path}"
    assert pinned is not None  # `before` came from it
    changes = HashChanges.between(before, now)
    if changes.moved or changes.removed:
        changed = ", ".join(
            [*(f"{level} moved" for level in changes.moved), *(f"{level} is gone" for level in changes.removed)]
        )
        raise TaskHashesError(
            f"{key}: the first {tasks} tasks of each family/level are not what {path} pins ({changed}). A change to "
            f"what a generator outputs makes a new env (docs/versioning.md): bump the id's -vN ({bumped(key)}), then "
            f"re-pin with `{pin_command}`. If the change was not meant, undo it: a refactor must leave every task as it was."
        )
    if changes.added:
        if not pin:
            raise TaskHashesError(
                f"{key}: {', '.join(changes.added)} not pinned in {path}: pin with `{pin_command}` (adds them; "
                "the pinned ones stay)"
            )
        envs = {**pinned.envs, key: {**before, **{level: now[level] for level in changes.added}}}
        write_pinned(path, PinnedFile(envs, tasks))
        return f"pinned {key}: added {', '.join(changes.added)} in {path}"
    return f"{key}: {len(now)} family levels as pinned in {path}"
