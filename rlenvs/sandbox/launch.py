"""How a sandbox worker is started: the bubblewrap command line, its uid, its interpreter.

The sandbox (bubblewrap, Debian package `bubblewrap`):
- new user, pid, network, ipc, uts and cgroup namespaces, no nested user namespaces, a new
  terminal session; no network at all (only the namespace's own loopback);
- a read-only root with only /usr (read-only; /bin, /lib, /lib64, /sbin as symlinks into it),
  a fresh read-only /proc and /dev, tmpfs at /workspace, /tmp and /dev/shm capped in bytes
  and inodes (the zygote mounts its own over bubblewrap's, which cap bytes only; a pool
  worker's mounts new ones, and a /proc of its own, for every execution), and
  the guest code read-only at /opt/rlenvs-guest. No /etc (but for the links of
  `alternative_links`), /home, /root, /work, no other
  worker's files;
- an empty environment; `--die-with-parent`, so a dead host takes its sandboxes with it.

Started by root, each worker drops to its own unprivileged host uid before bwrap runs:
RLIMIT_NPROC is not enforced for root, and a distinct uid per worker keeps one worker's
fork bomb from using up another's process budget. Started by a normal user, workers run as
that user and the process limit counts on top of the user's current processes.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import itertools
import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rlenvs.sandbox.requests import Limits

GUEST_DIR = Path(__file__).resolve().parent / "guest"
GUEST_MOUNT = "/opt/rlenvs-guest"
SYSTEM_PYTHON = "/usr/bin/python3"
UID_BASE = 1_900_000_000
UID_SPAN = 1_000_000
"""Worker uids are drawn from [UID_BASE, UID_BASE + UID_SPAN): far from any real account
and from the usual subordinate-uid ranges of rootless containers."""

UID_LOCK_DIR = "/run/rlenvs-sandbox-uids"
UID_LEASE_ATTEMPTS = 1000

_worker_numbers = itertools.count()


class SandboxUnavailable(RuntimeError):
    """bubblewrap (or a Python for the guest) is missing; the message says how to fix it."""


@dataclass(frozen=True)
class WorkerLaunch:
    """Everything `subprocess.Popen` needs to start one worker."""

    argv: tuple[str, ...]
    lease: UidLease | None
    """The host uid to drop to, held for the worker's life (None: stay the current user)."""
    cwd: str | None = None
    report_child_pid: bool = False
    """Ask bwrap for the host pid of the sandbox's pid 1 (`--info-fd`): a session reads its
    workspace through /proc/<that pid>/root."""
    spawn: Callable[..., subprocess.Popen[bytes]] | None = None
    """What starts `argv` (subprocess.Popen's arguments): None, Popen itself; a sandbox over
    an image's root enters its namespace first (`rlenvs.sandbox.shells.rootfs.spawn`)."""
    container: str | None = None
    """The name of the Docker container the worker runs in (rlenvs.sandbox.shells.containers)."""
    cleanup: Callable[[], None] | None = None
    """Run once the worker is killed: killing a `docker run` client leaves its container to
    the daemon, which this removes."""
    memory_bytes: int | None = None
    """The cap of the memory cgroup the worker's processes are put in (`rlenvs.sandbox.cgroups`,
    where the host has one); None: none of rlenvs' (unsafe mode, or an engine's container)."""

    @property
    def uid(self) -> int | None:
        return self.lease.uid if self.lease is not None else None


@functools.cache
def staged_guest_dir() -> str:
    """A world-readable copy of the guest code. Workers run as an unprivileged uid that may
    not be able to read the installed package (say, a venv under /root)."""
    folder = tempfile.mkdtemp(prefix="rlenvs-guest-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.chmod(folder, 0o755)
    for source in GUEST_DIR.glob("*.py"):
        target = Path(folder) / source.name
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)
    return folder


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(
            "bubblewrap is not installed, and rlenvs runs untrusted code only inside it: install it with "
            "`apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap` (Fedora). On a machine "
            "that cannot have it, Sandbox(unsafe=True) runs code with rlimits only and NO isolation."
        )
    return path


def guest_python(python: str | None) -> str:
    """The interpreter that runs inside the sandbox. Only /usr is mounted there, so the default
    is the system's /usr/bin/python3 (the code needs the standard library only); another one
    has its installation folder mounted read-only too (see `extra_mounts`)."""
    candidate = python or SYSTEM_PYTHON
    if not os.access(candidate, os.X_OK):
        raise SandboxUnavailable(
            f"no Python for the sandbox at {candidate}: install the system one (`apt-get install python3-minimal`) "
            "or pass python='/path/to/python3' (its installation folder is mounted read-only in the sandbox)"
        )
    return candidate


def extra_mounts(python: str) -> list[str]:
    """The read-only mount of a guest Python living outside /usr (its prefix: bin/..)."""
    real = Path(python).resolve()
    if real.is_relative_to("/usr"):
        return []
    prefix = str(real.parent.parent)
    return ["--ro-bind", prefix, prefix]


