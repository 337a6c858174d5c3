"""One sandbox worker, host side: a zygote process and the protocol to it (requests framed
as `guest.protocol` says, one JSON line back for each, a test run's records after it).

The host trusts nothing the worker does. Every request has a host-side deadline (the
execution's timeout plus a grace period); a worker that misses it, dies, or answers with
anything but one well-formed JSON line is killed with its whole process group and
reported as `sandbox_error`; the pool then starts a fresh one.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import IO

from rlenvs.sandbox.cgroups import SandboxCgroup, memory_hierarchy
from rlenvs.sandbox.guest.protocol import (
    ANSWER_SEGMENTS,
    REQUEST_HEADER,
    REQUEST_SEGMENTS,
    SEGMENT_BYTES,
    segment_field,
)
from rlenvs.sandbox.launch import WorkerLaunch

RECORDS = "records"
"""The answer's field for a test run's records, the runner's JSON lines as bytes (`request`)."""
START_TIMEOUT_S = 30.0
GRACE_S = 5.0
"""Beyond the execution's own timeout: the zygote needs time to kill, reap and clean."""
MAX_LINE = 64 << 20


class WorkerFailed(RuntimeError):
    """The worker died, hung or broke the protocol; it has been killed."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class Worker:
    def __init__(self, launch: WorkerLaunch) -> None:
        self.uses = 0
        self._lease = launch.lease
        self._owner = os.getpid()
        self._buffer = b""
        self._workdir = launch.cwd
        if launch.cwd is not None and launch.uid is not None:
            os.chown(launch.cwd, launch.uid, launch.uid)
        self.child_pid: int | None = None
        """The host pid of the sandbox's pid 1, when the launch asked bwrap for it."""
        self._cgroup: SandboxCgroup | None = None
        self.container = launch.container
        self._cleanup = launch.cleanup
        info_r, info_w = os.pipe() if launch.report_child_pid else (-1, -1)
        argv = launch.argv
        if info_w >= 0:
            argv = (argv[0], "--info-fd", str(info_w), *argv[1:])
        try:
            self._process = self._start(launch, argv, (info_w,) if info_w >= 0 else ())
        except BaseException:
            if self._lease is not None:
                self._lease.release()
            raise
        finally:
            if info_w >= 0:
                os.close(info_w)
        try:
            ready = self._read_line(time.monotonic() + START_TIMEOUT_S)
            if info_r >= 0:
                self.child_pid = _read_child_pid(info_r, time.monotonic() + START_TIMEOUT_S)
        except WorkerFailed as error:
            tail = self._stderr_tail()
            self.kill()
            raise WorkerFailed(f"the sandbox did not start: {error} {tail}".strip()) from None
        finally:
            if info_r >= 0:
                os.close(info_r)
        if ready != {"ready": True}:
            self.kill()
            raise WorkerFailed(f"the sandbox did not start: unexpected first line {ready!r}")
        if launch.memory_bytes is not None:
            self._confine(launch.memory_bytes)

    @staticmethod
    def _start(launch: WorkerLaunch, argv: tuple[str, ...], pass_fds: tuple[int, ...]) -> subprocess.Popen[bytes]:
        """Start the worker from the launcher thread (see `_launcher`), as its uid, in a
        session of its own, with none of the host's environment."""
        return (
            _launcher()
            .submit(
                launch.spawn or subprocess.Popen,
                argv,
                pass_fds=pass_fds,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=launch.cwd or "/",
                user=launch.uid,
                group=launch.uid,
                extra_groups=[] if launch.uid is not None else None,
                start_new_session=True,
                close_fds=True,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},  # none of the host's secrets
            )
            .result()
        )

    def _confine(self, limit_bytes: int) -> None:
        """Put the sandbox's processes in a memory cgroup of their own (where the host has one),
        now that its zygote is idle: everything it starts from here on is counted there."""
        try:
            hierarchy = memory_hierarchy()
            if hierarchy is not None:
                self._cgroup = SandboxCgroup(hierarchy, limit_bytes)
                self._cgroup.adopt(self._process.pid)
        except BaseException as error:
            self.kill()
            if isinstance(error, OSError):
                raise WorkerFailed(f"the sandbox's memory cgroup could not be made: {error}") from None
            raise

    def cap_memory(self, limit_bytes: int) -> None:
        """Change the cap of the worker's memory cgroup (a pool call may bring limits of its
        own); a cap the kernel refuses (under what the idle sandbox uses) kills the worker."""
        if self._cgroup is None:
            return
        try:
            self._cgroup.cap(limit_bytes)
        except OSError as error:
            self.kill()
            raise WorkerFailed(f"the sandbox's memory cap of {limit_bytes} bytes was refused: {error}") from None

    @property
    def memory_capped(self) -> bool:
        """Whether a memory cgroup caps the sandbox as a whole: its own, or a container engine's."""
        return self._cgroup is not None or self.container is not None

    def oom_kills(self) -> int:
        """How many of the sandbox's processes the kernel killed at its memory cap so far."""
        return self._cgroup.oom_kills() if self._cgroup is not None else 0

    @property
    def workdir(self) -> str | None:
        """The host folder an unsafe-mode worker runs in (None under bubblewrap)."""
        return self._workdir

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def request(self, message: dict, timeout_s: float) -> dict:
        """Send one request and wait for its answer, at most `timeout_s` + grace."""
        self.uses += 1
        try:
            stdin = _pipe(self._process.stdin)
            stdin.write(_framed(message))
            stdin.flush()
        except (BrokenPipeError, OSError) as error:
            self.kill()
            raise WorkerFailed(f"the worker is gone ({error})") from None
        deadline = time.monotonic() + timeout_s + GRACE_S
        answer = self._read_line(deadline)
        if not isinstance(answer, dict) or "status" not in answer:
            self.kill()
            raise WorkerFailed(f"the worker answered {str(answer)[:200]!r}")
        for name in ANSWER_SEGMENTS:  # the data follows the line, in this order (`guest.protocol`)
            size = answer.pop(segment_field(name), None)
            if size is None:
                continue
            if type(size) is not int or not 0 <= size <= MAX_LINE:
                self.kill()
                raise WorkerFailed(f"the worker announced {size!r} bytes of {name}")
            data = self._read_bytes(size, deadline)
            answer[name] = data if name == RECORDS else data.decode("utf-8", "replace")
        return answer

    def _read_line(self, deadline: float) -> object:
        self._fill(lambda: b"\n" in self._buffer, deadline)
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            self.kill()
            raise WorkerFailed(f"the worker sent a malformed line {line[:200]!r}") from None

    def _read_bytes(self, size: int, deadline: float) -> bytes:
        self._fill(lambda: len(self._buffer) >= size, deadline)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _fill(self, enough: Callable[[], bool], deadline: float) -> None:
        """Read the worker's stdout into the buffer until `enough()`; a worker that dies, falls
        silent past `deadline` or sends too much is killed (WorkerFailed)."""
        fd = _pipe(self._process.stdout).fileno()
        while not enough():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerFailed("the worker did not answer in time", timed_out=True)
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                try:
                    status: int | None = self._process.wait(timeout=GRACE_S)
                except subprocess.TimeoutExpired:  # closed its stdout and lives on: killed below
                    status = None
                tail = self._stderr_tail()  # before kill() closes the pipes
                self.kill()
                raise WorkerFailed(f"the worker exited (status {status}) {tail}".strip())
            self._buffer += chunk
            if len(self._buffer) > 2 * MAX_LINE:  # a line and its test records at most
                self.kill()
                raise WorkerFailed("the worker sent an oversized answer")

    def _stderr_tail(self) -> str:
        """What a dead worker wrote to stderr, as far as it is there now (never waiting: a
        process it left behind may hold the pipe open)."""
        stream = _pipe(self._process.stderr)
        if self.alive or stream.closed:
            return ""
        os.set_blocking(stream.fileno(), False)
        try:
            return os.read(stream.fileno(), 4000).decode("utf-8", "replace").strip()
        except BlockingIOError:
            return ""

    def signal_kill(self) -> None:
        """SIGKILL the worker's process group, leaving the pipes to the thread using them."""
        if os.getpid() == self._owner:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """Kill the worker's whole process group and release everything it held. In a forked
        child that inherited this object, only the child's copies of the pipes are closed:
        the worker belongs to the parent."""
        if os.getpid() != self._owner:
            self._close_pipes()
            if self._lease is not None:
                self._lease.release()  # this process's copy; the parent still holds the lock
            return
        for kill, pid in ((os.kill, self.child_pid), (os.killpg, self._process.pid)):
            # The sandbox's pid 1 first (it is in a session of its own, and while bwrap
            # lives its pid cannot have been reused): its death ends the whole sandbox.
            if pid is not None:
                try:
                    kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self._process.kill()
        self._process.wait()
        self._close_pipes()
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None
        if self._lease is not None:
            self._lease.release()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def _close_pipes(self) -> None:
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:  # a buffered write to a dead worker's stdin cannot be flushed
                pass


