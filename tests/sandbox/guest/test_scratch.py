"""Nothing of one execution on a pool worker can be observed by the next, and a solution
cannot watch the test runner (rlenvs/sandbox/guest/scratch.py).

A red team built a reply that solves any task with boolean answers without computing
anything: in a test run it read the runner's page-fault count in /proc/<runner>/stat to
learn whether each answer passed, kept the bits in the atime of /tmp, /workspace and
/dev/shm (which the clean-up emptied but never reset), and the next run of the same reply
replayed them. These tests try that and every other place an execution could leave a note:
timestamps, modes and xattrs of the writable folders, inode numbers, free space, the pid
counter, SysV IPC ids, the loopback device's counters and sockets.
"""

from __future__ import annotations

import json

import pytest

from rlenvs.sandbox import Sandbox
from rlenvs.sandbox import TestProgram as Program  # (not collected as a test class)

pytestmark = pytest.mark.sandbox  # every test runs code in the sandbox

FOLDERS = ("/workspace", "/tmp", "/dev/shm")
ECHO = Program(tests=("assert echo(1) == 1",), remote={"echo": "echo"})

READER = """
import ctypes, json, os, time
start = time.time()
libc = ctypes.CDLL(None, use_errno=True)
state = {}
for folder in FOLDERS:  # stat first: listing a folder would touch its atime
    st = os.stat(folder)
    fresh = st.st_atime_ns == st.st_mtime_ns == st.st_ctime_ns and start - 120 < st.st_ctime <= start + 1
    vfs = os.statvfs(folder)
    state[folder] = [oct(st.st_mode), st.st_uid, st.st_gid, st.st_ino, st.st_nlink, st.st_size, fresh,
                     vfs.f_bfree, vfs.f_ffree, sorted(os.listdir(folder)), sorted(os.listxattr(folder))]
for folder in FOLDERS:
    path = os.path.join(folder, "probe")
    with open(path, "w") as handle:
        state[folder].append(os.fstat(handle.fileno()).st_ino)
    os.unlink(path)
child = os.fork()
if child == 0:
    os._exit(0)
os.waitpid(child, 0)
state["pids"] = [os.getpid(), child, sorted(p for p in os.listdir("/proc") if p.isdigit())]
IPC_PRIVATE, IPC_RMID = 0, 0
shm, msg, sem = libc.shmget(IPC_PRIVATE, 4096, 0o600), libc.msgget(IPC_PRIVATE, 0o600), libc.semget(IPC_PRIVATE, 1, 0o600)
state["ipc ids"] = [shm, msg, sem]
libc.shmctl(shm, IPC_RMID, None); libc.msgctl(msg, IPC_RMID, None); libc.semctl(sem, 0, IPC_RMID)
net = {}
for name in ("dev", "snmp", "snmp6", "netstat", "sockstat", "tcp", "tcp6", "udp", "unix"):
    with open(f"/proc/self/net/{name}") as table:
        net[name] = [line for line in table.read().splitlines() if not line.startswith("sock:")]
state["net"] = net
print(json.dumps(state, sort_keys=True))
""".replace("FOLDERS", repr(FOLDERS))
"""Everything an execution can observe that a previous one could have written, as one JSON
line (the folders' own timestamps as one flag: those of a new, untouched mount)."""

WRITER = """
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
for number, folder in enumerate(FOLDERS):
    for index in range(300):  # inode numbers move on
        open(os.path.join(folder, f"f{index}"), "w").close()
    with open(os.path.join(folder, "big"), "wb") as handle:  # free space
        handle.write(b"x" * (1 << 20))
    os.utime(folder, ns=((1 << 62) + number, (1 << 61) + number))  # the red team's note
    try:
        os.setxattr(folder, "user.note", b"kept")
    except OSError:
        pass
    os.chmod(folder, 0o700)
for _ in range(200):  # the pid counter moves on
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
for _ in range(20):  # SysV ids move on; the last of each is left behind
    shm, msg, sem = libc.shmget(0, 4096, 0o600), libc.msgget(0, 0o600), libc.semget(0, 1, 0o600)
    for remove in (lambda: libc.shmctl(shm, 0, None), lambda: libc.msgctl(msg, 0, None), lambda: libc.semctl(sem, 0, 0)):
        remove()
libc.shmget(0, 4096, 0o600); libc.msgget(0, 0o600); libc.semget(0, 1, 0o600)
sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(500):  # loopback counters
    sender.sendto(b"note", ("127.0.0.1", 9))
listener = socket.create_server(("127.0.0.1", 0))
client = socket.create_connection(listener.getsockname())
server, _ = listener.accept()
client.close(); server.close()  # a socket left in TIME_WAIT
try:
    socket.create_connection(("10.1.2.3", 9), timeout=0.1)  # a route-less destination: OutNoRoutes
except OSError:
    pass
""".replace("FOLDERS", repr(FOLDERS))


