"""A memory cgroup for each sandbox, where the host gives this process one.

rlimits cap each process (address space, processes, file size), and the tmpfs sizes cap the
files; what neither counts is the sum over a sandbox's processes (`processes` of them may
take `memory_mb` each) and the kernel memory the sandbox makes the host spend on its behalf
(inodes, pipes, sockets, page tables). A memory cgroup counts all of it: each bubblewrap
worker (a pool worker, a shell session, an image's session) gets one of its own, capped at
`Limits.sandbox_memory_bytes`, and is removed with the worker. When a sandboxed process goes
over, the kernel's OOM killer ends the largest process in that cgroup only, which is the
code's (the zygote is small), never anything of the host's.

Where the cgroups are made (`memory_hierarchy`):
- `RLENVS_SANDBOX_CGROUP`, when set: a folder of a cgroup v2 hierarchy whose
  `cgroup.subtree_control` enables memory (and which holds no process, as v2 requires of a
  cgroup with controlled children), or of a cgroups v1 memory hierarchy;
- else this process's own cgroup v2, where its children get the memory controller (a root
  cgroup, as in a container with a cgroup namespace of its own);
- else this process's own cgroup in a cgroups v1 memory hierarchy (cgroups v1 and the
  "hybrid" layout), where it may write (root, or delegated).
Nowhere else: a host without any of these gives each process its rlimits only, which
`memory_cgroup_absence()` explains. Container backends use the engine's own cgroup
(`--memory`), not this module.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

CGROUP2 = "cgroup2"
FOLDER_VARIABLE = "RLENVS_SANDBOX_CGROUP"
PREFIX = "rlenvs-sandbox-"
"""Each sandbox's cgroup is `<hierarchy folder>/rlenvs-sandbox-<host pid>-<n>`: the pid tells
a later process which ones a dead one left behind."""
REMOVE_WAIT_S = 2.0
"""How long a cgroup's last processes may take to leave it once killed, before removal gives up."""

_logger = logging.getLogger(__name__)
_numbers = itertools.count()


class CgroupError(RuntimeError):
    """`RLENVS_SANDBOX_CGROUP` names no usable memory cgroup; the message says why."""


@dataclass(frozen=True)
class MemoryHierarchy:
    """A folder where this process may make memory cgroups, and the cgroup version there."""

    folder: str
    version: Literal[1, 2]

    @property
    def limit_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"

    @property
    def swap_file(self) -> str:
        """The cap that stops the cgroup using swap beyond its memory (v1: memory plus swap)."""
        return "memory.swap.max" if self.version == 2 else "memory.memsw.limit_in_bytes"


def locate_memory_hierarchy(
    mountinfo: str = "/proc/self/mountinfo", membership: str = "/proc/self/cgroup"
) -> MemoryHierarchy | str:
    """Where this process can make memory cgroups (see the module docstring), or why nowhere."""
    chosen = os.environ.get(FOLDER_VARIABLE)
    mounts = _cgroup_mounts(mountinfo)
    if chosen:
        return _chosen(chosen, mounts)
    reasons = []
    for locate in (_own_v2, _own_v1):
        found = locate(mounts, membership)
        if isinstance(found, MemoryHierarchy):
            return found
        reasons.append(found)
    return "; ".join(reasons)


def memory_cgroup_absence(mountinfo: str = "/proc/self/mountinfo", membership: str = "/proc/self/cgroup") -> str | None:
    """Why sandboxes here get no memory cgroup, or None where they do."""
    found = locate_memory_hierarchy(mountinfo, membership)
    return None if isinstance(found, MemoryHierarchy) else found


@functools.cache
def memory_hierarchy() -> MemoryHierarchy | None:
    """This process's hierarchy for sandbox cgroups, found once; None (and one warning in the
    log saying why) where there is none. A bad `RLENVS_SANDBOX_CGROUP` raises CgroupError."""
    found = locate_memory_hierarchy()
    if isinstance(found, MemoryHierarchy):
        _remove_orphans(found)
        return found
    if os.environ.get(FOLDER_VARIABLE):
        raise CgroupError(found)
    _logger.warning("sandboxes get no memory cgroup here, only per-process rlimits: %s", found)
    return None


