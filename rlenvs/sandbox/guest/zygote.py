"""The zygote: the one long-lived process inside a sandbox (guest side, stdlib only).

A worker starts it once, so the interpreter's start-up (20-75 ms on the reference machines)
is paid once per worker, not per execution. It reads one request at a time on stdin, forks a
fresh child for the code (`roles`), watches it against the wall-clock deadline and the output
cap, and answers with one JSON line on stdout. An execution's data (its code, stdin, test
program, output, a test run's records) never enters the zygote's memory, of which every
solution it forks is a copy: it moves them between file descriptors with `os.splice`
(`protocol`). After every answer, before it reads
the next request, it kills every other process in the sandbox, reaps them and empties the
writable folders, so nothing an execution leaves behind (background processes, files,
IPC objects, keys) reaches the next one; a sandbox it cannot restore, or a zygote the code
reniced, rescheduled or gave lower rlimits (which its next children would inherit), makes
it exit, and the host replaces the worker. The one process it keeps is the trusted test
runner (`TestRunner`), and only while runs end cleanly and it is as it was made.

A pool worker (not a session) goes further (`scratch`): the zygote is pid 1 of a pid
namespace whose /proc shows each process only what it may ptrace (so the solution cannot see
the runner), and every execution gets new tmpfs mounts, new IPC and network namespaces and
the same pids, so no state at all, not even a timestamp, passes from one execution to the next.

In session mode (`--session`, a terminal env's persistent shell) the writable folders are
kept between requests, so each command sees what the last one left; only processes and IPC
objects are cleared after each. A `wipe` request empties the folders (a new episode; with
`folders`, only those: a verdict's fresh /dev/shm) and a `populate` request writes an episode's
starting files (with `wipe`, into scratch folders it empties first: a verdict's files, one
request where a wipe and a populate took two; with `remove`, after removing those entries:
the agent's /tmp scratch that is not its answer). A `script` request runs its command in a bash of its own, with exactly the
variables and start folder it names (a verdict's tests: nothing of the session's shell).
A `bash` or `script` request may name a folder its command sees read-only (`read_only`:
a verdict's own files, `readonly`), for which a session's zygote keeps CAP_SYS_ADMIN in the
sandbox's user namespace, which owns no namespace of bubblewrap's; its children drop it.

The zygote is not dumpable: the code it runs, under the same uid, can neither ptrace it nor
open its memory or file descriptors through /proc, so it cannot forge a verdict.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import importlib.util
import json
import marshal
import os
import resource
import select
import shutil
import signal
import socket
import stat
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import protocol
import readonly
import roles  # the guest folder is the only import path inside the sandbox
import scratch
import seccomp

PRELOAD = (
    "bisect", "collections", "copy", "datetime", "decimal", "fractions", "functools", "hashlib",
    "heapq", "itertools", "math", "operator", "random", "re", "statistics", "string", "typing",
)  # fmt: skip
"""Modules solutions commonly import, loaded before forking so children get them for free."""

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
IPC_RMID = 0
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219}.get(os.uname().machine)
SYS_IOPRIO_GET = {"x86_64": 252, "aarch64": 31, "riscv64": 31}.get(os.uname().machine)
SYS_SCHED_GETATTR = {"x86_64": 315, "aarch64": 275, "riscv64": 275}.get(os.uname().machine)
IOPRIO_WHO_PROCESS = 1
SCHED_ATTR_SIZE = 56
STATUS_FIELDS = (b"State:", b"SigPnd:", b"ShdPnd:")
"""What `TestRunner.is_fit` reads of /proc/<pid>/status: run state and pending signals."""
RLIMITS = tuple(sorted({getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")}))
LIBC = ctypes.CDLL(None, use_errno=True)
READ_CHUNK = 1 << 16
_SPLICE = getattr(os, "splice", None)
_SPARE = bytearray(READ_CHUNK)
"""`_move`'s buffer where the interpreter has no `os.splice`, zeroed after every move."""
DRAIN_SECONDS = 1.0
DONE_LINE = b'{"done": true}\n'
"""The test runner's last record (`roles.run_tests`), in a verdict file only the runner can write."""
SETUP_ERROR_RECORD = b'{"setup_error": '
"""How the runner's record of a failed test set-up starts (its first and only test record)."""
STATE_CAP = 1 << 20
"""Bytes of shell state a `bash` request may hand back (variables, functions, aliases)."""


