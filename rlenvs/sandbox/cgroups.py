"""Whether this host could give each sandbox a memory cgroup of its own.

rlimits cap each process (address space, processes, file size), and the tmpfs sizes cap the
files; what neither counts is the kernel memory a sandbox makes the host spend on its behalf,
and the sum over its processes. A cgroup v2 with the memory controller (memory.max,
pids.max) counts both, but only where the host hands one to this user: a cgroup v2
hierarchy, its memory controller enabled there (not held by a cgroups v1 mount, as in the
"hybrid" layout), and this process's cgroup writable (delegated, or root). The sandbox does
not place its workers in one yet; `memory_cgroup_absence` says, for docs/sandbox.md and for
the operator, whether this host could.
"""

from __future__ import annotations

import os

CGROUP2 = "cgroup2"


def memory_cgroup_absence(mountinfo: str = "/proc/self/mountinfo", membership: str = "/proc/self/cgroup") -> str | None:
    """Why this process has no writable cgroup v2 with the memory controller, or None where
    it has one (this process's cgroup folder, writable, offers "memory")."""
    mounts = _cgroup2_mounts(mountinfo)
    if not mounts:
        return "no cgroup v2 hierarchy is mounted: the host has cgroups v1 only (or none)"
    own = _own_cgroup(membership)
    if own is None:
        return "this process belongs to no cgroup v2 (/proc/self/cgroup has no 0:: line)"
    folder = _folder_of(own, mounts)
    if folder is None:
        return f"this process's cgroup v2 {own} is not under any cgroup2 mount ({', '.join(mounts)})"
    try:
        with open(os.path.join(folder, "cgroup.controllers")) as controllers:
            offered = controllers.read().split()
    except OSError as error:
        return f"{folder}/cgroup.controllers cannot be read: {error}"
    if "memory" not in offered:
        return (
            f"the cgroup v2 hierarchy at {folder} offers no memory controller (only {' '.join(offered) or 'none'}): "
            "on a cgroups v1 or hybrid host the v1 memory hierarchy holds it"
        )
    if not os.access(folder, os.W_OK) or not os.access(os.path.join(folder, "cgroup.subtree_control"), os.W_OK):
        return f"{folder} is not writable by this user: the host did not delegate the cgroup to it"
    return None


def _cgroup2_mounts(mountinfo: str) -> dict[str, str]:
    """{mount point: root of the hierarchy it shows} of every cgroup2 mount."""
    found = {}
    with open(mountinfo) as lines:
        for line in lines:
            fields = line.split()
            separator = fields.index("-")
            if fields[separator + 1] == CGROUP2:
                found[fields[4]] = fields[3]
    return found


def _own_cgroup(membership: str) -> str | None:
    with open(membership) as lines:
        for line in lines:
            if line.startswith("0::"):
                return line[3:].strip()
    return None


def _folder_of(cgroup: str, mounts: dict[str, str]) -> str | None:
    """Where the cgroup `cgroup` (a path in the hierarchy) is in this process's file system."""
    for point, root in mounts.items():
        if cgroup == root or cgroup.startswith(root.rstrip("/") + "/"):
            return os.path.normpath(os.path.join(point, os.path.relpath(cgroup, root)))
    return None