class SandboxCgroup:
    """One sandbox's memory cgroup: made empty and capped, given the sandbox's processes while
    they are idle (before any code runs: later children inherit it), removed once they are dead."""

    def __init__(self, hierarchy: MemoryHierarchy, limit_bytes: int) -> None:
        self.hierarchy = hierarchy
        self.path = os.path.join(hierarchy.folder, f"{PREFIX}{os.getpid()}-{next(_numbers)}")
        os.mkdir(self.path, 0o755)
        self.limit_bytes: int | None = None
        """None: the kernel's "max", which a new cgroup starts with."""
        try:
            self.cap(limit_bytes)
        except OSError:
            self.remove()
            raise

    def cap(self, limit_bytes: int) -> None:
        """Set the cap; swap counts against it too. In v1 memory+swap must stay at or above
        memory alone, so the order of the two writes follows the direction of the change."""
        if limit_bytes == self.limit_bytes:
            return
        swap_path = os.path.join(self.path, self.hierarchy.swap_file)
        has_swap_cap = os.path.exists(swap_path)
        swap_value = "0" if self.hierarchy.version == 2 else str(limit_bytes)
        writes = [(self.hierarchy.limit_file, str(limit_bytes))]
        if has_swap_cap:
            swap = (self.hierarchy.swap_file, swap_value)
            raising = self.limit_bytes is not None and limit_bytes > self.limit_bytes
            writes = [swap, *writes] if raising else [*writes, swap]
        for name, value in writes:
            _write(os.path.join(self.path, name), value)
        self.limit_bytes = limit_bytes

    def adopt(self, root_pid: int) -> None:
        """Move `root_pid` and every process below it into this cgroup."""
        for pid in process_tree(root_pid):
            try:
                _write(os.path.join(self.path, "cgroup.procs"), str(pid))
            except ProcessLookupError:  # it ended meanwhile
                pass

    def oom_kills(self) -> int:
        """How many of its processes the kernel has killed for going over the cap."""
        name, key = ("memory.events", "oom_kill") if self.hierarchy.version == 2 else ("memory.oom_control", "oom_kill")
        try:
            with open(os.path.join(self.path, name)) as counters:
                for line in counters:
                    field, _, value = line.partition(" ")
                    if field == key:
                        return int(value)
        except OSError:
            pass
        return 0

    def remove(self) -> None:
        """Remove the cgroup; its processes must be dead (they may take a moment to leave it)."""
        deadline = time.monotonic() + REMOVE_WAIT_S
        while True:
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError as error:
                if time.monotonic() > deadline:
                    _logger.warning("could not remove the sandbox cgroup %s: %s", self.path, error)
                    return
                time.sleep(0.02)


