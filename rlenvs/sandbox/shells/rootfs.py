"""Sandboxes over an image's root filesystem: its layers mounted as one overlay, as root of a
user namespace whose ids the host maps.

A built image (rlenvs.images) is a stack of layer folders. Everything that runs on it, a
Dockerfile's RUN step or an agent's episode, starts from `enter_root.py`: a user and mount
namespace of its own, the layers as an overlay whose upper layer is a tmpfs (an episode:
copy-on-write, gone when it ends, so N episodes of one image never see each other) or the
build step's new layer on disk, then bubblewrap over that overlay, with no user namespace of
its own (it runs as the namespace's root) and every capability dropped but those asked for.

Ids (`IdMap`). Image files belong to users of the image (root, _apt, a service's account).
Started by root, the namespace maps the image's ids 0-65535 to host ids IMAGE_ID_BASE and
up, none of them a real account; the layers on disk are owned by those host ids, and a
process that leaves the sandbox is nobody on the host. Started by another user, only that
user can be mapped (to 0): an image then has one owner, and a step that gives files to
another user (chown, apt's _apt) fails.
"""

from __future__ import annotations

import functools
import json
import os
import select
import stat
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rlenvs.sandbox.launch import GUEST_MOUNT, WorkerLaunch, find_bwrap, staged_guest_dir, zygote_tmpfs_args
from rlenvs.sandbox.requests import Limits
from rlenvs.sandbox.worker import Worker

IMAGE_ID_BASE = 1_700_000_000
"""Host id of an image's root when started by root: far from real accounts, from rootless
containers' usual subordinate ranges and from the pool workers' (launch.UID_BASE)."""
IMAGE_ID_COUNT = 65536
ENTER_ROOT = Path(__file__).resolve().parent / "enter_root.py"
HANDSHAKE_TIMEOUT_S = 30.0


class RootUnavailable(RuntimeError):
    """A sandbox over an image's root cannot start here; the message says why and the fix."""


@dataclass(frozen=True)
class IdMap:
    """How the namespace's ids map to the host's: `count` ids from `host`, 0 first."""

    host_uid: int
    host_gid: int
    count: int

    @classmethod
    def for_this_user(cls) -> IdMap:
        if os.geteuid() == 0:
            return cls(IMAGE_ID_BASE, IMAGE_ID_BASE, IMAGE_ID_COUNT)
        return cls(os.geteuid(), os.getegid(), 1)

    @property
    def name(self) -> str:
        """Part of every layer's cache key: a layer's files are owned for one mapping."""
        return f"{self.host_uid}-{self.host_gid}-{self.count}"

    def host_ids(self, uid: int, gid: int) -> tuple[int, int]:
        """The host owner of a file the image gives `uid`:`gid` (ValueError when unmapped)."""
        if not (0 <= uid < self.count and 0 <= gid < self.count):
            raise ValueError(
                f"the image gives a file to {uid}:{gid}, and only ids 0-{self.count - 1} are mapped here"
                + ("" if self.count > 1 else " (start rlenvs as root to map the image's users)")
            )
        return self.host_uid + uid, self.host_gid + gid

    def write(self, pid: int) -> None:
        """Write the maps of `pid`'s new user namespace (from outside it)."""
        if self.count > 1:
            _write(f"/proc/{pid}/uid_map", f"0 {self.host_uid} {self.count}\n")
            _write(f"/proc/{pid}/gid_map", f"0 {self.host_gid} {self.count}\n")
        else:
            _write(f"/proc/{pid}/uid_map", f"0 {self.host_uid} 1\n")
            _write(f"/proc/{pid}/setgroups", "deny\n")
            _write(f"/proc/{pid}/gid_map", f"0 {self.host_gid} 1\n")


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


@dataclass(frozen=True)
class Overlay:
    """An image's layers (top first) as one root; `upper`/`work`: a build step's new layer
    on disk, else a tmpfs of `tmpfs_mb` MiB that holds everything the sandbox writes."""

    lowers: tuple[str, ...]
    merged: str
    """An empty folder the overlay is mounted on (in the sandbox's namespace only)."""
    upper: str | None = None
    work: str | None = None
    tmpfs_mb: int = 1024
    tmpfs_inodes: int | None = None
    """The tmpfs's inode cap (`Limits.tmpfs_inodes`); None: the kernel's default."""


