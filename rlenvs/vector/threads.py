"""The thread runner: envs in this process, each call on its own thread.

For envs whose steps mostly wait (on the sandbox, a judge, the network): the GIL is free
while they wait, so threads give the concurrency without copying envs between processes.

Why a thread per call and not a `ThreadPoolExecutor`: a Python thread cannot be stopped, so
a step that hangs would hold an executor thread for good, and a few hung envs would starve
the pool. Here the caller's thread schedules the batch itself: at most `max_workers` calls
run at once, and a call that overruns the timeout is *abandoned*: it no longer counts
against `max_workers`, its env object is dropped (the env's next reset makes a fresh one),
and its thread runs on until the call returns, then closes that env and ends. So one stuck
env costs one extra thread, never the pool's throughput. Starting a thread costs tens of
microseconds, nothing next to a model's turn.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

import gymnasium as gym

from rlenvs.vector.calls import Call, Outcome, apply, close_quietly, discards

THREAD_NAME_PREFIX = "rlenvs-envpool"


class _Job:
    """One call in flight, and the handshake that decides who owns its env afterwards:
    the scheduler (the call finished in time) or the thread (the call was abandoned)."""

    __slots__ = ("abandoned", "call", "env", "finished", "lock")

    def __init__(self, call: Call, env: gym.Env | None) -> None:
        self.call = call
        self.env = env
        self.finished = False
        self.abandoned = False
        self.lock = threading.Lock()

    def abandon(self) -> bool:
        """Give up on the call; False if it finished meanwhile (its outcome is on the way)."""
        with self.lock:
            if self.finished:
                return False
            self.abandoned = True
            return True


def _work(job: _Job, position: int, done: queue.SimpleQueue, factory: Callable[[], gym.Env]) -> None:
    try:
        if job.env is None:  # discarded after a failure: a reset makes a fresh one
            job.env = factory()
        outcome = Outcome("ok", apply(job.env, job.call))
    except BaseException as exc:  # noqa: BLE001 - even SystemExit in env code is that env's error
        outcome = Outcome("error", exc)
    with job.lock:
        job.finished = True
        abandoned = job.abandoned
    if abandoned:
        close_quietly(job.env)
    else:
        done.put((position, outcome))


class ThreadRunner:
    def __init__(
        self, factory: Callable[[], gym.Env], num_envs: int, max_workers: int, timeout_s: float | None
    ) -> None:
        self.factory = factory
        self.max_workers = max_workers
        self.timeout_s = timeout_s
        self.envs: list[gym.Env | None] = []
        try:
            for _ in range(num_envs):
                self.envs.append(factory())
        except BaseException:
            self.close()
            raise

    def run(self, calls: Sequence[Call]) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(calls)
        done: queue.SimpleQueue = queue.SimpleQueue()  # one per batch: late answers of abandoned calls never reach it
        pending = deque(range(len(calls)))
        running: dict[int, tuple[_Job, float]] = {}
        try:
            while pending or running:
                while pending and len(running) < self.max_workers:
                    position = pending.popleft()
                    call = calls[position]
                    job = _Job(call, self.envs[call.index])
                    thread = threading.Thread(
                        target=_work,
                        args=(job, position, done, self.factory),
                        name=f"{THREAD_NAME_PREFIX}-{call.op}-{call.index}",
                        daemon=True,  # a hung env must not keep the interpreter from exiting
                    )
                    thread.start()
                    deadline = time.monotonic() + self.timeout_s if self.timeout_s is not None else float("inf")
                    running[position] = (job, deadline)
                first_deadline = min(deadline for _, deadline in running.values())
                wait = None if first_deadline == float("inf") else max(0.0, first_deadline - time.monotonic())
                try:
                    position, outcome = done.get(timeout=wait)
                except queue.Empty:
                    pass
                else:
                    job, _ = running.pop(position)
                    outcomes[position] = self._settle(job, outcome)
                now = time.monotonic()
                for position, (job, deadline) in list(running.items()):
                    if deadline <= now and job.abandon():
                        del running[position]
                        self.envs[job.call.index] = None
                        outcomes[position] = Outcome(
                            "timeout",
                            f"env {job.call.index}'s {job.call.op} did not return within step_timeout_s="
                            f"{self.timeout_s:g} s; the env was abandoned (a fresh one is made on its next reset)",
                        )
        finally:
            # Interrupted (KeyboardInterrupt): calls still running are abandoned like timed-out ones.
            for job, _ in running.values():
                if job.abandon():
                    self.envs[job.call.index] = None
        return outcomes  # type: ignore[return-value]

    def _settle(self, job: _Job, outcome: Outcome) -> Outcome:
        index = job.call.index
        if outcome.status == "ok" or not discards(job.call):
            self.envs[index] = job.env
        else:
            self.envs[index] = None
            close_quietly(job.env)
        return outcome

    def close(self) -> None:
        """Close every env the pool holds. Abandoned calls close their own env when they return."""
        envs, self.envs = self.envs, []
        for env in envs:
            close_quietly(env)
