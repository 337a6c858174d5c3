"""Attacks on the sandbox (rlenvs.sandbox), each against real bubblewrap workers.

Every test is one attack, or one family of attacks, and asserts two things:
(a) containment: the attack fails, with the right status where the status matters (a cheat on
    `run_tests` never passes; a bomb ends as timeout / memory / output_limit);
(b) no after-effects: after every test, the autouse fixture `unaffected` runs a normal snippet
    on the same pool (the LIFO pool hands it the worker the attack just used), checks that it
    works and sees an empty /workspace, /tmp and /dev/shm, no other process than the zygote, no
    System V IPC object, no key; checks that no process of this module's worker uids survives
    on the host beyond the live workers' bwrap + zygote; and that the watched host files did not
    change.

The attacks mostly run as Python inside the sandbox and report each attempt through
`attempt(label, action)` (PRELUDE): "blocked: <error>" or "SUCCEEDED: <value>".
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from rlenvs.sandbox import Limits, Sandbox
from rlenvs.sandbox import TestProgram as Program  # (not collected as a test class)
from rlenvs.sandbox.launch import UID_BASE, UID_SPAN, alternative_links, staged_guest_dir

pytestmark = pytest.mark.sandbox
"""Without bubblewrap these are skipped naming the install (tests/conftest.py), and fail in CI."""

if sys.platform != "linux":  # pragma: no cover
    pytest.skip("the sandbox is Linux-only", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
DISK_MB = 32
LIMITS = Limits(timeout_s=3.0, memory_mb=256, processes=32, file_size_mb=8, output_bytes=16 * 1024, disk_mb=DISK_MB)
QUICK = replace(LIMITS, timeout_s=1.0)
"""For attacks that are meant to run into the time limit."""
SECRET = f"rlenvs-secret-{uuid.uuid4().hex}"
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
SYS_IOPRIO_SET = {"x86_64": 251, "aarch64": 30}.get(platform.machine())
SYS_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274}.get(platform.machine())

ADD = Program(tests=("assert add(2, 3) == 5", "assert add(10, -4) == 6"), remote={"add": "add"})
"""Wrong answers (0, True, "5", ...) fail both tests."""
HONEST = "def add(a, b):\n    return a + b\n"

PRELUDE = '''
import ctypes, json, os, signal, socket, sys, time
RESULTS = {}
def attempt(label, action):
    try:
        value = action()
    except BaseException as error:
        RESULTS[label] = "blocked: " + type(error).__name__ + ": " + str(error)[:200]
    else:
        RESULTS[label] = "SUCCEEDED: " + repr(value)[:200]
def report():
    print(json.dumps(RESULTS))
def read(path):
    with open(path, "rb") as handle:
        return handle.read(200)
def write(path, data=b"pwned"):
    with open(path, "wb") as handle:
        return handle.write(data)
def exists(pid):
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except ProcessLookupError:
        return False
    return True
def others():
    """pids in this sandbox other than ours: found by signal 0, since /proc shows a process
    only what it may ptrace (the zygote and the test runner are hidden)."""
    return [pid for pid in range(1, 64) if pid != os.getpid() and exists(pid)]
libc = ctypes.CDLL(None, use_errno=True)
def check(rc):
    if rc == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return rc
'''

CLEAN_CHECK = """
import json, os
def listing(path):
    return sorted(os.listdir(path))
procs = []
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            with open(f"/proc/{entry}/comm") as comm:
                procs.append([int(entry), comm.read().strip()])
        except OSError:
            pass
sysv = {}
for kind in ("shm", "msg", "sem"):
    with open(f"/proc/sysvipc/{kind}") as table:
        sysv[kind] = table.read().splitlines()[1:]
with open("/proc/keys") as keys:
    standard = {"_ses", "_uid.1000", "_uid_ses.1000", ".user_reg", "_persistent.1000"}  # empty keyrings
    user_keys = [line for line in keys.read().splitlines()
                 if line.split()[7] != "keyring" or line.split()[8].rstrip(":") not in standard]
print(json.dumps({
    "answer": 6 * 7, "cwd": os.getcwd(), "uid": os.getuid(), "pid": os.getpid(),
    "dirs": {d: listing(d) for d in ("/workspace", "/tmp", "/dev/shm")},
    "xattrs": {d: os.listxattr(d) for d in ("/workspace", "/tmp", "/dev/shm")},
    "modes": {d: oct(os.stat(d).st_mode & 0o7777) for d in ("/workspace", "/tmp", "/dev/shm")},
    "procs": sorted(procs), "sysv": sysv, "keys": user_keys,
    "root": listing("/"), "dev": listing("/dev"), "opt": listing("/opt"),
}))
"""


# --- host-side helpers ------------------------------------------------------------------------


@dataclass(frozen=True)
class HostProcess:
    pid: int
    ppid: int
    uid: int
    state: str
    name: str


def host_processes() -> list[HostProcess]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = dict(
                line.split(":", 1) for line in Path(f"/proc/{entry}/status").read_text().splitlines() if ":" in line
            )
        except OSError:
            continue
        found.append(
            HostProcess(
                pid=int(entry),
                ppid=int(fields["PPid"]),
                uid=int(fields["Uid"].split()[0]),
                state=fields["State"].split()[0],
                name=fields["Name"].strip(),
            )
        )
    return found


def worker_uids(pid: int) -> set[int]:
    """The uids `launch.next_worker_uid` offers the first 4096 workers of process `pid`
    (other test sessions may run sandboxes of their own at the same time, and their uids are
    not ours)."""
    return {UID_BASE + (pid * 4096 + n) % UID_SPAN for n in range(4096)}


MY_UIDS = worker_uids(os.getpid())
"""This module's workers' uids: this process's, less those of workers other test modules
left running (their shared pools), removed by the `sandbox` fixture before it starts ours."""


def leftovers(uids: set[int] = MY_UIDS, live_parent: int | None = None) -> list[HostProcess]:
    """Processes of `uids` (zombies aside: they hold nothing) other than a live worker: a bwrap
    started by `live_parent`, the zygote it runs (its only child; a pool worker's zygote is
    that child's only child, the init of a pid namespace of its own), and the test runner the
    zygote may keep between test runs (its child of that name, one at most)."""
    mine = [p for p in host_processes() if p.uid in uids and p.state != "Z"]
    bwraps = {p.pid for p in mine if p.name == "bwrap" and live_parent is not None and p.ppid == live_parent}
    zygotes = {p.pid for p in mine if p.ppid in bwraps and p.name == "python3"}
    zygotes |= {p.pid for p in mine if p.ppid in zygotes and p.name == "python3"}
    runners = set()
    for zygote in zygotes:
        runners.update([p.pid for p in mine if p.ppid == zygote and p.name == "rlenvs-runner"][:1])
    return [p for p in mine if p.pid not in bwraps | zygotes | runners]


def assert_no_host_leftovers(uids: set[int] = MY_UIDS, live_parent: int | None = None, wait_s: float = 5.0) -> None:
    deadline = time.monotonic() + wait_s
    while (found := leftovers(uids, live_parent)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found == [], f"processes of the sandbox's uids survive on the host: {found}"


def watched_host_files(tmp_root: Path) -> dict[str, str]:
    paths = [REPO / "pyproject.toml", *sorted(Path(staged_guest_dir()).iterdir()), *sorted(tmp_root.iterdir())]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


def attack(sandbox: Sandbox, body: str, *, expect_status: str | tuple[str, ...] = "ok", **kwargs) -> dict[str, str]:
    """Run PRELUDE + body (which calls report()) and return its attempts."""
    result = sandbox.run_python(PRELUDE + textwrap.dedent(body), **kwargs)
    statuses = (expect_status,) if isinstance(expect_status, str) else expect_status
    assert result.status in statuses, result
    return json.loads(result.stdout.strip().splitlines()[-1])


def assert_blocked(results: dict[str, str], **expected_errors: str) -> None:
    succeeded = {label: outcome for label, outcome in results.items() if not outcome.startswith("blocked")}
    assert succeeded == {}, f"attacks that succeeded: {succeeded}"
    for label, error in expected_errors.items():
        assert error in results[label], (label, results[label])


def clean_state(sandbox: Sandbox) -> dict:
    result = sandbox.run_python(CLEAN_CHECK)
    assert result.status == "ok", result
    return json.loads(result.stdout)


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def host_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("host-secrets")
    (folder / "secret.txt").write_text(SECRET)
    return folder


@pytest.fixture(scope="module")
def sandbox(host_tmp: Path):
    MY_UIDS.difference_update({p.uid for p in host_processes()})  # other modules' live workers
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RLENVS_SECRET", SECRET)  # every worker is started with it in the host env
        with Sandbox(workers=2, limits=LIMITS) as box:
            yield box
    assert_no_host_leftovers(live_parent=None)  # closed: nothing at all of ours is left


@pytest.fixture(scope="module")
def baseline(sandbox: Sandbox, host_tmp: Path) -> dict:
    """The state of a fresh worker, and the watched host files, before any attack."""
    state = clean_state(sandbox)
    return {"state": state, "files": watched_host_files(host_tmp), "root": state["root"], "dev": state["dev"]}


@pytest.fixture(autouse=True)
def unaffected(sandbox: Sandbox, baseline: dict, host_tmp: Path):
    """(b) for every test: the next execution works in a clean sandbox, the host is untouched."""
    yield
    state = clean_state(sandbox)
    assert state["answer"] == 42 and state["cwd"] == "/workspace" and state["uid"] == 1000
    assert state["dirs"] == {"/workspace": [], "/tmp": [], "/dev/shm": []}, state["dirs"]
    assert state["xattrs"] == {"/workspace": [], "/tmp": [], "/dev/shm": []}, state["xattrs"]
    assert set(state["modes"].values()) == {"0o755"}, state["modes"]
    assert state["procs"] == [[state["pid"], "python3"]], state["procs"]  # only itself: the zygote is hidden
    assert state["sysv"] == {"shm": [], "msg": [], "sem": []}, state["sysv"]
    assert state["keys"] == [], state["keys"]
    assert (state["root"], state["dev"], state["opt"]) == (baseline["root"], baseline["dev"], ["rlenvs-guest"])
    assert_no_host_leftovers(live_parent=os.getpid())
    live = [p for p in host_processes() if p.uid in MY_UIDS and p.name == "bwrap" and p.ppid == os.getpid()]
    assert 1 <= len(live) <= 2, live  # the check above really looked at this pool's workers
    assert watched_host_files(host_tmp) == baseline["files"]


def test_baseline_is_what_the_sandbox_promises(sandbox: Sandbox, baseline: dict) -> None:
    """Control: a fresh worker sees an empty workspace, only itself, and the bare root."""
    state = baseline["state"]
    assert state["answer"] == 42
    assert "work" not in state["root"] and "home" not in state["root"]  # /etc: see test_etc_holds_only_...
    assert set(state["root"]) >= {"usr", "proc", "dev", "tmp", "workspace", "opt"}


def test_honest_solution_passes(sandbox: Sandbox) -> None:
    """Control: the cheats below fail because they cheat, not because nothing can pass."""
    report = sandbox.run_tests(HONEST, ADD)
    assert report.all_passed, report
    assert sandbox.run_tests("def add(a, b):\n    return a - b\n", ADD).all_passed is False


# --- reading the host -------------------------------------------------------------------------


def test_cannot_read_host_system_files(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        for path in ("/etc/hostname", "/etc/passwd", "/etc/shadow", "/etc/alternatives/../passwd", "/root/.bashrc",
                     "/home"):
            attempt(path, lambda: read(path) if path != "/home" else os.listdir(path))
        report()
    """,
    )
    assert_blocked(results, **{"/etc/passwd": "FileNotFoundError"})


