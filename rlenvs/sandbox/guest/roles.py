"""What the zygote's children run (guest side, stdlib only): untrusted code, and the tests.

Untrusted code (a snippet, a shell command, a solution) runs in its own process under the
execution's rlimits. For a test run the tests run in a second, trusted process that never
executes a line of the solution: it calls the solution's functions through a socket, gets
their results back as plain data (`values`), compares them, and writes one record per test
to a pipe only the zygote reads. That is why `sys.exit(0)` before the tests, redefining
`assert` helpers, patching the test function or returning an object that equals everything
cannot pass: none of them reaches the process that decides.

The test runner is forked once and serves run after run (`serve_test_runs`): a fresh
process per run cost more CPU than the tests themselves (the fork, its exit, and ~400
copy-on-write page faults of a child of the zygote, ~6 µs each on the reference VMs). What
the solution could do to a runner that outlives it is bounded by the zygote, which spares
the runner only after a clean run and only while it is as it was made (see `zygote.py`).
"""

from __future__ import annotations

import builtins
import ctypes
import json
import os
import pickle
import random
import resource
import signal
import socket
import struct
import sys
import traceback
import types
from collections.abc import Callable

import scratch
import seccomp
import values
from shell import SAFE_ENV, SHELL_SESSION

MEMORY_EXIT = 86
"""Exit status of an untrusted Python process whose code ran out of memory (MemoryError).
Code could exit with it on purpose; that only mislabels its own failure."""
MAX_FRAME = 64 << 20
MAX_REPLY = 16 << 20
"""Bytes of one reply from the solution's process, checked before it is parsed: a return
value's cost to the runner is bounded by its size, whatever the solution pads it with."""
KEPT_REPLY = 1 << 20
"""A failing test's last reply is kept up to this size to be shown once the run is over."""
MAX_ERROR_CHARS = 2000
SOLUTION_FILE = "<solution>"
SOLUTION_MODULE = "solution"
"""The solution's `__name__` in a test run: the tests import it, as HumanEval's and MBPP's own
harnesses do, so a demo under `if __name__ == "__main__":` (one that reads stdin, say) stays
the demo it was written as and never runs."""


# --- framing on the socket between the solution and the test runner --------------------------


def send_frame(fd: int, payload: bytes) -> None:
    data = struct.pack(">I", len(payload)) + payload
    while data:
        data = data[os.write(fd, data) :]


def recv_frame(fd: int, limit: int = MAX_FRAME) -> bytes | None:
    """One frame, or None at end of stream (the other side exited). A frame over `limit` is
    refused unread (ValueError), which leaves the stream unusable."""
    header = _recv_exact(fd, 4)
    if header is None:
        return None
    (size,) = struct.unpack(">I", header)
    if size > limit:
        raise ValueError(f"a message of {size} bytes from the solution's process is over the {limit} byte cap")
    return _recv_exact(fd, size)


