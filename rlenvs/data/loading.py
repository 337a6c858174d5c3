"""Find and read an env's dataset: user paths, `$RLENVS_DATA_DIR`, or the Hugging Face hub.

Rows are read once per process and file version and turned into immutable tasks once, so
a vector of 64 envs over the same split parses the file once. Every row keeps where it
came from, so a bad row is reported as `file:line` and the fix is obvious.

Each data-backed env declares its data set once, as a `DataSpec` (folder, file names, hub
copy): its loader reads through it, `rlenvs data` lists it, and a not-found error names
the file the loader really looks for. The hub is probed before `datasets` is asked
(`rlenvs.data.hub`), so an offline machine is told in seconds how to work offline.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pyarrow.parquet as pq

from rlenvs.data import hub as hub_probe

DATA_DIR_VARIABLE = "RLENVS_DATA_DIR"
SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet", ".json")
"""File formats read; in `$RLENVS_DATA_DIR/<dataset>/<split>` they are tried in this order."""

PathLike = str | os.PathLike
DataFiles = PathLike | Sequence[PathLike] | Mapping[str, PathLike | Sequence[PathLike]]

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
class DataSpec:
    """One data set an env reads: where its files are looked for and where it comes from.

    Under `$RLENVS_DATA_DIR` the files are `<name>/<split><suffix>`, or `<name>/<file_stem>
    <suffix>` where one release file holds every split (`humaneval/HumanEval.jsonl.gz`,
    `mbpp/mbpp.jsonl`); any of `SUFFIXES` is read, `release_suffix` is the one the release
    uses and the one messages name."""

    name: str
    """The folder under `$RLENVS_DATA_DIR`, and the prefix of task ids ("gsm8k")."""
    splits: tuple[str, ...]
    hub: Mapping[str, HubDataset] = field(default_factory=dict)
    """The hub copy of each split that has one."""
    file_stem: str | None = None
    release_suffix: str = ".jsonl"
    source: str = ""
    """Where a person downloads the release files (for `rlenvs data`)."""

    def file_name(self, split: str) -> str:
        """The file `load` looks for under `$RLENVS_DATA_DIR/<name>/` for `split`."""
        return f"{self.file_stem or split}{self.release_suffix}"

    def file_names(self) -> tuple[str, ...]:
        """Every file of the data set, once each, in the order of `splits`."""
        return tuple(dict.fromkeys(self.file_name(split) for split in self.splits))

    def load(
        self, split: str, *, data_files: DataFiles | None, task_from_row: Callable[[Mapping[str, Any], str], T]
    ) -> tuple[T, ...]:
        """`load_tasks` for `split` of this data set."""
        return load_tasks(
            self.name,
            split,
            data_files=data_files,
            hub=self.hub.get(split),
            task_from_row=task_from_row,
            file_stem=self.file_stem,
            file_name=self.file_name(split),
        )


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
    file_name: str | None = None,
) -> tuple[T, ...]:
    """Every task of `dataset`/`split`, found the first of three ways that has data.

    1. `data_files`: one path or a list (the data for `split`), or `{split: path(s)}`;
    2. `$RLENVS_DATA_DIR/<dataset>/<split>.jsonl` (or `.jsonl.gz`, `.parquet`, `.json`);
       `file_stem` replaces `<split>` where a release names its file otherwise
       (`humaneval/HumanEval.jsonl.gz`, `mbpp/mbpp.jsonl`);
    3. the hub through `datasets.load_dataset`, when `datasets` is installed and the hub
       answers a probe within seconds (or HF_HUB_OFFLINE=1 sends it to the local cache).

    `file_name` is the release's file for messages (default `<stem>.jsonl`). An unset
    `$RLENVS_DATA_DIR` is skipped; one naming a missing folder is an error, not a reason
    to go to the hub. `task_from_row(row, default_task_id)` builds one task; the default id is
    `"<dataset>/<split>/<row index>"`. It must be a module-level function (it is part of the
    cache key) and raise `ValueError` for a malformed row; the error is re-raised naming the
    row's file and line.
    """
    wanted = _Wanted(dataset, split, file_name or f"{file_stem or split}.jsonl", hub)
    files = _files_from_arguments(dataset, split, data_files)
    if files is None:
        files = _files_from_data_dir(wanted, file_stem or split)
    if files is not None:
        keys = tuple(_file_key(path) for path in files)
        return _tasks_from_files(f"{dataset}/{split}", keys, task_from_row)
    if hub is not None:
        return _tasks_from_hub(wanted, task_from_row)
    raise DataNotFoundError(_not_found_message(wanted, "this split has no copy on the Hugging Face hub"))


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
        return [
            (_require_object(row, RowLocation(str(path), i, "row")), RowLocation(str(path), i, "row"))
            for i, row in enumerate(data)
        ]
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


@dataclass(frozen=True)
class _Wanted:
    """What one load looks for, for its messages."""

    dataset: str
    split: str
    file_name: str
    hub: HubDataset | None

    @property
    def path(self) -> str:
        return f"{self.dataset}/{self.file_name}"


def data_dir() -> Path | None:
    """`$RLENVS_DATA_DIR` as a folder, None when it is unset; a DataNotFoundError naming it
    when it is set to something that is not a folder (a typo there would otherwise send every
    load to the hub, and offline to a message about the hub)."""
    root = os.environ.get(DATA_DIR_VARIABLE)
    if not root:
        return None
    folder = Path(root).expanduser()
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise DataNotFoundError(
            f"{DATA_DIR_VARIABLE} is set to {root!r}, which {what}: point it at the folder holding the data "
            f"sets' folders (gsm8k/, humaneval/, ...; `rlenvs data` lists the files), or unset it"
        )
    return folder


def data_dir_file(folder: Path, dataset: str, stem: str) -> Path | None:
    """The first of `<folder>/<dataset>/<stem><suffix>` that exists, in `SUFFIXES` order."""
    for suffix in SUFFIXES:
        candidate = folder / dataset / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def _files_from_data_dir(wanted: _Wanted, stem: str) -> list[Path] | None:
    folder = data_dir()
    if folder is None:
        return None
    found = data_dir_file(folder, wanted.dataset, stem)
    return None if found is None else [found]


def _file_key(path: Path) -> tuple[str, int, int]:
    # The cache key includes size and mtime so an edited file is read again.
    stat = path.stat()
    return (str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _tasks_from_files(prefix: str, keys: tuple[tuple[str, int, int], ...], task_from_row: Callable) -> tuple:
    rows = [pair for path, _, _ in keys for pair in read_rows(path)]
    return tuple(_convert(task_from_row, row, f"{prefix}/{i}", where) for i, (row, where) in enumerate(rows))


def _tasks_from_hub(wanted: _Wanted, task_from_row: Callable) -> tuple:
    hub = wanted.hub
    assert hub is not None
    if importlib.util.find_spec("datasets") is None:
        raise DataNotFoundError(
            _not_found_message(
                wanted,
                f"the hub copy ({hub.path}) needs the `datasets` package, which is not installed: "
                "pip install datasets (on a machine that can reach the Hugging Face hub)",
            )
        )
    status = hub_probe.hub_status()
    if not status.reachable and status.offline_variable is None:
        raise DataNotFoundError(_not_found_message(wanted, _unreachable(hub, status)))
    import datasets

    try:
        table = datasets.load_dataset(hub.path, hub.name, split=wanted.split)
    except Exception as error:  # offline, unknown split, auth: all mean "not from the hub"
        said = f"{type(error).__name__}: {' '.join(str(error).split())}"
        if status.offline_variable is not None:
            reason = (
                f"{status.detail}, so only this machine's hub cache was asked, and it could not give "
                f"{hub.path} ({said}); unset {status.offline_variable} on a machine that can reach the hub"
            )
        else:
            reason = f"the hub copy ({hub.path}) could not be loaded ({said})"
        raise DataNotFoundError(_not_found_message(wanted, reason)) from error
    source = f"hub:{hub.path}" + (f"/{hub.name}" if hub.name else "") + f"[{wanted.split}]"
    return tuple(
        _convert(task_from_row, row, f"{wanted.dataset}/{wanted.split}/{i}", RowLocation(source, i, "row"))
        for i, row in enumerate(table)
    )


def _unreachable(hub: HubDataset, status: hub_probe.HubStatus) -> str:
    cached = hub_probe.hub_cache_copy(hub.path)
    offline = (
        f"this machine's hub cache holds {hub.path} ({cached}): set HF_HUB_OFFLINE=1 to load it from there"
        if cached is not None
        else f"HF_HUB_OFFLINE=1 loads {hub.path} from this machine's hub cache once it holds it"
    )
    return (
        f"the Hugging Face hub ({status.endpoint}) is unreachable from here ({status.detail}). To work offline, "
        f"use a local file (the two ways above); or {offline}"
    )


def _convert(task_from_row: Callable, row: Mapping[str, Any], task_id: str, where: RowLocation) -> Any:
    try:
        return task_from_row(row, task_id)
    except (ValueError, TypeError, KeyError) as error:
        raise DataFormatError(f"{where}: {error}") from None


def _not_found_message(wanted: _Wanted, hub_reason: str) -> str:
    """Where the loader looked, what would fix it, and why the hub did not help."""
    root = os.environ.get(DATA_DIR_VARIABLE)
    looked = f"{DATA_DIR_VARIABLE}={root} has no {wanted.path}" if root else f"{DATA_DIR_VARIABLE} is not set"
    return (
        f"no {wanted.dataset} data for split {wanted.split!r} ({looked}): pass data_files='path/to/"
        f"{wanted.file_name}' (JSONL or Parquet) to gym.make; or set {DATA_DIR_VARIABLE} to a folder holding "
        f"{wanted.path}; {hub_reason}"
    )
