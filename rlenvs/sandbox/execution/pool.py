"""`Sandbox`: run untrusted Python, shell commands and test programs on a pool of warm workers.

Thread-safe: any number of threads may call it; at most `workers` executions run at once,
each on its own worker (its own bubblewrap sandbox, uid, /workspace and /tmp). A worker
serves up to `max_uses` executions, then is replaced; one that fails in any way is killed
and replaced at once, and the execution it was running reports `sandbox_error` (or the
timeout it hit) without touching any other. One exception: a reused worker that dies
without answering (killed from outside while idle) gets the request again, once, on a fresh
worker; a sandboxed run leaves nothing behind, so running it again is safe.

Called from an env call that a runner times (`rlenvs.core.clock`: EnvPool's threads, a
server session), the wait for a worker is off that call's clock, the next free worker goes
to the tenant that has used workers least (`slots.FairSlots`), and a call the runner gives up
on leaves the queue, or has its run killed, with `CallCancelled`.
"""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Self

from rlenvs.core.checks import check_int
from rlenvs.core.clock import CallCancelled, current_clock
from rlenvs.sandbox.execution.slots import FairSlots
from rlenvs.sandbox.launch import (
    WorkerLaunch,
    bwrap_launch,
    check_can_launch,
    unsafe_launch,
)
from rlenvs.sandbox.requests import Limits, TestProgram
from rlenvs.sandbox.results import ExecResult, TestOutcome, TestReport
from rlenvs.sandbox.worker import RECORDS, Worker, WorkerFailed, unsafe_workdir

DEFAULT_MAX_USES = 1000


class Sandbox:
    """A pool of warm sandbox workers.

    `limits` are the defaults for every call (each call may pass its own, except `disk_mb`:
    the size of a worker's tmpfs is fixed when it starts). `unsafe=True`
    runs without bubblewrap, under rlimits only: for machines that cannot have it, never for
    untrusted code you care about. `python` is the interpreter inside the sandbox (default:
    the system's /usr/bin/python3).
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        limits: Limits | None = None,
        unsafe: bool = False,
        python: str | None = None,
        max_uses: int = DEFAULT_MAX_USES,
    ) -> None:
        workers = (os.cpu_count() or 1) if workers is None else workers
        check_int("workers", workers, at_least=1)
        check_int("max_uses", max_uses, at_least=1)
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a rlenvs.sandbox.Limits, got {type(limits).__name__}")
        check_can_launch(unsafe, python)
        self.limits = limits or Limits()
        self.unsafe = unsafe
        self.python = python
        self.max_uses = max_uses
        self.workers = workers
        self._closed = False
        self._start_fresh()

    def _start_fresh(self) -> None:
        """Empty pool state, owned by this process. A forked child (a multiprocessing or
        AsyncVectorEnv worker) inherits its parent's pipes to workers it must not use, so
        it starts over with its own (see `_worker`); the parent's workers are untouched."""
        self._pid = os.getpid()
        self._slots = FairSlots(self.workers)
        self._lock = threading.Lock()
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        self._finalizer = weakref.finalize(self, _kill_all, self._idle, self._busy)

    # --- public API -------------------------------------------------------------------------

    def run_python(self, code: str, *, stdin: str = "", limits: Limits | None = None) -> ExecResult:
        """Run Python source as a script (`__name__ == "__main__"`) in /workspace."""
        return self._exec("python", code, stdin, limits)

    def run_shell(self, command: str, *, stdin: str = "", limits: Limits | None = None) -> ExecResult:
        """Run `sh -c command` in /workspace."""
        return self._exec("shell", command, stdin, limits)

    def run_tests(self, code: str, program: TestProgram, *, limits: Limits | None = None) -> TestReport:
        """Load `code` (the solution) in one process and run `program`'s tests against it
        from another (see `TestProgram`); every test gets an outcome."""
        _require_str("code", code)
        if not isinstance(program, TestProgram):
            raise TypeError(f"program must be a rlenvs.sandbox.TestProgram, got {type(program).__name__}")
        answer, limits = self._call({"kind": "tests", "code": code, "program": program.for_guest()}, limits)
        records = _records(answer.get(RECORDS, b""))
        outcomes = {record["index"]: record for record in records if "index" in record}
        setup_error = next((record["setup_error"] for record in records if "setup_error" in record), None)
        # Tests run in order: the first without a record was running when the run ended.
        running = next((i for i in range(len(program.tests)) if i not in outcomes), None)
        tests = tuple(
            _outcome(name, outcomes[i])
            if i in outcomes
            else TestOutcome(
                name=name,
                passed=False,
                error=_missing_reason(answer, started=i == running),
                kind="did not finish" if i == running else "not run",
            )
            for i, name in enumerate(program.names)
        )
        return TestReport(
            status=answer["status"],
            tests=tests,
            stdout=answer.get("stdout", ""),
            stderr=answer.get("stderr", ""),
            duration_s=answer.get("duration_s", 0.0),
            detail=answer.get("detail", "") or setup_error or "",
        )

    def close(self) -> None:
        """Kill every worker. A call still running in another thread ends as `sandbox_error`
        (its thread releases the worker); calls after close raise."""
        with self._lock:
            self._closed = True
            idle, busy = list(self._idle), list(self._busy)
            self._idle.clear()
        for worker in idle:
            worker.kill()
        for worker in busy:
            worker.signal_kill()  # the thread reading from it sees the end and cleans up

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------

    def _exec(self, kind: str, code: str, stdin: str, limits: Limits | None) -> ExecResult:
        _require_str("code" if kind == "python" else "command", code)
        _require_str("stdin", stdin)
        answer, _ = self._call({"kind": kind, "code": code, "stdin": stdin}, limits)
        return ExecResult.from_answer(answer)

    def _call(self, request: dict, limits: Limits | None) -> tuple[dict, Limits]:
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a rlenvs.sandbox.Limits, got {type(limits).__name__}")
        limits = limits or self.limits
        clock = current_clock()
        for attempt in range(2):
            with self._worker() as worker:
                reused = worker.uses > 0
                request["limits"] = limits.for_guest(extra_processes=_processes_already_running(worker))
                try:
                    answer = self._request(worker, request, limits)
                except WorkerFailed as error:
                    if clock is not None and clock.cancelled:
                        raise CallCancelled(f"the sandbox run was stopped: {error}") from None
                    # An idle worker can die unseen (killed from outside, the host's OOM
                    # killer): one that ends without answering gets the request again on a
                    # fresh worker. Sandboxed runs leave nothing behind, so a rerun is safe.
                    if reused and attempt == 0 and not error.timed_out and not self._closed:
                        continue
                    return {"status": "sandbox_error", "detail": str(error)}, limits
                except BaseException:
                    # Interrupted while the worker holds an unread answer (KeyboardInterrupt):
                    # it must not serve the next caller that answer.
                    worker.kill()
                    raise
                return answer, limits
        raise AssertionError("unreachable: the second attempt always returns")

    @staticmethod
    def _request(worker: Worker, request: dict, limits: Limits) -> dict:
        """The worker's answer; a call its runner gives up on meanwhile (`CallClock.cancel`)
        kills the worker, so an abandoned call frees its slot at once rather than at its limit."""
        worker.cap_memory(limits.sandbox_memory_bytes)
        killed_before = worker.oom_kills()
        clock = current_clock()
        if clock is None:
            answer = worker.request(request, limits.timeout_s)
        else:
            with clock.on_cancel(worker.signal_kill):
                answer = worker.request(request, limits.timeout_s)
        return _blame_memory_cap(answer, worker.oom_kills() - killed_before, limits)

    @contextmanager
    def _worker(self) -> Iterator[Worker]:
        if os.getpid() != self._pid:
            self._finalizer()  # closes this process's copies of the parent's pipes, kills nothing
            self._start_fresh()
        tenant = self._slots.acquire()
        acquired = time.monotonic()
        try:
            with self._lock:
                if self._closed:
                    raise RuntimeError("this Sandbox is closed")
                worker = self._idle.pop() if self._idle else None
            if worker is not None and not worker.alive:
                worker.kill()
                worker = None
            if worker is None:
                worker = Worker(self._launch())
            with self._lock:
                self._busy.add(worker)
            try:
                yield worker
            finally:
                with self._lock:
                    self._busy.discard(worker)
                    keep = worker.alive and worker.uses < self.max_uses and not self._closed
                    if keep:
                        self._idle.append(worker)
                if not keep:
                    worker.kill()
        finally:
            self._slots.release(tenant, time.monotonic() - acquired)

    def _launch(self) -> WorkerLaunch:
        if self.unsafe:
            return unsafe_launch(self.python, unsafe_workdir())
        return bwrap_launch(self.python, self.limits)