def main() -> None:
    global _fresh, _keys_forbidden
    isolated = "--unsafe" not in sys.argv
    session = "--session" in sys.argv
    workspace = sys.argv[sys.argv.index("--workspace") + 1] if "--workspace" in sys.argv else "/workspace"
    fresh = isolated and not session  # a pool worker: nothing of one execution reaches the next
    if fresh:
        scratch.become_namespace_init()
    elif isolated:  # a session: its commands' children make folders read-only (`readonly`)
        if "--forbid-userns" in sys.argv:  # in a container engine's container (`seccomp`)
            seccomp.forbid_user_namespaces()
        if "--make-workspace" in sys.argv:  # an engine's image may lack its WORKDIR (buildah makes
            os.makedirs(workspace, mode=0o755, exist_ok=True)  # it only for a later step): as Docker's run does
            os.chdir(workspace)
        if "--capped-tmpfs" in sys.argv:  # bubblewrap's and the engines' cap no inodes (`scratch.tmpfs_options`)
            folders = _option("--capped-tmpfs").split(",")
            scratch.mount_capped_tmpfs(
                folders, int(_option("--scratch-bytes")), int(_option("--scratch-inodes")), workspace
            )
        if "--agent-user" in sys.argv:  # an image's final USER (`scratch.become_agent_user`)
            scratch.set_agent_user(_option("--agent-user"))
        kept = _option("--child-caps") if "--child-caps" in sys.argv else ""
        scratch.hold_capabilities((scratch.CAP_SYS_ADMIN,), tuple(int(cap) for cap in kept.split(",") if cap))
    LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans of an execution come back to us
    if isolated:
        # A session keyring of our own: the one inherited from the host would give the code the
        # host's keys. And, as pid 1, ignore SIGINT (the only signal with a handler) so that the
        # code cannot kill the zygote and pass its own failure off as a sandbox error.
        if _keyctl(KEYCTL_JOIN_SESSION_KEYRING, None) == -1:
            if ctypes.get_errno() == errno.EPERM:  # a seccomp filter's (Docker's default profile):
                _keys_forbidden = True  # no key for us or any child to reach or leave behind
            elif ctypes.get_errno() != errno.ENOSYS:
                raise SystemExit("cannot leave the host's session keyring")
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.clear()  # the environment every child gets, set once: not per child, which
    os.environ.update(roles.SAFE_ENV)  # cost each of them ~1 ms of copy-on-write faults
    for name in PRELOAD:
        __import__(name)
    writable = [workspace, "/tmp", "/dev/shm"] if isolated else [os.getcwd()]
    if fresh:
        _fresh = scratch.FreshState(
            writable, int(_option("--scratch-bytes")), int(_option("--scratch-inodes")), workspace
        )
    if isolated:  # every child's seccomp filter, installed as it starts (`seccomp.confine`)
        seccomp.prepare_children_filter()
    own_state, own_cpus = _process_state(0), os.sched_getaffinity(0)
    wake_r, wake_w = os.pipe()
    for fd in (wake_r, wake_w):
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    roles.note_signal_dispositions()
    _write_line({"ready": True})
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 2)  # nothing the zygote might print may interleave with the protocol
    for request, segments in _requests(0):
        started = time.monotonic()
        kind, emptied, owned = None, writable, list(segments.values())
        outgoing: list[tuple[int, int]] = []
        response: dict[str, object]
        try:
            kind = request["kind"]
            if kind == "wipe":  # the clean-up below empties the folders: all, or those named
                emptied = [folder for folder in writable if folder in request.get("folders", writable)]
                response = {"status": "ok"}
            elif kind == "populate":  # "wipe": scratch folders to empty first, as `wipe` does
                if not _emptied([folder for folder in writable if folder in request.get("wipe", ())]):
                    os._exit(3)  # as for a wipe that fails: the host replaces the worker
                for path in request.get("remove", ()):  # entries of the agent's first: a verdict's
                    _remove_entry(path, writable)
                folder = _fresh_folder(request.get("folder"), writable)
                response = _populate(folder, request["entries"], segments["files"])
            else:
                response, outgoing = _execute(request, segments, wake_r, devnull, isolated, owned)
        except Exception:  # a zygote bug must answer, not hang the host
            response = {"status": "sandbox_error", "detail": traceback.format_exc()[-2000:]}
            outgoing = []
        response["duration_s"] = time.monotonic() - started
        _write_line(response)
        for fd, count in outgoing:  # the segments the answer announced, in its order
            _send(fd, count)
        for fd in owned:
            os.close(fd)
        # The clean-up runs while the host reads the answer; the next request waits for it. A
        # sandbox it cannot restore ends the zygote: the host sees the worker gone and reruns
        # the next request on a fresh one.
        empty = not session or kind == "wipe"  # a session keeps its files until a new episode
        emptied = [] if fresh else emptied  # new mounts replace them (`_renewed`)
        if not _clean_up(isolated, emptied if empty else []) or not _renewed() or not _restored(own_state, own_cpus):
            os._exit(3)


def _option(name: str) -> str:
    """The value after `name` on the command line (the host's launch always passes it)."""
    return sys.argv[sys.argv.index(name) + 1]


def _requests(fd: int):
    """Each request on `fd` (`protocol`): its header, and its segments ({name: memfd}, each
    read from its start), spliced from `fd` without passing through this process's memory;
    the caller closes them. Exact reads of the header: nothing past it is read as bytes."""
    while (size := _read_exact(fd, protocol.REQUEST_HEADER.size)) is not None:
        header = _read_exact(fd, protocol.REQUEST_HEADER.unpack(size)[0])
        if header is None:
            return
        request = json.loads(header)
        segments = {}
        for name, length in zip(protocol.REQUEST_SEGMENTS, request.pop(protocol.SEGMENT_BYTES, ())):
            segments[name] = os.memfd_create(name, os.MFD_CLOEXEC)
            if not _move_all(fd, segments[name], length):
                return
            os.lseek(segments[name], 0, os.SEEK_SET)
        yield request, segments


def _move_all(source: int, target: int, count: int) -> bool:
    """Move `count` bytes from the pipe `source` to `target`; False if `source` ended first."""
    while count > 0:
        moved = _move(source, target, min(count, READ_CHUNK))
        if not moved:
            return False
        count -= moved
    return True