def test_etc_holds_only_the_alternatives_as_links_into_usr(sandbox: Sandbox) -> None:
    """Debian reaches some commands (awk) through /etc/alternatives; the sandbox has those
    links, each pointing straight at its program in the read-only /usr, and nothing else of
    the host's /etc (the names add nothing: /usr itself is visible)."""
    args = alternative_links()
    expected = {args[i + 2].rsplit("/", 1)[1]: args[i + 1] for i in range(0, len(args), 3)}
    result = sandbox.run_python(
        "import os, json\n"
        "etc = os.listdir('/etc') if os.path.isdir('/etc') else []\n"
        "links = {n: os.readlink('/etc/alternatives/' + n) for n in os.listdir('/etc/alternatives')} if etc else {}\n"
        "print(json.dumps([etc, links]))"
    )
    etc, links = json.loads(result.stdout)
    assert etc == (["alternatives"] if expected else []) and links == expected
    assert all(target.startswith("/usr/") for target in links.values()), links


def test_cannot_read_project_files(sandbox: Sandbox) -> None:
    assert (REPO / "pyproject.toml").is_file()
    results = attack(
        sandbox,
        f"""
        attempt("pyproject", lambda: read({str(REPO / "pyproject.toml")!r}))
        attempt("repo listing", lambda: os.listdir({str(REPO)!r}))
        attempt("sandbox source", lambda: read({str(REPO / "rlenvs" / "sandbox" / "pool.py")!r}))
        attempt("cwd parent", lambda: os.listdir("/workspace/..") and read("/workspace/../work/main/pyproject.toml"))
        report()
    """,
    )
    assert_blocked(results, pyproject="FileNotFoundError")


def test_cannot_read_test_tmp_path_or_staged_guest_dir(sandbox: Sandbox, host_tmp: Path) -> None:
    staged = staged_guest_dir()
    results = attack(
        sandbox,
        f"""
        attempt("tmp_path file", lambda: read({str(host_tmp / "secret.txt")!r}))
        attempt("tmp_path dir", lambda: os.listdir({str(host_tmp)!r}))
        attempt("host staged guest dir", lambda: os.listdir({staged!r}))
        attempt("anything in sandbox /tmp", lambda: os.listdir("/tmp")[0])
        report()
    """,
    )
    assert_blocked(results)


def test_files_do_not_reach_the_next_execution(sandbox: Sandbox) -> None:
    first = sandbox.run_python(f"""
import os
for folder in ("/workspace", "/tmp", "/dev/shm"):
    with open(folder + "/secret", "w") as handle:
        handle.write({SECRET!r})
    os.makedirs(folder + "/nested/deeper")
    os.symlink("/usr/bin", folder + "/link")
print(sorted(os.listdir("/workspace")))
""")
    assert first.status == "ok" and "secret" in first.stdout, first
    results = attack(
        sandbox,
        """
        for folder in ("/workspace", "/tmp", "/dev/shm"):
            attempt(folder, lambda: read(folder + "/secret"))
            attempt(folder + " listing", lambda: os.listdir(folder)[0])
        report()
    """,
    )
    assert_blocked(results)