def _kill_all(idle: list[Worker], busy: set[Worker]) -> None:
    # The finalizer: at garbage collection or exit no thread is using the workers any more.
    for worker in [*idle, *busy]:
        worker.kill()
    idle.clear()
    busy.clear()


def _require_str(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{name} is not valid UTF-8 text ({error.reason} at index {error.start}): "
            "remove lone surrogates, e.g. text.encode('utf-8', 'replace').decode()"
        ) from None


def _outcome(name: str, record: dict) -> TestOutcome:
    """A test the runner recorded. A failure's description comes after the solution is gone
    (guest `roles.run_tests`); a run that ended before then leaves only its kind."""
    if record["ok"]:
        return TestOutcome(name=name, passed=True)
    kind = record.get("kind") or "error"
    error = record.get("error") or f"{kind} (the run ended before the failure was described)"
    return TestOutcome(name=name, passed=False, error=error, traceback=record.get("traceback", ""), kind=kind)


def _records(verdict: bytes) -> list[dict]:
    """The test runner's JSON lines; a line cut short by its death is dropped."""
    records = []
    for line in verdict.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            pass
    return records


def _missing_reason(answer: dict, *, started: bool) -> str:
    """Why a test has no outcome; `started` for the one that was running when the run ended."""
    cause = {
        "timeout": "the run hit its time limit",
        "output_limit": "the run was stopped for writing too much output",
        "setup_error": "the test set-up failed",
        "sandbox_error": "the sandbox worker failed",
    }.get(answer["status"], "the test runner was killed")
    if answer["status"] == "setup_error":
        return f"not run: {cause}"
    return f"did not finish: {cause}" if started else f"not run: {cause} first"


def _processes_already_running(worker: Worker) -> int:
    """For a worker running as the current user (no uid of its own), RLIMIT_NPROC counts
    every process of that user: the limit must sit above what already runs."""
    if os.geteuid() == 0:
        return 0
    uid, count = os.getuid(), 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry}/task"))  # the limit counts threads
            except OSError:
                pass
    return count


def _blame_memory_cap(answer: dict, killed: int, limits: Limits) -> dict:
    """A process the kernel killed at the sandbox's memory cap died of SIGKILL, which the
    zygote reads as its own timeout kill: the cgroup's count says it was memory."""
    if killed <= 0 or answer.get("status") not in ("timeout", "crash"):
        return answer
    detail = (
        f"the sandbox's processes went over its memory cap of {limits.sandbox_memory_bytes >> 20} MiB "
        f"(Limits.sandbox_memory_mb) and the kernel killed {killed} of them"
    )
    return {**answer, "status": "memory", "detail": detail}
