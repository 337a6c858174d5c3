"""Export an env's tasks to Parquet for other RL trainers, and read such files back.

`rlenvs export ENV_ID --output-dir DIR` writes `DIR/train.parquet` and
`DIR/validation.parquet`, one row per task, in the layout SkyRL's and verl's data loaders
read, so a run in either trainer can pose the same problems this package's envs pose:

- `data_source` (str): the env id, which verl uses to pick a reward function;
- `prompt` (list of {"role", "content"}): the chat the env sends after
  `reset(options={"task_index": i})` (its `info["messages"]`: system prompt and problem);
- `env_class` (str): the env id again, under SkyRL's name for it;
- `reward_spec` ({"method": "rule", "ground_truth": str}): SkyRL's field for the answer;
- `reward_model` ({"style": "rule", "ground_truth": str}): the same answer under verl's
  name, which its default reward loop reads (`row["reward_model"]["ground_truth"]`);
- `extra_info` (struct): `task_index`, `task_id`, `split` ("train"/"validation"),
  `env_id`, `env_kwargs` (the `gym.make` keyword arguments, as JSON) and `rlenvs_version`.

`extra_info` is what makes a row a task again: `read_exported` turns rows into
`ExportedTask`s, and `rebuild_check` makes each env with the row's kwargs, resets it on the
row's `task_index` and confirms the same task (id and prompt) comes back. A data file that
changed since the export (a new GSM8K release, another system prompt) then fails loudly
instead of training on prompts whose rewards belong to other tasks.

The ground truth is what the task's own `ground_truth()` returns where it has one (terminal
tasks: the whole task as a JSON row, workspace and expectations included), else the task's
`answer` (math envs: the gold final answer, e.g. "72"); a task without one but with a `solution` (code envs: the reference code in a ```python
block; their real check is the sandboxed tests) exports that; a task with neither exports
"". The env itself, not this text, stays the reward: `rlenvs` envs re-judge replies.

Writes are atomic: both files are written to temporary files in DIR and moved into place
only when both are complete, so an interrupted export never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import rlenvs
from rlenvs.core.checks import check_int, is_int
from rlenvs.core.registration import check_env_id, make_parameters
from rlenvs.core.task import INFINITE_DRAW_RANGE, task_source
from rlenvs.files import atomic_path

__all__ = [
    "EXPORT_SCHEMA",
    "ExportedTask",
    "export_env",
    "make_env",
    "read_exported",
    "rebuild_check",
]

TRAIN, VALIDATION = "train", "validation"
FILE_NAMES = {TRAIN: "train.parquet", VALIDATION: "validation.parquet"}

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
_EXTRA_INFO = pa.struct(
    [
        ("task_index", pa.int64()),
        ("task_id", pa.string()),
        ("split", pa.string()),
        ("env_id", pa.string()),
        ("env_kwargs", pa.string()),
        ("rlenvs_version", pa.string()),
    ]
)
EXPORT_SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", pa.list_(_MESSAGE)),
        ("env_class", pa.string()),
        ("reward_spec", pa.struct([("method", pa.string()), ("ground_truth", pa.string())])),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("extra_info", _EXTRA_INFO),
    ]
)
"""Fixed, not inferred: a zero-row validation file must have the same types as a full one,
and SkyRL/verl read nested structs by field name."""

READ_COLUMNS = ("prompt", "extra_info")
"""What `read_exported` needs of a file; the rest is for the other trainers."""
EXTRA_INFO_FIELDS = tuple(_EXTRA_INFO.names)
WRITE_HINT = "export the file with `rlenvs export ENV_ID --output-dir DIR` (or rlenvs.integrations.parquet.export_env)"


@dataclass(frozen=True)
class ExportedTask:
    """One exported row, as much of it as it takes to pose the task again."""

    env_id: str
    env_kwargs: dict[str, Any]
    task_index: int
    task_id: str
    prompt: list[dict[str, str]]
    split: str


# --- making envs ------------------------------------------------------------------------------


def make_env(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> gym.Env:
    """`gym.make(env_id, **env_kwargs)`, with an unknown id reported as a ValueError that says
    where ids come from (gymnasium raises its own error types, which read like crashes)."""
    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"env_id must be an env id such as 'rlenvs/GSM8K-v1', got {env_id!r}")
    _check_registered(env_id)
    return gym.make(env_id, **dict(env_kwargs or {}))


def _check_registered(env_id: str) -> None:
    check_env_id(env_id)  # the wording every command uses, with the close ids


# --- export -----------------------------------------------------------------------------------


def export_env(
    env_id: str,
    output_dir: str | os.PathLike[str],
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    train_split: str | None = None,
    val_split: str | None = None,
    num_train: int | None = None,
    num_val: int | None = None,
    seed: int | None = None,
) -> dict[str, Path]:
    """Write `output_dir/train.parquet` and `output_dir/validation.parquet`; returns their
    paths by split ("train", "validation"). Both files are always written; the validation
    file may have no rows.

    `env_kwargs` go to `gym.make` for both files. `train_split` / `val_split` set the `split`
    kwarg of a data-backed env (GSM8K: "train", "test"); without `val_split`, validation
    tasks come from the train tasks' source, disjoint from the train tasks.

    `num_train`: None takes every task of a data-backed split (less the validation tasks
    drawn from it); a procedural env, which never runs out of tasks, needs a number. `num_val`: None takes every task of a `val_split` that
    differs from the train one, else 0 (the train source's tasks are the train set's).
    `seed`: None takes tasks 0..N-1 in order (validation from a shared source: the N tasks
    after the train ones); an int draws distinct tasks with `numpy.random.default_rng(seed)`.
    The train draw is the same as `rlenvs_train.grpo.env_dataset`'s for the same seed, so an
    export and an in-process data set agree, and does not depend on `num_val`."""
    output_dir = Path(output_dir)
    if output_dir.exists() and not output_dir.is_dir():
        raise ValueError(f"--output-dir {str(output_dir)!r} is a file, not a folder: pass a folder to write into")
    env_kwargs = dict(env_kwargs or {})
    _check_json(env_kwargs)
    check_int("num_train", num_train, at_least=1, or_none="every task of a data-backed split")
    check_int("num_val", num_val, at_least=0, or_none="every task of a data-backed split")
    if seed is not None and (not is_int(seed) or seed < 0):
        raise ValueError(f"seed must be an int >= 0, or None for tasks 0..N-1 in order, got {seed!r}")
    for name, value in (("train_split", train_split), ("val_split", val_split)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ValueError(f"{name} must be a split name such as 'train' or 'test', got {value!r}")

    _check_registered(env_id)
    if train_split is not None or val_split is not None:
        _check_split_kwarg(env_id, env_kwargs)
    train_kwargs = env_kwargs if train_split is None else {**env_kwargs, "split": train_split}

    train_env = make_env(env_id, train_kwargs)
    val_env = None
    try:
        train_source = task_source(train_env, env_id, "export")
        train_size = len(train_source) if train_source.sized else None
        shared = val_split is None or val_split == getattr(train_env.unwrapped, "split", train_kwargs.get("split"))
        if shared:
            val_kwargs, val_size, val_source_env = train_kwargs, train_size, train_env
            num_val = 0 if num_val is None else num_val
        else:
            val_kwargs = {**env_kwargs, "split": val_split}
            val_env = val_source_env = make_env(env_id, val_kwargs)
            val_source = task_source(val_env, env_id, "export")
            val_size = len(val_source) if val_source.sized else None
            if num_val is None:
                if val_size is None:
                    raise ValueError(f"{env_id} generates tasks without end: pass --num-val N (num_val=N)")
                num_val = val_size
            if val_size is not None and num_val > val_size:
                raise ValueError(
                    f"--num-val {num_val} but {env_id} split {val_split!r} has {val_size} tasks: "
                    f"pass --num-val {val_size} or fewer"
                )
        taken_by_val = num_val if shared else 0
        if num_train is None:
            if train_size is None:
                raise ValueError(f"{env_id} generates tasks without end: pass --num-train N (num_train=N)")
            num_train = train_size - taken_by_val  # every task the validation set leaves
        if train_size is not None and (num_train < 1 or num_train + taken_by_val > train_size):
            also = (
                f" and --num-val {num_val} from the same tasks (validation must differ from train)"
                if taken_by_val
                else ""
            )
            raise ValueError(
                f"--num-train {num_train}{also} but {env_id} has {train_size} tasks with env kwargs {train_kwargs}: "
                "ask for fewer" + (", or pass --val-split NAME to validate on another split" if taken_by_val else "")
            )
        if shared:
            train_indices, val_indices = _draw(num_train, num_val, train_size, seed)
        else:
            train_indices = _draw(num_train, 0, train_size, seed)[0]
            val_indices = _draw(num_val, 0, val_size, seed)[0]
        tables = {
            TRAIN: _table(train_env, env_id, train_kwargs, train_indices, TRAIN),
            VALIDATION: _table(val_source_env, env_id, val_kwargs, val_indices, VALIDATION),
        }
    finally:
        train_env.close()
        if val_env is not None:
            val_env.close()

    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {split: output_dir / FILE_NAMES[split] for split in tables}
    with contextlib.ExitStack() as stack:
        temporaries = {split: stack.enter_context(atomic_path(paths[split])) for split in tables}
        for split, table in tables.items():
            pq.write_table(table, temporaries[split])
    return paths


def _check_json(env_kwargs: Mapping[str, Any]) -> None:
    try:
        json.dumps(env_kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"env kwargs {env_kwargs!r} are not JSON ({error}): exported rows record them as JSON so the task "
            "can be rebuilt; pass paths, names and numbers"
        ) from None


def _check_split_kwarg(env_id: str, env_kwargs: Mapping[str, Any]) -> None:
    if "split" in env_kwargs:
        raise ValueError(
            f"--env-arg split={env_kwargs['split']} and --train-split/--val-split both choose a split: "
            "drop the --env-arg and use --train-split NAME / --val-split NAME"
        )
    parameters = make_parameters(env_id)
    if parameters is not None and "split" not in parameters:
        raise ValueError(
            f"{env_id} takes no split argument (it is procedural or has one task source): drop --train-split/"
            "--val-split; its validation tasks are drawn apart from the train ones"
        )


def _draw(num_train: int, num_val: int, size: int | None, seed: int | None) -> tuple[list[int], list[int]]:
    """Distinct task indices for a train set and a validation set from one source, none in
    both. In order: 0..num_train-1, then the next num_val. Seeded: the train draw is exactly
    `rlenvs_train.grpo.env_dataset`'s, and the same generator goes on to draw the validation
    tasks from the rest, so the train set does not depend on `num_val`."""
    if seed is None:
        return list(range(num_train)), list(range(num_train, num_train + num_val))
    rng = np.random.default_rng(seed)
    if size is not None:
        train = rng.choice(size, size=num_train, replace=False)
        if num_val == 0:
            return [int(i) for i in train], []
        rest = np.setdiff1d(np.arange(size), train, assume_unique=True)
        return [int(i) for i in train], [int(i) for i in rng.choice(rest, size=num_val, replace=False)]
    train_drawn = _draw_unsized(rng, num_train, set())
    return train_drawn, _draw_unsized(rng, num_val, set(train_drawn))


def _draw_unsized(rng: np.random.Generator, count: int, excluded: set[int]) -> list[int]:
    drawn: dict[int, None] = {}  # a dict keeps the draw order, which a set would not
    while len(drawn) < count:
        drawn.update(
            (int(i), None) for i in rng.integers(INFINITE_DRAW_RANGE, size=count - len(drawn)) if int(i) not in excluded
        )
    return list(drawn)


def _table(env: gym.Env, env_id: str, env_kwargs: Mapping[str, Any], indices: Sequence[int], split: str) -> pa.Table:
    kwargs_json = json.dumps(dict(env_kwargs), sort_keys=True)
    rows = []
    for index in indices:
        observation, info = env.reset(options={"task_index": index})
        messages = info.get("messages") or [{"role": "user", "content": observation}]
        truth = _ground_truth(getattr(env.unwrapped, "task", None))
        rows.append(
            {
                "data_source": env_id,
                "prompt": [{"role": str(m["role"]), "content": str(m["content"])} for m in messages],
                "env_class": env_id,
                "reward_spec": {"method": "rule", "ground_truth": truth},
                "reward_model": {"style": "rule", "ground_truth": truth},
                "extra_info": {
                    "task_index": int(index),
                    "task_id": str(info.get("task_id", index)),
                    "split": split,
                    "env_id": env_id,
                    "env_kwargs": kwargs_json,
                    "rlenvs_version": rlenvs.__version__,
                },
            }
        )
    return pa.Table.from_pylist(rows, schema=EXPORT_SCHEMA)


def _ground_truth(task: Any) -> str:
    """The task's own `ground_truth()` where it has one (a terminal task: the task row), else
    its `answer`, else its `solution`, else "" (see the module docstring)."""
    if callable(getattr(task, "ground_truth", None)):
        return task.ground_truth()
    for field in ("answer", "solution"):
        value = getattr(task, field, None)
        if value is not None and value != "":
            return str(value)
    return ""


# --- reading back -----------------------------------------------------------------------------


def read_exported(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    env_id: str | None = None,
) -> list[ExportedTask]:
    """The tasks in exported Parquet files, in file and row order.

    Checks each file exists, is Parquet and has the columns `export_env` writes, and, when
    `env_id` is given, that every row is that env's: a file from another env would otherwise
    train on prompts whose rewards the rollout env computes for different tasks."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = [Path(p) for p in paths]
    if not files:
        raise ValueError(f"no files given: pass the train.parquet/validation.parquet paths; {WRITE_HINT}")
    tasks: list[ExportedTask] = []
    for path in files:
        tasks.extend(_read_file(path, env_id))
    return tasks


