"""The oracle of Terminal-v2: the reference solution, from wherever the episode stands.

A task's reference solution is a list of shell commands written for the workspace the task
starts with and for a shell in its start state (the working directory, no variables,
functions or aliases of the agent's). Replayed blindly after the agent's own commands it
fails in silence: a `sed -i` on a file the agent already edited, a relative path after a
`cd`, a `sort` shadowed by a function. So the oracle keeps track of where the plan stands:

- `Mark`: how many reference commands have run, and the workspace and shell they left (a
  `Tree` of every entry's kind, mode, mtime and content digest, read from the host as the
  verifier reads it; the shell's state as the session keeps it). A command of the agent's
  that leaves both as they were (`ls -la`, `cat`, `grep`) leaves the plan valid: the next
  reference command follows.
- Otherwise the oracle re-plans in one reply (`replay_command`): a fresh bash with nothing
  of the agent's shell (`env -i`, absolute paths, which no alias or function can shadow)
  that, where the workspace changed, first puts it back as the task started (the entries
  that differ, from the task's own files and the start `Tree`; or, where a changed entry
  was made by the task's setup script, the whole workspace again and that script), then
  runs the remaining reference commands exactly as the session runs commands (each in a
  fresh bash resuming the state the previous one left), then submits.
- It refuses, with the reason, what it cannot do: a task without a reference solution, a
  restore larger than one command may be (`MAX_COMMAND_BYTES`).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import shlex
import stat
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rlenvs.envs.terminal.tasks import Entry, TerminalTask
from rlenvs.envs.terminal.tree import WorkspaceUnreadable, walk
from rlenvs.envs.terminal.workspace import read_file
from rlenvs.sandbox.guest.shell import SAFE_ENV, SHELL_SESSION
from rlenvs.sandbox.shells.rootfs import EpisodeImage
from rlenvs.sandbox.shells.session import MAX_COMMAND_BYTES, SessionError, ShellSession
from rlenvs.sandbox.shells.verdict import SCRATCH_FOLDERS

DIGEST_LIMIT = 1 << 20
"""Files up to this size are compared by content; a larger one by its size, times and inode
(a change to it shows in its ctime, which no command can set back)."""
MAX_ENTRIES = 20_000
"""Entries the oracle looks at (one walk at each reset): a workspace past it is unknown to
it, so that a change there is put right by writing all of it again."""
DIGEST_BUDGET = 8 << 20
"""Bytes read for content digests per look at the workspace (one at each reset): a task
folder's large /app is compared by ctime and inode past it, so a reset stays cheap."""

VOLATILE = frozenset((
    "BASHPID", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0", "BASH_COMMAND", "BASH_LINENO", "BASH_REMATCH", "BASH_SOURCE",
    "BASH_SUBSHELL", "COMP_WORDBREAKS", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "FUNCNAME", "GROUPS", "HISTCMD",
    "LINENO", "OLDPWD", "PIPESTATUS", "PWD", "RANDOM", "SECONDS", "SRANDOM", "_", "__rlenvs_command",
))  # fmt: skip
"""Variables bash itself sets anew at every command (and PWD, which the state's `cd` line
holds): they differ after any command, so they say nothing about what the agent changed."""
_DECLARATION = re.compile(r"declare -\S+ ([A-Za-z_][A-Za-z0-9_]*)(?:=|$)")


class OracleError(RuntimeError):
    """The oracle cannot give a reply that earns the maximum from here; the message says why."""


@dataclass(frozen=True)
class Node:
    """What the oracle compares of one entry. Two equal nodes are the same for every command
    of a reference solution (reads change none of it: atime is left out)."""

    kind: str
    """"f" file, "d" folder, "l" symlink, "p" FIFO, "o" anything else."""
    mode: int
    mtime_ns: int
    size: int = 0
    digest: bytes | None = None
    """A file's content (blake2b), None when over DIGEST_LIMIT."""
    target: str | None = None
    """A symlink's target."""
    nlink: int = 1
    change: tuple[int, int] | None = None
    """(ctime_ns, inode) of a file compared without its content."""


Tree = dict[str, Node]
"""Workspace entries by path relative to it ("" is the workspace itself), then the scratch
folders' entries by absolute path (/tmp/x)."""


