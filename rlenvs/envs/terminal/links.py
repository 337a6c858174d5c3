"""Which links the agent left that a task's own tests must not be run against.

A task folder's tests read the workspace after the episode, in the same sandbox, as
whichever process they are. A link the agent left there is read by that process, so a link
into /proc (`/proc/self/fd/4`, `/proc/self/cwd/expected.txt`, `/proc/self/root/...`, which
is `/` again) or into the /dev links that lead there (`/dev/fd/4`, `/dev/stdin`: a test's
stdin or stdout may be its own expected file, `diff /app/out.txt - < expected.txt`) hands the
test its own files: the expected output it just opened reads as the answer. So does a link
into the verdict's own folders (its tests, logs and scratch, in /dev/shm, which is emptied
before the tests run), and one into /tmp, where tests write their own scratch, such as the
reference output they compare the answer with (`reference.py > /tmp/expected.txt`). No
answer is ever such a link.

The rule (`forbidden_links`): a workspace link fails the verdict when its target, followed
through the agent's other links with "." and ".." applied step by step (".." stops at
"/"), is at any step under /proc, /dev/fd, /dev/stdin, /dev/stdout, /dev/stderr, /dev/core
(the links of the sandbox's /dev into /proc) or one of the folders the caller names (the
env: /tmp and /dev/shm, `rlenvs.sandbox.shells.verdict.SCRATCH_FOLDERS`), but for the
workspace itself where it is one of theirs (an image's `WORKDIR /tmp/project`). "At any step", because the
kernel resolves what follows a /proc link from where that link leads, which no reading of
the text can know (`/proc/self/cwd/../..`). The agent's other links are the workspace's, and
those it left elsewhere (`elsewhere`: in /tmp, and on an image wherever the episode changed
it, since there the agent is root): a workspace link through `/etc/x` to /proc is one too.
Links anywhere else are fine: to /dev/null, to /etc or /usr, to another workspace file, to
nothing at all.

/tmp is the agent's and the tests' both: the verdict keeps it (tasks read answers there, as
Terminal-Bench and Harbor keep it), and tests write their own scratch there
(`reference.py > /tmp/expected.txt`). So an entry the agent left in /tmp that would send
such a write elsewhere, a link or a file with a second name (a hard link, whose other name
could be the answer's), fails the verdict too (`redirecting_entries`): the test would write
its reference into the answer, or read the answer as its reference.
"""

from __future__ import annotations

import os
import stat
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


def forbidden_links(
    links: Mapping[str, str],
    workdir: str,
    folders: Iterable[str] = (),
    elsewhere: Mapping[str, str] | None = None,
) -> list[tuple[str, str]]:
    """The links of `links` (workspace path: target, the workspace being at `workdir` in the
    sandbox) and of `elsewhere` (the agent's links outside it, by absolute path) that lead,
    at any step through all of them, under `PROCESS_FILES` or under one of `folders` (where
    the verdict's and the tests' own files are) but not into the workspace, as (path,
    target): the workspace's in path order, then the others'."""
    roots = tuple(_clean(folder) for folder in (*PROCESS_FILES, *folders))
    top = _clean(workdir)
    others = dict(elsewhere or {})
    absolute = {**others, **{f"{top}/{path}": target for path, target in links.items()}}
    found = [(path, links[path]) for path in sorted(links) if _reaches(f"{top}/{path}", absolute, roots, top)]
    return found + [(path, others[path]) for path in sorted(others) if _reaches(path, absolute, roots, top)]


def redirecting_entries(entries: Iterable[tuple[str, os.stat_result]]) -> list[str]:
    """The paths of `entries` (the agent's entries in /tmp, with what lstat says of each) that
    would send a test's write there elsewhere: a symlink, or a file with another name."""
    return [
        path
        for path, info in entries
        if stat.S_ISLNK(info.st_mode) or (not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1)
    ]


def _reaches(path: str, links: Mapping[str, str], roots: tuple[str, ...], workspace: str) -> bool:
    """Whether resolving `path` through `links` passes under one of `roots`, not in `workspace`,
    once it follows a link (where the link itself is, /tmp/project for a workspace there, is
    not where it leads; nor is /tmp on the way into that workspace)."""
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
        inside = here == workspace or here.startswith(workspace + "/")
        on_the_way = bool(parts) and workspace.startswith(here + "/")
        if hops and not (inside or on_the_way) and any(here == root or here.startswith(root + "/") for root in roots):
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
