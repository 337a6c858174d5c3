"""A pool worker's fresh state per execution (guest side, stdlib only).

A pool worker runs execution after execution for unrelated callers, and a test run is only
sound if nothing of an earlier one can be observed: a solution that could keep a note
between runs (in a folder's timestamps, an inode number, a pid, an IPC id, a network
counter) and read, during a run, whether its last answer passed could replay what passed
and score without solving anything. So, for pool workers (not shell sessions, whose files
persist on purpose):

- Executions see only their own processes. The zygote becomes pid 1 of a pid namespace of
  its own (`become_namespace_init`), and /proc there is mounted with `hidepid=ptraceable`:
  a process sees exactly the processes it may ptrace, so the test runner and the zygote,
  which are not dumpable, are invisible to the solution (no /proc/<runner>/stat, no page
  faults or CPU times to time the runner's work by). The zygote keeps its own full view
  through a descriptor of a /proc without that option.
- Every execution starts on new tmpfs mounts at the workspace, /tmp and /dev/shm (bytes and
  inodes capped: `tmpfs_options`), in a new
  IPC namespace, in a network namespace (loopback up) no execution has sent anything in,
  and with the namespace's pid counter set back (`FreshState.renew`, `enter`, `reset_pids`):
  the folders' timestamps, modes, xattrs, inode numbers and free space, SysV IPC ids,
  loopback counters and sockets, and the next pid are those of a fresh sandbox, whatever
  the last execution did. A network namespace is kept while it is as it was made
  (`FreshState._net_untouched`): making one, and the kernel's tearing it down, cost more
  than the rest of an execution. The zygote and the test runner stay in IPC and network
  namespaces of their own, which no execution joins: the runner's sockets (/proc/net/unix)
  would tell whether it was made for this run.

The renewal runs in the clean-up, after the answer is written, so it costs the next
request's latency nothing while the host reads the answer (0.2-0.35 ms of work). What it
cannot hide is when that clean-up ran (a new mount's creation time; a network device's,
for the last execution that used the network): the time an earlier execution ended, which
an execution queued behind it could read off its own clock anyway.

The zygote needs two capabilities in the sandbox's user namespace for this, CAP_SYS_ADMIN
(mounts, namespaces, the pid counter) and CAP_NET_ADMIN (loopback), and keeps only those;
every child drops all of them before it runs anything (`drop_capabilities`).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct

LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 0x4000, 1 << 18
MNT_DETACH = 2
CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21
KEPT_CAPABILITIES = (CAP_SYS_ADMIN, CAP_NET_ADMIN)
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, PR_CAP_AMBIENT_CLEAR_ALL = 47, 2, 4
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
_IFREQ = struct.Struct("16sH22x")
"""struct ifreq with ifr_flags (40 bytes on 64-bit Linux)."""
FIRST_PID = 1
"""What the pid counter is set back to before each fork: the next process gets the lowest
free pid above it, so the same kind of execution always gets the same pids."""


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, options: str | None = None) -> None:
    encoded = [None if text is None else text.encode() for text in (source, target, kind, options)]
    _check(LIBC.mount(encoded[0], encoded[1], encoded[2], ctypes.c_ulong(flags), encoded[3]), f"mount {target}")


def _set_capabilities(keep: tuple[int, ...]) -> None:
    """Keep exactly `keep` (effective and permitted; nothing inheritable or ambient), and
    check that the kernel now reports exactly that."""
    _check(LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")
    bits = sum(1 << cap for cap in keep)
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    data[0].effective = data[0].permitted = bits & 0xFFFFFFFF
    data[1].effective = data[1].permitted = bits >> 32
    _check(LIBC.capset(ctypes.byref(header), data), "capset")
    got = (_CapData * 2)()
    _check(LIBC.capget(ctypes.byref(header), got), "capget")
    held = [(d.effective, d.permitted, d.inheritable) for d in got]
    if held != [(bits & 0xFFFFFFFF,) * 2 + (0,), (bits >> 32,) * 2 + (0,)]:
        raise OSError(f"capabilities are {held} after keeping only {keep}")


_HEADER = ctypes.pointer(_CapHeader(_LINUX_CAPABILITY_VERSION_3, 0))
_NONE = (_CapData * 2)()
_prctl, _capset, _setns = LIBC.prctl, LIBC.capset, LIBC.setns
"""Made before any fork: a child that builds ctypes objects or looks up libc functions
first pays for the copy-on-write faults of what that touches (~0.15 ms)."""
_holding = False
"""Whether this process was left capabilities (a pool zygote's, a session zygote's), which its
children drop."""
_children: tuple[int, ...] = ()
_CHILDREN = (_CapData * 2)()
"""What a child keeps instead of nothing (`hold_capabilities(children=...)`), as capset data."""


def hold_capabilities(keep: tuple[int, ...], children: tuple[int, ...] = ()) -> None:
    """Keep exactly `keep` and `children` of what bubblewrap gave this process
    (`_set_capabilities`), and make every child drop all but `children` (`drop_capabilities`):
    a session on an image, whose agent is the image's root with Docker's default
    capabilities, in the sandbox's user namespace only."""
    global _holding, _children
    _set_capabilities(tuple(sorted({*keep, *children})))
    _holding, _children = True, children
    bits = sum(1 << cap for cap in children)
    _CHILDREN[0].effective = _CHILDREN[0].permitted = _CHILDREN[0].inheritable = bits & 0xFFFFFFFF
    _CHILDREN[1].effective = _CHILDREN[1].permitted = _CHILDREN[1].inheritable = bits >> 32