def read_tree(session: ShellSession) -> Tree | None:
    """The workspace (and, in the bubblewrap sandbox, /tmp and /dev/shm) as `Node`s, read from
    the host without following a link; None when it cannot be read whole."""
    try:
        top = os.lstat(session.workspace_path)
        tree: Tree = {"": Node("d", stat.S_IMODE(top.st_mode), top.st_mtime_ns)}
        budget = [DIGEST_BUDGET]
        _read_into(tree, session.workspace_path, "", budget)
        if not session.unsafe:
            for folder in SCRATCH_FOLDERS:
                _read_into(tree, session.host_path(folder), folder + "/", budget)
    except (OSError, SessionError, WorkspaceUnreadable):
        return None
    return tree


def _read_into(tree: Tree, root: str, prefix: str, budget: list[int]) -> None:
    for found in walk(root, max_entries=MAX_ENTRIES):
        info = found.entry.stat(follow_symlinks=False)
        mode, mtime = stat.S_IMODE(info.st_mode), info.st_mtime_ns
        if stat.S_ISREG(info.st_mode):
            data = None
            if info.st_size <= min(DIGEST_LIMIT, budget[0]):
                data = read_file(found.name, found.dir_fd, info, DIGEST_LIMIT)
                budget[0] -= info.st_size
            if data is None:
                node = Node("f", mode, mtime, info.st_size, nlink=info.st_nlink, change=(info.st_ctime_ns, info.st_ino))
            else:
                node = Node("f", mode, mtime, len(data), _digest(data), nlink=info.st_nlink)
        elif stat.S_ISDIR(info.st_mode):
            node = Node("d", mode, mtime)
        elif stat.S_ISLNK(info.st_mode):
            node = Node("l", 0, mtime, target=os.readlink(found.name, dir_fd=found.dir_fd))
        else:
            node = Node("p" if stat.S_ISFIFO(info.st_mode) else "o", mode, mtime)
        tree[prefix + found.path] = node


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass(frozen=True)
class Mark:
    """Where the reference plan stands: `index` of its commands have run, and `tree` and
    `shell` are what they left (shell None: the episode's start state), as last seen at
    `turn`."""

    index: int
    turn: int
    tree: Tree | None
    shell: str | None


def unchanged(mark: Mark, tree: Tree | None, shell: str, start: str) -> tuple[bool, bool]:
    """Whether the workspace and the shell are as `mark` left them (`start`: the start state,
    for a mark at the episode's start)."""
    same_tree = tree is not None and tree == mark.tree
    same_shell = shell_key(shell) == shell_key(mark.shell if mark.shell is not None else start)
    return same_tree, same_shell


# --- the shell --------------------------------------------------------------------------------


def shell_key(state: str) -> tuple[str, ...]:
    """A shell state (`ShellSession.shell_state`) without what bash changes at every command:
    two states with the same key run every command alike."""
    return tuple(line for line in state.splitlines() if not _volatile(line))


def _volatile(line: str) -> bool:
    match = _DECLARATION.match(line)
    return match is not None and match.group(1) in VOLATILE


_START_STATES: dict[tuple[bool, EpisodeImage | None, str, tuple[tuple[str, str], ...]], str] = {}
"""The shell state a session starts an episode in, as its commands save it, by (unsafe, image,
workspace, the task's variables): the same for every episode with those."""


def start_state(session: ShellSession, workdir: str, environment: tuple[tuple[str, str], ...]) -> str:
    """The state a session's first command starts from, as a saved state reads (a session
    keeps only the task's `export` lines until its first command has run): asked of the
    sandbox once per (workspace, variables) in a fresh shell, which changes nothing."""
    key = (session.unsafe, session.image, workdir, environment)
    if key not in _START_STATES:
        shown = session.run(start_lines(environment) + "__rlenvs_save 3>&1", fresh=True)
        if not shown.ok or not shown.stdout.startswith("builtin cd -- "):
            raise SessionError(f"the shell's start state could not be read: {shown.status} {shown.detail}")
        _START_STATES[key] = shown.stdout
    return _START_STATES[key]


def start_lines(environment: Sequence[tuple[str, str]]) -> str:
    """The state a session is reset with: the task's variables, exported (as the env does)."""
    return "".join(f"builtin declare -x {name}={shlex.quote(value)}\n" for name, value in environment)


def umask_of(state: str) -> str:
    """The `umask 0022` line of a saved state ("" when it has none)."""
    return next((line for line in state.splitlines() if line.startswith("umask ")), "")


# --- putting the workspace back ---------------------------------------------------------------