def _move(source: int, target: int, count: int, offset: int | None = None) -> int:
    """One move of up to `count` bytes from `source` to `target` (from `offset` of a file
    `source`), inside the kernel; 0 at the end of `source`. Without `os.splice` (Python before
    3.10), through `_SPARE`, zeroed after the move."""
    if _SPLICE is not None:
        return _SPLICE(source, target, count, offset_src=offset)
    with memoryview(_SPARE)[:count] as view:
        read = os.preadv(source, [view], offset) if offset is not None else os.readv(source, [view])
        written = 0
        while written < read:
            written += os.write(target, view[written:read])
        view[:read] = bytes(read)
    return read


def _send(fd: int, count: int) -> None:
    """The first `count` bytes of the file `fd` to the host (stdout)."""
    offset = 0
    while offset < count:
        moved = _move(fd, 1, count - offset, offset)
        if not moved:
            raise OSError(f"a segment ended {count - offset} bytes short")
        offset += moved


def _read_code(fd: int) -> str:
    """The code segment's text (read by the child that runs it, never by the zygote)."""
    size, data = os.fstat(fd).st_size, b""
    while len(data) < size:
        chunk = os.pread(fd, size - len(data), len(data))
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "surrogatepass")


def _file_starts_with(fd: int, end: int, prefix: bytes, *, at_end: bool = False) -> bool:
    """Whether the file's first `end` bytes start (or, `at_end`, end) with `prefix`: read
    into a buffer zeroed at once. The prefixes are the runner's own fixed record texts."""
    if end < len(prefix):
        return False
    buffer = bytearray(len(prefix))
    try:
        os.preadv(fd, [buffer], end - len(prefix) if at_end else 0)
        return buffer == prefix
    finally:
        _wipe(buffer)


def _read_exact(fd: int, size: int) -> bytes | None:
    """`size` bytes from `fd`, or None at its end."""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _wipe(buffer: bytearray) -> None:
    """Overwrite `buffer` in place with zeros."""
    with memoryview(buffer) as view:
        view[:] = bytes(len(buffer))


def _write_line(message: dict) -> None:
    _write_all(memoryview((json.dumps(message) + "\n").encode()))


def _write_all(data: memoryview) -> None:
    while data:
        data = data[os.write(1, data) :]


def _fork(role, fds: dict[int, int]) -> int:
    """Fork a child that moves `fds` (target -> source) into place and runs `role()`."""
    if _fresh is not None:
        _fresh.reset_pids()
    pid = os.fork()
    if pid == 0:
        try:
            staged = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 100) for target, source in fds.items()}
            role(staged)
        finally:
            os._exit(70)
    return pid