def process_tree(root_pid: int, proc: str = "/proc") -> list[int]:
    """`root_pid` and its descendants, parents first, read from /proc/<pid>/stat."""
    children: dict[int, list[int]] = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/stat") as stat:
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses
                parent = int(stat.read().rpartition(")")[2].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, queue = [], [root_pid]
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue.extend(sorted(children.get(pid, ())))
    return found


def _write(path: str, value: str) -> None:
    with open(path, "w") as target:
        target.write(value)


def _chosen(folder: str, mounts: list[tuple[str, str, str, str]]) -> MemoryHierarchy | str:
    """The operator's `RLENVS_SANDBOX_CGROUP`."""
    fix = f"set {FOLDER_VARIABLE} to a writable memory cgroup folder, or unset it"
    real = os.path.realpath(folder)
    mount = next((m for m in mounts if real == m[0] or real.startswith(m[0].rstrip("/") + "/")), None)
    if mount is None or not os.path.isdir(real):
        return f"{FOLDER_VARIABLE}={folder} is not a folder of a mounted cgroup hierarchy: {fix}"
    if not os.access(real, os.W_OK):
        return f"{FOLDER_VARIABLE}={folder} is not writable by this user: {fix}"
    if mount[2] == CGROUP2:
        enabled = _words(os.path.join(real, "cgroup.subtree_control"))
        if "memory" not in enabled:
            return (
                f"{FOLDER_VARIABLE}={folder}: its cgroup.subtree_control does not enable memory "
                f"(`echo +memory > {real}/cgroup.subtree_control`, with no process in it): {fix}"
            )
        return MemoryHierarchy(real, 2)
    if "memory" not in mount[3].split(","):
        return f"{FOLDER_VARIABLE}={folder} is in a cgroups v1 hierarchy without the memory controller: {fix}"
    return MemoryHierarchy(real, 1)


def _own_v2(mounts: list[tuple[str, str, str, str]], membership: str) -> MemoryHierarchy | str:
    unified = [m for m in mounts if m[2] == CGROUP2]
    if not unified:
        return "no cgroup v2 hierarchy is mounted"
    own = _own_cgroup(membership, lambda controllers: controllers == "")
    if own is None:
        return "this process belongs to no cgroup v2 (/proc/self/cgroup has no 0:: line)"
    folder = _folder_of(own, unified)
    if folder is None:
        return f"this process's cgroup v2 {own} is not under a cgroup2 mount"
    if "memory" not in _words(os.path.join(folder, "cgroup.controllers")):
        return f"the cgroup v2 hierarchy at {folder} offers no memory controller (a cgroups v1 hierarchy holds it)"
    if "memory" not in _words(os.path.join(folder, "cgroup.subtree_control")):
        return (
            f"this process's cgroup v2 {folder} does not give its children the memory controller: v2 allows "
            f"that only to a cgroup without processes; start rlenvs in a delegated cgroup and set "
            f"{FOLDER_VARIABLE} to an empty child of it whose cgroup.subtree_control has +memory"
        )
    if not os.access(folder, os.W_OK):
        return f"{folder} is not writable by this user: the host did not delegate the cgroup to it"
    return MemoryHierarchy(folder, 2)


def _own_v1(mounts: list[tuple[str, str, str, str]], membership: str) -> MemoryHierarchy | str:
    memory = [m for m in mounts if m[2] != CGROUP2 and "memory" in m[3].split(",")]
    if not memory:
        return "no cgroups v1 memory hierarchy is mounted"
    own = _own_cgroup(membership, lambda controllers: "memory" in controllers.split(","))
    if own is None:
        return "this process is in no cgroups v1 memory cgroup (/proc/self/cgroup has no memory line)"
    folder = _folder_of(own, memory)
    if folder is None:
        return f"this process's v1 memory cgroup {own} is not under a mounted memory hierarchy"
    if not os.access(folder, os.W_OK):
        return f"the v1 memory cgroup {folder} is not writable by this user (not root, not delegated)"
    return MemoryHierarchy(folder, 1)


def _cgroup_mounts(mountinfo: str) -> list[tuple[str, str, str, str]]:
    """(mount point, root of the hierarchy it shows, file system type, super options) of every
    cgroup and cgroup2 mount."""
    found = []
    with open(mountinfo) as lines:
        for line in lines:
            fields = line.split()
            separator = fields.index("-")
            kind = fields[separator + 1]
            if kind in ("cgroup", CGROUP2):
                options = fields[separator + 3] if len(fields) > separator + 3 else ""
                found.append((fields[4], fields[3], kind, options))
    return found


def _own_cgroup(membership: str, wanted: Callable[[str], bool]) -> str | None:
    """The path of this process's cgroup in the hierarchy whose controllers field `wanted` accepts."""
    with open(membership) as lines:
        for line in lines:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if wanted(controllers):
                return path
    return None


def _folder_of(cgroup: str, mounts: list[tuple[str, str, str, str]]) -> str | None:
    """Where the cgroup `cgroup` (a path in the hierarchy) is in this process's file system."""
    for point, root, _, _ in mounts:
        if cgroup == root or cgroup.startswith(root.rstrip("/") + "/"):
            return os.path.normpath(os.path.join(point, os.path.relpath(cgroup, root)))
    return None


def _words(path: str) -> list[str]:
    try:
        with open(path) as text:
            return text.read().split()
    except OSError:
        return []


def _remove_orphans(hierarchy: MemoryHierarchy) -> None:
    """Remove the empty sandbox cgroups that processes no longer alive left behind (killed
    before they could remove their own)."""
    try:
        names = os.listdir(hierarchy.folder)
    except OSError:
        return
    for name in names:
        owner = name[len(PREFIX) :].partition("-")[0] if name.startswith(PREFIX) else ""
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            try:
                os.rmdir(os.path.join(hierarchy.folder, name))
            except OSError:
                pass
