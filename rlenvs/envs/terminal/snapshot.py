"""What a copy of a Terminal-v0 env made mid-episode carries: the workspace and the shell.

A copy (deepcopy or pickle: vector workers, checkpoints, tree search) gets no share of the
original's sandbox; it starts its own from a `Snapshot` when it next steps. The snapshot
holds the workspace's folders, its files whatever their size, its symlinks (the task's own,
made by its setup.sh, or the agent's) and the shell's state (cwd, variables, functions,
aliases, umask), read from the host as the verifier reads it. Not carried: /tmp and
/dev/shm (scratch, as for any new shell), FIFOs, sockets and devices, and the mtime of a
folder a link is made in. A workspace the snapshot cannot hold whole (more than
`MAX_TREE_ENTRIES` entries, or more bytes than its sandbox's workspace can, which only
sparse files reach) is not copied in part: `take` raises WorkspaceUnreadable, and the env
makes the copy's episode end with that reason instead of going on with another workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from rlenvs.envs.terminal.tasks import Entry
from rlenvs.rewards.tree import MAX_TREE_ENTRIES, WorkspaceUnreadable, walk
from rlenvs.rewards.workspace import read_file
from rlenvs.sandbox.session import SessionError, ShellSession

LINKS_DIR = "/tmp/rlenvs-restore"
"""Where a restore writes the list of links to make, in the new sandbox's /tmp (emptied after)."""
_MAKE_LINKS = f"""\
while IFS= read -r -d '' path && IFS= read -r -d '' target; do
  if ! ln -s -- "$target" "$path" 2>/dev/null; then
    dir=$(dirname -- "$path") && mode=$(stat -c %a -- "$dir") && chmod u+wx -- "$dir" &&
      ln -s -- "$target" "$path" && chmod "$mode" -- "$dir" || exit 1
  fi
done < {LINKS_DIR}/links
"""
"""Bash (run in the workspace) that makes each link of the list, in a read-only folder too."""


@dataclass(frozen=True)
class Snapshot:
    """A workspace and a shell, as `restore` rebuilds them in another sandbox."""

    entries: tuple[Entry, ...]
    links: tuple[tuple[str, str], ...]
    """(path, target) of each symlink, paths relative to the workspace."""
    shell_state: str

    @classmethod
    def take(cls, session: ShellSession, max_bytes: int) -> Snapshot:
        """The session's workspace and shell state. Raises WorkspaceUnreadable when the
        workspace is over `MAX_TREE_ENTRIES` entries or its files over `max_bytes` in all,
        SessionError when the sandbox is gone."""
        entries, links, total = [], [], 0
        for found in walk(session.workspace_path, max_entries=MAX_TREE_ENTRIES):
            info = found.entry.stat(follow_symlinks=False)
            mode, mtime = stat.S_IMODE(info.st_mode), info.st_mtime
            if stat.S_ISLNK(info.st_mode):
                links.append((found.path, os.readlink(found.name, dir_fd=found.dir_fd)))
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
        return cls(tuple(entries), tuple(links), session.shell_state)

    def restore(self, session: ShellSession) -> None:
        """Rebuild the workspace and the shell in `session` (a new episode of it). Raises
        SessionError when that cannot be done."""
        session.reset(self.entries, shell_state=self.shell_state)
        if not self.links:
            return
        session.add_files([Entry("links", _link_list(self.links))], LINKS_DIR)
        made = session.run(_MAKE_LINKS, fresh=True)
        session.wipe(["/tmp"])
        if not made.ok:
            raise SessionError(f"the workspace's symlinks could not be made again: {made.stdout[-300:]}{made.detail}")


def _link_list(links: Iterable[tuple[str, str]]) -> bytes:
    """The links as NUL-separated path, target pairs (no name holds a NUL)."""
    return b"".join(path.encode("utf-8", "surrogateescape") + b"\0" + target.encode("utf-8", "surrogateescape") + b"\0"
                    for path, target in links)  # fmt: skip