def drop_capabilities() -> None:
    """Drop every capability the zygote kept (a child of the zygote, before it runs
    anything), but the children's (ambient: what it execs keeps them). Without
    capabilities, and with no_new_privs (bubblewrap sets it), nothing it execs gains any."""
    if not _holding:
        return
    _check(_prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")
    _check(_capset(_HEADER, _CHILDREN if _children else _NONE), "drop capabilities")
    for cap in _children:
        _check(_prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0), "keep a capability across exec")


_agent_user: tuple[int, int, tuple[int, ...]] | None = None
"""Whom a session's agent commands run as (an image's final USER, `--agent-user`), or None: the
image's root."""


def set_agent_user(spec: str) -> None:
    """`uid:gid:group,group` (rlenvs.images.layers.ImageUser.for_guest)."""
    global _agent_user
    uid, gid, groups = spec.split(":")
    _agent_user = (int(uid), int(gid), tuple(int(group) for group in groups.split(",") if group))


def become_agent_user() -> None:
    """In a child about to run the agent's command: become the image's USER, if it has one
    (ids and groups; the capabilities go with root, ambient ones too, as for a container's
    non-root user). The verdict's tests stay the image's root."""
    if _agent_user is None:
        return
    uid, gid, groups = _agent_user
    for fd in (0, 1, 2, 3):  # the zygote's pipes, which /dev/stdin and the like reopen by their inode
        try:
            os.fchown(fd, uid, gid)
        except OSError:  # not open in this child
            pass
    os.setgroups(list(groups))
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def become_namespace_init() -> None:
    """Make the rest of this process's life run as pid 1 of a new pid namespace, in a new
    mount namespace: fork, and in the parent wait for that child for good and exit as it
    did. The parent drops its capabilities and holds nothing of the protocol; the child is
    the zygote. bubblewrap's own pid namespace belongs to a user namespace above the
    sandbox's, where the zygote has no capabilities: in one of its own it may mount /proc
    and set the pid counter."""
    _check(LIBC.unshare(CLONE_NEWPID | CLONE_NEWNS), "unshare a pid and mount namespace")
    child = os.fork()
    if child == 0:
        return
    _set_capabilities(())
    for fd in (0, 1):
        os.close(fd)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            os._exit(70)
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def tmpfs_options(size_bytes: int, inodes: int) -> str:
    """A writable tmpfs's mount options: its bytes and its inodes capped. bubblewrap's --tmpfs
    takes a size only, and a tmpfs's default inode cap (half the host's RAM in pages) let a
    million empty files take a gigabyte of the host's kernel memory, which no rlimit counts."""
    return f"size={size_bytes},nr_inodes={inodes},mode=0755"


def mount_capped_tmpfs(folders: list[str], size_bytes: int, inodes: int, workspace: str) -> None:
    """A session zygote's own tmpfs on `folders`, in a mount namespace of its own, over
    bubblewrap's (`tmpfs_options`): every command and the host (through
    /proc/<zygote>/root) see these. Needs CAP_SYS_ADMIN in the sandbox's user namespace,
    which the session zygote holds; raises OSError when it cannot be done."""
    _check(LIBC.unshare(CLONE_NEWNS), "unshare a mount namespace")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing made here reaches bubblewrap's mounts
    for folder in folders:
        _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_options(size_bytes, inodes))
    os.chdir(workspace)  # onto the new mount: the old working folder is bubblewrap's