def restore_script(task: TerminalTask, start: Tree | None, now: Tree | None, unsafe: bool) -> str:
    """Bash, run in the workspace, that makes it (and /tmp, /dev/shm) as the episode started:
    only what differs where every changed entry's content is known (the task's files, the
    start tree's folders, links and times), else all of it again and the setup script."""
    if start is not None and now is not None:
        script = _differences(task.files, start, now)
        if script is not None:
            return script
    if task.image is not None:
        raise OracleError(
            f"task {task.task_id}: the episode changed files of its image, which the oracle cannot put back (it "
            "knows a task's own files, and an image's come from its Dockerfile): call oracle_action() from the "
            "start of an episode, or reset()"
        )
    return _from_scratch(task, start, unsafe)


def _differences(files: Sequence[Entry], start: Tree, now: Tree) -> str | None:
    """The commands that turn `now` into `start`, or None when a changed file's content is
    not one of the task's own (its setup script made it) or it has other names."""
    if any(node.kind == "d" and node.mode & 0o500 != 0o500 for node in now.values()):
        return None  # a folder the host may not have read whole (chmod 000): what is in it is unknown
    contents = {_digest(entry.data): entry.data for entry in files if not entry.is_dir}
    changed = {path for path in set(start) | set(now) if start.get(path) != now.get(path)}
    lines = ["set -e"]
    locked = sorted(path for path, node in now.items() if node.kind == "d" and node.mode & 0o700 != 0o700)
    lines += [f"chmod u+rwx -- {_q(path)}" for path in locked]  # so that entries can go and come
    gone = sorted(path for path in changed if path in now and (path not in start or start[path].kind != now[path].kind))
    gone = [path for path in gone if not any(path.startswith(other + "/") for other in gone if other != path)]
    lines += [f"rm -rf -- {_q(path)}" for path in gone]
    for path in sorted((path for path in changed if path in start), key=lambda p: p.count("/")):
        node, old = start[path], now.get(path)
        present = old is not None and path not in gone and not any(path.startswith(g + "/") for g in gone)
        if node.kind == "d":
            if not present:
                lines.append(f"mkdir -p -- {_q(path)}")
        elif node.kind == "f":
            if node.nlink > 1 or (old is not None and old.nlink > 1 and present and old.digest != node.digest):
                return None
            if (
                not present
                or old is None
                or old.digest != node.digest
                or old.size != node.size
                or old.change is not None
            ):
                data = contents.get(node.digest) if node.digest is not None else None
                if data is None:
                    return None
                lines.append(f"printf %s {base64.b64encode(data).decode()} | base64 -d > {_q(path)}")
            lines.append(f"chmod {node.mode:o} -- {_q(path)}")
        elif node.kind == "l":
            if present:  # the same kind with another target
                lines.append(f"rm -f -- {_q(path)}")
            lines.append(f"ln -s -- {_q(node.target or '')} {_q(path)}")
        elif node.kind == "p":
            if not present:
                lines.append(f"mkfifo -- {_q(path)}")
            lines.append(f"chmod {node.mode:o} -- {_q(path)}")
        else:
            return None
        if node.kind != "d":
            lines.append(f"touch -h -m -d @{_seconds(node.mtime_ns)} -- {_q(path)}")
    folders = [path for path, node in start.items() if node.kind == "d"]
    for path in sorted(folders, key=lambda p: -p.count("/") if p else 1):  # deepest first, the workspace last
        node = start[path]
        lines += [f"chmod {node.mode:o} -- {_q(path)}", f"touch -m -d @{_seconds(node.mtime_ns)} -- {_q(path)}"]
    return "\n".join(lines) + "\n"


def _from_scratch(task: TerminalTask, start: Tree | None, unsafe: bool) -> str:
    """Empty the workspace (and scratch folders), write the task's files as the reset does,
    and run its setup script in a fresh shell, as the reset runs it."""
    folders = ". " + " ".join(SCRATCH_FOLDERS) if not unsafe else "."
    lines = [
        "set -e",
        f"chmod -R u+rwX -- {folders} 2>/dev/null || true",
        f"find {folders} -mindepth 1 -delete",
    ]
    if task.files:
        lines.append(
            f"printf %s {_archive(task.files, start)} | base64 -d | tar -xzf - --preserve-permissions --delay-directory-restore"
        )
    if start is not None:
        lines.append(f"chmod {start[''].mode:o} .")
    if task.setup_script:
        lines.append(
            f'printf "" | /bin/bash --noprofile --norc -c "$session" bash {_q(task.setup_script)} 3>/dev/null >/dev/null'
        )
    return "\n".join(lines) + "\n"


