"""One sandbox pool per process, shared by every env that runs code.

A training job steps hundreds of envs; each owning its own pool would start hundreds of
workers. The shared pool has one worker per CPU core, started on demand, and is closed
when the process exits.
"""

from __future__ import annotations

import atexit
import os
import threading

from rlenvs.sandbox.execution.pool import Sandbox

_lock = threading.Lock()
_pools: dict[bool, Sandbox] = {}


def shared_sandbox(*, unsafe: bool = False) -> Sandbox:
    """The process's sandbox pool (`unsafe=True`: the rlimits-only pool, see `Sandbox`)."""
    with _lock:
        pool = _pools.get(unsafe)
        if pool is None:
            pool = _pools[unsafe] = Sandbox(unsafe=unsafe)
        return pool


def _fresh_lock_in_child() -> None:
    # A fork while another thread held the lock would leave the child's copy locked forever.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock_in_child)


@atexit.register
def _close_all() -> None:
    with _lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()