def _read_file(path: Path, env_id: str | None) -> list[ExportedTask]:
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise FileNotFoundError(f"exported task file {str(path)!r} {what}: {WRITE_HINT}")
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise ValueError(f"{str(path)!r} is not a Parquet file ({error}): {WRITE_HINT}") from None
    missing = [name for name in READ_COLUMNS if name not in schema.names]
    if "extra_info" in schema.names:
        extra = schema.field("extra_info").type
        names = [extra.field(i).name for i in range(extra.num_fields)] if pa.types.is_struct(extra) else []
        missing += [f"extra_info.{name}" for name in EXTRA_INFO_FIELDS if name not in names]
    if missing:
        raise ValueError(
            f"{str(path)!r} lacks the column(s) {', '.join(missing)}: it must come from `rlenvs export`, which "
            f"writes {', '.join(EXPORT_SCHEMA.names)}; {WRITE_HINT}"
        )
    rows = pq.read_table(path, columns=list(READ_COLUMNS)).to_pylist()
    tasks = []
    for number, row in enumerate(rows):
        extra = row["extra_info"] or {}
        where = f"{str(path)!r} row {number}"
        try:
            kwargs = json.loads(extra["env_kwargs"] or "{}")
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: extra_info.env_kwargs is not JSON ({error}); {WRITE_HINT}") from None
        if not isinstance(kwargs, dict) or extra["task_index"] is None or not extra["env_id"] or not row["prompt"]:
            raise ValueError(
                f"{where} lacks its env id, env kwargs, task index or prompt: it must come from `rlenvs export`; {WRITE_HINT}"
            )
        tasks.append(
            ExportedTask(
                env_id=extra["env_id"],
                env_kwargs=kwargs,
                task_index=int(extra["task_index"]),
                task_id=str(extra["task_id"]),
                prompt=[{"role": m["role"], "content": m["content"]} for m in row["prompt"]],
                split=str(extra["split"]),
            )
        )
    if env_id is not None:
        others: dict[str, int] = {}
        for task in tasks:
            if _bare_id(task.env_id) != _bare_id(env_id):
                others[task.env_id] = others.get(task.env_id, 0) + 1
        if others:
            found = ", ".join(f"{other} ({count} rows)" for other, count in sorted(others.items()))
            raise ValueError(
                f"{str(path)!r} holds tasks of {found}, not {env_id}: train on the env the file was exported "
                f"from, or export {env_id} with `rlenvs export {env_id} --output-dir DIR`"
            )
    return tasks


