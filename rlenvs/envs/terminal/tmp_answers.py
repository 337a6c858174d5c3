"""Which of the agent's /tmp a task's tests see: the paths its instruction names.

/tmp is the agent's and the tests' both. Terminal-Bench and Harbor run the tests in the
container the agent left, and tasks ask for answers there (/tmp/audit_result.json: 204 of
TermiGen's 3,566 instructions name a /tmp path), so the verdict keeps /tmp. But tests also
write their own scratch there (`reference.py > /tmp/expected.txt`, `cp -r /tests
/tmp/grader`, a test file copied to /tmp and run there), and whatever the agent left at such
a name changes what they do: a folder where the reference goes (`>` fails, `diff FILE DIR`
then compares with the agent's copy inside), a read-only file there, a folder `cp -r` copies
into instead of making, a `conftest.py` pytest loads beside a test file copied to /tmp. The
red team made each of those score 1 without the task; no rule about kinds of entries closes
them all, because the harm is in the name.

So before the tests run, every entry the agent made or changed in /tmp is removed unless it
is at or below a path the task's instruction names (`/tmp/result.json`, `/tmp/out/`, a
pattern: `/tmp/report_*.csv`, `/tmp/<name>.log`), or a folder on the way to one. What the
image put there and the agent left alone stays (a task's inputs), and so does the workspace
where an image has it below /tmp. A bare "/tmp" names nothing: "use /tmp for scratch" says
the opposite. A correct agent's own scratch (a venv, a clone, ~/.cache where HOME is /tmp)
then neither reaches the tests nor fails the verdict; what is left of the agent's is its
answer, where no link or second name may send a test's write elsewhere
(`rlenvs.envs.terminal.links.redirecting_entries`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence

_TMP_PATH = re.compile(r"/tmp/[^\s'\"`,;()\[\]|]+")
"""A /tmp path as an instruction writes it: up to a space, a quote, a bracket or a list's comma."""
_PLACEHOLDER = re.compile(r"<[^<>/]*>|\{[^{}/]*\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
"""`<name>`, `{date}`, `$USER`: a part of a named path the agent chooses, a wildcard here."""


def named_paths(instruction: str) -> tuple[str, ...]:
    """The /tmp paths `instruction` names, as fnmatch patterns, in order, without repeats."""
    found = []
    for match in _TMP_PATH.finditer(instruction):
        path = _PLACEHOLDER.sub("*", match.group().rstrip(".:!?*")).rstrip("/")
        if path.startswith("/tmp/"):
            found.append(path)
    return tuple(dict.fromkeys(found))


def kept(path: str, named: Sequence[str]) -> bool:
    """Whether the agent's entry at `path` (absolute, in /tmp) is part of an answer `named`
    asks for: a match, below one, or a folder on the way to one."""
    parts = path.strip("/").split("/")
    for pattern in named:
        wanted = pattern.strip("/").split("/")
        depth = min(len(parts), len(wanted))
        if all(fnmatch.fnmatchcase(part, want) for part, want in zip(parts[:depth], wanted[:depth], strict=True)):
            return True  # `path` is the match, below it, or a folder on the way
    return False


def discarded(paths: Iterable[str], named: Sequence[str], workspace: str) -> list[str]:
    """Of the agent's entries in /tmp (`paths`), the topmost ones to remove before the tests
    run: those not `kept`, outside the workspace, not below another removed one."""
    workspace = workspace.rstrip("/")
    removed: list[str] = []
    for path in sorted(paths, key=lambda p: (p.count("/"), p)):
        if path == workspace or path.startswith(workspace + "/") or workspace.startswith(path + "/"):
            continue
        if any(path.startswith(gone + "/") for gone in removed) or kept(path, named):
            continue
        removed.append(path)
    return sorted(removed)
