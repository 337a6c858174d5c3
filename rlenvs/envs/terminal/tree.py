"""Walking a workspace from the host: every entry, no symlink followed, one open folder.

The workspace is the agent's: its tree may be as deep and as wide as the sandbox let it be
made (a `cd d; mkdir d` loop nests without any path growing past PATH_MAX). So the walk
holds one directory descriptor at a time, goes down with `O_NOFOLLOW` and back up through
"..", which is the physical parent (nothing of the agent's runs while the host walks: the
sandbox kills every process after each command), and needs no recursion and no path longer
than one name. What it reads of each entry is up to the caller (`read_workspace` reads
small files, a verdict's link scan only the links, an env copy everything).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass

MAX_TREE_ENTRIES = 500_000
"""Entries walked where every one matters (a verdict's link scan, a copy of the workspace):
25 times what `read_workspace` reads for expectations and far past any task's tree, while
a walk that long still takes only about a second."""


class WorkspaceUnreadable(RuntimeError):
    """The workspace is over a walk's caps (entries, depth): its verdict is a failure."""


@dataclass(frozen=True)
class Found:
    """One entry of the walk. `dir_fd` is its folder's descriptor, valid only until the walk
    moves on: read the entry (`name` relative to it) before asking for the next one."""

    path: str
    """Relative to the top, '/'-separated."""
    entry: os.DirEntry
    dir_fd: int

    @property
    def name(self) -> str:
        return self.entry.name


def walk(root: str | os.PathLike, *, max_entries: int, max_depth: int | None = None) -> Iterator[Found]:
    """Every entry below `root` (a folder's entries in name order, then its subfolders'),
    never following a symlink. Raises WorkspaceUnreadable past `max_entries` entries or when
    a folder sits deeper than `max_depth` below `root` (None: any depth). A folder that
    cannot be opened (the agent's chmod 000, for a host that is not root) is reported and
    not entered."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    count, prefix = 0, ""
    levels: list[tuple[str, list[str]]] = []  # for each level from the top down: its prefix, subfolders left
    try:
        while True:
            with os.scandir(fd) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
            subfolders = []
            for entry in entries:
                count += 1
                if count > max_entries:
                    raise WorkspaceUnreadable(f"the workspace has more than {max_entries} entries")
                yield Found(prefix + entry.name, entry, fd)
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(entry.name)
            levels.append((prefix, subfolders[::-1]))
            # Next: a subfolder left at the deepest level that has one, climbing ".." past the rest.
            child = None
            while levels and child is None:
                prefix, pending = levels[-1]
                while pending and child is None:
                    name = pending.pop()
                    child = open_no_follow(name, fd, os.O_DIRECTORY)
                if child is not None:
                    os.close(fd)
                    fd, prefix = child, prefix + name + "/"
                    if max_depth is not None and len(levels) > max_depth:
                        deeper = f"the workspace is nested deeper than {max_depth} folders at {prefix!r}"
                        raise WorkspaceUnreadable(deeper)
                    break
                levels.pop()
                if levels:
                    parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
                    os.close(fd)
                    fd = parent
            if child is None:
                return
    finally:
        os.close(fd)


def open_no_follow(name: str, dir_fd: int, flags: int) -> int | None:
    """Open `name` itself, never what a symlink swapped in its place would point to. A folder
    the agent made unreadable (chmod 000) is opened anyway by a root host and skipped otherwise."""
    try:
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | flags, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.EACCES, errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            return None
        raise
