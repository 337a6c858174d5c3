"""The thread runner: envs in this process, their calls on a set of worker threads.

For envs whose steps mostly wait (on the sandbox, a judge, the network): the GIL is free
while they wait, so threads give the concurrency without copying envs between processes.

The workers are kept between calls (starting a thread per call cost ~170 µs on the 2-core
reference VMs, more than a math env's step), but a Python thread cannot be stopped, so a
call that overruns the timeout is *abandoned*: it no longer counts against `max_workers`,
its env object is dropped (the env's next reset makes a fresh one), its thread runs on until
the call returns, then closes that env and ends, and a new worker takes its place. So one
stuck env costs one extra thread, never the pool's throughput. The timeout counts a call's
working time (`rlenvs.core.clock`): the time it waits for a shared worker (a sandbox slot)
is not its own, and an abandoned call is cancelled, which stops such a wait or run at once.
Each env's episode is a `Tenant` of those shared workers, so they serve episodes fairly. The caller's thread
schedules each batch itself. Batches may run at once from several threads (on disjoint envs:
`EnvPool` sees to that); all of them together run at most `max_workers` calls at a time.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence

import gymnasium as gym

from rlenvs.core.clock import MIN_WAIT_S, CallClock, Tenant, timing
from rlenvs.core.failures import close_quietly
from rlenvs.vector.calls import Call, Outcome, apply, discards, failed, overran

THREAD_NAME_PREFIX = "rlenvs-envpool"
IDLE_THREAD_NAME = f"{THREAD_NAME_PREFIX}-idle"
"""A worker thread is named after the call it runs (`rlenvs-envpool-step-3`), else this."""


class _Job:
    """One call in flight, and the handshake that decides who owns its env afterwards:
    the scheduler (the call finished in time) or the thread (the call was abandoned)."""

    __slots__ = ("abandoned", "call", "clock", "env", "finished", "lock")

    def __init__(self, call: Call, env: gym.Env | None, tenant: Tenant) -> None:
        self.call = call
        self.env = env
        self.clock = CallClock(tenant)
        self.finished = False
        self.abandoned = False
        self.lock = threading.Lock()

    def abandon(self) -> bool:
        """Give up on the call; False if it finished meanwhile (its outcome is on the way)."""
        with self.lock:
            if self.finished:
                return False
            self.abandoned = True
        self.clock.cancel()
        return True


def _work(job: _Job, position: int, done: queue.SimpleQueue, factory: Callable[[], gym.Env]) -> None:
    try:
        if job.env is None:  # discarded after a failure: a reset makes a fresh one
            job.env = factory()
        with timing(job.clock):
            outcome = Outcome("ok", apply(job.env, job.call))
    except BaseException as exc:
        outcome = failed(exc)
    with job.lock:
        job.finished = True
        abandoned = job.abandoned
    if abandoned:
        close_quietly(job.env)
    else:
        done.put((position, outcome))


def _serve(jobs: queue.SimpleQueue, factory: Callable[[], gym.Env]) -> None:
    """A worker thread: run jobs until told to stop (None), or until its job was abandoned
    (its replacement is already serving)."""
    thread = threading.current_thread()
    while (item := jobs.get()) is not None:
        job, position, done = item
        thread.name = f"{THREAD_NAME_PREFIX}-{job.call.op}-{job.call.index}"
        _work(job, position, done, factory)
        if job.abandoned:
            return
        thread.name = IDLE_THREAD_NAME


class ThreadRunner:
    def __init__(
        self, factory: Callable[[], gym.Env], num_envs: int, max_workers: int, timeout_s: float | None
    ) -> None:
        self.factory = factory
        self.max_workers = max_workers
        self.timeout_s = timeout_s
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._slots = threading.Condition()
        """Guards `_workers` and `_busy`; notified when a call gives its slot back."""
        self._workers = 0
        """Worker threads serving `_jobs` (abandoned ones no longer count)."""
        self._busy = 0
        """Calls running, of every batch in flight (at most `max_workers`)."""
        self._owner = os.getpid()
        self.envs: list[gym.Env | None] = []
        self.tenants = [Tenant() for _ in range(num_envs)]
        """Each env's current episode, as a tenant of the process's shared workers."""
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
        running: dict[int, _Job] = {}
        if os.getpid() != self._owner:  # a forked child has none of its parent's threads
            self._jobs, self._workers, self._busy, self._owner = queue.SimpleQueue(), 0, 0, os.getpid()
        try:
            while pending or running:
                while pending and self._take_slot():
                    position = pending.popleft()
                    call = calls[position]
                    if call.op == "reset":
                        self.tenants[call.index] = Tenant()
                    job = _Job(call, self.envs[call.index], self.tenants[call.index])
                    self._jobs.put((job, position, done))
                    running[position] = job
                if not running:  # every slot is taken by other batches: wait for one
                    with self._slots:
                        self._slots.wait_for(lambda: self._busy < self.max_workers)
                    continue
                try:
                    position, outcome = done.get(timeout=self._first_deadline_in(running.values()))
                except queue.Empty:
                    pass
                else:
                    job = running.pop(position)
                    outcomes[position] = self._settle(job, outcome)
                    self._give_slot(abandoned=False)
                for position, job in list(running.items()):
                    if self.timeout_s is not None and job.clock.worked_s() >= self.timeout_s and job.abandon():
                        del running[position]
                        self._give_slot(abandoned=True)  # its thread ends when the call returns
                        self.envs[job.call.index] = None
                        outcomes[position] = overran(
                            job.call, self.timeout_s, "the env was abandoned (a fresh one is made on its next reset)"
                        )
        finally:
            # Interrupted (KeyboardInterrupt): calls still running are abandoned like timed-out ones.
            for job in running.values():
                abandoned = job.abandon()  # False: it finished meanwhile, its worker serves on
                self._give_slot(abandoned=abandoned)
                if abandoned:
                    self.envs[job.call.index] = None
        return outcomes  # type: ignore[return-value]

    def _first_deadline_in(self, jobs: Iterable[_Job]) -> float | None:
        """Seconds until the first running call could overrun (None: no timeout). A call's
        working time grows no faster than the wall clock, so none overruns sooner; one that
        waits meanwhile is looked at again then. At least MIN_WAIT_S, not to spin."""
        if self.timeout_s is None:
            return None
        return max(MIN_WAIT_S, min(job.clock.left_s(self.timeout_s) for job in jobs))

    def _take_slot(self) -> bool:
        """Count one more call running if a slot is free (starting a worker for it if every
        worker is busy); False if `max_workers` calls already run."""
        with self._slots:
            if self._busy >= self.max_workers:
                return False
            self._busy += 1
            if self._workers < self._busy:
                self._start_worker()
            return True

    def _give_slot(self, *, abandoned: bool) -> None:
        """A call is done, or abandoned (then its worker no longer counts: it ends with the call)."""
        with self._slots:
            self._busy -= 1
            if abandoned:
                self._workers -= 1
            self._slots.notify_all()

    def _start_worker(self) -> None:
        thread = threading.Thread(
            target=_serve,
            args=(self._jobs, self.factory),
            name=IDLE_THREAD_NAME,
            daemon=True,  # a hung env must not keep the interpreter from exiting
        )
        thread.start()
        self._workers += 1

    def _settle(self, job: _Job, outcome: Outcome) -> Outcome:
        index = job.call.index
        if outcome.status == "ok" or not discards(job.call):
            self.envs[index] = job.env
        else:
            self.envs[index] = None
            close_quietly(job.env)
        return outcome

    def close(self) -> None:
        """Stop the idle workers and close every env the pool holds. Abandoned calls close
        their own env when they return."""
        with self._slots:
            if os.getpid() == self._owner:
                for _ in range(self._workers):
                    self._jobs.put(None)
            self._workers = 0
        envs, self.envs = self.envs, []
        for env in envs:
            close_quietly(env)