def _bare_id(env_id: str) -> str:
    """`module:rlenvs/X-v0` and `rlenvs/X-v0` name the same env."""
    return env_id.rpartition(":")[2]


def rebuild_check(tasks: Sequence[ExportedTask]) -> None:
    """Pose each exported task again and confirm it is the same task: make the env (once per
    env id and kwargs), reset it on the row's `task_index`, and compare the task id and the
    prompt with the exported ones. Raises ValueError listing the first mismatches when the
    data set (or the env's prompt) changed since the export, since training on such rows
    would reward replies against other tasks' answers."""
    groups: dict[tuple[str, str], list[ExportedTask]] = {}
    for task in tasks:
        groups.setdefault((task.env_id, json.dumps(task.env_kwargs, sort_keys=True)), []).append(task)
    for (env_id, _), group in groups.items():
        kwargs = group[0].env_kwargs
        env = make_env(env_id, kwargs)
        try:
            problems = []
            for task in group:
                problem = _rebuild_problem(env, task)
                if problem:
                    problems.append(problem)
        finally:
            env.close()
        if problems:
            shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            raise ValueError(
                f"{len(problems)} of {len(group)} exported {env_id} tasks (env kwargs {kwargs}) are not what the env "
                f"poses now: {shown}. The data set or the env changed since the export: run `rlenvs export` again"
            )


def _rebuild_problem(env: gym.Env, task: ExportedTask) -> str | None:
    try:
        observation, info = env.reset(options={"task_index": task.task_index})
    except (IndexError, KeyError) as error:
        message = error.args[0] if error.args else error
        return f"task_index {task.task_index} (task_id {task.task_id!r}) no longer exists ({message})"
    task_id = str(info.get("task_id", task.task_index))
    if task_id != task.task_id:
        return f"task_index {task.task_index} was task_id {task.task_id!r} at export, is {task_id!r} now"
    messages = info.get("messages") or [{"role": "user", "content": observation}]
    prompt = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
    if prompt != task.prompt:
        return f"task {task.task_id!r} (task_index {task.task_index}) has another prompt now"
    return None