def spawn(
    overlay: Overlay, ids: IdMap, bwrap_argv: Sequence[str], pass_fds: Sequence[int] = (), **popen: Any
) -> subprocess.Popen[bytes]:
    """Start bubblewrap (`bwrap_argv`, its binary first) over `overlay` in a namespace mapped by
    `ids`; `popen`: the rest of subprocess.Popen's arguments (pipes, env, session)."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    spec = {
        "ready_fd": ready_w,
        "go_fd": go_r,
        "lowers": list(overlay.lowers),
        "upper": overlay.upper,
        "work": overlay.work,
        "tmpfs_mb": overlay.tmpfs_mb,
        "tmpfs_inodes": overlay.tmpfs_inodes,
        "merged": overlay.merged,
        "argv": list(bwrap_argv),
    }
    argv = [sys.executable, "-I", "-S", "-B", str(ENTER_ROOT), json.dumps(spec)]
    try:
        process = subprocess.Popen(argv, pass_fds=(ready_w, go_r, *pass_fds), **popen)
    finally:
        os.close(ready_w)
        os.close(go_r)
    try:
        if not _wait_byte(ready_r, b"u"):
            raise RootUnavailable(f"the image's namespace did not start: {_stderr(process)}")
        try:
            ids.write(process.pid)
        except OSError as error:
            raise RootUnavailable(
                f"the host could not map the image's ids ({error}): run as root, or as a user with a user namespace "
                "of their own (sysctl kernel.unprivileged_userns_clone=1)"
            ) from None
        os.write(go_w, b"g")
    except BaseException:
        process.kill()
        process.wait()
        raise
    finally:
        os.close(ready_r)
        os.close(go_w)
    return process


def _wait_byte(fd: int, expected: bytes) -> bool:
    deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            return os.read(fd, 1) == expected
    return False


def _stderr(process: subprocess.Popen[bytes]) -> str:
    try:
        _, err = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        return "(no answer)"
    return (err or b"").decode(errors="replace").strip()[-500:] or f"exit status {process.returncode}"


def bwrap_over_root(
    bwrap: str,
    merged: str,
    *,
    network: bool,
    keep_caps: tuple[str, ...] = (),
    binds: Sequence[tuple[str, str]] = (),
    extra: Sequence[str] = (),
) -> list[str]:
    """bubblewrap's options for a sandbox whose root is `merged`: new pid, ipc, uts and cgroup
    namespaces (and network but with `network`), fresh /proc and /dev, the namespace's root
    with only `keep_caps`; `binds`: (host path, sandbox path) read-only."""
    argv = [
        bwrap,
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        *([] if network else ["--unshare-net"]),
        "--new-session", "--die-with-parent",
        "--bind", merged, "/",
        "--proc", "/proc", "--dev", "/dev",
        "--cap-drop", "ALL",
    ]  # fmt: skip
    for cap in keep_caps:
        argv += ["--cap-add", cap]
    for source, target in binds:
        argv += ["--ro-bind-try", source, target]
    return [*argv, *extra]


# --- an episode's sandbox ---------------------------------------------------------------------------


class EpisodeImage(Protocol):
    """What a shell session runs on (`ShellSession(image=...)`): a built image whose every
    episode gets a copy-on-write view of its own, under bubblewrap (`RootImage`) or in a
    container of a daemon's (rlenvs.sandbox.shells.containers.ContainerImage)."""

    @property
    def backend(self) -> str:
        """What runs the episodes, as `info["backend"]` reports it."""
        ...

    @property
    def stood_in(self) -> str:
        """What ran in place of the image's base ("" where nothing did), as `info["stood_in"]`."""
        ...

    def launch(self, limits: Limits, workspace: str) -> WorkerLaunch:
        """A worker on a new view of the image under `limits` (its writable tmpfs, its memory
        cap): its zygote in `workspace`, no network."""
        ...

    def host_root(self, worker: Worker) -> str:
        """Where the episode's root is for the host (read it without following links)."""
        ...

    def changes(self, worker: Worker, skip: Sequence[str]) -> EpisodeChanges:
        """What the episode changed in the image, but at or below `skip` (`episode_changes`)."""
        ...


@dataclass(frozen=True)
class RootImage:
    """A built image under bubblewrap (rlenvs.images.build.Image.root())."""

    lowers: tuple[str, ...]
    """The layer folders, top first."""
    python: str
    """The image's own Python 3, which runs the sandbox's zygote (standard library only)."""
    path: str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    backend: str = "bwrap"
    user: str = ""
    """Whom the agent's commands run as, `uid:gid:groups` (rlenvs.images.layers.ImageUser);
    "": the image's root."""
    stood_in: str = ""
    """What ran in place of the image's base, where rlenvs stood in for it (its FROM, the root
    built instead, what differs: rlenvs.images.bases); reported as the env's
    `info["stood_in"]` so a run on a stand-in is never mistaken for one on the real image."""

    def launch(self, limits: Limits, workspace: str) -> WorkerLaunch:
        return image_launch(self, limits, workspace)

    def host_root(self, worker: Worker) -> str:
        return f"/proc/{worker.child_pid}/root"

    def changes(self, worker: Worker, skip: Sequence[str]) -> EpisodeChanges:
        # the layer's tmpfs is mounted in the namespace of the worker's first process
        return episode_changes(f"/proc/{worker.pid}/root{EPISODE_STAGE}/upper", self.lowers, skip)


