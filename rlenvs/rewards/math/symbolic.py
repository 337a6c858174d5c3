"""Symbolic comparisons under a CPU-time budget, in worker processes.

The caller's side of `worker`: a small pool of long-lived worker processes (sympy is
imported once per worker, not per check). Each check sends its expressions to an idle
worker with a budget in CPU seconds, which the worker enforces on itself; a job the budget
runs out on counts as "not equal". Threads may call `compare` at the same time: each takes
its own worker, waiting for one to be free.

Why CPU time and not the caller's clock: a verdict must not depend on what else is being
checked. Waiting for a worker, or sharing two cores with 64 other checks, takes wall time
but no work; a budget that counted it would turn a correct answer into 0 under load. The
wall clock only bounds a worker that stops answering at all (`SAFETY_WALL_S`), which is
then killed and replaced.

The first check starts a worker (about a second to import sympy); `warm_up()` lets an env
pay that before its first episode instead of inside it.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, NamedTuple

from rlenvs.core.clock import waiting_for_worker

DEFAULT_BUDGET = 1.0
"""CPU seconds a comparison may spend in the worker."""
STARTUP_TIMEOUT = 60.0
"""Seconds to wait for a new worker to import sympy (once per worker)."""
SAFETY_WALL_S = 60.0
"""Wall-clock seconds past its budget after which a worker that has not answered is
killed (a hang, not a slow check: the worker stops itself when its CPU budget runs out)."""
QUEUE_TIMEOUT = 600.0
"""Seconds a check waits for a free worker before raising: every request ends within its
budget plus `SAFETY_WALL_S`, so only a broken pool waits this long."""
MAX_WORKERS = max(1, min(4, os.cpu_count() or 1))

Job = tuple[str, str, str]
"""(mode, left, right): see `worker` for the modes."""


class Answers(NamedTuple):
    results: list[bool | None]
    """Each job's verdict: True/False, or None if it could not be parsed."""
    cpu: float
    """CPU seconds the worker spent on them (what the budget counts)."""


class _Worker:
    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[3])
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, environment.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rlenvs.rewards.math.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env=environment,
        )
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None  # both opened with PIPE
        self.stdin: IO[str] = stdin
        self.stdout: IO[str] = stdout
        self.ready = False
        self.requests = 0

    def start(self) -> bool:
        """Wait until the worker has imported sympy; False if it never does."""
        if not self.ready:
            self.ready = self._read_line(STARTUP_TIMEOUT) is not None
        return self.ready

    def ask(self, jobs: list[Job], budget: float) -> Answers | None:
        """The worker's answers, or None if it does not start or stops answering."""
        if not self.start():
            return None
        self.requests += 1
        request_id = self.requests
        try:
            self.stdin.write(json.dumps({"id": request_id, "budget": budget, "jobs": jobs}) + "\n")
            self.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        line = self._read_line(budget + SAFETY_WALL_S)
        if line is None:
            return None
        response = json.loads(line)
        if response.get("id") != request_id:
            return None
        return Answers(response["results"], float(response["cpu"]))

    def _read_line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        stdout = self.stdout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([stdout], [], [], remaining)
            if readable:
                line = stdout.readline()
                return line if line else None

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.alive:
            self.process.kill()
        self.process.wait()
        for stream in (self.stdin, self.stdout):
            try:
                stream.close()
            except OSError:
                pass


class _Pool:
    def __init__(self, size: int) -> None:
        self.size = size
        self.idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self.started = 0
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []

    def acquire(self) -> _Worker:
        try:
            return self.idle.get_nowait()
        except queue.Empty:
            pass
        with self.lock:
            if self.started < self.size:
                self.started += 1
                worker = _Worker()
                self.workers.append(worker)
                return worker
        try:
            with waiting_for_worker():  # off the env call's clock (rlenvs.core.clock)
                return self.idle.get(timeout=QUEUE_TIMEOUT)
        except queue.Empty:
            raise RuntimeError(
                f"no symbolic worker became free in {QUEUE_TIMEOUT:g} s: the worker pool is stuck "
                f"({self.started} of {self.size} started)"
            ) from None

    def release(self, worker: _Worker, healthy: bool) -> None:
        if healthy and worker.alive:
            self.idle.put(worker)
            return
        worker.kill()
        with self.lock:
            self.workers.remove(worker)
            self.started -= 1

    def close(self) -> None:
        with self.lock:
            for worker in self.workers:
                worker.kill()
            self.workers.clear()
            self.started = 0
        while not self.idle.empty():
            self.idle.get_nowait()


_POOL = _Pool(MAX_WORKERS)
atexit.register(_POOL.close)


def compare(jobs: list[Job], budget: float = DEFAULT_BUDGET) -> Answers:
    """Each job's verdict within `budget` CPU seconds of worker time (see `Answers`); jobs
    the budget runs out on are False, and so is every job if the worker fails."""
    if not jobs:
        return Answers([], 0.0)
    worker = _POOL.acquire()
    answers = worker.ask(jobs, budget)
    _POOL.release(worker, healthy=answers is not None)
    return answers if answers is not None else Answers([False] * len(jobs), budget)


def warm_up() -> None:
    """Start one worker now and wait until it has imported sympy."""
    worker = _POOL.acquire()
    _POOL.release(worker, healthy=worker.start())