def test_other_worker_cannot_see_secret(sandbox: Sandbox) -> None:
    """Two executions at once run on the two workers: the second sees nothing of the first,
    neither its files nor its processes; and neither does the next execution."""
    writer_code = f"""
import os, time
for folder in ("/workspace", "/tmp", "/dev/shm"):
    with open(folder + "/secret", "w") as handle:
        handle.write({SECRET!r})
print("written", flush=True)
time.sleep(1.0)
print(sorted(os.listdir("/workspace")))
"""
    reader_body = f"""
        time.sleep(0.3)
        for folder in ("/workspace", "/tmp", "/dev/shm"):
            attempt(folder, lambda: read(folder + "/secret"))
        attempt("processes", lambda: [p for p in others() if p != 1][0])
        def grep_proc():
            for pid in others():
                for name in ("cmdline", "environ"):
                    try:
                        if {SECRET!r}.encode() in read(f"/proc/{{pid}}/{{name}}"):
                            return pid
                    except OSError:
                        pass
            raise LookupError("not found")
        attempt("secret in /proc", grep_proc)
        report()
    """
    outcome = {}
    writer = threading.Thread(target=lambda: outcome.setdefault("writer", sandbox.run_python(writer_code)))
    writer.start()
    time.sleep(0.1)
    outcome["reader"] = attack(sandbox, reader_body)
    writer.join()
    assert outcome["writer"].status == "ok" and "secret" in outcome["writer"].stdout, outcome["writer"]
    assert_blocked(outcome["reader"])
    # the writer's worker, now idle, was cleaned as well (the autouse check sees only one worker)
    states = []
    threads = [threading.Thread(target=lambda: states.append(clean_state_slow(sandbox))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({state["workspace_dev"] for state in states}) == 2  # really the two workers
    assert all(state["dirs"] == {"/workspace": [], "/tmp": [], "/dev/shm": []} for state in states), states
    assert all(state["procs"] == [[state["pid"], "python3"]] for state in states), states


def clean_state_slow(sandbox: Sandbox) -> dict:
    """CLEAN_CHECK, held for a moment so that two at once run on the two workers (each has a
    /workspace tmpfs of its own: a device number of its own)."""
    code = CLEAN_CHECK.replace(
        "print(json.dumps({",
        'import time\ntime.sleep(0.5)\nprint(json.dumps({"workspace_dev": os.stat("/workspace").st_dev, ',
    )
    result = sandbox.run_python(code)
    assert result.status == "ok", result
    return json.loads(result.stdout)


# --- writing outside the workspace --------------------------------------------------------------


def test_cannot_write_usr_or_guest_code(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        attempt("/usr file", lambda: write("/usr/pwned"))
        attempt("/usr/bin/python3", lambda: write("/usr/bin/python3"))
        attempt("/usr/lib mkdir", lambda: os.mkdir("/usr/lib/pwned"))
        attempt("guest zygote", lambda: write("/opt/rlenvs-guest/zygote.py", b"raise SystemExit"))
        attempt("guest roles append", lambda: open("/opt/rlenvs-guest/roles.py", "a").write("x = 1"))
        attempt("guest new module", lambda: write("/opt/rlenvs-guest/values2.py"))
        attempt("guest rename", lambda: os.rename("/opt/rlenvs-guest/values.py", "/opt/rlenvs-guest/v.py"))
        attempt("guest chmod", lambda: os.chmod("/opt/rlenvs-guest/zygote.py", 0o777))
        report()
    """,
    )
    assert_blocked(results)
    assert not Path("/usr/pwned").exists()


def test_cannot_write_root_dev_or_opt(sandbox: Sandbox) -> None:
    """/, /opt and /dev are tmpfs the zygote never empties and of no set size: writable, they
    carried files to later executions and let code fill the host's memory (fixed: read-only)."""
    results = attack(
        sandbox,
        """
        for path in ("/pwned", "/opt/pwned", "/dev/pwned", "/bin2"):
            attempt(path, lambda: write(path))
        attempt("mkdir /etc", lambda: os.mkdir("/etc"))
        attempt("mkdir /dev/dir", lambda: os.mkdir("/dev/dir"))
        attempt("chmod /", lambda: os.chmod("/", 0o777))
        attempt("symlink /lib", lambda: os.symlink("/workspace", "/lib2"))
        attempt("replace /bin", lambda: os.rename("/bin", "/bin.old"))
        attempt("remove /tmp", lambda: os.rmdir("/tmp"))
        attempt("rename /workspace", lambda: os.rename("/workspace", "/ws"))
        report()
    """,
    )
    assert_blocked(results, **{"/pwned": "Read-only file system", "/dev/pwned": "Read-only file system"})


def test_cannot_write_proc_sys(sandbox: Sandbox) -> None:
    """The sysctls of the sandbox's own IPC and pid namespaces (shmmax, msgmni, mqueue limits,
    pid_max) were writable and outlived the execution (fixed: /proc is read-only)."""
    results = attack(
        sandbox,
        """
        for path in ("/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", "/proc/sys/kernel/shmmax",
                     "/proc/sys/kernel/shmmni", "/proc/sys/kernel/msgmni", "/proc/sys/kernel/sem",
                     "/proc/sys/kernel/pid_max", "/proc/sys/kernel/ns_last_pid", "/proc/sys/fs/mqueue/msg_max",
                     "/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern", "/proc/1/oom_score_adj",
                     "/proc/self/oom_score_adj"):
            attempt(path, lambda: write(path, b"-1000" if "oom" in path else b"4096"))
        report()
    """,
    )
    assert_blocked(results)
    assert socket.gethostname() != "sandbox"


# --- network ------------------------------------------------------------------------------------


def test_cannot_reach_host_tcp_listener(sandbox: Sandbox) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    try:
        results = attack(
            sandbox,
            f"""
            attempt("tcp 127.0.0.1", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=1))
            attempt("tcp localhost v6", lambda: socket.create_connection(("::1", {port}), timeout=1))
            attempt("udp send", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("10.0.0.1", 53)))
            report()
        """,
        )
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert_blocked(results, **{"tcp 127.0.0.1": "ConnectionRefusedError"})


def test_no_external_network(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        attempt("tcp 1.1.1.1", lambda: socket.create_connection(("1.1.1.1", 443), timeout=1))
        attempt("tcp 8.8.8.8", lambda: socket.create_connection(("8.8.8.8", 53), timeout=1))
        attempt("dns", lambda: socket.getaddrinfo("example.com", 443))
        attempt("ipv6", lambda: socket.create_connection(("2606:4700:4700::1111", 443), timeout=1))
        report()
    """,
    )
    assert_blocked(results, **{"tcp 1.1.1.1": "Network is unreachable"})


def test_cannot_reach_host_unix_sockets(sandbox: Sandbox) -> None:
    path = f"/tmp/rlenvs-security-{uuid.uuid4().hex[:12]}.sock"
    abstract = f"\0rlenvs-security-{uuid.uuid4().hex[:12]}"
    servers = []
    for address in (path, abstract):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(4)
        server.settimeout(0.2)
        servers.append(server)
    try:
        results = attack(
            sandbox,
            f"""
            def connect(address):
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                client.connect(address)
                return client
            attempt("unix path", lambda: connect({path!r}))
            attempt("unix abstract", lambda: connect({abstract!r}))
            attempt("docker", lambda: connect("/var/run/docker.sock"))
            report()
        """,
        )
        for server in servers:
            with pytest.raises(TimeoutError):
                server.accept()
    finally:
        for server in servers:
            server.close()
        Path(path).unlink(missing_ok=True)
    assert_blocked(results, **{"unix path": "FileNotFoundError", "unix abstract": "ConnectionRefusedError"})


def test_only_loopback_interface(sandbox: Sandbox) -> None:
    result = sandbox.run_python(
        "import socket\nprint([name for _, name in socket.if_nameindex()])\n"
        "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]))"
    )
    assert result.status == "ok", result
    assert result.stdout.split("\n")[:2] == ["['lo']", "['lo']"]


# --- resource bombs -------------------------------------------------------------------------------


def test_python_fork_bomb(sandbox: Sandbox) -> None:
    result = sandbox.run_python(
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", limits=QUICK
    )
    assert result.status in ("timeout", "error", "crash"), result
    assert result.duration_s < QUICK.timeout_s + 3


def test_shell_fork_bomb(sandbox: Sandbox) -> None:
    result = sandbox.run_shell(":(){ :|:& };:; sleep 100", limits=QUICK)
    assert result.status in ("timeout", "error", "crash"), result
    assert result.duration_s < QUICK.timeout_s + 3


def test_memory_bomb(sandbox: Sandbox) -> None:
    for code in ("x = bytearray(1 << 30)", "x = [0] * (1 << 28)", "s = []\nwhile True:\n    s.append(' ' * (1 << 20))"):
        result = sandbox.run_python(code)
        assert result.status == "memory", (code, result)


def test_memory_bomb_in_solution_fails_tests(sandbox: Sandbox) -> None:
    report = sandbox.run_tests("def add(a, b):\n    return bytearray(1 << 30)\n", ADD)
    assert not report.all_passed and report.passed == 0, report


def test_cpu_spin(sandbox: Sandbox) -> None:
    for code in (
        "while True:\n    pass",
        "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass",
        "import os\nos.fork()\nos.fork()\nwhile True:\n    pass",
    ):
        started = time.monotonic()
        result = sandbox.run_python(code, limits=QUICK)
        assert result.status == "timeout", (code, result)
        assert time.monotonic() - started < QUICK.timeout_s + 3


def test_unbounded_output(sandbox: Sandbox) -> None:
    cap = LIMITS.output_bytes
    for code in (
        "import sys\nwhile True:\n    sys.stdout.write('x' * 4096)",
        "import sys\nwhile True:\n    sys.stderr.write('y' * 4096)",
        "import os\nos.fork()\nos.fork()\nwhile True:\n    os.write(1, b'z' * 65536)",
    ):
        result = sandbox.run_python(code)
        assert result.status == "output_limit" and result.truncated, (code, result.status)
        assert len(result.stdout) <= cap and len(result.stderr) <= cap
        assert len(result.stdout) + len(result.stderr) >= cap // 2
    # a test run reads and drops what goes past the cap (the tests judge, not the output):
    # an endless printer ends at its time limit, its output still capped
    report = sandbox.run_tests("while True:\n    print('spam' * 1000)\n", ADD, limits=QUICK)
    assert report.status == "timeout" and not report.all_passed and len(report.stdout) <= QUICK.output_bytes


def test_blocking_on_stdin_returns(sandbox: Sandbox) -> None:
    started = time.monotonic()
    assert sandbox.run_python("import sys\nprint(len(sys.stdin.read()))").stdout == "0\n"
    assert sandbox.run_python("input()").status == "error"
    assert sandbox.run_python("import os\nprint(os.read(0, 10))").stdout == "b''\n"
    assert sandbox.run_shell("cat; read x; echo done").stdout == "done\n"
    assert sandbox.run_python("open('/dev/tty').read()").status == "error"  # no controlling terminal
    assert not sandbox.run_tests("input()\n" + HONEST, ADD).all_passed
    assert time.monotonic() - started < 5.0


def test_disk_fill(sandbox: Sandbox) -> None:
    free_before = shutil.disk_usage("/").free
    one_file = sandbox.run_python(
        "with open('/workspace/big', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))"
    )
    assert one_file.status in ("crash", "error"), one_file  # SIGXFSZ at file_size_mb
    results = attack(
        sandbox,
        """
        written = {}
        for folder in ("/workspace", "/tmp", "/dev/shm", "/", "/opt", "/dev"):
            written[folder] = 0
            def fill():
                for index in range(200):
                    with open(f"{folder}/fill{index}", "wb") as handle:
                        for _ in range(7):
                            handle.write(b"x" * (1 << 20))
                            written[folder] += 1 << 20
            attempt(folder, fill)
        print(json.dumps(written))
        report()
    """,
    )
    assert_blocked(results, **{"/workspace": "No space left on device", "/": "Read-only file system"})
    assert free_before - shutil.disk_usage("/").free < 256 << 20


def test_inode_flood_is_bounded_by_the_inode_cap(sandbox: Sandbox) -> None:
    """The tmpfs's inode cap ends it (ENOSPC) long before the timeout: uncapped, a million
    empty files cost the host a gigabyte of kernel memory (tests/sandbox/test_confinement.py)."""
    result = sandbox.run_python(
        "import os\nos.fork()\npid = os.getpid()\nn = 0\nwhile True:\n"
        "    os.close(os.open(f'/tmp/{pid}.{n}', os.O_CREAT | os.O_WRONLY))\n    n += 1\n",
        limits=QUICK,
    )
    assert result.status == "error" and "No space left on device" in result.stderr, result
    assert result.duration_s < QUICK.timeout_s


# --- processes left behind ------------------------------------------------------------------------


BACKGROUND_SNIPPETS = {
    "shell &": ("shell", "sleep 1000 & nohup sleep 1001 >/dev/null 2>&1 & echo started"),
    "setsid": ("shell", "setsid sleep 1002 & echo started"),
    "double fork": (
        "python",
        """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(1000)
    os._exit(0)
print("started")
""",
    ),
    "ignore signals": (
        "python",
        """
import os, signal, time
if os.fork() == 0:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    os.setpgid(0, 0)
    time.sleep(1000)
print("started")
""",
    ),
}


@pytest.mark.parametrize("name", BACKGROUND_SNIPPETS)
def test_background_process_does_not_survive(sandbox: Sandbox, name: str) -> None:
    kind, code = BACKGROUND_SNIPPETS[name]
    result = (sandbox.run_shell if kind == "shell" else sandbox.run_python)(code)
    assert result.status == "ok" and "started" in result.stdout, result
    # the autouse check then lists /proc in the next execution and the host's processes


def test_background_processes_after_timeout_do_not_survive(sandbox: Sandbox) -> None:
    result = sandbox.run_shell(
        "sleep 1000 & setsid sleep 1001 & (trap '' TERM HUP INT; exec sleep 1002) & "
        "python3 -c 'import os, time; os.fork() or (os.setsid(), os.fork() or time.sleep(1000)); time.sleep(1000)' & "
        "sleep 1003",
        limits=QUICK,
    )
    assert result.status == "timeout", result
    # A zombie (state Z) is dead. The zygote kills and reaps the run's processes after it
    # answers, so on busy cores one may still be running for a moment here; none may last.
    deadline = time.monotonic() + 5
    while survivors := [
        p for p in host_processes() if p.uid in MY_UIDS and p.name in ("sleep", "sh") and p.state != "Z"
    ]:
        assert time.monotonic() < deadline, survivors
        time.sleep(0.05)


# --- signals ----------------------------------------------------------------------------------


def test_signalling_the_zygote_is_ignored(sandbox: Sandbox) -> None:
    """The zygote is pid 1 of the sandbox: no signal from inside reaches it (SIGINT, its only
    handled one besides SIGCHLD, is ignored), so code cannot turn its run into a sandbox error."""
    result = sandbox.run_python("""
import os, signal
assert os.getppid() == 1
for sig in sorted(signal.valid_signals()):
    if sig not in (signal.SIGCHLD,):
        try:
            os.kill(1, sig)
        except OSError:
            pass
os.kill(os.getppid(), signal.SIGKILL)
print("still here")
""")
    assert result.status == "ok" and result.stdout == "still here\n", result
    assert sandbox.run_shell("kill -STOP 1; kill -9 1; kill -INT 1; kill -TERM 1; echo done").stdout == "done\n"


def test_kill_minus_one(sandbox: Sandbox) -> None:
    result = sandbox.run_python(
        "import os, signal\nif os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(100)\n"
        "try:\n    os.kill(-1, signal.SIGKILL)\nexcept ProcessLookupError:\n    pass\nprint('survived')"
    )
    assert result.status == "ok" and result.stdout == "survived\n", result  # kill(-1) spares the caller and pid 1
    result = sandbox.run_shell("kill -9 -1; echo survived")
    assert result.status in ("ok", "crash"), result


def test_killing_parent_or_everyone_never_passes_tests(sandbox: Sandbox) -> None:
    wrong = "\ndef add(a, b):\n    return 0\n"
    stop_everyone = (
        "import os, signal\nfor p in os.listdir('/proc'):\n    if p.isdigit() and int(p) != os.getpid():\n"
        "        try:\n            os.kill(int(p), signal.SIGSTOP)\n        except OSError:\n            pass"
    )
    for prefix in (
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
        "import os, signal\nos.kill(-1, signal.SIGKILL)",
        "import os, signal\nos.kill(1, signal.SIGINT)",
        stop_everyone,
    ):
        report = sandbox.run_tests(prefix + wrong, ADD, limits=QUICK)
        assert not report.all_passed and report.passed == 0, (prefix, report)
        assert report.status != "sandbox_error", (prefix, report)
    report = sandbox.run_tests("import os, signal\n" + HONEST + "\nos.kill(os.getppid(), signal.SIGKILL)\n", ADD)
    assert report.all_passed, report  # the zygote shrugs it off


def test_killing_the_test_runner_fails_the_tests(sandbox: Sandbox) -> None:
    for sig in ("SIGKILL", "SIGSTOP"):
        solution = f"""
import os, signal
def add(a, b):
    for pid in range(2, 64):  # the runner is hidden from /proc, but its pid can be signalled
        if pid != os.getpid():
            try:
                os.kill(pid, signal.{sig})
            except ProcessLookupError:
                pass
    return a + b
"""
        report = sandbox.run_tests(solution, ADD, limits=QUICK)
        assert not report.all_passed, (sig, report)
        assert report.status in ("crash", "timeout"), (sig, report)


def _host_state(pid: int) -> list:
    """What the sandbox's uid could change in process `pid` (a host pid) and its children
    would inherit: run state, nice value, CPUs, pending signals, scheduling policy, I/O
    priority, the rest of sched_getattr(2), rlimits. Read from the host: inside, /proc hides
    the zygote and the test runner from the solution."""
    with open(f"/proc/{pid}/stat") as stat:
        run_state = stat.read().rsplit(")", 1)[1].split()[0]
    with open(f"/proc/{pid}/status") as status:
        pending = sorted(line.split()[1] for line in status if line.startswith(("SigPnd", "ShdPnd")))
    with open(f"/proc/{pid}/limits") as limits:
        rlimits = limits.read()
    libc = ctypes.CDLL(None, use_errno=True)
    ioprio = libc.syscall(SYS_IOPRIO_SET + 1, 1, pid) if SYS_IOPRIO_SET else None
    attr = ctypes.create_string_buffer(56)
    if SYS_SCHED_SETATTR:
        libc.syscall(SYS_SCHED_SETATTR + 1, pid, attr, 56, 0)
    return [
        pid,
        run_state,
        os.getpriority(os.PRIO_PROCESS, pid),
        sorted(os.sched_getaffinity(pid)),
        pending,
        os.sched_getscheduler(pid),
        ioprio,
        attr.raw.hex(),
        rlimits,
    ]


RUNNER_ATTACKS = {
    "stop": "os.kill(pid, signal.SIGSTOP)",
    "kill": "os.kill(pid, signal.SIGKILL)",
    "blocked signal left pending": "os.kill(pid, signal.SIGUSR1)",
    "real-time signal left pending": "os.kill(pid, signal.SIGRTMIN)",
    "renice": "os.setpriority(os.PRIO_PROCESS, pid, 19)",
    "pin to one CPU": "os.sched_setaffinity(pid, {min(os.sched_getaffinity(pid))})",
    "lower an rlimit": "resource.prlimit(pid, resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))",
    "idle scheduling": "os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))",
    # ioprio_set(IOPRIO_WHO_PROCESS, pid, IOPRIO_CLASS_IDLE << 13); read back with ioprio_get
    "idle I/O priority": f"ctypes.CDLL(None).syscall({SYS_IOPRIO_SET}, 1, pid, 3 << 13)",
    # sched_setattr: SCHED_OTHER with its own 3 ms time slice (sched_runtime; Linux >= 6.12)
    "own time slice": f"ctypes.CDLL(None).syscall({SYS_SCHED_SETATTR}, pid, "
    "struct.pack('IIQiIQQQII', 56, 0, 0, 0, 0, 3_000_000, 0, 0, 0, 0), 0)",
}


def _probe(box: Sandbox) -> tuple[list, list]:
    """After a clean test run on `box`'s one worker: the zygote's and the kept runner's state."""
    report = box.run_tests(HONEST, ADD)
    assert report.all_passed, report
    [worker] = box._idle  # the pool's one worker, idle between runs
    processes = host_processes()
    [outer] = [p.pid for p in processes if p.ppid == worker.pid]  # bwrap's pid 1
    [zygote] = [p.pid for p in processes if p.ppid == outer]  # pid 1 of its own namespace
    [runner] = [p.pid for p in processes if p.ppid == zygote and p.name == "rlenvs-runner"]
    deadline = time.monotonic() + 3.0
    while True:  # the zygote may still be cleaning up after the run (running, a SIGCHLD pending)
        states = _host_state(zygote), _host_state(runner)
        settled = all(state[1] == "S" and state[4] == ["0000000000000000"] * 2 for state in states)
        if settled or time.monotonic() > deadline:
            return states
        time.sleep(0.02)


@pytest.mark.parametrize("targets", ["zygote and runner", "runner"])
@pytest.mark.parametrize("name", sorted(RUNNER_ATTACKS))
def test_what_a_solution_does_to_the_kept_test_runner_and_zygote_ends_with_it(name: str, targets: str) -> None:
    """The test runner outlives each run, and the solution shares its uid (and the zygote's).
    Whatever a solution does to either (stop, kill, leave signals pending, renice, pin to a
    CPU, change its scheduling or I/O priority, lower its rlimits: all inherited by the
    processes it forks) must not reach the next run: it meets a zygote and a runner as they
    were made. The runner alone: its own check (`TestRunner.is_fit`), not the zygote's."""
    if (name, None) in (("idle I/O priority", SYS_IOPRIO_SET), ("own time slice", SYS_SCHED_SETATTR)):
        pytest.skip("the attack's syscall number is unknown for this machine")
    with Sandbox(workers=1, limits=LIMITS) as box:  # one worker: every run meets the same zygote
        # The first test run forks the runner, which sets its rlimits while the probe runs;
        # the second meets it settled. So below: a replaced runner is probed a second time.
        first_runner = _probe(box)[1][0]
        zygote, runner = _probe(box)
        assert runner[0] == first_runner  # a clean run keeps its runner
        attack = RUNNER_ATTACKS[name]
        spared = "os.getpid()" if targets == "zygote and runner" else "os.getpid(), 1"
        solution = f"""
import ctypes, os, resource, signal, struct
def add(a, b):
    for pid in [pid for pid in range(1, 64) if pid not in ({spared},)]:  # hidden from /proc, not from kill
        try:
            {attack}
        except OSError:
            pass
    return a + b
"""
        attacked = box.run_tests(solution, ADD, limits=QUICK)
        assert attacked.status != "sandbox_error", attacked
        _probe(box)
        zygote_after, runner_after = _probe(box)
        for before, after in ((zygote, zygote_after), (runner, runner_after)):
            assert after[1] in ("S", "R") and after[2:] == before[2:], (name, before, after)  # not stopped
        assert runner[2] == 0 and runner[4] == ["0000000000000000"] * 2


def test_test_program_changes_to_the_runner_end_with_the_run() -> None:
    """The runner is kept between runs of different tasks: what one task's test set-up changes
    in it (builtins, sys.path, the environment, the working folder, the recursion limit) is
    put back before the next run."""
    patched = Program(
        setup="import builtins, os, sys\nbuiltins.len = lambda value: 42\nsys.path.append('/nowhere')\n"
        "os.environ['TASK_VAR'] = '1'\nos.chdir('/')\nsys.setrecursionlimit(50)",
        tests=("assert len([1]) == 42",),
        remote={"add": "add"},
    )
    plain = Program(
        setup="import os, sys",
        tests=(
            "assert len([1, 2]) == 2",
            "assert add(1, 1) == 2",
            "assert '/nowhere' not in sys.path",
            "assert 'TASK_VAR' not in os.environ",
            "assert os.getcwd() == '/workspace'",
            "assert sys.getrecursionlimit() > 50",
        ),
        remote={"add": "add"},
    )
    with Sandbox(workers=1, limits=LIMITS) as box:
        assert box.run_tests(HONEST, patched).all_passed
        report = box.run_tests(HONEST, plain)
        assert report.all_passed, report


def test_unseeded_random_test_inputs_are_the_same_every_run() -> None:
    """The kept runner's `random` state is put back after each run, as a fresh fork of the
    zygote had it: a test that draws inputs without a seed checks the same ones each run."""
    drawn = Program(setup="import random", tests=("assert add(random.random(), 0) == -1",), remote={"add": "add"})
    with Sandbox(workers=1, limits=LIMITS) as box:
        errors = {box.run_tests(HONEST, drawn).tests[0].error for _ in range(3)}
    assert len(errors) == 1 and "last call: add(0." in errors.pop()


# --- /proc, environment, keyrings -------------------------------------------------------------------


def test_cannot_see_host_processes(sandbox: Sandbox) -> None:
    result = sandbox.run_python(f"""
import os
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
print(pids)
print(os.path.exists('/proc/{os.getpid()}/cmdline') and b'pytest' in open('/proc/{os.getpid()}/cmdline', 'rb').read())
print(any(b'pytest' in open(f'/proc/{{p}}/cmdline', 'rb').read() for p in pids if os.path.exists(f'/proc/{{p}}/cmdline')))
""")
    assert result.status == "ok", result
    pids, host_pid_visible, pytest_visible = result.stdout.splitlines()
    assert json.loads(pids) == [2]  # this process alone: the zygote (pid 1) is hidden
    assert (host_pid_visible, pytest_visible) == ("False", "False")


def test_environment_secret_not_visible(sandbox: Sandbox) -> None:
    """The workers start while RLENVS_SECRET is in this process's environment. It reached
    bwrap's own pid 1, whose /proc/1/environ the code could read (fixed: the zygote is pid 1,
    and workers start with a minimal environment)."""
    assert os.environ["RLENVS_SECRET"] == SECRET
    results = attack(
        sandbox,
        f"""
        def in_environ():
            if {SECRET!r} in str(os.environ) or "RLENVS" in str(os.environ):
                return os.environ
            raise LookupError(sorted(os.environ))
        attempt("os.environ", in_environ)
        attempt("own /proc environ", lambda: read("/proc/self/environ").index({SECRET!r}.encode()))
        for pid in others():
            attempt(f"/proc/{{pid}}/environ", lambda: read(f"/proc/{{pid}}/environ"))
            attempt(f"/proc/{{pid}}/cmdline secret", lambda: read(f"/proc/{{pid}}/cmdline").index(b"RLENVS"))
        report()
    """,
    )
    assert_blocked(results, **{"/proc/1/environ": "FileNotFoundError"})  # hidden: not ptrace-able
    shell = sandbox.run_shell("env; cat /proc/*/environ 2>/dev/null; true")
    assert SECRET not in shell.stdout and "RLENVS" not in shell.stdout
    report = sandbox.run_tests(
        f"import os\ndef add(a, b):\n    return 5 if {SECRET!r} in str(os.environ) else 0\n", ADD
    )
    assert not report.all_passed


@pytest.mark.skipif(SYS_KEYCTL is None, reason="keyctl syscall number unknown for this machine")
def test_host_session_keyring_not_reachable() -> None:
    """A host process in a session keyring (a login session) passed it to every worker: the code
    possessed it and read the host's keys (fixed: the zygote joins a keyring of its own). Run in
    a child process, so that this test session keeps its own keyring."""
    script = f"""
import ctypes, json, sys
from rlenvs.sandbox import Sandbox
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
assert libc.syscall(L({SYS_KEYCTL}), L(1), ctypes.c_char_p(b"rlenvs-host-session")) > 0
assert libc.syscall(L({SYS_KEYCTL} - 2), b"user", b"host-secret", {SECRET!r}.encode(), L({len(SECRET)}), L(-3)) > 0
probe = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
found = []
for ring in (-3, -4, -5):
    key = libc.syscall(L({SYS_KEYCTL}), L(10), L(ring), b"user", b"host-secret", L(0))
    buf = ctypes.create_string_buffer(200)
    if key > 0 and libc.syscall(L({SYS_KEYCTL}), L(11), L(key), buf, L(200)) > 0:
        found.append(buf.value.decode())
print(found, open("/proc/keys").read().count("rlenvs-host-session"))
'''
with Sandbox(workers=1) as sandbox:
    print(json.dumps(sandbox.run_python(probe).stdout))
"""
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, stderr
    assert json.loads(stdout) == "[] 0\n"
    assert_no_host_leftovers(worker_uids(child.pid))


def test_ipc_and_keys_do_not_reach_the_next_execution(sandbox: Sandbox) -> None:
    """System V IPC objects, POSIX message queues, keys and xattrs outlive processes; the
    zygote removes them (fixed), and the next execution finds none (also checked by `unaffected`)."""
    if SYS_KEYCTL is None:
        pytest.skip("keyctl syscall number unknown for this machine")
    first = attack(
        sandbox,
        f"""
        L = ctypes.c_long
        libc.shmat.restype = ctypes.c_void_p
        def shm():
            ident = check(libc.shmget(0x5ec2e7, 1 << 20, 0o1666))
            address = libc.shmat(ident, None, 0)
            ctypes.memmove(address, b"leak", 4)
            return ident
        attempt("shm", shm)
        attempt("msg", lambda: check(libc.msgget(0x5ec2e8, 0o1666)))
        attempt("sem", lambda: check(libc.semget(0x5ec2e9, 1, 0o1666)))
        attempt("mqueue", lambda: check(libc.mq_open(b"/leak", os.O_CREAT | os.O_RDWR, 0o600, None)))
        def add_key(ring):  # readable by anyone of this uid, not only by who holds the keyring
            key = check(libc.syscall(L({SYS_KEYCTL} - 2), b"user", b"leak", b"data", L(4), L(ring)))
            return key, check(libc.syscall(L({SYS_KEYCTL}), L(5), L(key), L(0x3f3f3f3f)))
        for ring in (-3, -4, -5):
            attempt(f"key {{ring}}", lambda: add_key(ring))
        attempt("keyring name", lambda: check(libc.syscall(L({SYS_KEYCTL} - 2), b"keyring", b"leak-name", None, L(0), L(-3))))
        def persistent():
            keyring = check(libc.syscall(L({SYS_KEYCTL}), L(22), L(-1), L(-3)))
            return check(libc.syscall(L({SYS_KEYCTL} - 2), b"user", b"leak-persistent", b"data", L(4), L(keyring)))
        attempt("persistent key", persistent)
        attempt("xattr", lambda: os.setxattr("/workspace", "user.leak", b"data"))
        report()
    """,
    )
    assert first["mqueue"].startswith("blocked"), first  # RLIMIT_MSGQUEUE is 0
    second = attack(
        sandbox,
        f"""
        L = ctypes.c_long
        attempt("shm", lambda: check(libc.shmget(0x5ec2e7, 0, 0)))
        attempt("msg", lambda: check(libc.msgget(0x5ec2e8, 0)))
        attempt("sem", lambda: check(libc.semget(0x5ec2e9, 0, 0)))
        attempt("mqueue", lambda: check(libc.mq_open(b"/leak", os.O_RDWR, 0, None)))
        for ring in (-3, -4, -5):
            attempt(f"key {{ring}}", lambda: check(libc.syscall(L({SYS_KEYCTL}), L(10), L(ring), b"user", b"leak", L(0))))
        def persistent():
            keyring = check(libc.syscall(L({SYS_KEYCTL}), L(22), L(-1), L(-3)))
            return check(libc.syscall(L({SYS_KEYCTL}), L(10), L(keyring), b"user", b"leak-persistent", L(0)))
        attempt("persistent key", persistent)
        attempt("xattr", lambda: os.getxattr("/workspace", "user.leak"))
        def by_id():
            with open("/proc/keys") as keys:
                listed = keys.read()
            if "leak" in listed:
                return listed
            buffer = ctypes.create_string_buffer(16)
            for line in listed.splitlines():  # (reading a keyring gives the ids it links: no data)
                if line.split()[7] != "keyring" and libc.syscall(L({SYS_KEYCTL}), L(11), L(int(line.split()[0], 16)), buffer, L(16)) > 0:
                    return line, buffer.value
            raise LookupError("no key left")
        attempt("key by id", by_id)
        report()
    """,
    )
    assert_blocked(second)
    # the zygote's own session keyring, which every execution inherits: the code can make the
    # zygote adopt a keyring of its own (KEYCTL_SESSION_TO_PARENT), full and locked against clearing
    swap = attack(
        sandbox,
        f"""
        L = ctypes.c_long
        def session_to_parent():
            keyring = check(libc.syscall(L({SYS_KEYCTL}), L(1), b"leak-parent"))
            check(libc.syscall(L({SYS_KEYCTL} - 2), b"user", b"leak-in-parent", b"data", L(4), L(-3)))
            check(libc.syscall(L({SYS_KEYCTL}), L(5), L(keyring), L(0x1b1b1b1b)))  # no write: cannot be cleared
            return check(libc.syscall(L({SYS_KEYCTL}), L(18)))
        attempt("session to parent", session_to_parent)
        report()
    """,
    )
    assert "session to parent" in swap  # (the kernel allows it here: the zygote copes by being replaced)
    after = sandbox.run_python("print('leak' in open('/proc/keys').read())")
    assert after.stdout == "False\n", after


# --- ptrace and the zygote's insides ------------------------------------------------------------------


def test_ptrace_and_proc_of_other_processes_fail(sandbox: Sandbox) -> None:
    """Every other process in the sandbox (the zygote; in a test run also the test runner) is
    out of reach: no ptrace, no /proc/<pid>/mem, fd, environ, no process_vm_readv."""
    body = """
        class IOVec(ctypes.Structure):
            _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
        def vm_read(pid):
            buffer = ctypes.create_string_buffer(8)
            local, remote = IOVec(ctypes.addressof(buffer), 8), IOVec(0x400000, 8)
            return check(libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        for pid in others():
            attempt(f"{pid} PTRACE_ATTACH", lambda: check(libc.ptrace(16, pid, None, None)))
            attempt(f"{pid} PTRACE_SEIZE", lambda: check(libc.ptrace(0x4206, pid, None, None)))
            attempt(f"{pid} mem", lambda: read(f"/proc/{pid}/mem"))
            attempt(f"{pid} mem write", lambda: write(f"/proc/{pid}/mem"))
            attempt(f"{pid} fd", lambda: os.listdir(f"/proc/{pid}/fd"))
            for fd in range(6):
                attempt(f"{pid} fd {fd}", lambda: write(f"/proc/{pid}/fd/{fd}", b'{"status": "ok"}\\n'))
            attempt(f"{pid} environ", lambda: read(f"/proc/{pid}/environ"))
            attempt(f"{pid} root", lambda: os.listdir(f"/proc/{pid}/root/"))
            attempt(f"{pid} process_vm_readv", lambda: vm_read(pid))
        RESULTS["pids"] = "blocked: " + str(others())
        report()
    """
    results = attack(sandbox, body)
    assert_blocked(results, **{"1 PTRACE_ATTACH": "Operation not permitted", "1 mem": "FileNotFoundError"})
    # the same from inside a test run, where the trusted test runner is a sibling: the attempts
    # run during the call (the runner surely exists then) and go to the solution's stdout
    attempts = textwrap.indent(textwrap.dedent(body), "    ")
    solution = PRELUDE + "def add(a, b):\n" + attempts + "    sys.stdout.flush()\n    return 0\n"
    report = sandbox.run_tests(solution, ADD)
    assert not report.all_passed and report.status == "ok", report
    in_test_run = json.loads(report.stdout.splitlines()[0])
    assert len(json.loads(in_test_run["pids"].split(": ", 1)[1])) >= 2, in_test_run  # zygote and runner
    assert_blocked(in_test_run)


def test_ptrace_forged_verdict(sandbox: Sandbox) -> None:
    """The exploit that worked against bwrap's own pid 1 (dumpable, holding the host's protocol
    pipes): ptrace it, make it write a forged `{"status": "ok", tests: passed}` answer line to
    the host. Fixed by running the zygote as pid 1 (`--as-pid-1`). Tried on every pid."""
    if platform.machine() != "x86_64":
        pytest.skip("the exploit is written for x86_64")
    solution = r"""
import ctypes, json, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss "
        "fs_base gs_base ds es fs gs").split()]
def add(a, b):
    return 0
fake = json.dumps({"status": "ok", "tests": [{"index": 0, "ok": True}, {"index": 1, "ok": True}]}) + "\n"
for target in sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()):
    if libc.ptrace(16, target, None, None) != 0:
        continue
    os.waitpid(target, 0x40000000)
    saved = Regs()
    libc.ptrace(12, target, None, ctypes.byref(saved))
    regs = Regs.from_buffer_copy(saved)
    address = (saved.rsp - 8192) & ~0xF
    data = fake.encode() + b"\0" * (-len(fake) % 8)
    for i in range(0, len(data), 8):
        libc.ptrace(5, target, ctypes.c_void_p(address + i), ctypes.c_void_p(struct.unpack("<Q", data[i:i + 8])[0]))
    regs.rip, regs.orig_rax = saved.rip - 2, 2**64 - 1
    regs.rax, regs.rdi, regs.rsi, regs.rdx = 1, 1, address, len(fake)
    libc.ptrace(13, target, None, ctypes.byref(regs))
    libc.ptrace(9, target, None, None)
    os.waitpid(target, 0x40000000)
    libc.ptrace(13, target, None, ctypes.byref(saved))
    libc.ptrace(17, target, None, None)
"""
    report = sandbox.run_tests(solution, ADD)
    assert not report.all_passed and report.passed == 0, report
    # and the protocol is still in step: no forged line is waiting to answer a later request
    for n in range(3):
        assert sandbox.run_python(f"print({n})").stdout == f"{n}\n"


# --- links -----------------------------------------------------------------------------------------


def test_symlink_escapes(sandbox: Sandbox, host_tmp: Path) -> None:
    targets = {"passwd": "/etc/passwd", "project": str(REPO / "pyproject.toml"), "tmp_path": str(host_tmp / "secret.txt"),
               "work": "/work", "proc root": "/proc/1/root/etc/passwd", "guest": "/opt/rlenvs-guest/zygote.py"}  # fmt: skip
    results = attack(
        sandbox,
        f"""
        for name, target in {targets!r}.items():
            link = "/workspace/" + name.replace(" ", "_")
            os.symlink(target, link)
            if name == "guest":
                attempt("write through link to guest code", lambda: write(link))
            else:
                attempt(name, lambda: read(link))
        os.symlink("/workspace/loop_b", "/workspace/loop_a")
        os.symlink("/workspace/loop_a", "/workspace/loop_b")
        attempt("loop", lambda: read("/workspace/loop_a"))
        attempt("link out of /tmp to host", lambda: (os.symlink("/", "/tmp/root"), read("/tmp/root/etc/passwd")))
        report()
    """,
    )
    assert_blocked(results)


def test_hard_link_escapes(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        attempt("python3", lambda: os.link("/usr/bin/python3", "/workspace/python3"))
        attempt("guest code", lambda: os.link("/opt/rlenvs-guest/zygote.py", "/tmp/zygote.py"))
        attempt("passwd", lambda: os.link("/etc/passwd", "/workspace/passwd"))
        attempt("proc", lambda: os.link("/proc/1/exe", "/workspace/exe"))
        report()
    """,
    )
    assert_blocked(results, python3="Invalid cross-device link")


def test_hostile_workspace_tree_is_cleaned(sandbox: Sandbox) -> None:
    """Directories without permissions crashed the zygote's clean-up (a TypeError in its rmtree
    error handler: the run became a sandbox_error); a tree deeper than the recursion limit
    must not either (the worker is replaced instead)."""
    result = sandbox.run_python("""
import os
for root in ("/workspace", "/tmp", "/dev/shm"):
    os.makedirs(root + "/a/b/c/d")
    open(root + "/a/b/c/d/f", "w").close()
    os.chmod(root + "/a/b/c", 0)
    os.chmod(root + "/a/b", 0o500)
    os.chmod(root + "/a", 0)
    os.mkfifo(root + "/fifo")
    os.symlink("/opt/rlenvs-guest", root + "/guest")
    os.symlink("/usr", root + "/usr_dir_link")
os.chmod("/workspace", 0)
print("planted")
""")
    assert result.status == "ok" and result.stdout == "planted\n", result
    state = clean_state(sandbox)
    assert state["dirs"] == {"/workspace": [], "/tmp": [], "/dev/shm": []}
    deep = sandbox.run_python(
        "import os\nos.chdir('/workspace')\nfor _ in range(1500):\n    os.mkdir('d')\n    os.chdir('d')\nprint('deep')"
    )
    assert deep.status == "ok" and deep.stdout == "deep\n", deep


# --- cheating in run_tests -----------------------------------------------------------------------


EARLY_EXITS = {
    "sys.exit(0) at module level": "import sys\nsys.exit(0)\n",
    "os._exit(0) at module level": "import os\nos._exit(0)\n",
    "raise SystemExit at module level": "raise SystemExit\n",
    "raise SystemExit(0) at module level": "raise SystemExit(0)\n",
    "sys.exit(0) in the function": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
    "os._exit(0) in the function": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "raise SystemExit in the function": "def add(a, b):\n    raise SystemExit(0)\n",
    "KeyboardInterrupt in the function": "def add(a, b):\n    raise KeyboardInterrupt\n",
    "SIGKILL itself in the function": "import os, signal\ndef add(a, b):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "exit after defining": "import sys\ndef add(a, b):\n    return 0\nsys.exit(0)\n",
    "close the socket": "import os\nos.close(3)\ndef add(a, b):\n    return 0\n",
}


@pytest.mark.parametrize("name", EARLY_EXITS)
def test_early_exit_does_not_pass(sandbox: Sandbox, name: str) -> None:
    report = sandbox.run_tests(EARLY_EXITS[name], ADD)
    assert not report.all_passed and report.passed == 0, report
    assert report.status != "sandbox_error", report


FORGED_CHANNELS = {
    "fake records on fds 3..20": """
import json, os
records = [json.dumps({"index": i, "ok": True}) for i in range(2)] + [json.dumps({"done": True})]
for fd in range(3, 21):
    try:
        os.write(fd, ("\\n".join(records) + "\\n").encode())
    except OSError:
        pass
def add(a, b):
    return 0
""",
    "fake frames on the call socket": """
import json, os, struct
reply = json.dumps(["ok", ["int", "5"]]).encode()
def add(a, b):
    for _ in range(3):
        os.write(3, struct.pack(">I", len(reply)) + reply)
    return ["not", "five"]
""",
    "garbage on the call socket": """
import os
def add(a, b):
    os.write(3, b"\\xff" * 100)
    return 0
""",
    "fake done lines on stdout and stderr": """
import sys
for stream in (sys.stdout, sys.stderr):
    print('{"done": true}', file=stream, flush=True)
    print('{"index": 0, "ok": true}\\n{"index": 1, "ok": true}', file=stream, flush=True)
print('{"status": "ok", "tests": [{"index": 0, "ok": true}, {"index": 1, "ok": true}]}', flush=True)
def add(a, b):
    print('{"done": true}')
    return 0
""",
    "writing into /proc/<pid>/fd of every process": """
import json, os
line = (json.dumps({"index": 0, "ok": True}) + "\\n" + json.dumps({"done": True}) + "\\n").encode()
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():
        for fd in range(10):
            try:
                with open(f"/proc/{pid}/fd/{fd}", "wb") as handle:
                    handle.write(line)
            except OSError:
                pass
def add(a, b):
    return 0
""",
    "forking a writer that outlives the call": """
import json, os, time
def add(a, b):
    if os.fork() == 0:
        for _ in range(50):
            for fd in range(10):
                try:
                    os.write(fd, b'{"done": true}\\n')
                except OSError:
                    pass
            time.sleep(0.01)
        os._exit(0)
    return 0
""",
}


@pytest.mark.parametrize("name", FORGED_CHANNELS)
def test_forged_result_channel_does_not_pass(sandbox: Sandbox, name: str) -> None:
    report = sandbox.run_tests(FORGED_CHANNELS[name], ADD)
    assert not report.all_passed, report  # (a forged frame saying 5 is an answer of 5: one test may pass)


EQUALITY_CHEATS = {
    "__eq__ always True": """
class Anything:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
def add(a, b):
    return Anything()
""",
    "int subclass": """
class Five(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def add(a, b):
    return Five(0)
""",
    "str subclass": """
class Same(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
def add(a, b):
    return Same("nope")
""",
    "float subclass with NaN-like tricks": """
class F(float):
    __eq__ = lambda self, other: True
    __ne__ = lambda self, other: False
def add(a, b):
    return F(0.5)
""",
    "list subclass": """
class L(list):
    __eq__ = lambda self, other: True
def add(a, b):
    return L()
""",
    "bool subclass of int": """
def add(a, b):
    return True
""",
    "object with patched class": """
class Meta(type):
    def __instancecheck__(cls, obj):
        return True
class Int(int, metaclass=Meta):
    __eq__ = lambda self, other: True
def add(a, b):
    return Int(1)
""",
    "patched builtins and assert helpers": """
import builtins, operator
builtins.AssertionError = type("AssertionError", (Exception,), {})
builtins.isinstance = lambda *args: True
builtins.print = lambda *args, **kwargs: None
operator.eq = lambda a, b: True
def add(a, b):
    return 0
""",
    "module-level check, candidate, AssertionError": """
def check(candidate):
    return True
def candidate(*args):
    return True
class AssertionError(Exception):
    pass
def assert_equal(*args):
    pass
def add(a, b):
    return 0
""",
    "monkeypatch the test runner's modules": """
import sys, json
json.loads = lambda *args, **kwargs: ["ok", ["int", "5"]]
sys.modules["values"] = None
def add(a, b):
    return 0
""",
    "unencodable return value": """
def add(a, b):
    return lambda *args: True
""",
    "self-referential value": """
def add(a, b):
    value = []
    value.append(value)
    return value
""",
}


@pytest.mark.parametrize("name", EQUALITY_CHEATS)
def test_equality_cheats_do_not_pass(sandbox: Sandbox, name: str) -> None:
    report = sandbox.run_tests(EQUALITY_CHEATS[name], ADD)
    assert not report.all_passed and report.passed == 0, report
    assert report.status in ("ok", "crash", "error"), report


# --- the rest of the machine --------------------------------------------------------------------------


def test_dev_has_no_devices_to_abuse(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        for name in ("sda", "vda", "nvme0n1", "mem", "kmem", "port", "kmsg", "fuse", "net/tun", "kvm", "loop0",
                     "loop-control", "mapper/control", "dri/card0", "nvidia0", "nvidiactl", "console", "tty0"):
            attempt(name, lambda: read("/dev/" + name))
        attempt("core", lambda: read("/dev/core"))
        attempt("mknod", lambda: os.mknod("/workspace/sda", 0o600 | 0o060000, os.makedev(8, 0)))
        report()
    """,
    )
    assert_blocked(results)
    allowed = {"core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty",
               "urandom", "zero"}  # fmt: skip
    listing = sandbox.run_python("import os\nprint(sorted(os.listdir('/dev')))")
    assert set(json.loads(listing.stdout.replace("'", '"'))) <= allowed


def test_setuid_fails(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        attempt("setuid(0)", lambda: os.setuid(0))
        attempt("setgid(0)", lambda: os.setgid(0))
        attempt("setresuid", lambda: os.setresuid(0, 0, 0))
        attempt("setgroups", lambda: os.setgroups([0]))
        attempt("seteuid", lambda: os.seteuid(0))
        attempt("setuid other", lambda: os.setuid(1001))
        report()
    """,
    )
    assert_blocked(results)
    assert sandbox.run_shell("id -u; grep NoNewPrivs /proc/self/status").stdout.split() == ["1000", "NoNewPrivs:", "1"]


def test_no_nested_namespaces(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        flags = {"user": 0x10000000, "mount": 0x00020000, "net": 0x40000000, "pid": 0x20000000,
                 "user+mount": 0x10020000, "ipc": 0x08000000, "uts": 0x04000000}
        for name, flag in flags.items():
            attempt("unshare " + name, lambda: check(libc.unshare(flag)))
        attempt("mount tmpfs", lambda: check(libc.mount(b"none", b"/workspace", b"tmpfs", 0, None)))
        attempt("chroot", lambda: os.chroot("/workspace"))
        attempt("setns", lambda: check(libc.setns(os.open("/proc/1/ns/user", os.O_RDONLY), 0)))
        report()
    """,
    )
    assert_blocked(results)
    shell = sandbox.run_shell("unshare -U true || unshare -r true || unshare -n true || echo all-refused")
    assert shell.stdout.strip().endswith("all-refused"), shell


def test_hostname_is_sandbox(sandbox: Sandbox) -> None:
    results = attack(
        sandbox,
        """
        attempt("sethostname", lambda: socket.sethostname("pwned"))
        attempt("setdomainname", lambda: check(libc.setdomainname(b"pwned", 5)))
        print(socket.gethostname(), os.uname().nodename, read("/proc/sys/kernel/hostname").decode().strip())
        report()
    """,
    )
    assert_blocked(results)
    shown = sandbox.run_python("import os, socket\nprint(socket.gethostname(), os.uname().nodename)")
    assert shown.stdout == "sandbox sandbox\n"
    assert socket.gethostname() != "pwned"


def test_multiprocessing_still_works(sandbox: Sandbox) -> None:
    """Control for the read-only /dev: /dev/shm is a tmpfs of its own, so POSIX semaphores and
    shared memory (multiprocessing) still work."""
    result = sandbox.run_python("""
import multiprocessing
with multiprocessing.Pool(2) as pool:
    print(pool.map(abs, [-1, -2, 3]))
print(multiprocessing.Value("i", 7).value)
""")
    assert result.status == "ok" and result.stdout == "[1, 2, 3]\n7\n", result


def test_no_inherited_file_descriptors(sandbox: Sandbox) -> None:
    """Code gets stdin/stdout/stderr only: none of the zygote's descriptors (the host pipes,
    the other child's ends), and the zygote's own are out of reach through /proc."""
    results = attack(
        sandbox,
        """
        for fd in range(3, 64):
            attempt(f"fd {fd}", lambda: os.fstat(fd))
        attempt("zygote stdin", lambda: read("/proc/1/fd/0"))
        report()
    """,
    )
    assert_blocked(results)


def test_signal_handler_loop_does_not_outlive_timeout(sandbox: Sandbox) -> None:
    result = sandbox.run_python(
        """
import signal, time
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU, signal.SIGALRM):
    signal.signal(sig, signal.SIG_IGN)
while True:
    time.sleep(0.01)
""",
        limits=QUICK,
    )
    assert result.status == "timeout", result
    assert result.duration_s < QUICK.timeout_s + 3


def test_sandbox_status_never_passes_on_timeout_or_crash(sandbox: Sandbox) -> None:
    for solution in (
        "import time\ntime.sleep(100)\n" + HONEST,
        "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    ):
        report = sandbox.run_tests(solution, ADD, limits=QUICK)
        assert not report.all_passed and report.status in ("timeout", "crash", "ok"), report
        assert report.passed == 0, report


def test_no_execution_finds_the_last_ones_data_in_its_memory() -> None:
    """Every solution is a fork of the zygote: whatever the zygote held, freed or not, is in
    the solution's memory. Each execution's code, stdin and output, and a test run's program,
    pass through the zygote only by `os.splice` (`guest/protocol.py`), so the next execution
    on the same worker, reading its whole address space, finds none of them."""
    from tests.support.redteam_code_memory import READABLE_MEMORY

    tokens = {name: uuid.uuid4().hex for name in ("code", "stdin", "stdout", "stderr", "program", "solution_out")}
    # the scanner holds the tokens only hex-encoded, and builds them after it has copied its
    # memory: a token found is one that was there before
    hexed = {name: token.encode().hex() for name, token in tokens.items()}
    scan = (
        "import ctypes\n"
        + READABLE_MEMORY
        + (
            "regions = list(_readable_memory())\n"  # read before the tokens exist in this process
            f"wanted = {{name: bytes.fromhex(h) for name, h in {hexed!r}.items()}}\n"
            "print(sorted({name for name, token in wanted.items() for data in regions if token in data}))\n"
        )
    )
    with Sandbox(workers=1) as sandbox:
        first = sandbox.run_python(
            f"# {tokens['code']}\nimport sys\nprint({tokens['stdout']!r})\nprint({tokens['stderr']!r}, file=sys.stderr)\n"
            "sys.stdin.read()",
            stdin=tokens["stdin"],
        )
        assert tokens["stdout"] in first.stdout and tokens["stderr"] in first.stderr
        program = Program(tests=(f"assert f() == {tokens['program']!r}",), remote={"f": "f"})
        tested = sandbox.run_tests(f"def f():\n    print({tokens['solution_out']!r})\n    return 0", program)
        assert not tested.all_passed
        found = sandbox.run_python(scan)
    assert found.ok and found.stdout.strip() == "[]", found.stdout + found.stderr