def _execute(
    request: dict, segments: dict[str, int], wake_r: int, devnull: int, isolated: bool, owned: list[int]
) -> tuple[dict, list[tuple[int, int]]]:
    """Run one execution; its answer, and the segments the caller sends after it ((memfd,
    length), in `protocol.ANSWER_SEGMENTS` order). Every memfd it makes goes into `owned`,
    which the caller closes."""
    kind, limits = request["kind"], request["limits"]
    testing, shell_session = kind == "tests", kind == "bash"
    deadline = time.monotonic() + limits["timeout_s"]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    parent_ends, child_ends = [out_r, err_r], [out_w, err_w]
    solution_fds = {0: segments.get("stdin", devnull), 1: out_w, 2: err_w}
    code_fd = segments.get("code", -1)
    caps = {out_r: limits["output_bytes"], err_r: limits["output_bytes"]}
    if shell_session:  # the shell hands its state back on fd 3 when the command ends
        state_r, state_w = os.pipe()
        solution_fds[3] = state_w
        parent_ends.append(state_r)
        child_ends.append(state_w)
        caps[state_r] = STATE_CAP
    if testing:
        # The run goes to the runner before the solution exists: nothing untrusted is alive
        # while the runner is checked, woken and handed its fds.
        runner = _runner_for(limits, isolated, devnull)
        try:
            verdict_file, done_r = runner.start_run(segments["program"])
        except OSError:  # it died since its last run (killed by a memory limit, say)
            _retire_runner()
            runner = _runner_for(limits, isolated, devnull)
            verdict_file, done_r = runner.start_run(segments["program"])
        owned.append(verdict_file)
        solution_fds[3] = runner.solution_end
        parent_ends.append(done_r)
    else:
        _retire_runner()  # code that is not a test run never shares the sandbox with it

    read_only = request.get("read_only")

    def untrusted(staged: dict[int, int]) -> None:
        if _fresh is not None:
            _fresh.enter()
        if read_only is not None:
            _make_read_only(read_only, staged[1])
        code = _read_code(code_fd) if code_fd >= 0 else ""  # the child's own code, in its own memory
        roles.enter_child(staged, limits, untrusted=True)
        roles.run_untrusted(kind, code, 3 if testing else None, request.get("script"))

    solution_pid = _fork(untrusted, solution_fds)
    main_pid = runner.pid if testing else solution_pid
    if testing:
        child_ends.append(runner.solution_end)
    for fd in child_ends:
        os.close(fd)

    streams = {fd: os.memfd_create("output", os.MFD_CLOEXEC) for fd in caps}
    owned += streams.values()
    counts = dict.fromkeys(caps, 0)
    status, exits = _watch(
        streams,
        counts,
        main_pid,
        deadline,
        caps,
        wake_r,
        devnull,
        done_r if testing else None,
        frozenset((out_r, err_r)) if testing else frozenset(),
    )
    # The runner's records stay in its file: their length and the fixed texts of the first
    # and last record are all the zygote reads of them (`protocol`).
    size = os.fstat(verdict_file).st_size if testing else 0
    if size > limits["output_bytes"]:  # test records past the output cap
        status = status or "output_limit"
    kept = min(size, limits["output_bytes"])
    truncated = status == "output_limit" or any(counts[fd] > caps[fd] for fd in (out_r, err_r))
    if (
        testing
        and status is None
        and _file_starts_with(verdict_file, size, DONE_LINE, at_end=True)
        and main_pid not in exits
    ):
        # A clean run: the runner has ended the solution and everything it started
        # (`end_run`; in unsafe mode the clean-up does), and the solution flushed its output
        # before each answer: read what is there and answer; the clean-up waits for the
        # solution to be gone (its exit status says nothing about the tests). The runner is kept.
        _kill(solution_pid)
        _read_available({fd: streams[fd] for fd in (out_r, err_r)}, counts, caps, devnull)
        _dying.append(solution_pid)
        waited = set()
    else:
        if testing:
            _retire_runner(reaped=main_pid in exits)  # killed and waited for, if still alive
        _kill_all(solution_pid)
        _drain(streams, counts, caps, devnull)
        waited = {solution_pid}
    for fd in parent_ends:
        try:
            os.close(fd)
        except OSError:
            pass
    exits.update(_reap(block=False))
    for pid in waited - exits.keys():  # killed above; not a blocking wait on any
        exits[pid] = os.waitpid(pid, 0)[1]  # child, which a survivor _kill_all missed would hang
    response: dict = {"truncated": truncated}
    outgoing = []
    for name, fd, count in (
        ("stdout", streams[out_r], min(counts[out_r], limits["output_bytes"])),
        ("stderr", streams[err_r], min(counts[err_r], limits["output_bytes"])),
    ):
        response[protocol.segment_field(name)] = count
        outgoing.append((fd, count))
    if shell_session and status is None and counts[state_r] <= STATE_CAP:
        response[protocol.segment_field("state")] = counts[state_r]
        outgoing.append((streams[state_r], counts[state_r]))
    solution_exit = exits.get(solution_pid)
    if testing:
        response[protocol.VERDICT_BYTES] = kept
        outgoing.append((verdict_file, kept))
        setup_failed = _file_starts_with(verdict_file, kept, SETUP_ERROR_RECORD)  # the first record, if any
        complete = _file_starts_with(verdict_file, kept, DONE_LINE, at_end=True)
        status = status or ("setup_error" if setup_failed else "ok" if complete else "crash")
    else:
        status = status or _status_from_exit(solution_exit)
    response["status"] = status
    response.update(_exit_fields(solution_exit))
    return response, outgoing


def _make_read_only(read_only: dict, out_fd: int) -> None:
    """In the command's child, before it drops its capabilities: the folder `read_only` names
    read-only for the command (`readonly.make_read_only`). A command whose folder cannot be
    made so does not run; it says why on its output and exits with `readonly.FAILED_EXIT`."""
    try:
        readonly.make_read_only(read_only["folder"], list(read_only["writable"]))
    except OSError as error:
        reason = f"rlenvs: {read_only['folder']} could not be made read-only for this command: {error}\n"
        os.write(out_fd, reason.encode())
        os._exit(readonly.FAILED_EXIT)