AGENT_CAPS = (
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID",
    "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",
    "CAP_AUDIT_WRITE",
)  # fmt: skip
"""Docker's default capabilities for a container's root: what an image's agent, its build
steps and its tests have, in the sandbox's user namespace (over the image's files only)."""
CAP_NUMBERS = {
    "CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_FSETID": 4, "CAP_KILL": 5, "CAP_SETGID": 6,
    "CAP_SETUID": 7, "CAP_SETPCAP": 8, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_RAW": 13, "CAP_SYS_CHROOT": 18,
    "CAP_MKNOD": 27, "CAP_AUDIT_WRITE": 29, "CAP_SETFCAP": 31,
}  # fmt: skip
EPISODE_STAGE = "/tmp/rlenvs-episode-root"
"""An empty folder every episode's namespace mounts its own tmpfs on (the host's stays empty)."""


def image_launch(image: RootImage, limits: Limits, workspace: str) -> WorkerLaunch:
    """A shell session's worker over `image`: a copy-on-write root whose writes (the agent's,
    anywhere) go to a tmpfs of `limits.disk_mb` MiB and `limits.tmpfs_inodes` inodes that
    ends with the episode; the workspace and /tmp are the image's own folders (as in a
    container of it: what its build put in /tmp is there), /dev/shm a fresh tmpfs of that
    size, which the zygote mounts (bubblewrap's caps bytes only); no network; a memory cgroup
    capped at `limits.sandbox_memory_bytes`."""
    disk_mb, inodes = limits.disk_mb, limits.tmpfs_inodes
    os.makedirs(EPISODE_STAGE, mode=0o755, exist_ok=True)
    size = str(disk_mb << 20)
    merged = f"{EPISODE_STAGE}/merged"
    argv = bwrap_over_root(
        find_bwrap(),
        merged,
        network=False,
        # the session zygote's CAP_SYS_ADMIN (read-only verdict folders), which its children
        # drop, and the agent's: Docker's defaults for a container's root, in this namespace
        keep_caps=("CAP_SYS_ADMIN", *AGENT_CAPS),
        extra=[
            "--as-pid-1", "--hostname", "sandbox",
            "--ro-bind", staged_guest_dir(), GUEST_MOUNT,
            "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
            "--remount-ro", "/proc",
            "--chdir", workspace,
            "--clearenv", "--setenv", "PATH", image.path, "--setenv", "HOME", "/root", "--setenv", "LANG", "C.UTF-8",
            image.python, "-I", "-S", "-B", f"{GUEST_MOUNT}/zygote.py", "--workspace", workspace, "--session",
            "--child-caps", ",".join(str(CAP_NUMBERS[cap]) for cap in AGENT_CAPS),
            *(("--agent-user", image.user) if image.user else ()),
            *zygote_tmpfs_args(disk_mb, inodes, mount_on=("/dev/shm",)),
        ],
    )  # fmt: skip
    overlay = Overlay(image.lowers, merged, tmpfs_mb=disk_mb, tmpfs_inodes=inodes)
    ids = IdMap.for_this_user()
    return WorkerLaunch(
        argv=tuple(argv),
        lease=None,
        report_child_pid=True,
        spawn=functools.partial(spawn, overlay, ids),
        memory_bytes=limits.sandbox_memory_bytes,
    )


OPAQUE_XATTR = "user.overlay.opaque"
MAX_CHANGES = 200_000
"""Entries of an episode's upper layer read at most (its tmpfs caps their bytes, not their count)."""


def image_entry(
    lowers: Sequence[str], path: str, opaque_xattr: str = OPAQUE_XATTR
) -> tuple[str, os.stat_result] | None:
    """The entry at absolute `path` in the image whose layer folders are `lowers` (top first),
    and the folder it comes from, as overlayfs shows it: a higher layer's entry hides a lower
    one's, a 0/0 character device is a deletion, an opaque folder (`opaque_xattr`: "user." in
    a user namespace's overlays, "trusted." in the real root's, Docker's) hides what lower
    layers hold below it. None: no such entry (or a file where a folder on the way would be)."""
    parts = [part for part in path.split("/") if part]
    visible = list(lowers)  # the layers that may hold the path, top first
    found: tuple[str, os.stat_result] | None = None
    for depth in range(len(parts) + 1):
        found, visible = merged_entry(visible, "/".join(parts[:depth]), opaque_xattr)
        if found is None or (depth < len(parts) and not stat.S_ISDIR(found[1].st_mode)):
            return None
    return found


