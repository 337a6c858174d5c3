"""A call's working time, kept apart from the time it waits for a shared worker.

An env call (a step, a reset) runs under a time budget (`EnvPool(step_timeout_s=...)`,
`rlenvs serve --step-timeout`) that is there to catch an env that hangs. Its reward often
needs a worker that every env of the process shares (a sandbox slot, a symbolic-math
worker), and waiting for one is not the env's doing: counted against the budget, a queue
full of replies spinning to their limits turned correct replies into timeouts, and GRPO
trained on them as wrong (issue 38). So the runner of a call gives it a `CallClock` (`timing`);
code that waits for a shared worker waits inside `waiting_for_worker()`, which stops that
clock, and the runner's timeout counts only the rest (`CallClock.worked_s`).

The clock also carries two more things the shared workers need from the call:
- its `Tenant` (an env's episode, a server session): a queue for a shared worker serves the
  waiter whose tenant has used the least worker time first, so a spinning reply spends its
  own share and nobody else's;
- its cancellation: a runner that gives up on a call (it overran, its session ended) cancels
  it, and then a wait for a worker ends in `CallCancelled` and a run in progress is stopped
  (`CallClock.on_cancel`), so an abandoned call does not keep a worker from the others.

A call made outside any runner (a user's own loop calling `env.step`) has no clock: it waits
and runs as before, as a tenant that has used nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

MIN_WAIT_S = 0.005
"""The shortest sleep of a runner watching a clock (`left_s`), so that it never spins."""


class Tenant:
    """Whose share of the shared workers a call uses; `used_s` is the worker time its calls
    have held so far (what fair queues order by)."""

    __slots__ = ("used_s",)

    def __init__(self) -> None:
        self.used_s = 0.0


class CallCancelled(RuntimeError):
    """The runner gave up on this call (it overran its budget, or its episode or session is
    gone): whatever it was waiting for or running was stopped, and its result is not wanted."""


class CallClock:
    """The working time and cancellation of one call (see the module's docstring).

    Thread-safe: the call's own thread waits and runs under it while the runner's thread
    reads `worked_s` and may `cancel`.
    """

    def __init__(self, tenant: Tenant | None = None) -> None:
        self.tenant = tenant if tenant is not None else Tenant()
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._waited = 0.0
        self._waits = 0
        """Waits in progress (a call may wait for two workers at once, from two threads)."""
        self._wait_started = 0.0
        self._cancelled = False
        self._on_cancel: dict[int, Callable[[], None]] = {}
        self._next_key = 0

    def worked_s(self) -> float:
        """Seconds since the call started, less the seconds it spent waiting for a worker."""
        with self._lock:
            now = time.monotonic()
            waiting = now - self._wait_started if self._waits else 0.0
            return now - self._started - self._waited - waiting

    def left_s(self, budget_s: float) -> float:
        """Working seconds left of `budget_s`; it cannot fall faster than the wall clock, so a
        runner may sleep this long before it looks again."""
        return budget_s - self.worked_s()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Give up on the call: every `on_cancel` callback registered now runs (once), and
        waits for a worker end in `CallCancelled`."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            callbacks = list(self._on_cancel.values())
            self._on_cancel.clear()
        for callback in callbacks:
            callback()

    def check(self) -> None:
        """Raise `CallCancelled` if the call was given up on."""
        if self._cancelled:
            raise CallCancelled("the call was cancelled: its runner gave up on it (timeout, or its episode ended)")

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Stop the clock while inside (waiting for a shared worker)."""
        with self._lock:
            if self._waits == 0:
                self._wait_started = time.monotonic()
            self._waits += 1
        try:
            yield
        finally:
            with self._lock:
                self._waits -= 1
                if self._waits == 0:
                    self._waited += time.monotonic() - self._wait_started

    @contextmanager
    def on_cancel(self, callback: Callable[[], None]) -> Iterator[None]:
        """Run `callback` if the call is cancelled while inside (at once if it already is):
        how a wait is woken and a run in progress is stopped."""
        with self._lock:
            key = self._next_key
            self._next_key += 1
            if not self._cancelled:
                self._on_cancel[key] = callback
        if self._cancelled and key not in self._on_cancel:
            callback()
        try:
            yield
        finally:
            with self._lock:
                self._on_cancel.pop(key, None)


_CURRENT: ContextVar[CallClock | None] = ContextVar("rlenvs_call_clock", default=None)


def current_clock() -> CallClock | None:
    """The clock of the call this thread runs for its runner, if any."""
    return _CURRENT.get()


@contextmanager
def timing(clock: CallClock) -> Iterator[CallClock]:
    """Run the code inside as the call `clock` times (set in the thread that runs the call)."""
    token = _CURRENT.set(clock)
    try:
        yield clock
    finally:
        _CURRENT.reset(token)


@contextmanager
def waiting_for_worker() -> Iterator[CallClock | None]:
    """Wait for a shared worker off the current call's clock; yields that clock (None
    outside a runner) so that the wait can also watch for its cancellation."""
    clock = _CURRENT.get()
    if clock is None:
        yield None
        return
    clock.check()
    with clock.waiting():
        yield clock
