"""Where a task's own PATH and PYTHONPATH entries go in a verdict's test run.

A task folder's Dockerfile may name the workspace in its variables: `ENV PYTHONPATH=/app` so
that the tests import the agent's modules, `ENV PATH=/app/node_modules/.bin:/usr/bin:/bin`
so that they find the tools the task installs there. Taken as they are, they hand whoever
writes the workspace what every program of the tests runs: with PYTHONPATH=/app an
`/app/encodings/__init__.py` runs at the start of every python3 (before any sitecustomize
could move /app) and an `/app/pathlib.py` shadows Python's; with that PATH an
`/app/node_modules/.bin/python3` is the tests' python3. So each entry is kept where the task
put it only when nothing of the agent's, or of what the tests run, can write below it
(`writable`): the system's /usr and the verdict's read-only folders. The others, the
workspace's, /tmp's, /dev/shm's and relative ones, keep the task's meaning (its modules
import, its tools run) but come after what the system has:

- PATH (`ordered_path`): the task's other entries in their order, then the system folders of
  `rlenvs.sandbox.shells.verdict.SYSTEM_PATH` it left out, then the writable entries;
- PYTHONPATH (`split_python_path`): the others stay on PYTHONPATH, after the verdict's own site
  folder; the writable ones move to `LATE_PYTHONPATH`, which the verdict's sitecustomize
  puts at the end of sys.path, after the standard library and what is installed, as it puts
  the start folder of `python3 -m` and `-c`.

So an agent's module named like a standard one (`statistics.py`) is not what the tests
import, whatever the task's PYTHONPATH says; that is the cost, as for the start folder.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

LATE_PYTHONPATH = "RLENVS_LATE_PYTHONPATH"
"""The variable holding the task's writable PYTHONPATH entries, for the verdict's
sitecustomize to append to sys.path."""


def writable(entry: str, *, scratch: Iterable[str], read_only: str, inside: Iterable[str]) -> bool:
    """Whether something other than the system could write below the search-path `entry`:
    relative (to wherever a program starts), or under one of the `scratch` folders (the
    workspace, /tmp, /dev/shm) but not under the verdict's `read_only` root, unless under
    one of the folders `inside` it that stay writable. Read as text, "." and ".." applied:
    only the system's own links (/bin into /usr) are on the way to the others."""
    if not entry.startswith("/"):
        return True
    path = posixpath.normpath(entry)

    def under(folder: str) -> bool:
        return path == folder or path.startswith(folder.rstrip("/") + "/")

    if under(read_only) and not any(under(folder) for folder in inside):
        return False
    return any(under(folder) for folder in scratch)


def ordered_path(task_path: str | None, system_path: str, is_writable: Callable[[str], bool]) -> str:
    """The tests' PATH from the task's (`None`: the system's own): its entries that
    `is_writable` refuses first, in its order, then the folders of `system_path` it left
    out, then its writable entries."""
    if task_path is None:
        return system_path
    entries = task_path.split(":")
    kept = [entry for entry in entries if not is_writable(entry)]
    late = [entry for entry in entries if is_writable(entry)]
    system = [folder for folder in system_path.split(":") if folder not in kept]
    return ":".join([*kept, *system, *late])


def split_python_path(task_path: str | None, is_writable: Callable[[str], bool]) -> tuple[str, str]:
    """The task's PYTHONPATH split into what stays on it and what goes to `LATE_PYTHONPATH`."""
    entries = [entry for entry in (task_path or "").split(":") if entry]
    kept = ":".join(entry for entry in entries if not is_writable(entry))
    return kept, ":".join(entry for entry in entries if is_writable(entry))