class TestRunner:
    """The zygote's handle on its test runner (`roles.serve_test_runs`): one trusted process,
    forked on the first test run and kept while runs end cleanly.

    The solution runs under the runner's uid, so while it runs it can do to the runner what
    a process may do to another of its uid that is not dumpable: stop or kill it (the run
    then ends without a verdict: a failure, and the runner is replaced), send it blocked
    signals, renice it, change its scheduling policy or I/O priority, lower its rlimits, or
    pin it to a CPU. None of that may reach a later run: before each run the runner must be
    as it was made (`is_fit`: running or asleep, no pending signal, its CPUs and
    `_process_state` unchanged) and is sent SIGCONT, which undoes a stop that arrived
    after the check; anything else and it is replaced. Everything the solution started is
    gone before the runner is reused: a clean run ends with the runner's `kill(-1)`, and the
    clean-up spares the runner only when nothing else is alive."""

    def __init__(self, limits: dict, isolated: bool, devnull: int) -> None:
        self.limits_key = _limits_key(limits)
        self.control, child_end = socket.socketpair()
        end_run = _kill_everyone_else if isolated else _nothing

        def role(staged: dict[int, int]) -> None:
            roles.enter_child(staged, limits, untrusted=False)
            roles.serve_test_runs(3, end_run)

        self.pid = _fork(role, {0: devnull, 1: devnull, 2: devnull, 3: child_end.fileno()})
        child_end.close()
        zygote = _process_state(0)
        self.made_as = {**zygote, "rlimits": {**zygote["rlimits"], **roles.rlimits_for(limits, cpu=False)}}
        """Its `_process_state` as made: the zygote's, with the rlimits `roles.enter_child` set."""
        self.cpus = os.sched_getaffinity(0)
        self.solution_end = -1

    def is_fit(self, limits: dict) -> bool:
        if _limits_key(limits) != self.limits_key:
            return False
        try:
            with open(_proc_path(f"{self.pid}/status"), "rb", opener=_proc_opener) as status:
                fields = {line.split(b":")[0]: line.split()[1] for line in status if line.startswith(STATUS_FIELDS)}
            cpus = os.sched_getaffinity(self.pid)
            state = _process_state(self.pid)
        except OSError:
            return False
        return (
            fields.get(b"State") in (b"S", b"R")
            and all(fields.get(name) is not None and int(fields[name], 16) == 0 for name in (b"SigPnd", b"ShdPnd"))
            and cpus == self.cpus
            and state == self.made_as
        )

    def start_run(self, program: int) -> tuple[int, int]:
        """Hand the runner a run (`program`: a memfd holding its JSON, as the host sent it,
        which the runner reads: the zygote never does); returns its verdict file and the read
        end of its done pipe (`roles.RUN_HEADER`). The solution's end of the run's socket is
        left in `solution_end` for the caller to pass to the solution."""
        runner_end, solution_end = socket.socketpair()
        verdict = os.memfd_create("verdict")
        done_r, done_w = os.pipe()
        try:
            os.kill(self.pid, signal.SIGCONT)
            size = os.fstat(program).st_size
            socket.send_fds(
                self.control, [roles.RUN_HEADER.pack(size)], [runner_end.fileno(), verdict, done_w, program]
            )
        except OSError:
            for fd in (verdict, done_r):
                os.close(fd)
            solution_end.close()
            raise
        finally:
            runner_end.close()
            os.close(done_w)
        self.solution_end = solution_end.detach()
        return verdict, done_r


_runner: TestRunner | None = None
_fresh: scratch.FreshState | None = None
"""A pool worker's per-execution state (`scratch`); None in a session or in unsafe mode."""
_keys_forbidden = False
"""Whether keyctl is forbidden here (a seccomp filter), and with it every key of the code's."""
_dying: list[int] = []
"""Solutions of clean test runs, SIGKILLed and answered for, that the clean-up waits for."""


def _runner_for(limits: dict, isolated: bool, devnull: int) -> TestRunner:
    """The runner for a test run: the one kept from the last run if it is still fit, else a
    new one."""
    global _runner
    if _runner is not None and not _runner.is_fit(limits):
        _retire_runner()
    if _runner is None:
        _runner = TestRunner(limits, isolated, devnull)
    return _runner


def _retire_runner(reaped: bool = False) -> None:
    """Kill the runner (if there is one) and forget it; `reaped`: it is already dead and
    waited for, and its pid may be another process's now."""
    global _runner
    if _runner is None:
        return
    runner, _runner = _runner, None
    runner.control.close()
    if not reaped:
        try:
            os.kill(runner.pid, signal.SIGKILL)
            os.waitpid(runner.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _limits_key(limits: dict) -> tuple:
    """The rlimits a runner is made with (the deadline and output cap are per run, and the
    runner has no CPU-seconds limit)."""
    return tuple(sorted((k, v) for k, v in limits.items() if k not in ("timeout_s", "output_bytes", "cpu_s")))


def _kill_everyone_else() -> None:
    """The runner's end of a run: SIGKILL to every process in the sandbox but pid 1 (the
    zygote) and the caller, in one call, so that nothing the solution started can fork past it."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _nothing() -> None:
    """Unsafe mode's end of a run: `kill(-1)` would reach the host; the zygote kills the
    solution's processes one by one instead."""


def _fresh_folder(folder: str | None, writable: list[str]) -> str:
    """Where a `populate` request writes: the workspace, or a new folder below a writable
    one (whatever was at that path before is removed first, symlink or not)."""
    if folder is None:
        return writable[0]
    if not any(folder.startswith(top + "/") for top in writable) or "/../" in folder + "/":
        raise ValueError(f"cannot populate {folder!r}: not below {writable}")
    if os.path.islink(folder) or os.path.isfile(folder):
        os.unlink(folder)
    elif os.path.isdir(folder):
        shutil.rmtree(folder, onerror=_make_writable_and_retry)
    os.makedirs(folder, 0o755)
    return folder


def _remove_entry(path: str, writable: list[str]) -> None:
    """Remove the entry at `path` (below a writable folder), a folder with all it holds, not
    following it if it is a link; nothing there is fine. Raises when it cannot be removed."""
    if not any(path.startswith(top + "/") for top in writable) or "/../" in path + "/":
        raise ValueError(f"cannot remove {path!r}: not below {writable}")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path, onerror=_make_writable_and_retry)
    else:
        os.unlink(path)


