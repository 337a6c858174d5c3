"""What a copy of a Terminal-v2 env made mid-episode carries: the workspace and the shell.

A copy (deepcopy or pickle: vector workers, checkpoints, tree search) gets no share of the
original's sandbox; it starts its own from a `Snapshot` when it next steps. The snapshot
holds the workspace's folders, its files whatever their size, its hard links (two names of
one file stay one file: a task may ask for one, `ln logs/app.log current.log`), its symlinks
(the task's own, made by its setup.sh, or the agent's), its FIFOs and the shell's state (cwd,
variables, functions, aliases, umask), read from the host as the verifier reads it. Not carried: /tmp
and /dev/shm (scratch, as for any new shell), sockets (a socket is its server, which is
gone after each command) and devices, and the mtime of a folder a link or FIFO is made in.
A workspace the snapshot cannot hold whole (more than `MAX_TREE_ENTRIES` entries, or more
bytes than its sandbox's workspace can, which only sparse files reach) is not copied in
part: `take` raises WorkspaceUnreadable, and the env makes the copy's episode end with that
reason instead of going on with another workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from rlenvs.envs.terminal.tasks import Entry
from rlenvs.envs.terminal.tree import MAX_TREE_ENTRIES, WorkspaceUnreadable, walk
from rlenvs.envs.terminal.workspace import read_file
from rlenvs.sandbox.shells.session import SessionError, ShellSession

LINKS_DIR = "/tmp/rlenvs-restore"
"""Where a restore writes the list of links and FIFOs to make, in the new sandbox's /tmp
(emptied after)."""
_MAKE_SPECIALS = f"""\
make() {{
  case $kind in l) ln -s -- "$value" "$path" ;; h) ln -- "$value" "$path" ;; *) mkfifo -m "$value" -- "$path" ;; esac
}}
while IFS= read -r -d '' kind && IFS= read -r -d '' path && IFS= read -r -d '' value; do
  if ! make 2>/dev/null; then
    dir=$(dirname -- "$path") && mode=$(stat -c %a -- "$dir") && chmod u+wx -- "$dir" &&
      make && chmod "$mode" -- "$dir" || exit 1
  fi
done < {LINKS_DIR}/specials
"""
"""Bash (run in the workspace) that makes each link and FIFO of the list, in a read-only
folder too (`ln` of a hard link makes a name, which needs the folder writable, not the file)."""


@dataclass(frozen=True)
class Snapshot:
    """A workspace and a shell, as `restore` rebuilds them in another sandbox."""

    entries: tuple[Entry, ...]
    specials: tuple[tuple[str, str, str], ...]
    """What `reset` cannot write, as (kind, path relative to the workspace, value): ("l",
    path, target) for a symlink, ("h", path, first name) for a further name of a file that
    `entries` holds under its first name, ("p", path, octal mode) for a FIFO."""
    shell_state: str

    @classmethod
    def take(cls, session: ShellSession, max_bytes: int) -> Snapshot:
        """The session's workspace and shell state. Raises WorkspaceUnreadable when the
        workspace is over `MAX_TREE_ENTRIES` entries or its files over `max_bytes` in all,
        SessionError when the sandbox is gone."""
        entries, specials, total = [], [], 0
        first_names: dict[int, str] = {}  # a file of several names (one tmpfs: its inode) -> its first
        for found in walk(session.workspace_path, max_entries=MAX_TREE_ENTRIES):
            info = found.entry.stat(follow_symlinks=False)
            mode, mtime = stat.S_IMODE(info.st_mode), info.st_mtime
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                first = first_names.setdefault(info.st_ino, found.path)
                if first != found.path:
                    specials.append(("h", found.path, first))
                    continue
            if stat.S_ISLNK(info.st_mode):
                specials.append(("l", found.path, os.readlink(found.name, dir_fd=found.dir_fd)))
            elif stat.S_ISFIFO(info.st_mode):
                specials.append(("p", found.path, f"{mode:o}"))
            elif stat.S_ISDIR(info.st_mode):
                entries.append(Entry(found.path, is_dir=True, mode=mode, mtime=mtime))
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > max_bytes:
                    raise WorkspaceUnreadable(
                        f"the workspace's files are over {max_bytes} bytes in all (sparse files?), more than a "
                        "workspace of its sandbox holds"
                    )
                data = read_file(found.name, found.dir_fd, info, info.st_size)
                if data is None:
                    raise WorkspaceUnreadable(f"{found.path} could not be read")
                entries.append(Entry(found.path, data, mode=mode, mtime=mtime))
        return cls(tuple(entries), tuple(specials), session.shell_state)

    def restore(self, session: ShellSession) -> None:
        """Rebuild the workspace and the shell in `session` (a new episode of it). Raises
        SessionError when that cannot be done."""
        session.reset(self.entries, shell_state=self.shell_state)
        if not self.specials:
            return
        session.add_files([Entry("specials", _nul_separated(self.specials))], LINKS_DIR)
        made = session.run(_MAKE_SPECIALS, fresh=True)
        session.wipe(["/tmp"])
        if not made.ok:
            shown = f"{made.stdout[-300:]}{made.detail}"
            raise SessionError(f"the workspace's symlinks and FIFOs could not be made again: {shown}")


def _nul_separated(records: Iterable[tuple[str, ...]]) -> bytes:
    """Every field of `records`, each ended by a NUL (no name or link target holds one)."""
    return b"".join(field.encode("utf-8", "surrogateescape") + b"\0" for record in records for field in record)