class FreshState:
    """The pool zygote's handle on what it renews for every execution (module docstring).
    Made by the zygote once it is pid 1 of its own namespace (`become_namespace_init`)."""

    def __init__(self, folders: list[str], size_bytes: int, inodes: int, workspace: str) -> None:
        self.folders, self.workspace = list(folders), workspace
        self.options = tmpfs_options(size_bytes, inodes)
        self._mounted = False
        # Mounts made here stay here (and the host's view through bwrap's pid 1 is unchanged).
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        _mount("proc", "/proc", "proc", flags)
        self.proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        """The zygote's full view of this namespace's processes (through the mount below)."""
        self._last_pid = os.open("sys/kernel/ns_last_pid", os.O_WRONLY | os.O_CLOEXEC, dir_fd=self.proc)
        try:
            _mount("proc", "/proc", "proc", flags | MS_RDONLY, "hidepid=ptraceable")
        except OSError as error:
            raise OSError(
                error.errno, f"{error.strerror} (a /proc that hides the test runner takes Linux >= 5.8)"
            ) from None
        hold_capabilities(KEPT_CAPABILITIES)
        # The zygote's own (bwrap's belong to a user namespace above ours: once left, never
        # re-entered), which the runner inherits and the zygote returns to after making the next.
        self._home = [self._enter_new(name) for name, _ in NAMESPACES]
        self._next = [-1, -1]
        self._net_tables: list[int] = []
        """The execution's network namespace's `NET_TABLES`, opened in it (a /proc/net file
        shows the namespace it was opened in, read again from its start)."""
        self._net_as_made = b""
        self.renew()

    def _enter_new(self, name: str) -> int:
        """Enter a new namespace of this kind ("ipc" or "net", loopback up); its descriptor."""
        _check(LIBC.unshare(dict(NAMESPACES)[name]), f"unshare an {name} namespace")
        if name == "net":
            _loopback_up()
        return os.open(f"self/ns/{name}", os.O_RDONLY | os.O_CLOEXEC, dir_fd=self.proc)

    def renew(self) -> None:
        """New IPC namespace and new, empty tmpfs mounts for the next execution, and a new
        network namespace unless the last one is as it was made (`_net_untouched`): making
        one, and the kernel's tearing it down, cost more than the rest of an execution.
        Raises OSError when any of it fails (the worker is then replaced)."""
        ipc, net = self._next
        if ipc >= 0:  # the last execution's: gone with its last process
            os.close(ipc)
        ipc = self._enter_new("ipc")
        if not self._net_untouched():
            for fd in [net, *self._net_tables] if net >= 0 else []:
                os.close(fd)
            net = self._enter_new("net")
            self._net_tables = [
                os.open(f"self/net/{t}", os.O_RDONLY | os.O_CLOEXEC, dir_fd=self.proc) for t in NET_TABLES
            ]
            self._net_as_made = _read_all(self._net_tables)
        self._next = [ipc, net]
        _join(self._home)
        for folder in self.folders:
            if self._mounted:  # the mount under ours is bwrap's, locked in place: ours go on top
                _check(LIBC.umount2(folder.encode(), MNT_DETACH), f"umount {folder}")
            _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, self.options)
        self._mounted = True
        os.chdir(self.workspace)

    def _net_untouched(self) -> bool:
        """Whether the execution's network namespace shows nothing an execution did: traffic
        of any kind moves its IPv4 or IPv6 counters (a connection refused or a route not
        found too), and what the kernel keeps of a socket after its process is gone (TIME_WAIT,
        orphans, the TCP metrics cache) comes only after traffic. A socket that sent nothing
        leaves nothing once closed, and without capabilities code cannot change the
        namespace's configuration."""
        return self._next[1] >= 0 and _read_all(self._net_tables) == self._net_as_made

    def enter(self) -> None:
        """Join the execution's IPC and network namespaces (an untrusted child, before it
        drops its capabilities)."""
        _join(self._next)

    def reset_pids(self) -> None:
        """Set the pid counter back (`FIRST_PID`): the pid a process gets must not tell how
        many processes earlier executions started."""
        os.pwrite(self._last_pid, str(FIRST_PID).encode(), 0)


NAMESPACES = (("ipc", CLONE_NEWIPC), ("net", CLONE_NEWNET))
NET_TABLES = ("snmp", "snmp6", "sockstat")
"""The /proc/net tables of a network namespace's counters (IPv4 with ICMP, TCP and UDP;
IPv6) and its socket counts (in use, orphaned, in TIME_WAIT)."""


def _read_all(fds: list[int]) -> bytes:
    """The files' contents from their start, as one string (each read is a fresh snapshot)."""
    return b"\0".join(os.pread(fd, 1 << 16, 0) for fd in fds)


def _join(fds: list[int]) -> None:
    for fd, (name, kind) in zip(fds, NAMESPACES, strict=True):
        _check(_setns(fd, kind), f"setns to an {name} namespace")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        name = _IFREQ.pack(b"lo", 0)
        (flags,) = struct.unpack_from("H", fcntl.ioctl(probe, SIOCGIFFLAGS, name), 16)
        fcntl.ioctl(probe, SIOCSIFFLAGS, _IFREQ.pack(b"lo", flags | IFF_UP))
