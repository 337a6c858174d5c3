"""`FairSlots`: the sandbox pool's admission, least-served tenant first.

First come, first served let a tenant that keeps sending replies which spin to their time
limit hold the workers while everybody else queued behind it. Here the next free slot goes
to the waiter whose tenant (`rlenvs.core.clock.Tenant`: an env's episode, a server session)
has held workers for the least time so far, then to the earliest: a spinning tenant spends
its own share. Waiting is off the caller's clock (`waiting_for_worker`), and a cancelled
call leaves the queue with `CallCancelled`.
"""

from __future__ import annotations

import heapq
import itertools
import threading

from rlenvs.core.clock import CallClock, Tenant, waiting_for_worker


class FairSlots:
    """At most `size` holders at once; `acquire` returns the tenant to charge in `release`."""

    def __init__(self, size: int) -> None:
        self._ready = threading.Condition()
        self._free = size
        self._queue: list[tuple[float, int]] = []
        """(the tenant's worker seconds when it arrived, arrival number): a heap."""
        self._arrivals = itertools.count()

    def acquire(self) -> Tenant:
        with waiting_for_worker() as clock:
            tenant = clock.tenant if clock is not None else Tenant()
            with self._ready:
                if self._free and not self._queue:
                    self._free -= 1
                    return tenant
                entry = (tenant.used_s, next(self._arrivals))
                heapq.heappush(self._queue, entry)
                try:
                    self._wait_for_turn(entry, clock)
                except BaseException:
                    self._queue.remove(entry)
                    heapq.heapify(self._queue)
                    self._ready.notify_all()  # the next in line may be free to go now
                    raise
                heapq.heappop(self._queue)
                self._free -= 1
                self._ready.notify_all()  # a second free slot may be the next waiter's
                return tenant

    def _wait_for_turn(self, entry: tuple[float, int], clock: CallClock | None) -> None:
        if clock is None:
            self._ready.wait_for(lambda: self._free > 0 and self._queue[0] == entry)
            return
        with clock.on_cancel(self._wake):
            while not (self._free > 0 and self._queue[0] == entry):
                clock.check()
                self._ready.wait()
            clock.check()

    def _wake(self) -> None:
        with self._ready:
            self._ready.notify_all()

    def release(self, tenant: Tenant, held_s: float) -> None:
        """Give a slot back, charging `held_s` seconds of worker time to `tenant`."""
        with self._ready:
            tenant.used_s += held_s
            self._free += 1
            self._ready.notify_all()