def _recv_exact(fd: int, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _read_file(fd: int, size: int) -> bytes:
    """The first `size` bytes of the file `fd` (a memfd the zygote filled without reading it)."""
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, min(size - offset, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


# --- the process set-up both children share --------------------------------------------------


_BLOCKED_IN_RUNNER = frozenset(signal.valid_signals()) - {signal.SIGCONT}
"""SIGCONT stays deliverable: the zygote sends it before every run, to undo a stop."""
_SIGNALS_TO_RESET: tuple[int, ...] = tuple(range(1, signal.NSIG))


def note_signal_dispositions() -> None:
    """Remember which signals the zygote does not leave at their default (Python's own SIGINT,
    SIGPIPE and SIGXFSZ, and what the zygote set), so that a child resets that handful
    instead of calling `signal.signal` for every number (0.8 ms). The zygote calls this
    once its handlers are in place, before its first fork."""
    global _SIGNALS_TO_RESET
    found = []
    for number in range(1, signal.NSIG):
        try:
            if signal.getsignal(number) not in (signal.SIG_DFL, None):
                found.append(number)
        except ValueError:
            pass
    _SIGNALS_TO_RESET = tuple(found)


def enter_child(fds: dict[int, int], limits: dict, *, untrusted: bool) -> None:
    """Become a fresh session with exactly the given fds (target -> source) and the rlimits,
    without the capabilities a pool or session zygote keeps (`scratch`). Like the zygote it
    was forked from, the child is not dumpable (making it so cost a test run ~0.3 ms): under
    a pool worker's /proc, which shows a process only what it may ptrace, code sees itself
    and the programs it execs, not copies of itself it forked (nor, ever, the runner)."""
    scratch.drop_capabilities()
    os.setsid()
    signal.set_wakeup_fd(-1)
    for target, source in fds.items():
        if source != target:
            os.dup2(source, target)
    os.closerange(max(fds) + 1, 65536)
    for number in _SIGNALS_TO_RESET:
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP and the ones libc reserves
            pass
    if untrusted:
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
    else:
        # The solution runs under the same uid and may signal this process; only SIGKILL and
        # SIGSTOP get through (and SIGCONT, which does nothing else), and both leave the run
        # without a verdict (a failure).
        signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED_IN_RUNNER)
    set_limits(limits, cpu=untrusted)
    seccomp.confine()  # last: everything above was the sandbox's own set-up


def set_limits(limits: dict, *, cpu: bool = True) -> None:
    """The execution's rlimits; `cpu=False` leaves CPU time unlimited, for the test runner,
    whose CPU seconds add up over its many runs (each run has the wall-clock deadline)."""
    for which, soft_and_hard in rlimits_for(limits, cpu=cpu).items():
        resource.setrlimit(which, soft_and_hard)


def rlimits_for(limits: dict, *, cpu: bool = True) -> dict[int, tuple[int, int]]:
    """The (soft, hard) rlimits `set_limits` gives a child; the zygote also checks its kept
    test runner against them."""
    caps = {
        # None: the sandbox's memory cgroup caps it as a whole (Limits.for_guest)
        resource.RLIMIT_AS: resource.RLIM_INFINITY if limits["memory_bytes"] is None else limits["memory_bytes"],
        **({resource.RLIMIT_CPU: limits["cpu_s"]} if cpu else {}),
        resource.RLIMIT_NPROC: limits["processes"],
        resource.RLIMIT_FSIZE: limits["file_size_bytes"],
        resource.RLIMIT_NOFILE: limits["open_files"],
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_MSGQUEUE: 0,  # POSIX message queues would outlive the execution
    }
    # CPU time: SIGXCPU at the soft limit first, then SIGKILL a second later.
    return {which: (value, value + 1 if which == resource.RLIMIT_CPU else value) for which, value in caps.items()}


def fresh_main(name: str = "__main__") -> dict:
    """A new `__main__` module: code sees the globals a script would, and pickled classes
    defined by the tests' set-up resolve to the solution's classes of the same name. Under
    another `name` (an imported solution) it is registered under both, so that its classes'
    `__module__` resolves too (dataclasses and pickle look classes up by it)."""
    module = types.ModuleType(name)
    module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = sys.modules[name] = module
    return module.__dict__


def solution_traceback(error: BaseException) -> str:
    """The traceback frames that belong to the solution, not to the harness."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == SOLUTION_FILE]
    header = "Traceback (most recent call last):\n" if frames else ""
    text = header + "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(error), error))
    return text[-MAX_ERROR_CHARS:]


def _exit(code: int) -> None:
    _flush_streams()
    os._exit(code)


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # the code may have closed or replaced its streams
            pass


# --- the untrusted process -------------------------------------------------------------------


def run_untrusted(kind: str, code: str, serve_fd: int | None, program: dict | None = None) -> None:
    """Run a shell command or Python code; for a test run, then serve calls on `serve_fd`.
    A "script" (`program`: its environment and start folder) is bash without start-up files
    running `code` with exactly that environment, in that folder, its stderr on its stdout:
    nothing of a session's shell or of the sandbox's environment (a verdict's tests)."""
    if kind == "shell":
        os.execve("/bin/sh", ["sh", "-c", code], dict(SAFE_ENV))
    if kind == "bash":  # a session's command: the agent's (or its setup, or the oracle's)
        scratch.become_agent_user()
        os.execve("/bin/bash", ["bash", "--noprofile", "--norc", "-c", SHELL_SESSION, "bash", code], dict(SAFE_ENV))
    if kind == "script":
        assert program is not None, "a script run comes with its program (cwd, environment)"
        os.dup2(1, 2)
        if program["cwd"] is not None:
            os.chdir(program["cwd"])
        os.execve("/bin/bash", ["bash", "--noprofile", "--norc", "-c", code], program["environment"])
    # sys.stdin/stdout/stderr are the zygote's, which never used them: on fds 0-2, now this
    # process's pipes, with Python's own settings for pipes (UTF-8; strict, and
    # backslashreplace on stderr). os.environ is SAFE_ENV, set by the zygote before any fork.
    sys.argv = ["solution.py"]
    namespace = fresh_main("__main__" if serve_fd is None else SOLUTION_MODULE)
    namespace["__file__"] = os.path.abspath("solution.py")  # as a module or script has one
    load_error = None
    try:
        exec(compile(code, SOLUTION_FILE, "exec"), namespace)
    except SystemExit as stop:
        _exit(_exit_status(stop))
    except MemoryError as error:
        sys.stderr.write(solution_traceback(error))
        _exit(MEMORY_EXIT)
    except BaseException as error:  # anything the code raises is its own failure
        if serve_fd is None:
            sys.stderr.write(solution_traceback(error))
            _exit(1)
        load_error = error
    if serve_fd is not None:
        _flush_streams()
        _serve(namespace, serve_fd, load_error)
    _exit(0)


def _exit_status(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code & 0xFF
    sys.stderr.write(f"{stop.code}\n")
    return 1


def _serve(namespace: dict, fd: int, load_error: BaseException | None) -> None:
    """Answer the test runner's calls until it hangs up. A SystemExit from the solution
    ends this process: the runner sees the stream end and fails the test."""
    while True:
        frame = recv_frame(fd)
        if frame is None:
            return
        name, args, kwargs = pickle.loads(frame)
        reply = json.dumps(_call(namespace, name, args, kwargs, load_error), separators=(",", ":")).encode()
        _flush_streams()  # what the solution printed belongs to the report, even if it is killed next
        send_frame(fd, reply)


def _call(namespace: dict, name: str, args: tuple, kwargs: dict, load_error: BaseException | None) -> list:
    if load_error is not None:
        return _raised(load_error, prefix="the solution failed before any test ran: ")
    function = namespace.get(name)
    if not callable(function):
        return ["raise", "NameError", f"the solution does not define a function named {name!r}", ""]
    try:
        result = function(*args, **kwargs)
    except Exception as error:  # reported to the test that made the call
        return _raised(error)
    try:
        return ["ok", values.encode(result)]
    except values.UnsupportedValue as error:
        return ["raise", "TypeError", str(error), ""]
    except Exception as error:  # a value whose iteration raises: the serving loop must go on
        return ["raise", "TypeError", f"the returned value could not be sent: {type(error).__name__}: {error}", ""]


def _raised(error: BaseException, prefix: str = "") -> list:
    return ["raise", type(error).__name__, prefix + str(error)[:MAX_ERROR_CHARS], solution_traceback(error)]


# --- the trusted test runner -----------------------------------------------------------------


class RemoteError(Exception):
    """An exception the solution raised, re-raised in the test runner."""


class SolutionEnded(Exception):
    """The solution's process ended before answering a call."""


class Remote:
    """A callable standing for one of the solution's functions."""

    last_call: tuple[bytes, bytes | int | str | None] | None = None
    """The current test's last call as it crossed: the request, and the reply frame (its
    size, past `KEPT_REPLY`) or the name of the exception raised (None: no answer). Shown
    only when the test fails, and only once the solution is gone (`run_tests`)."""
    broken: str | None = None
    """Why the channel to the solution is unusable for the rest of the run (a reply over
    `MAX_REPLY` was left unread), or None."""

    def __init__(self, fd: int, name: str) -> None:
        self._fd, self._name = fd, name

    def __call__(self, *args: object, **kwargs: object) -> object:
        try:
            request = pickle.dumps((self._name, args, kwargs))
        except Exception as error:  # a test passes something that cannot be sent
            raise TypeError(f"the test's arguments cannot be sent to the solution: {error}") from None
        Remote.last_call = (request, None)
        if Remote.broken is not None:
            raise SolutionEnded(Remote.broken)
        try:
            send_frame(self._fd, request)
            frame = recv_frame(self._fd, MAX_REPLY)
        except OSError:
            frame = None
        except ValueError:
            Remote.broken = f"the solution returned more than {MAX_REPLY} bytes of data"
            raise SolutionEnded(Remote.broken) from None
        if frame is None:
            raise SolutionEnded("the solution's process ended (exit, crash or a limit) before returning")
        reply = json.loads(frame)
        if type(reply) is not list or not reply:
            raise ValueError("malformed reply from the solution's process")
        if reply[0] == "ok" and len(reply) == 2:
            value = values.decode(reply[1])
            Remote.last_call = (request, frame if len(frame) <= KEPT_REPLY else len(frame))
            return value
        if reply[0] == "raise" and len(reply) == 4 and all(type(part) is str for part in reply[1:]):
            Remote.last_call = (request, reply[1])
            raise _exception(reply[1], reply[2], reply[3])
        raise ValueError("malformed reply from the solution's process")


def _describe_call(call: tuple[bytes, bytes | int | str | None]) -> str:
    """`f(1, 2) returned 3`: a test's last call as it was sent and answered (decoded again from
    what crossed, so a test that mutated the arguments or the result since shows the call)."""
    request, outcome = call
    name, args, kwargs = pickle.loads(request)  # our own pickle of the test's arguments
    shown = ", ".join([_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()])
    text = f"{name}({shown})"
    if isinstance(outcome, bytes):
        text += f" returned {_short(values.decode(json.loads(outcome)[1]))}"
    elif isinstance(outcome, int):
        text += f" returned a value of {outcome} bytes as data (too large to show)"
    elif isinstance(outcome, str):
        text += f" raised {outcome}"
    return text


def _exception(name: str, message: str, solution_tb: str) -> Exception:
    kind = getattr(builtins, name, None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RemoteError
        message = f"{name}: {message}"
    try:
        error = kind(message)
    except Exception:  # an exception class with an unusual constructor
        error = RemoteError(f"{name}: {message}")
    error.solution_traceback = solution_tb  # type: ignore[attr-defined]  # ours, on any exception class
    return error


def _short(value: object, limit: int = 200) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int past the decimal digit limit
        return f"<a {type(value).__name__} too large to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


RUNNER_NAME = b"rlenvs-runner"
"""The test runner's process name (/proc/<pid>/comm): between executions it is the one process
a worker may have besides its zygote."""
PR_SET_NAME = 15
RUN_HEADER = struct.Struct(">Q")
"""A run's first bytes on the runner's control socket: the program's length in bytes. Three
fds ride with it (SCM_RIGHTS): the run's socket to the solution, its verdict file (a memfd:
one record per test, which waking the zygote for would cost more than the record) and the
pipe on which the runner says, once, that the run is over."""


def serve_test_runs(control_fd: int, end_run: Callable[[], None]) -> None:
    """The test runner's life: take a run from the zygote on `control_fd`, run it, forget it,
    until the zygote hangs up. Each run gets a fresh `__main__`; what a test program's set-up
    may change beyond it (builtins, imported modules, `sys.path`, the environment, the working
    folder, the recursion limit, the `random` module's state) is put back after the run;
    attributes it sets on modules are not. Test programs are the task's code, not the
    solution's: the solution reaches this process only as plain data decoded by `values`."""
    sys.stdin = sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (for the process's life)
    ctypes.CDLL(None).prctl(PR_SET_NAME, RUNNER_NAME, 0, 0, 0)  # /proc is read-only here
    control = socket.socket(fileno=control_fd)
    builtins_before = dict(builtins.__dict__)
    modules_before = dict(sys.modules)
    random_before = random.getstate()  # tests that draw unseeded inputs draw the same ones every run
    path_before, environ_before, cwd_before = list(sys.path), dict(os.environ), os.getcwd()
    recursion_before = sys.getrecursionlimit()
    while True:
        header, fds, _flags, _address = socket.recv_fds(control, RUN_HEADER.size, 4)
        if len(header) != RUN_HEADER.size or len(fds) != 4:
            os._exit(0)  # the zygote hung up (or broke the protocol): nothing to do but go
        (size,) = RUN_HEADER.unpack(header)
        program = json.loads(_read_file(fds[3], size) or b"null")  # the zygote never read it
        os.chdir(cwd_before)  # by path: a pool worker's workspace is a new mount every execution
        try:
            call_fd, verdict_fd, done_fd, _program_fd = fds
            run_tests(program, call_fd, verdict_fd, done_fd, end_run)
        finally:
            for fd in fds:
                os.close(fd)
            builtins.__dict__.clear()
            builtins.__dict__.update(builtins_before)
            sys.modules.clear()
            sys.modules.update(modules_before)
            random.setstate(random_before)
            sys.path[:] = path_before
            if os.environ != environ_before:
                os.environ.clear()
                os.environ.update(environ_before)
            sys.setrecursionlimit(recursion_before)


def run_tests(program: dict, call_fd: int, verdict_fd: int, done_fd: int, end_run: Callable[[], None]) -> None:
    """Run the program's set-up, bind the remote names, run each test and write one JSON
    line per test to `verdict_fd`: whether it passed and, if not, its kind (`failure_kind`).
    Then `end_run()` (which ends the solution's process and everything it started), a line
    per failed test with its description, a final `{"done": true}` line that marks a complete
    run, and a byte on `done_fd` for the zygote.

    While the solution lives, a failing test costs the runner what a passing one does, bar
    raising the exception: describing a failure (printing the call and the value, decoding
    the reply again) waits until the solution is gone, so its timing says nothing about
    which of its answers passed."""
    namespace = fresh_main()
    Remote.broken = None
    failures: list[tuple[int, BaseException, tuple | None]] = []

    def write(record: dict) -> None:
        send = (json.dumps(record) + "\n").encode()
        while send:
            send = send[os.write(verdict_fd, send) :]

    try:
        exec(compile(program["setup"], "<test setup>", "exec"), namespace)
    except BaseException as error:  # a broken test set-up is reported, not raised
        write({"setup_error": "".join(traceback.format_exception_only(type(error), error))[-MAX_ERROR_CHARS:]})
    else:
        for local, remote in program["remote"].items():
            namespace[local] = Remote(call_fd, remote)
        for index, test in enumerate(program["tests"]):
            Remote.last_call = None
            try:
                exec(compile(test, f"<test {index}>", "exec"), namespace)
            except BaseException as error:  # every failure is a failed test
                failures.append((index, error, Remote.last_call))
                write({"index": index, "ok": False, "kind": failure_kind(error)})
            else:
                write({"index": index, "ok": True})
    end_run()
    for index, failure, call in failures:
        write({"index": index, "ok": False, "kind": failure_kind(failure), **_failure(failure, call)})
    write({"done": True})
    os.write(done_fd, b"\n")


def failure_kind(error: BaseException) -> str:
    """A failed test's kind, from a fixed vocabulary (the solution chooses its exceptions'
    types and messages, so they are no part of it): "wrong value" when the test's own assert
    failed, else "error" (the solution raised, returned something that is not plain data,
    or its process ended; or the test's code raised on what it returned)."""
    if isinstance(error, AssertionError) and not hasattr(error, "solution_traceback"):
        return "wrong value"
    return "error"


def _failure(error: BaseException, call: tuple | None) -> dict:
    summary = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if call is not None:
        summary += f"\nlast call: {_describe_call(call)}"
    return {"error": summary[-MAX_ERROR_CHARS:], "traceback": getattr(error, "solution_traceback", "")}