def _populate(root: str, entries: list[dict], files: int) -> dict:
    """Write an episode's starting files into the (just emptied) workspace, each file's bytes
    copied from the `files` memfd in the kernel (`protocol`: a verdict's tests must not stay
    in the memory the next episode's commands are forked from). Paths are checked again here
    and every component is opened without following symlinks, so a bad record cannot write
    outside the workspace. Directory modes are applied last, deepest first: a read-only folder
    must not stop its own files from being written."""
    made_dirs: list[tuple[str, int, float | None]] = []
    offset = 0
    for entry in entries:
        parts = entry["path"].split("/")
        if entry["path"].startswith("/") or any(part in ("", ".", "..") for part in parts):
            return {"status": "setup_error", "detail": f"bad workspace path {entry['path']!r}"}
        parent = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                try:
                    os.mkdir(part, 0o755, dir_fd=parent)
                except FileExistsError:
                    pass
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
                os.close(parent)
                parent = child
            name = parts[-1]
            if entry["dir"]:
                try:
                    os.mkdir(name, 0o755, dir_fd=parent)
                except FileExistsError:
                    pass
                made_dirs.append((entry["path"], entry["mode"], entry["mtime"]))
                continue
            size = entry["size"]
            _copy_file(parent, name, files, offset, size, entry["mode"], entry["mtime"])
            if entry.get("pyc"):  # only the verdict's own sitecustomize: its text is ours
                _write_pyc(parent, name, os.pread(files, size, offset), os.path.join(root, entry["path"]))
            offset += size
        except OSError as error:
            return {"status": "setup_error", "detail": f"cannot write {entry['path']!r}: {error}"}
        finally:
            os.close(parent)
    for path, mode, mtime in sorted(made_dirs, key=lambda item: -item[0].count("/")):
        target = os.path.join(root, path)
        os.chmod(target, mode)  # made by the mkdir above, in a workspace nothing else has touched yet
        if mtime is not None:
            os.utime(target, (mtime, mtime), follow_symlinks=False)
    return {"status": "ok"}


