"""Symbolic comparisons under a hard time budget, in worker processes.

The caller's side of `worker`: a small pool of long-lived worker processes (sympy is
imported once per worker, not per check). Each check sends its expressions to an idle
worker and waits at most `budget` seconds; a worker that overruns is killed and replaced
on the next use, and the check counts as "not equal". Threads may call `compare` at the
same time: each takes its own worker.

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

DEFAULT_BUDGET = 1.0
"""Seconds a check may take once a worker is running."""
STARTUP_TIMEOUT = 60.0
"""Seconds to wait for a new worker to import sympy (once per worker)."""
MAX_WORKERS = max(1, min(4, os.cpu_count() or 1))

Job = tuple[str, str, str]
"""(mode, left, right): see `worker` for the modes."""


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
        self.ready = False
        self.requests = 0

    def ask(self, jobs: list[Job], budget: float) -> list[bool | None] | None:
        """The worker's answers, or None if it is not ready or does not answer in time."""
        if not self.ready:
            if self._read_line(STARTUP_TIMEOUT) is None:
                return None
            self.ready = True
        self.requests += 1
        request_id = self.requests
        try:
            self.process.stdin.write(json.dumps({"id": request_id, "jobs": jobs}) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        line = self._read_line(budget)
        if line is None:
            return None
        response = json.loads(line)
        return response["results"] if response.get("id") == request_id else None

    def _read_line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        stdout = self.process.stdout
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
        for stream in (self.process.stdin, self.process.stdout):
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

    def acquire(self, timeout: float) -> _Worker | None:
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
            return self.idle.get(timeout=timeout)
        except queue.Empty:
            return None

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


def compare(jobs: list[Job], budget: float = DEFAULT_BUDGET) -> list[bool | None]:
    """Each job's verdict: True/False, or None if it could not be parsed. A job list that
    does not finish within `budget` seconds gets False for every job."""
    if not jobs:
        return []
    started = time.monotonic()
    worker = _POOL.acquire(timeout=budget)
    if worker is None:
        return [False] * len(jobs)
    results = worker.ask(jobs, max(0.0, budget - (time.monotonic() - started)) if worker.ready else budget)
    _POOL.release(worker, healthy=results is not None)
    return results if results is not None else [False] * len(jobs)


def warm_up() -> None:
    """Start one worker now and wait until it has imported sympy."""
    worker = _POOL.acquire(timeout=STARTUP_TIMEOUT)
    if worker is None:
        return
    ok = worker.ready or worker._read_line(STARTUP_TIMEOUT) is not None
    worker.ready = worker.ready or ok
    _POOL.release(worker, healthy=ok)
