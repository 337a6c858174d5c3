"""Queue time is not step time (issue 38, item 1): under a load of replies that spin to
their limit, every correct reply still scores 1, and a call given up on frees its worker.

Real HumanEval-v2 envs on the process's real shared sandbox (one worker per core). The
replies alternate spinning and correct, so the correct ones queue behind several rounds of
spinners: counted against `step_timeout_s`, that wait turned most of them into env_timeout.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.core.clock import CallCancelled, CallClock, Tenant, timing
from rlenvs.sandbox import Limits
from rlenvs.sandbox.shared import shared_sandbox
from rlenvs.sandbox.slots import FairSlots
from rlenvs.vector import ENV_TIMEOUT, EnvPool

SPIN = "```python\nwhile True:\n    pass\n```"
SANDBOX_LIMIT_S = 2.0
"""Each reply's sandbox time limit: a spinner holds a worker this long."""


@pytest.fixture(scope="module")
def sandbox_workers() -> int:
    return shared_sandbox().workers


def test_spinning_replies_do_not_time_out_correct_ones(sandbox_workers: int) -> None:
    num_envs = 16
    # The queue ahead of the last correct reply holds (num_envs/2) spinners at SANDBOX_LIMIT_S
    # on `sandbox_workers` workers; the step timeout is well under that, above one spin.
    queued_s = num_envs / 2 * SANDBOX_LIMIT_S / sandbox_workers
    step_timeout_s = SANDBOX_LIMIT_S + 1.5
    assert queued_s > 2 * step_timeout_s or sandbox_workers > 2  # the load is real on the CI machine
    with EnvPool(
        "rlenvs/HumanEval-v2", num_envs, make_kwargs={"timeout_s": SANDBOX_LIMIT_S}, step_timeout_s=step_timeout_s
    ) as pool:
        pool.reset(seed=[7] * num_envs, options=[{"task_index": i} for i in range(num_envs)])
        golds = pool.oracle_actions()
        replies = [(i, SPIN if i % 2 == 0 else golds[i]) for i in range(num_envs)]
        results = pool.step(replies)
    correct = [r for r in results if r.index % 2 == 1]
    spun = [r for r in results if r.index % 2 == 0]
    assert [(r.index, r.reward, r.info.get("stop_reason")) for r in correct if r.reward != 1.0] == []
    assert all(r.reward == 0.0 and r.info.get("stop_reason") != ENV_TIMEOUT for r in spun)


def test_a_call_given_up_on_frees_its_sandbox_worker_at_once(sandbox_workers: int) -> None:
    """Every worker held by a spinning call whose runner gave up: the spinners are killed,
    and a new call runs at once rather than after their limits."""
    sandbox = shared_sandbox()
    limit = 30.0
    clocks = [CallClock() for _ in range(sandbox_workers + 1)]  # one more: it waits in the queue

    def spin(clock: CallClock) -> object:
        with timing(clock):
            return sandbox.run_python("while True: pass", limits=Limits(timeout_s=limit))

    with ThreadPoolExecutor(len(clocks)) as threads:
        futures = [threads.submit(spin, clock) for clock in clocks]
        time.sleep(1.0)
        assert not any(f.done() for f in futures)
        assert clocks[-1].worked_s() < 0.5  # queued: off its clock
        started = time.monotonic()
        for clock in clocks:
            clock.cancel()
        for future in futures:
            with pytest.raises(CallCancelled):
                future.result(timeout=10)
        assert time.monotonic() - started < 5
    result = sandbox.run_python("print(6 * 7)")
    assert result.stdout.strip() == "42"


def test_a_free_slot_goes_to_the_tenant_that_has_used_least() -> None:
    slots = FairSlots(1)
    holder = slots.acquire()
    heavy, light = Tenant(), Tenant()
    heavy.used_s = 50.0
    order: list[str] = []

    def wait(name: str, tenant: Tenant) -> None:
        with timing(CallClock(tenant)):
            got = slots.acquire()
        order.append(name)
        slots.release(got, 0.1)

    with ThreadPoolExecutor(2) as threads:
        threads.submit(wait, "heavy", heavy)
        time.sleep(0.2)  # the heavy tenant queues first
        threads.submit(wait, "light", light)
        time.sleep(0.2)
        slots.release(holder, 0.0)
    assert order == ["light", "heavy"]
    assert heavy.used_s == pytest.approx(50.1) and light.used_s == pytest.approx(0.1)