_launchers: dict[int, ThreadPoolExecutor] = {}
_launchers_lock = threading.Lock()


def _launcher() -> ThreadPoolExecutor:
    """The one long-lived thread of this process that starts workers.

    bubblewrap's `--die-with-parent` (the kernel's parent-death signal) fires when the
    *thread* that started bwrap exits, not the process: a worker started from a short-lived
    thread (one ThreadPoolExecutor per batch) would die with it. Started from this thread,
    a worker lives until this process exits, and dies with it even on SIGKILL.
    """
    with _launchers_lock:
        pid = os.getpid()
        if pid not in _launchers:  # a forked child has no copy of its parent's thread
            _launchers.clear()
            _launchers[pid] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlenvs-sandbox-launcher")
        return _launchers[pid]


def _read_child_pid(fd: int, deadline: float) -> int:
    """bwrap's `--info-fd` report: a JSON object with "child-pid", then end of file."""
    data = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise WorkerFailed("bwrap did not report the sandbox's pid")
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    try:
        return int(json.loads(data)["child-pid"])
    except (ValueError, KeyError, TypeError):
        raise WorkerFailed(f"bwrap's --info-fd report is unreadable: {data[:200]!r}") from None


def _framed(message: dict) -> bytes:
    """`message` as the zygote reads it (`guest.protocol`): its data (the code, the stdin, a
    test run's program) travels after the header as segments, never inside it."""
    header = dict(message)
    files = []
    if "entries" in header:  # a populate request: each file's bytes go to the "files" segment
        entries = []
        for entry in header["entries"]:
            entry = dict(entry)
            data = base64.b64decode(entry.pop("data", "") or "")
            files.append(data)
            entries.append({**entry, "size": len(data)})
        header["entries"] = entries
    segments = []
    for name in REQUEST_SEGMENTS:
        value = header.pop(name, None)
        if name == "program":
            segments.append(b"" if value is None else json.dumps(value).encode())
        elif name == "files":
            segments.append(b"".join(files))
        else:
            segments.append((value or "").encode("utf-8", "surrogatepass"))
    header[SEGMENT_BYTES] = [len(segment) for segment in segments]
    encoded = json.dumps(header).encode()
    return REQUEST_HEADER.pack(len(encoded)) + encoded + b"".join(segments)


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """One of the worker's standard streams, which `_start` always opens as pipes."""
    if stream is None:
        raise WorkerFailed("the worker was started without its pipes")
    return stream


def unsafe_workdir() -> str:
    """A private folder for one unsafe-mode worker (removed when the worker is killed)."""
    return tempfile.mkdtemp(prefix="rlenvs-unsafe-")