@pytest.fixture(scope="module")
def box():
    with Sandbox(workers=1) as sandbox:  # one worker: every execution meets the same zygote
        yield sandbox


def _read_in_script(box: Sandbox) -> dict:
    result = box.run_python(READER)
    assert result.status == "ok", result
    return json.loads(result.stdout)


def _read_in_test_run(box: Sandbox) -> dict:
    report = box.run_tests(READER + "\ndef echo(x):\n    return x\n", ECHO)
    assert report.all_passed, report
    return json.loads(report.stdout)


@pytest.mark.parametrize("read", [_read_in_script, _read_in_test_run], ids=["script", "test run"])
def test_nothing_an_execution_writes_reaches_the_next(box: Sandbox, read) -> None:
    before = read(box)
    assert all(before[folder][6] for folder in FOLDERS), before  # new, untouched mounts
    written = box.run_python(WRITER)
    assert written.status == "ok", written
    assert read(box) == before
    written = box.run_tests(WRITER + "\ndef echo(x):\n    return x\n", ECHO)  # from a test run too
    assert written.all_passed, written
    assert read(box) == before


NETWORK_ACTS = {
    "udp to loopback": "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', 9))",
    "udp to ::1": "s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.sendto(b'x', ('::1', 9))",
    "tcp refused": "socket.create_connection(('127.0.0.1', 9), timeout=0.2)",
    "no route": "socket.create_connection(('10.1.2.3', 9), timeout=0.2)",
    "tcp to itself": "l = socket.create_server(('127.0.0.1', 0)); c = socket.create_connection(l.getsockname()); l.accept()",
    "listening only": "l = socket.create_server(('127.0.0.1', 0)); l.listen()",
    "unix socket pair": "a, b = socket.socketpair(); a.send(b'x'); b.recv(1)",
}


@pytest.mark.parametrize("act", sorted(NETWORK_ACTS))
def test_what_one_use_of_the_network_leaves_is_gone_for_the_next(box: Sandbox, act: str) -> None:
    """A pool worker keeps a network namespace while executions leave it as it was made and
    replaces it after any traffic (guest `scratch.FreshState._net_untouched`): each of these
    alone must leave the next execution the tables of a new one."""
    before = _read_in_script(box)["net"]
    done = box.run_python(f"import socket\ntry:\n    {NETWORK_ACTS[act]}\nexcept OSError:\n    pass\n")
    assert done.status == "ok", done
    assert _read_in_script(box)["net"] == before


def test_the_solution_cannot_see_the_test_runner(box: Sandbox) -> None:
    """The runner is alive while the solution answers; /proc must not show it (its page faults
    and CPU times told the red team's reply whether its last answer had passed)."""
    probe = """
import os
def echo(x):
    seen = {}
    for pid in range(1, 64):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                seen[pid] = stat.read().split()[1]
        except OSError:
            pass
    print(sorted(seen.items()), [p for p in os.listdir("/proc") if p.isdigit()], os.getpid(), flush=True)
    return x
"""
    report = box.run_tests(probe, ECHO)
    assert report.all_passed, report
    pid = report.stdout.split()[-1]
    assert report.stdout.strip() == f"[({pid}, '(python3)')] ['{pid}'] {pid}", report.stdout


def test_code_runs_without_capabilities(box: Sandbox) -> None:
    """The zygote keeps two capabilities in the sandbox's user namespace to renew it; the
    code it forks, in a script or a test run, and whatever that execs, holds none."""
    capabilities = "grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status | cut -f2 | sort -u"
    assert box.run_shell(capabilities).stdout == "0000000000000000\n"
    script = "print(sorted({line.split()[1] for line in open('/proc/self/status') if line.startswith(('CapPrm', 'CapEff', 'CapAmb', 'CapInh'))}))"
    assert box.run_python(script).stdout == "['0000000000000000']\n"
    report = box.run_tests(script + "\ndef echo(x):\n    return x\n", ECHO)
    assert report.all_passed and report.stdout == "['0000000000000000']\n", report