def _copy_file(parent: int, name: str, files: int, offset: int, size: int, mode: int, mtime: float | None) -> None:
    """The file `name`, holding the `size` bytes at `offset` of the memfd `files`, copied in the
    kernel (`os.copy_file_range`, else `os.sendfile`), never read into this process."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600, dir_fd=parent)
    try:
        end = offset + size
        while offset < end:
            try:
                copied = os.copy_file_range(files, fd, end - offset, offset)
            except (AttributeError, OSError):  # older kernels across file systems, or Python
                copied = os.sendfile(fd, files, offset, end - offset)
            if not copied:
                raise OSError(f"the files segment ended {end - offset} bytes short")
            offset += copied
        os.fchmod(fd, mode)
        if mtime is not None:
            os.utime(fd, (mtime, mtime))
    finally:
        os.close(fd)


def _write_file(parent: int, name: str, data: bytes, mode: int, mtime: float | None) -> None:
    """The file `name` holding `data` (the zygote's own: a compiled sitecustomize)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600, dir_fd=parent)
    try:
        while data:
            data = data[os.write(fd, data) :]
        os.fchmod(fd, mode)
        if mtime is not None:
            os.utime(fd, (mtime, mtime))
    finally:
        os.close(fd)


def _write_pyc(parent: int, name: str, source: bytes, path: str) -> None:
    """Beside the Python file `name` (at `path` in the sandbox), its bytecode in `__pycache__`
    as py_compile writes it for this interpreter, hash-checked (PEP 552): a python3 of the
    same version imports it without compiling the source, which costs a start-up ~0.7 ms
    (a populate entry with "pyc", such as a verdict's sitecustomize.py that every python3 of
    the tests imports), and compiles the source instead whenever it no longer matches."""
    if sys.implementation.cache_tag is None or not name.endswith(".py"):
        return
    key = (path, source)
    if key not in _compiled:
        code = compile(source, path, "exec", dont_inherit=True)
        header = importlib.util.MAGIC_NUMBER + (0b11).to_bytes(4, "little")  # hash-based, checked
        _compiled.clear()  # one or two files of the verdict's own: no need to keep more
        _compiled[key] = header + importlib.util.source_hash(source) + marshal.dumps(code)
    try:
        os.mkdir("__pycache__", 0o755, dir_fd=parent)
    except FileExistsError:
        pass
    cache = os.open("__pycache__", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
    try:
        _write_file(cache, f"{name[:-3]}.{sys.implementation.cache_tag}.pyc", _compiled[key], 0o644, None)
    finally:
        os.close(cache)


_compiled: dict[tuple[str, bytes], bytes] = {}
"""The last bytecode `_write_pyc` made, by path and source: the same for every verdict."""


def _watch(streams, counts, main_pid, deadline, caps, wake_r, devnull, done_fd=None, dropped=frozenset()):
    """Collect the children's output (`_collect`) until the main child is done (it exited, or
    the test runner said on `done_fd` that its run is over), the deadline passes or the output
    goes over the cap. What the fds of `dropped` write past their cap is dropped instead (a
    test run's stdout and stderr: the tests judge the solution, not how much it prints;
    HumanEval's and MBPP's harnesses discard it), one byte past the cap kept to mark the cut.
    Returns (status or None, {pid: wait status} reaped so far)."""
    exits: dict[int, int] = {}
    open_fds = set(streams) | ({done_fd} if done_fd is not None else set())
    while True:
        exits.update(_reap(block=False))
        if main_pid in exits:
            return None, exits
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout", exits
        readable, _, _ = select.select([*open_fds, wake_r], [], [], remaining)
        if wake_r in readable:
            _drain_wakeups(wake_r)
        for fd in readable:
            if fd == wake_r:
                continue
            if fd == done_fd:
                if os.read(fd, 1):  # the runner's one byte: its run is over
                    return None, exits
                open_fds.discard(fd)
                continue
            if not _collect(fd, streams[fd], counts, caps[fd], devnull):
                open_fds.discard(fd)
            if counts[fd] > caps[fd] and fd not in dropped:
                return "output_limit", exits


def _collect(fd: int, memfd: int, counts: dict[int, int], cap: int, devnull: int) -> int:
    """Move what the pipe `fd` holds (one read's worth) into its memfd, up to one byte past
    `cap` (that byte marks the cut); the rest goes to /dev/null. 0 at the pipe's end."""
    room = cap + 1 - counts[fd]
    if room <= 0:
        return _move(fd, devnull, READ_CHUNK)
    moved = _move(fd, memfd, min(room, READ_CHUNK))
    counts[fd] += moved
    return moved


def _drain_wakeups(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _drain(streams: dict[int, int], counts: dict[int, int], caps: dict[int, int], devnull: int) -> None:
    """Collect what is left in the pipes once every writer is dead (bounded in time)."""
    end = time.monotonic() + DRAIN_SECONDS
    open_fds = set(streams)
    while open_fds and time.monotonic() < end:
        readable, _, _ = select.select(list(open_fds), [], [], max(0.0, end - time.monotonic()))
        for fd in readable:
            if not _collect(fd, streams[fd], counts, caps[fd], devnull) or counts[fd] > caps[fd]:
                open_fds.discard(fd)


def _read_available(streams: dict[int, int], counts: dict[int, int], caps: dict[int, int], devnull: int) -> None:
    for fd, memfd in streams.items():
        while select.select([fd], [], [], 0)[0]:
            if not _collect(fd, memfd, counts, caps[fd], devnull):
                break


def _kill(*pids: int) -> None:
    """SIGKILL the processes and their process groups (each child is a session leader)."""
    for pid in pids:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _kill_all(*pids: int) -> None:
    """Kill the execution's children, their sessions and every orphan they left (all but a
    kept test runner)."""
    _kill(*pids)
    for pid in _descendants():
        if _runner is None or pid != _runner.pid:
            _kill(pid)


def _descendants() -> list[int]:
    """Processes whose parent is this zygote (orphans are re-parented to it, a subreaper)."""
    me, found = os.getpid(), []
    for entry in os.listdir(_fresh.proc if _fresh is not None else "/proc"):
        if entry.isdigit():
            try:
                with open(_proc_path(f"{entry}/stat"), "rb", opener=_proc_opener) as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != b"Z":
                found.append(int(entry))
    return found


def _proc_path(relative: str) -> str:
    """A /proc path as `_proc_opener` opens it: relative to the zygote's full view in a pool
    worker (its /proc hides processes it may not ptrace, and the runner is one), else /proc's."""
    return relative if _fresh is not None else f"/proc/{relative}"


def _proc_opener(path: str, flags: int) -> int:
    return os.open(path, flags, dir_fd=_fresh.proc) if _fresh is not None else os.open(path, flags)


def _renewed() -> bool:
    """A pool worker's new mounts and namespaces for the next execution (`scratch`); False
    when they could not be made (the host then replaces the worker)."""
    if _fresh is None:
        return True
    try:
        _fresh.renew()
    except OSError:
        return False
    return True


def _reap(block: bool = True) -> dict[int, int]:
    """Wait for dead children; `block`: until there is no child left at all."""
    exits: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return exits
        if pid == 0:
            return exits
        exits[pid] = status


def _clean_up(isolated: bool, writable: list[str]) -> bool:
    """Kill and reap whatever is still running, empty the writable folders. False when the
    sandbox could not be restored (the host then replaces the worker)."""
    if not _end_other_processes(isolated):
        return False
    restored = _emptied(writable)
    if isolated:
        restored = _clear_ipc() and restored
    return restored


def _emptied(folders: list[str]) -> bool:
    """Empty the writable `folders` (their entries, their own xattrs and mode); False when
    one could not be (the host then replaces the worker). Only once no process of the code's
    is left: in the clean-up, or at a request, which the clean-up of the last one preceded."""
    emptied = True
    for folder in folders:
        try:
            os.chmod(folder, 0o755)
            for name in os.listxattr(folder):  # data stored on the folder itself
                os.removexattr(folder, name)
            for entry in os.scandir(folder):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, onerror=_make_writable_and_retry)
                else:
                    os.unlink(entry.path)
        except Exception:  # OSError, or RecursionError for a very deep tree: replace the worker
            emptied = False
    return emptied


def _end_other_processes(isolated: bool) -> bool:
    """Kill and reap every process in the sandbox but the zygote and a kept test runner.
    False when some would not go."""
    dying = _dying.copy()
    _dying.clear()
    if _runner is not None:
        # After a clean run the runner's kill(-1) has ended everything else: once the
        # solution is gone, one look confirms it. Anything else alive, and the runner goes too.
        for pid in dying:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:  # reaped already
                pass
        _reap(block=False)
        if not [pid for pid in _descendants() if pid != _runner.pid]:
            return True
        _retire_runner()
    if isolated:
        try:
            os.kill(-1, signal.SIGKILL)  # every process in this pid namespace but init and us,
        except ProcessLookupError:  # at once: nothing can fork past it
            pass
        _reap()  # until no child is left: orphans come back to pid 1, so then none is alive
        return True
    for _ in range(100):  # unsafe mode: one by one, as kill(-1) would reach the host
        survivors = _descendants()
        _kill_all(*survivors)
        _reap()
        if not survivors and not _descendants():
            return True
    return False


def _restored(state: dict, cpus: set[int]) -> bool:
    """Code runs under the zygote's uid, so it may pin the zygote to one CPU or change what
    `_process_state` reads, and the zygote's later children would inherit it. A pinned
    zygote pins itself back; the rest it cannot undo (raising a priority or a hard rlimit
    needs a privilege), so the worker is replaced."""
    if os.sched_getaffinity(0) != cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            return False
    return _process_state(0) == state


def _process_state(pid: int) -> dict:
    """What a process of the sandbox's uid may change in another one of that uid (`pid`, or
    0 for this one), and what that one's children then inherit: its scheduling (`_scheduling`),
    I/O priority and rlimits (prlimit(2) lowers another process's hard limits). Raises
    OSError when `pid` is gone."""
    return {
        "scheduling": _scheduling(pid),
        "ioprio": _syscall(SYS_IOPRIO_GET, IOPRIO_WHO_PROCESS, pid) if SYS_IOPRIO_GET else None,
        "rlimits": {which: resource.prlimit(pid, which) for which in RLIMITS},
    }


def _scheduling(pid: int) -> bytes | tuple[int, int, int]:
    """sched_getattr(2)'s record: policy, nice value, priority, a fair task's own time slice,
    utilisation clamps. Where its system call number is unknown, the first three."""
    if SYS_SCHED_GETATTR is None:
        return os.sched_getscheduler(pid), os.getpriority(os.PRIO_PROCESS, pid), os.sched_getparam(pid).sched_priority
    attr = ctypes.create_string_buffer(SCHED_ATTR_SIZE)
    _syscall(SYS_SCHED_GETATTR, pid, attr, SCHED_ATTR_SIZE, 0)
    return attr.raw


def _syscall(number: int, *args) -> int:
    """`_raw_syscall`, raising OSError on failure."""
    result = _raw_syscall(number, *args)
    if result == -1:
        raise OSError(ctypes.get_errno(), f"system call {number} failed")
    return result


def _raw_syscall(number: int, *args) -> int:
    """A system call the os module lacks: -1 on failure (the reason in ctypes.get_errno())."""
    return LIBC.syscall(ctypes.c_long(number), *(ctypes.c_long(a) if isinstance(a, int) else a for a in args))


def _make_writable_and_retry(function, path, _error) -> None:
    os.chmod(os.path.dirname(path), 0o755)
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o755)
        if function in (os.open, os.scandir):  # a directory it could not enter: now it can
            shutil.rmtree(path, onerror=_make_writable_and_retry)
            return
    function(path)


def _clear_ipc() -> bool:
    """Remove what outlives processes in this sandbox's IPC namespace and user: System V shared
    memory, semaphores and message queues, and the keys (POSIX message queues cannot be made at
    all: RLIMIT_MSGQUEUE is 0). False when a key may be left (the host then replaces the worker)."""
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                ids = [int(line.split()[1]) for line in table.readlines()[1:] if line.strip()]
        except OSError:
            continue
        for ident in ids:
            if kind == "sem":
                LIBC.semctl(ident, 0, IPC_RMID)
            else:
                getattr(LIBC, f"{kind}ctl")(ident, IPC_RMID, None)
    if SYS_KEYCTL is None or _keys_forbidden:
        return True
    persistent = _keyctl(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_SESSION_KEYRING)
    # the persistent keyring first: it is ours to clear only while linked from our session keyring
    for keyring in (persistent, KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        if keyring != -1 and _keyctl(KEYCTL_CLEAR, keyring) == -1:
            return ctypes.get_errno() == errno.ENOSYS  # a kernel without keys, or a keyring the code locked
    uid = os.getuid()
    standard = {f"{name}:" for name in ("_ses", f"_uid.{uid}", f"_uid_ses.{uid}", ".user_reg", f"_persistent.{uid}")}
    for _ in range(200):  # an unlinked key stays readable by its id until the kernel's key GC ran (ms)
        try:
            with open("/proc/keys") as keys:
                lines = [line.split() for line in keys]
        except OSError:
            return True
        if all(len(f) == 10 and f[7] == "keyring" and f[8] in standard for f in lines):
            return True
        time.sleep(0.001)
    return False


def _keyctl(*args) -> int:
    if SYS_KEYCTL is None:
        return -1
    return _raw_syscall(SYS_KEYCTL, *args)


def _status_from_exit(wait_status: int | None) -> str:
    if wait_status is None:
        return "crash"
    if os.WIFSIGNALED(wait_status):
        return "timeout" if os.WTERMSIG(wait_status) in (signal.SIGXCPU, signal.SIGKILL) else "crash"
    code = os.WEXITSTATUS(wait_status)
    return "ok" if code == 0 else "memory" if code == roles.MEMORY_EXIT else "error"


def _exit_fields(wait_status: int | None) -> dict:
    if wait_status is None:
        return {"exit_code": None, "signal": None}
    if os.WIFSIGNALED(wait_status):
        return {"exit_code": None, "signal": os.WTERMSIG(wait_status)}
    return {"exit_code": os.WEXITSTATUS(wait_status), "signal": None}


if __name__ == "__main__":
    main()
