"""Queue time is not step time (issue 38, item 1): under a load of replies that spin to
their limit, every correct reply still scores 1, and a call given up on frees its worker.

Real HumanEval-v2 envs on the process's real shared sandbox (one worker per core), in an
`EnvPool` and behind a real server (`serving`, loopback). The replies alternate spinning and
correct, so the correct ones queue behind several rounds of spinners: counted against the
step timeout, that wait turned most of them into env_timeout (pool) or STEP_TIMEOUT (server).
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from websockets.sync.client import connect

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.core.clock import CallCancelled, CallClock, Tenant, timing
from rlenvs.remote import RemoteEnv
from rlenvs.remote.server import EnvServer, serving
from rlenvs.sandbox import Limits
from rlenvs.sandbox.execution.shared import shared_sandbox
from rlenvs.sandbox.execution.slots import FairSlots
from rlenvs.vector import EnvPool

pytestmark = pytest.mark.sandbox  # every test runs code on the shared sandbox

HUMANEVAL = "rlenvs/HumanEval-v2"
SPIN = "```python\nwhile True:\n    pass\n```"
SANDBOX_LIMIT_S = 2.0
"""Each reply's sandbox time limit: a spinner holds a worker this long."""


@pytest.fixture(scope="module")
def sandbox_workers() -> int:
    return shared_sandbox().workers


@pytest.mark.parametrize("where", ["pool", "server"])
def test_spinning_replies_do_not_time_out_correct_ones(sandbox_workers: int, where: str) -> None:
    """16 envs in a thread pool, or 16 sessions of one server, every other reply spinning."""
    num_envs = 16
    # The queue ahead of the last correct reply holds (num_envs/2) spinners at SANDBOX_LIMIT_S
    # on `sandbox_workers` workers; the step timeout is well under that, above one spin.
    queued_s = num_envs / 2 * SANDBOX_LIMIT_S / sandbox_workers
    step_timeout_s = SANDBOX_LIMIT_S + 1.5
    assert queued_s > 2 * step_timeout_s or sandbox_workers > 2  # the load is real on the CI machine
    make_kwargs = {"timeout_s": SANDBOX_LIMIT_S}
    with contextlib.ExitStack() as stack:
        if where == "pool":
            pool = stack.enter_context(
                EnvPool(HUMANEVAL, num_envs, make_kwargs=make_kwargs, step_timeout_s=step_timeout_s)
            )
        else:
            server = EnvServer(
                HUMANEVAL, make_kwargs, allow_oracle=True, max_sessions=num_envs, step_timeout_s=step_timeout_s
            )
            pool = stack.enter_context(EnvPool(stack.enter_context(serving(server)), num_envs))
        pool.reset(seed=[7] * num_envs, options=[{"task_index": i} for i in range(num_envs)])
        golds = pool.oracle_actions()
        results = pool.step([(i, SPIN if i % 2 == 0 else golds[i]) for i in range(num_envs)])
    correct = [r for r in results if r.index % 2 == 1]
    spun = [r for r in results if r.index % 2 == 0]
    assert [(r.index, r.reward, r.info.get("stop_reason"), r.error) for r in correct if r.reward != 1.0] == []
    assert all(r.reward == 0.0 and r.error is None for r in spun)


def test_a_client_that_leaves_mid_step_frees_its_sandbox_worker(sandbox_workers: int) -> None:
    """A session per sandbox worker spins (limit 30 s), and each client drops its connection
    mid-step: the server cancels those calls, and the next session's step runs at once."""
    server = EnvServer(HUMANEVAL, {"timeout_s": 30.0}, allow_oracle=True, max_sessions=sandbox_workers + 1)
    step = json.dumps({"type": "step", "data": {"message": SPIN}})
    with serving(server) as url:
        ws_url = url.replace("http://", "ws://") + "/ws"
        for _ in range(sandbox_workers):
            with connect(ws_url) as client:
                client.send(json.dumps({"type": "reset", "data": {}}))
                client.recv(timeout=30)
                client.send(step)
                time.sleep(0.3)  # the spin has started
                client.socket.shutdown(socket.SHUT_RDWR)  # gone, without a closing handshake
        honest = RemoteEnv(url)
        honest.reset(seed=0)
        gold = honest.oracle_action()
        started = time.monotonic()
        _, reward, *_ = honest.step(gold)
        assert reward == 1.0 and time.monotonic() - started < 10
        honest.close()


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
