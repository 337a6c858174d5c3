"""Which workspace links a task's own tests must not be run against.

A task folder's tests read the workspace after the episode, in the same sandbox, as
whichever process they are. A link the agent left there is read by that process, so a link
into /proc (`/proc/self/fd/4`, `/proc/self/cwd/expected.txt`, `/proc/self/root/...`, which
is `/` again) or into the /dev links that lead there (`/dev/fd/4`, `/dev/stdin`: a test's
stdin or stdout may be its own expected file, `diff /app/out.txt - < expected.txt`) hands the
test its own files: the expected output it just opened reads as the answer. So does a link
into the verdict's own folders (its tests, logs and scratch), and one into /tmp or /dev/shm,
which are emptied before the tests run: what is there then is the verdict's and the tests'
own scratch, such as the reference output a test writes there to compare the answer with
(`reference.py > /tmp/expected.txt`). No answer is ever such a link.

The rule (`forbidden_links`): a workspace link fails the verdict when its target, followed
through the workspace's other links with "." and ".." applied step by step (".." stops at
"/"), is at any step under /proc, /dev/fd, /dev/stdin, /dev/stdout, /dev/stderr, /dev/core
(the links of the sandbox's /dev into /proc) or one of the folders the caller names (the
env: /tmp and /dev/shm, `rlenvs.sandbox.shells.verdict.SCRATCH_FOLDERS`). "At any step",
because the kernel resolves what follows a /proc link from where that link leads, which no
reading of the text can know (`/proc/self/cwd/../..`). Links anywhere else are fine: to
/dev/null, to /etc or /usr, to another workspace file, to nothing at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from rlenvs.envs.terminal.tree import MAX_TREE_ENTRIES, walk

PROCESS_FILES = ("/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/core")
"""Where a path leads into the files of the process that reads it (or the kernel's)."""
MAX_LINK_HOPS = 40
"""The kernel's own limit on links followed in one path (ELOOP past it)."""


def workspace_links(root: str | os.PathLike) -> dict[str, str]:
    """Every symlink of the workspace at `root` (its path relative to `root`: its target),
    read from the host. Up to `MAX_TREE_ENTRIES` entries at any depth: a verdict that only
    needs the links is not bound by `read_workspace`'s caps for expectations."""
    return {
        found.path: os.readlink(found.name, dir_fd=found.dir_fd)
        for found in walk(root, max_entries=MAX_TREE_ENTRIES)
        if found.entry.is_symlink()
    }


def forbidden_links(links: Mapping[str, str], workdir: str, folders: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The links of `links` (workspace path: target, the workspace being at `workdir` in the
    sandbox) that lead, at any step, under `PROCESS_FILES` or under one of `folders` (where
    the verdict's and the tests' own files are), as (path, target) in path order."""
    roots = tuple(_clean(folder) for folder in (*PROCESS_FILES, *folders))
    top = _clean(workdir)
    absolute = {f"{top}/{path}": target for path, target in links.items()}
    return [(path, links[path]) for path in sorted(links) if _reaches(f"{top}/{path}", absolute, roots)]


def _reaches(path: str, links: Mapping[str, str], roots: tuple[str, ...]) -> bool:
    """Whether resolving `path` through `links` passes under one of `roots`."""
    parts, hops = path.split("/"), 0
    done: list[str] = []
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            done = done[:-1]  # the kernel's ".." at "/" stays at "/"
            continue
        done.append(part)
        here = "/" + "/".join(done)
        if any(here == root or here.startswith(root + "/") for root in roots):
            return True
        target = links.get(here)
        if target is not None:
            hops += 1
            if hops > MAX_LINK_HOPS:  # a loop: the kernel gives up too (ELOOP)
                return False
            done = [] if target.startswith("/") else done[:-1]
            parts = target.split("/") + parts
    return False


def _clean(path: str) -> str:
    return "/" + "/".join(part for part in path.split("/") if part)
