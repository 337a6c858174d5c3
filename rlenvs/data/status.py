"""`rlenvs data`: which files each env reads, where the loaders look, and what this machine has.

The answer is computed from what the loaders use (each env class's `data_spec`, the
`rlenvs.data.loading.DataSpec` its tasks are loaded by, declared on the class where the env
reads a data set; the `$RLENVS_DATA_DIR` lookup, the hub probe), so it cannot drift from them:
a file reported as found is the file `gym.make` reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from rlenvs.core.registration import EnvEntry, make_parameters
from rlenvs.data import hub as hub_probe
from rlenvs.data.loading import (
    DATA_DIR_VARIABLE,
    SUFFIXES,
    DataNotFoundError,
    DataSpec,
    HubDataset,
    data_dir,
    data_dir_file,
)


@dataclass(frozen=True)
class FileStatus:
    """One file an env reads, and whether this machine can give it."""

    spec: DataSpec
    file_name: str
    found: Path | None
    """The file under `$RLENVS_DATA_DIR` that the loader reads, if there is one."""
    hub: HubDataset | None
    state: str
    """The status cell: where it is found, or why not and what the hub offers."""
    available: bool
    """Found, or obtainable from the hub (reachable, or its cache with HF_HUB_OFFLINE=1)."""

    @property
    def path(self) -> str:
        return f"{self.spec.name}/{self.file_name}"


@dataclass(frozen=True)
class EnvData:
    entry: EnvEntry
    spec: DataSpec | None
    files: tuple[FileStatus, ...]
    note: str = ""
    """For an env without a data set: why it needs none (or why that is not known)."""
    loaded: bool = True

    @property
    def available(self) -> bool:
        return self.loaded and all(f.available for f in self.files)


def env_data(entries: Sequence[EnvEntry], status: hub_probe.HubStatus | None = None) -> tuple[list[EnvData], str]:
    """What each env in `entries` reads and has, plus the line describing `$RLENVS_DATA_DIR`."""
    try:
        folder, folder_line = data_dir(), None
    except DataNotFoundError as error:  # a typo in the variable is the first thing to report
        folder, folder_line = None, f"{error}"
    if folder_line is None:
        root = os.environ.get(DATA_DIR_VARIABLE)
        folder_line = f"{DATA_DIR_VARIABLE}={root}" if root else f"{DATA_DIR_VARIABLE} is not set"
    status = status or hub_probe.hub_status()
    results = []
    for entry in entries:
        try:
            creator = gym.envs.registration.load_env_creator(entry.entry_point)
        except Exception as error:  # one broken env module must not hide the others' report
            note = f"unknown: its module does not import ({type(error).__name__}: {error})"
            results.append(EnvData(entry, None, (), note, loaded=False))
            continue
        spec = getattr(creator, "data_spec", None)
        if spec is None:
            parameters = make_parameters(entry.id) or {}
            own = " (task_dir= reads task folders of your own)" if "task_dir" in parameters else ""
            results.append(EnvData(entry, None, (), f"nothing: procedural{own}"))
            continue
        files = tuple(_file_status(spec, name, folder, status) for name in spec.file_names())
        results.append(EnvData(entry, spec, files))
    return results, folder_line


def _file_status(spec: DataSpec, file_name: str, folder: Path | None, status: hub_probe.HubStatus) -> FileStatus:
    splits = [split for split in spec.splits if spec.file_name(split) == file_name]
    hub = next((spec.hub[split] for split in splits if split in spec.hub), None)
    stem = file_name[: -len(spec.release_suffix)]
    found = None if folder is None else data_dir_file(folder, spec.name, stem)
    if found is not None:
        return FileStatus(spec, file_name, found, hub, f"found: {found}", True)
    if hub is None:
        return FileStatus(
            spec, file_name, None, hub, "missing (no copy on the hub: a local file is the only way)", False
        )
    copy = f"{hub.path}" + (f" ({hub.name})" if hub.name else "")
    cached = hub_probe.hub_cache_copy(hub.path)
    if not _datasets_installed():
        return FileStatus(
            spec, file_name, None, hub, f"missing; the hub copy {copy} needs `pip install datasets`", False
        )
    if status.offline_variable is not None:
        if cached is not None:
            return FileStatus(spec, file_name, None, hub, f"from the hub cache: {copy} ({cached})", True)
        return FileStatus(
            spec,
            file_name,
            None,
            hub,
            f"missing; {status.offline_variable} is set and the hub cache has no {copy}",
            False,
        )
    if status.reachable:
        return FileStatus(spec, file_name, None, hub, f"from the hub: {copy}, downloaded on first use", True)
    extra = "; the hub cache holds it: HF_HUB_OFFLINE=1 uses it" if cached is not None else ""
    return FileStatus(spec, file_name, None, hub, f"missing; the hub copy {copy} is unreachable{extra}", False)


def _datasets_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("datasets") is not None


def data_report(entries: Sequence[EnvEntry], status: hub_probe.HubStatus | None = None) -> tuple[str, bool]:
    """The text `rlenvs data` prints, and whether every listed env has all it needs."""
    status = status or hub_probe.hub_status()
    results, folder_line = env_data(entries, status)
    state = "reachable" if status.reachable else "only its local cache" if status.offline_variable else "unreachable"
    hub_line = f"{state} ({status.detail})"
    if not _datasets_installed():
        hub_line += "; the `datasets` package is not installed (pip install datasets)"
    lines = [
        "Where the loaders look, in order:",
        "  1. data_files=PATH passed to gym.make (--env-arg data_files=PATH on the command line)",
        f"  2. $RLENVS_DATA_DIR/<data set>/<file> (as {', '.join(SUFFIXES)}): {folder_line}",
        f"  3. the Hugging Face hub ({status.endpoint}) through `datasets`: {hub_line}",
        "",
    ]
    rows = [("ENV", "FILE", "STATUS")]
    seen: dict[str, str] = {}
    for result in results:
        if result.spec is None:
            rows.append((result.entry.id, "-", result.note))
            continue
        first = seen.setdefault(result.spec.name, result.entry.id)
        if first != result.entry.id:  # GSM8K-Tool-v1 reads GSM8K-v1's files: said once
            rows.append((result.entry.id, ", ".join(f.path for f in result.files), f"as for {first}"))
            continue
        for i, file in enumerate(result.files):
            rows.append((result.entry.id if i == 0 else "", file.path, file.state))
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines += [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}".rstrip() for a, b, c in rows]
    missing = [f for r in results for f in r.files if not f.available]
    complete = all(r.available for r in results)
    if missing:
        folder = "~/rlenvs-data"
        example = missing[0].path
        lines += [
            "",
            f"To work without the hub: put the files in one folder ({folder}/{example}, ...) and set "
            f"{DATA_DIR_VARIABLE}={folder}; or pass data_files=PATH to gym.make. HF_HUB_OFFLINE=1 makes the "
            "loaders use only the hub's local cache.",
            "Where to get them:",
        ]
        sources = {f.spec.name: f.spec.source for f in missing if f.spec.source}
        lines += [f"  {name}: {source}" for name, source in sources.items()]
    return "\n".join(lines), complete