def next_worker_uid() -> int | None:
    """The next candidate uid for a worker when running as root, else None (stay as is)."""
    if os.geteuid() != 0:
        return None
    return _candidate_uid()


def _candidate_uid() -> int:
    return UID_BASE + (os.getpid() * 4096 + next(_worker_numbers)) % UID_SPAN


@dataclass
class UidLease:
    """A worker uid held for as long as the worker lives: an flock on a file named by the uid,
    so no other worker of any process on this host gets the same uid (and RLIMIT_NPROC
    budget) meanwhile. The kernel drops the lock when its holder dies, however it dies."""

    uid: int
    fd: int
    owner: int = field(default_factory=os.getpid)

    def release(self) -> None:
        """Give the uid back. The owner removes the lock file while still holding the lock, so
        the folder does not fill up; `lease_worker_uid` checks that the file it locked is
        still the one in the folder, which makes the removal safe."""
        if self.fd < 0:
            return
        if os.getpid() == self.owner:
            try:
                os.unlink(_lock_path(self.uid))
            except FileNotFoundError:
                pass
        os.close(self.fd)
        self.fd = -1


def _lock_path(uid: int) -> str:
    return os.path.join(UID_LOCK_DIR, str(uid))


def lease_worker_uid() -> UidLease | None:
    """A uid no live worker on this host has, when running as root; else None."""
    first = next_worker_uid()
    if first is None:
        return None
    os.makedirs(UID_LOCK_DIR, mode=0o700, exist_ok=True)
    uid = first
    for _ in range(UID_LEASE_ATTEMPTS):
        path = _lock_path(uid)
        fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return UidLease(uid, fd)
        except (BlockingIOError, FileNotFoundError):
            pass  # held by a live worker, or released and removed while we opened it
        os.close(fd)
        uid = _candidate_uid()
    raise SandboxUnavailable(f"no free sandbox uid after {UID_LEASE_ATTEMPTS} tries: are {UID_LOCK_DIR}'s locks stuck?")


DEFAULT_WORKSPACE = "/workspace"


def zygote_tmpfs_args(disk_mb: int, inodes: int, *, mount_on: tuple[str, ...] = ()) -> list[str]:
    """The zygote's arguments for its writable tmpfs, of `disk_mb` MiB and `inodes` inodes
    each (guest `scratch.tmpfs_options`): bubblewrap's and the engines' tmpfs cap bytes only.
    `mount_on`: the folders a session's zygote mounts its own on as it starts; a pool
    worker's zygote mounts new ones for every execution."""
    own = ["--capped-tmpfs", ",".join(mount_on)] if mount_on else []
    return [*own, "--scratch-bytes", str(disk_mb << 20), "--scratch-inodes", str(inodes)]


def bwrap_launch(
    python: str | None, limits: Limits, *, session: bool = False, workspace: str = DEFAULT_WORKSPACE
) -> WorkerLaunch:
    """A pool worker, or with `session` a persistent shell's (files kept between requests,
    the workspace at `workspace`, an absolute path such as /app). Its writable tmpfs hold
    `limits.disk_mb` MiB and `limits.tmpfs_inodes` files each: bubblewrap's --tmpfs caps
    bytes only, so the zygote mounts its own over them (guest `scratch.tmpfs_options`); its
    processes share a memory cgroup capped at `limits.sandbox_memory_bytes`."""
    bwrap, interpreter = find_bwrap(), guest_python(python)
    check_workspace_path(workspace)
    disk_mb, inodes = limits.disk_mb, limits.tmpfs_inodes
    size = str(disk_mb << 20)
    argv = [
        bwrap,
        "--unshare-all", "--unshare-user", "--disable-userns", "--new-session", "--die-with-parent",
        # The zygote is pid 1: no bwrap monitor process there, which the code could ptrace (it
        # is dumpable) to write forged answers to the host pipes it holds, or read the host's
        # environment from its /proc/1/environ.
        "--as-pid-1",
        "--uid", "1000", "--gid", "1000", "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr",
        *_usr_links(),
        *alternative_links(),
        *extra_mounts(interpreter),
        "--ro-bind", staged_guest_dir(), GUEST_MOUNT,
        "--proc", "/proc", "--dev", "/dev",
        "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
        "--size", size, "--tmpfs", workspace,
        "--size", size, "--tmpfs", "/tmp",
        # The root and /dev are tmpfs the zygote does not empty, of no set size: read-only, so
        # nothing written there outlives an execution or grows past the tmpfs sizes above.
        "--remount-ro", "/",
        *(_session_options() if session else _pool_capabilities()),
        "--chdir", workspace,
        "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8",
        interpreter, "-I", "-S", "-B", f"{GUEST_MOUNT}/zygote.py", "--workspace", workspace,
        *(["--session"] if session else []),
        *zygote_tmpfs_args(disk_mb, inodes, mount_on=(workspace, "/tmp", "/dev/shm") if session else ()),
    ]  # fmt: skip
    return WorkerLaunch(
        argv=tuple(argv), lease=lease_worker_uid(), report_child_pid=session, memory_bytes=limits.sandbox_memory_bytes
    )


