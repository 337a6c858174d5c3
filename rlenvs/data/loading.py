"""Find and read an env's dataset: user paths, `$RLENVS_DATA_DIR`, or the Hugging Face hub.

Rows are read once per process and file version and turned into immutable tasks once, so
a vector of 64 envs over the same split parses the file once. Every row keeps where it
came from, so a bad row is reported as `file:line` and the fix is obvious.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, Union

import pyarrow.parquet as pq

DATA_DIR_VARIABLE = "RLENVS_DATA_DIR"
SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet", ".json")
"""File formats read; in `$RLENVS_DATA_DIR/<dataset>/<split>` they are tried in this order."""

PathLike = Union[str, os.PathLike]
DataFiles = Union[PathLike, Sequence[PathLike], Mapping[str, Union[PathLike, Sequence[PathLike]]]]

T = TypeVar("T")


class DataNotFoundError(FileNotFoundError):
    """No data for the requested dataset and split could be found by any of the three ways."""


class DataFormatError(ValueError):
    """A data file, or one row of it, is not in the expected format."""


@dataclass(frozen=True)
class HubDataset:
    """Where the dataset lives on the Hugging Face hub: `load_dataset(path, name, split=...)`."""

    path: str
    name: str | None = None


@dataclass(frozen=True)
class RowLocation:
    """Where one row came from, for error messages and task provenance."""

    source: str
    position: int
    """1-based line for JSONL, 0-based row for Parquet, JSON and the hub."""
    kind: str = "line"

    def __str__(self) -> str:
        return f"{self.source}:{self.position}" if self.kind == "line" else f"{self.source} row {self.position}"


def load_tasks(
    dataset: str,
    split: str,
    *,
    data_files: DataFiles | None,
    hub: HubDataset | None,
    task_from_row: Callable[[Mapping[str, Any], str], T],
    file_stem: str | None = None,
) -> tuple[T, ...]:
    """Every task of `dataset`/`split`, found the first of three ways that has data.

    1. `data_files`: one path or a list (the data for `split`), or `{split: path(s)}`;
    2. `$RLENVS_DATA_DIR/<dataset>/<split>.jsonl` (or `.jsonl.gz`, `.parquet`, `.json`);
       `file_stem` replaces `<split>` where a release names its file otherwise
       (`humaneval/HumanEval.jsonl.gz`, `mbpp/mbpp.jsonl`);
    3. the hub through `datasets.load_dataset`, when `datasets` is installed and online.

    `task_from_row(row, default_task_id)` builds one task; the default id is
    `"<dataset>/<split>/<row index>"`. It must be a module-level function (it is part of the
    cache key) and raise `ValueError` for a malformed row; the error is re-raised naming the
    row's file and line.
    """
    files = _files_from_arguments(dataset, split, data_files)
    if files is None:
        files = _files_from_data_dir(dataset, file_stem or split)
    if files is not None:
        keys = tuple(_file_key(path) for path in files)
        return _tasks_from_files(f"{dataset}/{split}", keys, task_from_row)
    if hub is not None:
        return _tasks_from_hub(dataset, split, hub, task_from_row)
    raise DataNotFoundError(_not_found_message(dataset, split, hub, file_stem or split))


def read_rows(path: PathLike) -> list[tuple[dict[str, Any], RowLocation]]:
    """All rows of one JSONL, gzipped JSONL, JSON (a list of objects) or Parquet file."""
    path = Path(path)
    name = path.name
    if name.endswith((".jsonl", ".jsonl.gz")):
        opener = gzip.open if name.endswith(".gz") else open
        rows = []
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = RowLocation(str(path), number)
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise DataFormatError(f"{where}: not valid JSON ({error.msg} at column {error.colno})") from None
                rows.append((_require_object(row, where), where))
        return rows
    if name.endswith(".parquet"):
        table = pq.read_table(path)
        return [(row, RowLocation(str(path), i, "row")) for i, row in enumerate(table.to_pylist())]
    if name.endswith(".json"):
        with open(path, encoding="utf-8") as handle:
            try:
                data = json.load(handle)
            except json.JSONDecodeError as error:
                raise DataFormatError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
        if not isinstance(data, list):
            raise DataFormatError(f"{path}: a .json data file must hold a list of objects, found {type(data).__name__}")
        return [(_require_object(row, RowLocation(str(path), i, "row")), RowLocation(str(path), i, "row"))
                for i, row in enumerate(data)]
    raise DataFormatError(f"{path}: unsupported data file type: use one of {', '.join(SUFFIXES)}")


def _require_object(row: Any, where: RowLocation) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise DataFormatError(f"{where}: each row must be a JSON object, found {type(row).__name__}")
    return row


def _files_from_arguments(dataset: str, split: str, data_files: DataFiles | None) -> list[Path] | None:
    if data_files is None:
        return None
    if isinstance(data_files, Mapping):
        if split not in data_files:
            raise DataNotFoundError(
                f"data_files for {dataset} has splits {sorted(data_files)} but not {split!r}: "
                f"add a {split!r} entry or choose one of those splits"
            )
        data_files = data_files[split]
    paths = [data_files] if isinstance(data_files, (str, os.PathLike)) else list(data_files)
    if not paths:
        raise DataNotFoundError(f"data_files for {dataset} split {split!r} is an empty list")
    resolved = [Path(p).expanduser() for p in paths]
    missing = [str(p) for p in resolved if not p.is_file()]
    if missing:
        raise DataNotFoundError(f"data_files for {dataset} not found: {', '.join(missing)}")
    return resolved


def _files_from_data_dir(dataset: str, stem: str) -> list[Path] | None:
    root = os.environ.get(DATA_DIR_VARIABLE)
    if not root:
        return None
    for suffix in SUFFIXES:
        candidate = Path(root).expanduser() / dataset / f"{stem}{suffix}"
        if candidate.is_file():
            return [candidate]
    return None


def _file_key(path: Path) -> tuple[str, int, int]:
    # The cache key includes size and mtime so an edited file is read again.
    stat = path.stat()
    return (str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _tasks_from_files(prefix: str, keys: tuple[tuple[str, int, int], ...], task_from_row: Callable) -> tuple:
    rows = [pair for path, _, _ in keys for pair in read_rows(path)]
    return tuple(_convert(task_from_row, row, f"{prefix}/{i}", where) for i, (row, where) in enumerate(rows))


def _tasks_from_hub(dataset: str, split: str, hub: HubDataset, task_from_row: Callable) -> tuple:
    try:
        import datasets
    except ImportError:
        raise DataNotFoundError(
            _not_found_message(dataset, split, hub) + " (the `datasets` package is not installed)"
        ) from None
    try:
        table = datasets.load_dataset(hub.path, hub.name, split=split)
    except Exception as error:  # offline, unknown split, auth: all mean "not from the hub"
        raise DataNotFoundError(
            _not_found_message(dataset, split, hub) + f" (the hub said: {type(error).__name__}: {error})"
        ) from error
    source = f"hub:{hub.path}" + (f"/{hub.name}" if hub.name else "") + f"[{split}]"
    return tuple(
        _convert(task_from_row, row, f"{dataset}/{split}/{i}", RowLocation(source, i, "row"))
        for i, row in enumerate(table)
    )


def _convert(task_from_row: Callable, row: Mapping[str, Any], task_id: str, where: RowLocation) -> Any:
    try:
        return task_from_row(row, task_id)
    except (ValueError, TypeError, KeyError) as error:
        raise DataFormatError(f"{where}: {error}") from None


def _not_found_message(dataset: str, split: str, hub: HubDataset | None, stem: str | None = None) -> str:
    stem = stem or split
    ways = [
        f"pass data_files='path/to/{stem}.jsonl' (JSONL or Parquet) to gym.make",
        f"set {DATA_DIR_VARIABLE} to a folder holding {dataset}/{stem}.jsonl",
    ]
    if hub is not None:
        ways.append(f"install `datasets` on a machine that can reach the Hugging Face hub ({hub.path})")
    return f"no {dataset} data for split {split!r}: " + "; or ".join(ways)
