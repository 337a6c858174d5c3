"""The process runner: envs in worker processes, for CPU-bound steps (verifiers).

`max_workers` worker processes; env `i` lives in worker `i % max_workers`, which makes its
envs when it starts and then serves one call at a time over a pipe. The parent sends a
worker its next call only when the previous one is answered, so each call's clock starts
when that call starts, and the calls of different workers run in parallel.

A call that overruns the timeout cannot be interrupted inside the worker, so the worker is
killed (SIGKILL) and a fresh one started at once, which makes fresh envs. What that does to
the killed worker's envs (the other workers' envs are untouched):

- the call that overran: `env_timeout` (a step) or `TimeoutError` (reset, oracle);
- its other envs' steps and oracle calls still queued in the batch: `env_lost`, without
  running; their resets stay queued and run on the fresh worker;
- its other envs that were mid-episode, including ones stepped earlier in the same batch:
  their next step returns `env_lost` at once (their state died with the worker); reset them.

A worker that dies by itself (a crash, `os._exit`, the OOM killer) is handled the same way,
except that the call it was running reports `env_error`, and a reset it was running is run
again on the fresh worker, first in its queue: a reset needs no old state, and given its seed
and task makes the same episode. Only a reset whose worker died `RESET_ATTEMPTS` times fails,
naming the env and the cause (a reset that overran the timeout is not run again: it would
overrun again).

Start method "spawn": a worker is a fresh interpreter, so it inherits no threads, locks or
CUDA state from a trainer (forking a threaded process can deadlock the child), and it ends
through normal interpreter exit, so the `atexit` hooks that stop sandbox and sympy workers
run ("fork" and "forkserver" children leave with `os._exit`, skipping them). The cost is an
interpreter start and `import rlenvs` per worker (about a second), paid when the pool is
made and when a worker is replaced.

Workers are not daemonic, so an env may itself start processes with `multiprocessing`
(many code verifiers do; a daemonic process may not have children). A
`multiprocessing.util.Finalize` stops them when the pool is closed, garbage-collected or
the program exits, before multiprocessing would wait on them.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import os
import pickle
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import gymnasium as gym

from rlenvs.core.failures import close_quietly
from rlenvs.vector.calls import (
    RESET_ATTEMPTS,
    Call,
    Outcome,
    apply,
    discards,
    env_factory,
    failed,
    overran,
)

START_METHOD: Final = "spawn"
START_TIMEOUT_S = 120.0
"""How long a worker may take to start and make its envs (an import plus loading data)."""
CLOSE_TIMEOUT_S = 5.0
"""How long `close` waits for a worker to close its envs and exit before killing it."""
EXIT_CODE_WAIT_S = 1.0
"""How long a crash report waits for the dead worker to be reaped, so that it can name the exit code."""


# --- inside a worker -----------------------------------------------------------------------


def worker_main(
    conn: multiprocessing.connection.Connection, make_env: Any, make_kwargs: Mapping[str, Any], indices: Sequence[int]
) -> None:
    """Make this worker's envs, say "ready", then answer `(op, index, args)` calls until
    "close" or the parent's end of the pipe closes; and end at once if the parent dies, even
    mid-call (`_die_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the parent decides
    _die_with_parent(os.getppid())
    envs: dict[int, gym.Env | None] = {}
    try:
        try:
            factory = env_factory(make_env, make_kwargs)
            for index in indices:
                envs[index] = factory()
        except BaseException as exc:
            conn.send(("error", _portable(exc)))
            return
        conn.send(("ready", os.getpid()))
        while True:
            try:
                op, index, args = conn.recv()
            except (EOFError, OSError):  # the parent is gone
                return
            if op == "close":
                return
            call = Call(op, index, args)
            env = envs.get(index)
            try:
                if env is None:
                    env = envs[index] = factory()
                reply = ("ok", apply(env, call))
            except BaseException as exc:
                reply = ("error", _portable(exc))
            try:
                conn.send(reply)  # pickles before writing: a failure leaves the pipe clean
            except Exception as exc:
                reply = ("error", _portable(exc))
                conn.send(reply)
            if reply[0] == "error" and discards(call):
                close_quietly(envs[index])
                envs[index] = None
    finally:
        for env in envs.values():
            close_quietly(env)
        conn.close()


PARENT_CHECK_S = 0.25
"""How often a worker looks whether the process that started it is still its parent."""


def _die_with_parent(parent: int) -> None:
    """A daemon thread that ends this worker within `PARENT_CHECK_S` of its parent's death. A
    worker notices a closed pipe only between calls, and one stuck in an env's call (an
    unsandboxed loop) outlived a killed trainer. Not `PR_SET_PDEATHSIG`: it fires when the
    *thread* that started the worker exits, and a pool may be made from a short-lived one."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)  # no one is left to answer; the envs' own sandboxes die with this process

    threading.Thread(target=watch, name="rlenvs-parent-watch", daemon=True).start()


def _portable(exc: BaseException) -> BaseException:
    """The exception itself if it pickles (with the worker's traceback as a note), else a
    RuntimeError carrying its type, text and traceback."""
    note = f"(raised in EnvPool worker process {os.getpid()})\n{''.join(traceback.format_exception(exc))}"
    try:
        exc.add_note(note)
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        stand_in = RuntimeError(f"{type(exc).__name__}: {exc}")
        stand_in.add_note(note)
        return stand_in


# --- in the parent -------------------------------------------------------------------------


class _Worker:
    def __init__(self, slot: int, indices: list[int]) -> None:
        self.slot = slot
        self.indices = indices
        self.process: multiprocessing.process.BaseProcess | None = None
        self.conn: multiprocessing.connection.Connection | None = None
        self.ready = False
        self.started_at = 0.0

    @property
    def started_process(self) -> multiprocessing.process.BaseProcess:
        """The process, for a worker that is started (`start` ran and `stop` has not since)."""
        assert self.process is not None, f"EnvPool worker {self.slot} is not started"
        return self.process

    @property
    def started_conn(self) -> multiprocessing.connection.Connection:
        """The parent's end of the pipe, for a worker that is started (set and cleared with `process`)."""
        assert self.conn is not None, f"EnvPool worker {self.slot} is not started"
        return self.conn

    def start(
        self, context: multiprocessing.context.SpawnContext, make_env: Any, make_kwargs: Mapping[str, Any]
    ) -> None:
        parent_end, child_end = context.Pipe()
        process = context.Process(
            target=worker_main,
            args=(child_end, make_env, dict(make_kwargs), self.indices),
            name=f"rlenvs-envpool-worker-{self.slot}",
            daemon=False,
        )
        process.start()
        child_end.close()
        self.process, self.conn, self.ready, self.started_at = process, parent_end, False, time.monotonic()

    def stop(self, *, kill: bool) -> None:
        """End the worker: at once (`kill`), or by asking it to close its envs and exit."""
        process, conn = self.process, self.conn
        self.process, self.conn, self.ready = None, None, False
        if process is None:
            return
        assert conn is not None  # set and cleared together with process
        if not kill:
            try:
                conn.send(("close", None, None))
            except (OSError, ValueError):
                pass
            process.join(CLOSE_TIMEOUT_S)
        if process.is_alive():
            process.kill()
        process.join()
        conn.close()
        process.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None


def _start_death(worker: _Worker) -> RuntimeError:
    process = worker.started_process
    process.join(EXIT_CODE_WAIT_S)
    return RuntimeError(
        f"EnvPool worker {worker.slot} died while starting (exit code {process.exitcode}) before making "
        f"envs {worker.indices}; its stderr says why. Workers are spawned: the main script must be a file "
        f"whose top-level code is guarded by `if __name__ == '__main__':`"
    )


def _stop_all(workers: list[_Worker]) -> None:
    for worker in workers:  # ask all first, so they close their envs in parallel
        if worker.process is not None and worker.conn is not None:
            try:
                worker.conn.send(("close", None, None))
            except (OSError, ValueError):
                pass
    for worker in workers:
        worker.stop(kill=False)


class ProcessRunner:
    def __init__(
        self,
        make_env: str | Callable[..., gym.Env],
        make_kwargs: Mapping[str, Any],
        num_envs: int,
        max_workers: int,
        timeout_s: float | None,
    ) -> None:
        self.make_env = make_env
        self.make_kwargs = dict(make_kwargs)
        self.timeout_s = timeout_s
        self.context = multiprocessing.get_context(START_METHOD)
        self.workers = [_Worker(slot, list(range(slot, num_envs, max_workers))) for slot in range(max_workers)]
        self.replaced: set[int] = set()
        """Envs whose objects were lost with a worker since the pool last asked (`take_replaced`)."""
        self._finalizer = multiprocessing.util.Finalize(self, _stop_all, args=(self.workers,), exitpriority=10)
        try:
            for worker in self.workers:
                worker.start(self.context, self.make_env, self.make_kwargs)
            self._await_ready()
        except BaseException:
            self.close()
            raise

    def owner(self, index: int) -> _Worker:
        return self.workers[index % len(self.workers)]

    def pids(self) -> list[int | None]:
        """Each worker's process id (None while stopped): for tests and monitoring."""
        return [worker.pid for worker in self.workers]

    def take_replaced(self) -> set[int]:
        replaced, self.replaced = self.replaced, set()
        return replaced

    def _await_ready(self) -> None:
        starting = list(self.workers)
        while starting:
            deadline = min(worker.started_at for worker in starting) + START_TIMEOUT_S
            multiprocessing.connection.wait(
                [w.started_conn for w in starting] + [w.started_process.sentinel for w in starting],
                max(0.0, deadline - time.monotonic()),
            )
            for worker in list(starting):
                failure = self._check_start(worker)
                if failure is not None:
                    raise failure
                if worker.ready:
                    starting.remove(worker)

    def _check_start(self, worker: _Worker) -> BaseException | None:
        """Read a starting worker's first message: None while it is still starting (or is now
        ready); the error that stopped it otherwise (the worker is then stopped)."""
        failure: BaseException | None = None
        if worker.started_conn.poll():
            try:
                status, value = worker.started_conn.recv()
            except (EOFError, OSError):
                failure = _start_death(worker)
            else:
                if status == "ready":
                    worker.ready = True
                    return None
                failure = value
                failure.add_note(f"while making envs {worker.indices} in EnvPool worker {worker.slot}")
        elif not worker.started_process.is_alive():
            failure = _start_death(worker)
        elif time.monotonic() - worker.started_at > START_TIMEOUT_S:
            failure = TimeoutError(
                f"EnvPool worker {worker.slot} did not make envs {worker.indices} within {START_TIMEOUT_S:g} s"
            )
        if failure is not None:
            worker.stop(kill=True)
        return failure

    def run(self, calls: Sequence[Call]) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(calls)
        queues: dict[int, deque[int]] = {worker.slot: deque() for worker in self.workers}
        for position, call in enumerate(calls):
            queues[self.owner(call.index).slot].append(position)
        busy: dict[int, tuple[int, float]] = {}  # worker slot -> (position of its call, deadline)
        attempts: dict[int, int] = {}  # position of a reset -> how many times it was started

        def lose(worker: _Worker, why: str) -> None:
            """Replace a worker whose process is gone or hung: see the module docstring."""
            worker.stop(kill=True)
            self.replaced.update(worker.indices)
            queue = queues[worker.slot]
            for position in list(queue):
                if calls[position].op != "reset":  # a reset needs no old state: it runs on the new worker
                    queue.remove(position)
                    outcomes[position] = Outcome("lost", why)
            worker.start(self.context, self.make_env, self.make_kwargs)

        def crashed(worker: _Worker) -> None:
            code = None
            if worker.process is not None:
                # Its end of the pipe closes a moment before the process is reaped: wait for the exit code.
                worker.process.join(timeout=EXIT_CODE_WAIT_S)
                code = worker.process.exitcode
            if worker.slot in busy:
                position, _ = busy.pop(worker.slot)
                call = calls[position]
                why = f"the worker process hosting env {call.index} died (exit code {code}) during its {call.op}"
                if call.op != "reset":
                    outcomes[position] = Outcome("error", RuntimeError(why))
                elif attempts[position] < RESET_ATTEMPTS:
                    queues[worker.slot].appendleft(position)  # again, first, on the fresh worker
                else:
                    failed = (
                        f"env {call.index}'s reset was started {attempts[position]} times, and each time the worker "
                        f"process hosting it died (the last time with exit code {code})"
                    )
                    outcomes[position] = Outcome("error", RuntimeError(failed))
            else:
                why = f"the worker process hosting envs {worker.indices} died (exit code {code})"
            lose(worker, why + "; it was restarted with fresh envs")

        try:
            while True:
                for worker in self.workers:
                    queue = queues[worker.slot]
                    if not queue or worker.slot in busy:
                        continue
                    if worker.process is None:  # its last start failed: try again now that it is needed
                        worker.start(self.context, self.make_env, self.make_kwargs)
                    if not worker.ready:
                        continue
                    if not worker.started_process.is_alive():  # died while idle
                        crashed(worker)
                        continue
                    position = queue.popleft()
                    call = calls[position]
                    if call.op == "reset":
                        attempts[position] = attempts.get(position, 0) + 1
                    deadline = time.monotonic() + self.timeout_s if self.timeout_s is not None else float("inf")
                    busy[worker.slot] = (position, deadline)
                    try:
                        worker.started_conn.send((call.op, call.index, call.args))
                    except (OSError, ValueError):
                        crashed(worker)
                waiting = [w for w in self.workers if w.slot in busy or (queues[w.slot] and not w.ready)]
                if not waiting:
                    break
                deadlines = [deadline for _, deadline in busy.values()]
                deadlines += [w.started_at + START_TIMEOUT_S for w in waiting if not w.ready]
                wait = max(0.0, min(deadlines) - time.monotonic()) if min(deadlines) != float("inf") else None
                multiprocessing.connection.wait(
                    [w.started_conn for w in waiting] + [w.started_process.sentinel for w in waiting], wait
                )
                for worker in waiting:
                    if not worker.ready:
                        failure = self._check_start(worker)
                        if failure is not None:  # every call queued for it fails with the reason
                            for position in queues[worker.slot]:
                                outcomes[position] = Outcome("error", failure)
                            queues[worker.slot].clear()
                    elif worker.started_conn.poll():
                        try:
                            status, value = worker.started_conn.recv()
                        except (EOFError, OSError):
                            crashed(worker)
                        else:
                            position, _ = busy.pop(worker.slot)
                            outcomes[position] = failed(value) if status == "error" else Outcome(status, value)
                            if status == "ok" and calls[position].op == "reset":
                                self.replaced.discard(calls[position].index)  # a new episode on the new env
                    elif not worker.started_process.is_alive():
                        crashed(worker)
                now = time.monotonic()
                for slot, (position, deadline) in list(busy.items()):
                    if deadline <= now:
                        assert self.timeout_s is not None  # without a timeout every deadline is inf
                        del busy[slot]
                        call = calls[position]
                        outcomes[position] = overran(
                            call, self.timeout_s, "its worker process was killed and restarted with fresh envs"
                        )
                        lose(
                            self.workers[slot],
                            f"env {call.index}'s {call.op} overran step_timeout_s={self.timeout_s:g} s on the same "
                            f"worker process, which was killed and restarted with fresh envs",
                        )
        finally:
            # Interrupted (KeyboardInterrupt): a busy worker's answer would be read as the
            # answer to its next call, so it is killed; it restarts when next needed.
            for slot in busy:
                self.workers[slot].stop(kill=True)
                self.replaced.update(self.workers[slot].indices)
        return outcomes  # type: ignore[return-value]

    def close(self) -> None:
        self._finalizer()
