"""Reading a task folder's files for rlenvs.envs.terminal.folders and .dockerfile: the error
both raise, and the readers that put a folder's files into `Entry`s within the byte budget of
what goes into the sandbox each episode (no symbolic link followed, UTF-8 text only)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlenvs.envs.terminal.tasks import MAX_SETUP_BYTES, Entry
from rlenvs.images.dockerfile import short as short  # the one-line form of a file's text in messages


class TaskFolderError(ValueError):
    """A task folder that cannot be read, or cannot run in rlenvs' sandbox; the message
    names the folder and says why."""


@dataclass
class Budget:
    """The bytes a task may bring along (its workspace, its tests), counted while reading so
    that a huge folder fails early instead of being read into memory."""

    what: str
    left: int = MAX_SETUP_BYTES

    def take(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise TaskFolderError(
                f"its {self.what} is over {MAX_SETUP_BYTES} bytes, the cap on what goes into the sandbox each episode"
            )


def file_entry(path: Path, at: str, folder: Path, budget: Budget, mode: int | None = None) -> Entry:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise TaskFolderError(
            f"{rel(path, folder)} is a symbolic link, which rlenvs cannot put in the sandbox: copy the file itself, "
            "or make the link in setup.sh (`ln -s ...`)"
        )
    mode = stat.S_IMODE(info.st_mode) if mode is None else mode
    if stat.S_ISDIR(info.st_mode):
        return Entry(at, is_dir=True, mode=mode, mtime=info.st_mtime)
    if not stat.S_ISREG(info.st_mode):
        raise TaskFolderError(f"{rel(path, folder)} is not a regular file or folder")
    budget.take(info.st_size)
    return Entry(at, path.read_bytes(), mode=mode, mtime=info.st_mtime)


def walk(top: Path) -> list[Path]:
    """Everything below `top` (folders before what they hold), sorted, no symlink followed."""
    found = []
    for root, dirs, files in os.walk(top, followlinks=False):
        dirs.sort()
        found += [Path(root, name) for name in sorted(dirs + files)]
    return sorted(found, key=lambda p: p.relative_to(top).parts)


def tree(top: Path, folder: Path, budget: Budget) -> list[Entry]:
    """The files and folders below `top` (none if it is missing), as entries at their paths below it."""
    return [file_entry(path, path.relative_to(top).as_posix(), folder, budget) for path in walk(top)]


def read_text(path: Path, folder: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TaskFolderError(f"{rel(path, folder)} is not UTF-8 text") from None


def read_yaml(path: Path, folder: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise TaskFolderError(f"reading {path.name} needs PyYAML, which is not installed: pip install pyyaml") from None
    try:
        return yaml.safe_load(read_text(path, folder))
    except yaml.YAMLError as error:
        raise TaskFolderError(f"{rel(path, folder)} is not valid YAML: {error}") from None


def rel(path: Path, folder: Path) -> str:
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)