def _archive(files: Sequence[Entry], start: Tree | None) -> str:
    """The task's files as a base64 .tar.gz that keeps their modes and times: those the reset
    gave them (the start tree's), else their own, else the time of the restore, as the reset
    gives a file without one the time of the reset. No time of its own in the gzip header:
    the same episode gets the same reply."""
    now = time.time()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for entry in files:
            info = tarfile.TarInfo(entry.path)
            info.type = tarfile.DIRTYPE if entry.is_dir else tarfile.REGTYPE
            info.mode = entry.mode if entry.mode is not None else (0o755 if entry.is_dir else 0o644)
            node = start.get(entry.path) if start is not None else None
            info.mtime = node.mtime_ns / 1e9 if node is not None else entry.mtime if entry.mtime is not None else now
            info.size = 0 if entry.is_dir else len(entry.data)
            archive.addfile(info, None if entry.is_dir else io.BytesIO(entry.data))
    return base64.b64encode(gzip.compress(buffer.getvalue(), mtime=0)).decode()


def _seconds(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def _q(path: str) -> str:
    return shlex.quote(path) if path else "."


def session_program() -> tuple[str, dict[str, str]]:
    """The session's program of one command and the variables its bash starts with, for the
    re-planning reply to run commands exactly as the session does (`sandbox/guest/shell`)."""
    return SHELL_SESSION, dict(SAFE_ENV)


# --- the one reply ------------------------------------------------------------------------------

_PROGRAM = """\
workdir=$1 restore=$2 session=$3 state=$4; shift 4
builtin cd -- "$workdir" || { echo "[oracle] cannot enter $workdir"; exit 1; }
if [ -n "$restore" ]; then
  ( eval "$restore" ) || { echo "[oracle] the workspace could not be put back as the task started"; exit 1; }
  echo "[oracle] the workspace is back as the task started"
fi
folder=$(mktemp -d) || exit 1
printf %s "$state" > "$folder/state"
n=0
for command; do
  n=$((n + 1))
  cat -- "$folder/state" | /bin/bash --noprofile --norc -c "$session" bash "$command" 3>"$folder/next" >/dev/null 2>&1
  code=$?
  if [ -s "$folder/next" ]; then mv -f -- "$folder/next" "$folder/state"; fi
  echo "[oracle] reference command $n of $#: exit code $code"
done
rm -rf -- "$folder"
"""
"""The oracle's re-planning reply, run by a bash that starts with nothing of the agent's
shell: put the workspace back (`restore`, if any), then run each reference command as
the session does (`session` is its program: a fresh bash that resumes `state`, runs the
command and saves its own state), their output left out (what matters is the workspace)."""


def replay_command(
    task: TerminalTask, workdir: str, umask: str, restore: str, state: str, commands: Sequence[str]
) -> str:
    """The shell command of the re-planning reply (see `_PROGRAM`). Raises OracleError when it
    is longer than one command may be."""
    session, variables = session_program()
    environment = " ".join(f"{name}={shlex.quote(value)}" for name, value in variables.items())
    program = (umask + "\n" if umask else "") + _PROGRAM
    arguments = [workdir, restore, session, state, *commands]
    command = (
        f"/usr/bin/env -i {environment} /bin/bash --noprofile --norc -c {shlex.quote(program)} rlenvs-oracle "
        + " ".join(shlex.quote(argument) for argument in arguments)
    )
    size = len(command.encode("utf-8", "replace"))
    if size > MAX_COMMAND_BYTES:
        raise OracleError(
            f"task {task.task_id}: the oracle's reply from here would be a command of {size} bytes (putting the "
            f"workspace back as the task started, then the reference solution), over the {MAX_COMMAND_BYTES}-byte "
            "cap of one command. It works from the start, and after commands that leave the workspace as it was"
        )
    return command


def submit_line(task: TerminalTask) -> str:
    return "submit" if task.answer is None else f"submit {task.answer}"


def block(command: str, then_submit: TerminalTask | None = None) -> str:
    """A reply running `command`; with `then_submit`, closed by the task's submit line, so the
    episode ends right after it."""
    reply = f"```bash\n{command}\n```"
    return reply if then_submit is None else f"{reply}\n{submit_line(then_submit)}"