def _session_options() -> list[str]:
    """A session's /proc is read-only: the sysctls of the sandbox's own IPC and pid namespaces
    are writable, and would outlive a command. Its zygote keeps CAP_SYS_ADMIN in the sandbox's
    user namespace, which owns none of bubblewrap's namespaces: enough for a command's child
    to make a verdict's folder read-only in a mount namespace of its own (guest `readonly`)
    before it drops it, as every child of the zygote does."""
    return ["--remount-ro", "/proc", "--cap-add", "CAP_SYS_ADMIN"]


def _pool_capabilities() -> list[str]:
    """A pool worker's zygote renews the sandbox for every execution (guest `scratch`): it
    mounts its own /proc (read-only for the code, hiding the test runner) and tmpfs, and makes
    new IPC and network namespaces, which takes CAP_SYS_ADMIN and CAP_NET_ADMIN in the
    sandbox's user namespace; it keeps only those, and its children drop them. bwrap's /proc
    stays writable, as a read-only one would lock every /proc mounted under it read-only
    (`ns_last_pid` included); the code never sees it under the zygote's own."""
    return ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_NET_ADMIN"]


RESERVED_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/dev", "/tmp", GUEST_MOUNT)
IMAGE_RESERVED_PATHS = ("/proc", "/dev", GUEST_MOUNT)
"""On an image the sandbox mounts only these: its /usr, /tmp, ... are the image's own folders, and
a Dockerfile's `WORKDIR /tmp/project` (95 of TermiGen's 3,566 tasks) is a folder like /app."""


def check_workspace_path(workspace: str, *, on_image: bool = False) -> None:
    """The workspace must be a fresh absolute folder, not one of the sandbox's own mounts
    (`on_image`: a session over an image's root, which mounts fewer)."""
    if not isinstance(workspace, str) or not workspace.startswith("/") or ".." in workspace.split("/"):
        raise ValueError(f"workspace must be an absolute path such as /workspace or /app, got {workspace!r}")
    clean = os.path.normpath(workspace)
    reserved = IMAGE_RESERVED_PATHS if on_image else RESERVED_PATHS
    if clean == "/" or any(clean == path or clean.startswith(path + "/") for path in reserved):
        raise ValueError(f"workspace {workspace!r} would shadow the sandbox's own {clean}: use e.g. /workspace or /app")


def _usr_links() -> list[str]:
    """/bin, /lib, ... as in the host: symlinks into /usr on merged-/usr systems, else mounts."""
    args = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    return args


@functools.cache
def alternative_links() -> tuple[str, ...]:
    """Debian's commands chosen by alternatives (`awk` -> /etc/alternatives/awk -> mawk): the
    sandbox has none of the host's /etc, so each alternative a command in /usr/bin or
    /usr/sbin goes through becomes a symlink of the sandbox's /etc/alternatives straight to
    the program it resolves to on the host. Nothing else of /etc (bwrap `--symlink` args)."""
    args: list[str] = []
    seen: set[str] = set()
    for folder in ("/usr/bin", "/usr/sbin"):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_symlink():
                continue
            link = os.readlink(entry.path)
            if not link.startswith("/etc/alternatives/") or link in seen:
                continue
            target = os.path.realpath(entry.path)
            if target.startswith("/usr/") and os.path.isfile(target):
                seen.add(link)
                args += ["--symlink", target, link]
    return tuple(args)


def check_can_launch(unsafe: bool, python: str | None) -> None:
    """Fail now, with the fix, if workers cannot start here (no Python for the guest, no
    bubblewrap); warn loudly for unsafe mode."""
    guest_python(python)
    if unsafe:
        warn_unsafe()
    else:
        find_bwrap()


def warn_unsafe() -> None:
    warnings.warn(
        "rlenvs sandbox in UNSAFE mode (no bubblewrap): untrusted code can read and write your files, "
        "use the network and see your processes. Use it only on a throwaway machine.",
        RuntimeWarning,
        stacklevel=3,
    )


def unsafe_launch(python: str | None, workdir: str, *, session: bool = False) -> WorkerLaunch:
    """No namespaces at all: the guest runs in `workdir` under rlimits only (as its own uid
    when started by root, so the process limit still holds; the caller chowns `workdir`)."""
    interpreter = guest_python(python)
    return WorkerLaunch(
        argv=(
            interpreter,
            "-I",
            "-S",
            "-B",
            f"{staged_guest_dir()}/zygote.py",
            "--unsafe",
            *(["--session"] if session else []),
        ),
        lease=lease_worker_uid(),
        cwd=workdir,
    )