def merged_entry(
    visible: Sequence[str], relative: str, opaque_xattr: str = OPAQUE_XATTR
) -> tuple[tuple[str, os.stat_result] | None, list[str]]:
    """One entry (`relative` to each layer folder of `visible`, top first, the folders whose
    files show at its parent) as overlayfs merges it: the layer folder it shows from and its
    stat, or None (absent or deleted); and the layer folders whose files show inside it."""
    found: tuple[str, os.stat_result] | None = None
    below: list[str] = []
    for lower in visible:
        try:
            info = os.lstat(f"{lower}/{relative}")
        except (FileNotFoundError, NotADirectoryError):
            continue
        if _whiteout(info):
            break  # deleted in this layer
        if found is None:
            found = (lower, info)
        if not stat.S_ISDIR(info.st_mode) or not stat.S_ISDIR(found[1].st_mode):
            break  # a file hides everything under it; a folder hides a lower file
        below.append(lower)
        if _opaque(f"{lower}/{relative}", opaque_xattr):
            break
    return found, below


def _whiteout(info: os.stat_result) -> bool:
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _opaque(folder: str, xattr: str) -> bool:
    try:
        return os.getxattr(folder, xattr, follow_symlinks=False) == b"y"
    except OSError:
        return False


@dataclass(frozen=True)
class EpisodeChanges:
    """What an episode changed in its image (`episode_changes`)."""

    changed: tuple[str, ...]
    """Every path whose entry now differs from the image's: deleted, replaced, written, or
    its mode or owner changed. A folder or file copied up unchanged (a `touch -a`, a hard
    link, a folder something below was written in) is not listed."""
    complete: bool
    """False: over MAX_CHANGES entries, not all read."""


def episode_changes(
    upper: str,
    lowers: Sequence[str],
    skip: Sequence[str] = (),
    opaque_xattr: str = OPAQUE_XATTR,
    *,
    mount_points: Sequence[str] = (),
) -> EpisodeChanges:
    """The entries of an episode's copy-on-write layer, the folder `upper`, that differ from
    the image (`lowers`, top first), read by the host following no link. Nothing at or below
    a folder of `skip` is read (the workspace: the agent's to fill, not to count or compare);
    a folder of `mount_points` (a container engine made it for a volume) is no change itself,
    but what is in it is read."""
    changed: list[str] = []
    pending, seen = [""], 0
    while pending:
        relative = pending.pop()
        try:
            entries = list(os.scandir(upper + relative))
        except OSError:
            continue
        for entry in entries:
            path = f"{relative}/{entry.name}"
            if path in skip:
                continue
            seen += 1
            if seen > MAX_CHANGES:
                return EpisodeChanges(tuple(changed), complete=False)
            info = entry.stat(follow_symlinks=False)
            made_for_a_volume = path in mount_points and stat.S_ISDIR(info.st_mode)
            image = image_entry(lowers, path, opaque_xattr)
            if not made_for_a_volume and not _same_as_image(entry.path, path, info, image, opaque_xattr):
                changed.append(path)
            if stat.S_ISDIR(info.st_mode):
                pending.append(path)
    return EpisodeChanges(tuple(changed), complete=True)


def _same_as_image(
    upper: str, path: str, info: os.stat_result, image: tuple[str, os.stat_result] | None, opaque_xattr: str
) -> bool:
    """Whether an upper-layer entry (`upper`, the image's `path`) is the image's own, copied
    up: same type, mode and owner, and for a file the same bytes, for a link the same target;
    a folder not made opaque."""
    if image is None or _whiteout(info):
        return False
    lower, old = image
    if (info.st_mode, info.st_uid, info.st_gid) != (old.st_mode, old.st_uid, old.st_gid):  # type, mode, owner
        return False
    if stat.S_ISDIR(info.st_mode):
        return not _opaque(upper, opaque_xattr)
    if stat.S_ISLNK(info.st_mode):
        return os.readlink(upper) == os.readlink(f"{lower}{path}")
    if stat.S_ISREG(info.st_mode):
        return info.st_size == old.st_size and _same_bytes(upper, f"{lower}{path}")
    return False


def _same_bytes(one: str, other: str) -> bool:
    with open(one, "rb") as first, open(other, "rb") as second:
        while True:
            a, b = first.read(1 << 20), second.read(1 << 20)
            if a != b:
                return False
            if not a:
                return True
