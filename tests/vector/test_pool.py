"""rlenvs.vector.EnvPool: concurrent stepping of real catalog envs, in threads and processes.

The envs are the real ones from the catalog. Misbehaviour (slow, raising, hanging, crashing
steps) comes from `ScriptedArithmeticEnv`, the real Arithmetic env whose reply may start
with a directive line for the test. Timing assertions are behaviour checks with wide
margins (overlap versus serial), not benchmarks.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.envs.math.arithmetic import ArithmeticEnv
from rlenvs.vector import ENV_ERROR, ENV_LOST, ENV_TIMEOUT, EnvPool
from rlenvs.vector.threads import IDLE_THREAD_NAME, THREAD_NAME_PREFIX

RELEASE = threading.Event()
"""Set to let a thread-mode "#hang" step return (in a worker process it is never set)."""
HANG_S = 30.0

_in_flight_lock = threading.Lock()
_in_flight = 0
max_in_flight = 0


class ScriptedArithmeticEnv(ArithmeticEnv):
    """Arithmetic-v1 whose reply may begin with one directive line:
    `#sleep S` (sleep S seconds, then judge the rest), `#raise`, `#hang`, `#exit` (end the
    process, as a crash would, its pipes closed 0.3 s before it exits). Counts the steps in
    flight in this process."""

    def reset(self, *, seed=None, options=None):
        """`options={"crash": path}`: end the process as `#exit` does while no file `path`
        exists, making it first (the first attempt dies, the next succeeds); "always": every time."""
        options = dict(options or {})
        crash = options.pop("crash", None)
        if crash == "always" or (crash is not None and not os.path.exists(crash)):
            if crash != "always":
                open(crash, "w").close()
            os.closerange(3, 1 << 16)
            os._exit(3)
        return super().reset(seed=seed, options=options or None)

    def step(self, action):
        global _in_flight, max_in_flight
        directive, _, rest = action.partition("\n") if action.startswith("#") else ("", "", action)
        with _in_flight_lock:
            _in_flight += 1
            max_in_flight = max(max_in_flight, _in_flight)
        try:
            if directive.startswith("#sleep"):
                time.sleep(float(directive.split()[1]))
            elif directive == "#raise":
                raise RuntimeError("scripted failure in step")
            elif directive == "#hang":
                RELEASE.wait(HANG_S)
            elif directive == "#exit":
                os.closerange(3, 1 << 16)  # the pipe to the pool closes first, as when a crash's
                time.sleep(0.3)  # teardown is slow: the report must still name the exit code
                os._exit(3)
            return super().step(rest)
        finally:
            with _in_flight_lock:
                _in_flight -= 1


NO_ANSWER = "I am not sure yet."
"""A reply without a final answer: a multi-turn episode goes on with a format reminder."""


def sleepy(seconds: float, reply: str) -> str:
    return f"#sleep {seconds}\n{reply}"


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def pool_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_NAME_PREFIX)]


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(autouse=True)
def _release_hung_steps():
    RELEASE.clear()
    yield
    RELEASE.set()


# --- same results as stepping the envs one by one ---------------------------------------------

CASES = {
    "rlenvs/Arithmetic-v1": {"level": 2, "max_turns": 2},
    "rlenvs/GSM8K-v1": {"split": "test", "max_turns": 2},
}


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize("executor", ["thread", "process"])
@pytest.mark.parametrize("env_id", list(CASES))
def test_matches_sequential_stepping(env_id, executor):
    kwargs = CASES[env_id]
    n = 6
    seeds = [100 + i for i in range(n)]
    options = [None, {"task_index": 3}, None, {"task_index": 3}, None, None]
    # Odd envs answer with the oracle at once; even envs first reply without an answer (a
    # format reminder, episode goes on), then with the oracle.
    sequential = [gym.make(env_id, **kwargs) for _ in range(n)]
    expected_resets = [env.reset(seed=s, options=o) for env, s, o in zip(sequential, seeds, options)]
    with EnvPool(
        env_id, n, make_kwargs=kwargs, executor=executor, max_workers=min(n, 3) if executor == "thread" else 2
    ) as pool:
        resets = pool.reset(list(range(n)), seeds=seeds, options=options)
        assert [(r.index, r.observation, r.info) for r in resets] == [
            (i, obs, info) for i, (obs, info) in enumerate(expected_resets)
        ]
        order = [5, 2, 0, 3, 1, 4]  # results come back in submission order, not index order
        oracles = dict(zip(range(n), pool.oracle_actions(range(n))))
        assert oracles == {i: env.get_wrapper_attr("oracle_action")() for i, env in enumerate(sequential)}
        first = [(i, oracles[i] if i % 2 else NO_ANSWER) for i in order]
        results = pool.step(first)
        assert [r.index for r in results] == order
        for r in results:
            assert (r.observation, r.reward, r.terminated, r.truncated, r.info) == sequential[r.index].step(
                dict(first)[r.index]
            )
            assert r.error is None
            assert r.done == (r.index % 2 == 1)
            if r.index % 2:
                assert r.reward == 1.0 and r.stop_reason == "answered"
        second = [(i, oracles[i]) for i in order if i % 2 == 0]
        results = pool.step(second)
        assert [r.index for r in results] == [i for i, _ in second]
        for r in results:
            assert (r.observation, r.reward, r.terminated, r.truncated, r.info) == sequential[r.index].step(
                oracles[r.index]
            )
            assert r.reward == 1.0 and r.terminated
    assert resets[1].info["task_id"] == resets[3].info["task_id"]


def test_grpo_group_and_user_task():
    with EnvPool("rlenvs/GSM8K-v1", 4, make_kwargs={"split": "test"}) as pool:
        group = pool.reset(seeds=[7] * 4, options={"task_index": 11})
        assert len({(r.observation, r.info["task_id"]) for r in group}) == 1
        row = {"question": "Ann has 6 bags of 7 apples. How many apples does she have?", "answer": "6*7=42\n#### 42"}
        custom = pool.reset([2, 0], options=[{"task": row}, {"task_index": 0}])
        assert [r.index for r in custom] == [2, 0]
        assert custom[0].observation.startswith("Ann has 6 bags")
        results = pool.step({2: "So \\boxed{42}", 0: "\\boxed{-1}"})
        assert [(r.index, r.reward) for r in results] == [(2, 1.0), (0, 0.0)]


def test_reset_takes_gymnasium_seed_spelling():
    """`pool.reset(seed=...)` as in a gymnasium loop: an int seeds the k-th index seed + k (as
    `VectorEnv.reset` does), a list is one seed per index; `seeds=` keeps working."""
    single = gym.make("rlenvs/Arithmetic-v1", level=3)
    expected = [single.reset(seed=s)[0] for s in (5, 6, 7)]
    with EnvPool("rlenvs/Arithmetic-v1", 3, make_kwargs={"level": 3}) as pool:
        assert [r.observation for r in pool.reset(seed=5)] == expected
        assert [r.observation for r in pool.reset([2, 0], seed=6)] == [expected[1], expected[2]]
        assert [r.observation for r in pool.reset(seed=[7, None, 5])][::2] == [expected[2], expected[0]]
        assert [r.observation for r in pool.reset(seeds=[5, 6, 7])] == expected
        with pytest.raises(TypeError, match="both seeds= and seed=: pass one"):
            pool.reset(seed=1, seeds=[1, 2, 3])
        with pytest.raises(TypeError, match="seed must be an int, a list"):
            pool.reset(seed="5")


@pytest.mark.sandbox
def test_code_env_oracle_reaches_full_reward_on_threads():
    """HumanEval's steps wait on the sandbox: the thread pool's use case."""
    with EnvPool("rlenvs/HumanEval-v2", 4, step_timeout_s=60) as pool:
        pool.reset(options=[{"task_index": i} for i in (0, 1, 2, 3)])
        oracles = pool.oracle_actions([0, 1, 2])
        results = pool.step([(0, oracles[0]), (1, oracles[1]), (2, oracles[2]), (3, "```python\npass\n```")])
        assert [r.reward for r in results] == [1.0, 1.0, 1.0, 0.0]
        assert [r.stop_reason for r in results[:3]] == ["solved"] * 3
        assert results[3].done and results[3].error is None


# --- concurrency ----------------------------------------------------------------------------


def test_thread_steps_overlap():
    global max_in_flight
    with EnvPool(ScriptedArithmeticEnv, 8, max_workers=8) as pool:
        pool.reset(seeds=list(range(8)))
        oracles = pool.oracle_actions()
        max_in_flight = 0
        start = time.monotonic()
        results = pool.step({i: sleepy(0.2, oracles[i]) for i in range(8)})
        elapsed = time.monotonic() - start
    assert [r.reward for r in results] == [1.0] * 8
    assert elapsed < 0.5 * 8 * 0.2, f"8 steps of 200 ms took {elapsed:.2f} s: they did not overlap"
    assert max_in_flight > 1


def test_max_workers_bounds_concurrency():
    global max_in_flight
    with EnvPool(ScriptedArithmeticEnv, 6, max_workers=2) as pool:
        pool.reset(seeds=list(range(6)))
        oracles = pool.oracle_actions()
        max_in_flight = 0
        start = time.monotonic()
        results = pool.step({i: sleepy(0.1, oracles[i]) for i in range(6)})
        elapsed = time.monotonic() - start
    assert [r.reward for r in results] == [1.0] * 6
    assert max_in_flight == 2
    assert elapsed >= 0.3 - 0.02  # three rounds of two


# --- calls from several threads ------------------------------------------------------------


def test_thread_calls_from_several_threads_run_at_once_within_max_workers():
    """The continuous rollout schedule steps each episode from its own thread: a call on
    other envs does not wait for one running, and all of them share `max_workers`."""
    global max_in_flight
    with EnvPool(ScriptedArithmeticEnv, 7, max_workers=4) as pool:
        assert pool.concurrent_calls
        pool.reset(seeds=list(range(7)))
        oracles = pool.oracle_actions()
        max_in_flight = 0
        slow_results: list = []
        slow = threading.Thread(target=lambda: slow_results.extend(pool.step({0: sleepy(0.6, oracles[0])})))
        slow.start()
        assert wait_until(lambda: max_in_flight == 1)
        start = time.monotonic()
        quick = pool.step({6: sleepy(0.05, oracles[6])})  # does not wait for env 0's step
        assert time.monotonic() - start < 0.4 and quick[0].reward == 1.0
        with pytest.raises(RuntimeError, match=r"step: env\(s\) \[0\] have a call running"):
            pool.step({0: oracles[0]})
        with pytest.raises(RuntimeError, match=r"reset: env\(s\) \[0\] have a call running"):
            pool.reset([0])
        # five more steps of 0.3 s from five threads, while env 0's runs: at most 4 at once
        batches = [{i: sleepy(0.3, NO_ANSWER)} for i in range(1, 6)]
        threads = [threading.Thread(target=pool.step, args=(batch,)) for batch in batches]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        slow.join()
    assert max_in_flight == 4
    assert [r.reward for r in slow_results] == [1.0]


def test_close_waits_for_a_call_running_in_another_thread():
    pool = EnvPool(ScriptedArithmeticEnv, 2)
    pool.reset(seeds=[0, 1])
    oracle = pool.oracle_actions([0])[0]
    results: list = []
    stepping = threading.Thread(target=lambda: results.extend(pool.step({0: sleepy(0.3, oracle)})))
    stepping.start()
    assert wait_until(lambda: _in_flight == 1)
    pool.close()  # returns once the step has
    assert [r.reward for r in results] == [1.0]
    stepping.join()
    with pytest.raises(RuntimeError, match="closed"):
        pool.step({1: oracle})


def test_process_pool_takes_calls_from_several_threads_one_at_a_time(scripted_processes):
    pool = scripted_processes
    assert not pool.concurrent_calls
    pool.reset(seeds=[1, 2, 3, 4])
    oracles = pool.oracle_actions()
    results: dict[int, list] = {}
    threads = [
        threading.Thread(target=lambda i=i: results.setdefault(i, pool.step({i: sleepy(0.2, oracles[i])})))
        for i in range(2)
    ]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.monotonic() - start >= 0.4 - 0.02  # serialised, though envs 0 and 1 are on two workers
    assert [results[i][0].reward for i in range(2)] == [1.0, 1.0]


# --- failures in thread mode ----------------------------------------------------------------


def test_thread_raising_step_ends_only_its_episode():
    with EnvPool(ScriptedArithmeticEnv, 4) as pool:
        pool.reset(seeds=[1, 2, 3, 4])
        oracles = pool.oracle_actions()
        results = pool.step([(0, oracles[0]), (1, "#raise\n" + oracles[1]), (2, oracles[2]), (3, oracles[3])])
        assert [r.index for r in results] == [0, 1, 2, 3]
        failed = results[1]
        assert (failed.reward, failed.terminated, failed.truncated) == (0.0, True, False)
        assert failed.stop_reason == ENV_ERROR and failed.info["stop_reason"] == ENV_ERROR
        assert failed.error == "RuntimeError: scripted failure in step"
        assert [r.reward for r in results if r.index != 1] == [1.0, 1.0, 1.0]
        with pytest.raises(ResetNeeded, match=r"env 1's episode is over \(stop_reason='env_error'\).*reset it"):
            pool.step({1: "\\boxed{1}"})
        with pytest.raises(ResetNeeded, match="env 1 has no current task"):
            pool.oracle_actions([1])
        pool.reset([1], seeds=[2])
        assert pool.step({1: pool.oracle_actions([1])[0]})[0].reward == 1.0


def test_thread_hanging_step_times_out_and_the_pool_goes_on():
    timeout = 0.5
    # One worker: if the hung step kept its slot, nothing after it could ever run.
    with EnvPool(ScriptedArithmeticEnv, 4, max_workers=1, step_timeout_s=timeout) as pool:
        pool.reset(seeds=[1, 2, 3, 4])
        oracles = pool.oracle_actions()
        start = time.monotonic()
        results = pool.step([(2, "#hang\n"), (0, oracles[0]), (1, oracles[1]), (3, oracles[3])])
        elapsed = time.monotonic() - start
        assert elapsed < timeout + 1.5
        hung = results[0]
        assert (hung.index, hung.reward, hung.terminated, hung.truncated) == (2, 0.0, False, True)
        assert hung.stop_reason == ENV_TIMEOUT and "step_timeout_s=0.5" in hung.error
        assert [(r.index, r.reward) for r in results[1:]] == [(0, 1.0), (1, 1.0), (3, 1.0)]
        busy = [t.name for t in pool_threads() if t.name != IDLE_THREAD_NAME]
        assert busy == [f"{THREAD_NAME_PREFIX}-step-2"]  # abandoned, still waiting; a new worker took its place

        # Next batch: env 2 is a fresh env after its reset; every env works.
        pool.reset(seeds=[5, 6, 7, 8])
        results = pool.step(dict(enumerate(pool.oracle_actions())))
        assert [r.reward for r in results] == [1.0] * 4
    RELEASE.set()
    assert wait_until(lambda: not pool_threads(), 5.0), pool_threads()


def test_thread_pool_leaves_no_threads():
    before = set(threading.enumerate())
    with EnvPool("rlenvs/Arithmetic-v1", 5, max_workers=3) as pool:
        pool.reset(seeds=list(range(5)))
        pool.step(dict(enumerate(pool.oracle_actions())))
    assert wait_until(lambda: set(threading.enumerate()) <= before, 5.0)
    with pytest.raises(RuntimeError, match="closed"):
        pool.reset()
    pool.close()  # idempotent


def test_thread_workers_are_kept_between_batches():
    """Calls run on kept worker threads (a thread per call cost more than a math env's step):
    many batches leave at most `max_workers` of them."""
    with EnvPool("rlenvs/Arithmetic-v1", 5, max_workers=3) as pool:
        for seed in range(20):
            pool.reset(seeds=[seed * 5 + i for i in range(5)])
            assert [r.reward for r in pool.step(dict(enumerate(pool.oracle_actions())))] == [1.0] * 5
        assert 1 <= len(pool_threads()) <= 3 and {t.name for t in pool_threads()} == {IDLE_THREAD_NAME}


def _step_in_forked_child(pool: EnvPool, results: multiprocessing.Queue) -> None:
    pool.reset(seeds=[7, 8])
    results.put([r.reward for r in pool.step(dict(enumerate(pool.oracle_actions())))])


def test_thread_pool_works_in_a_forked_child():
    """A forked child has none of its parent's worker threads: its copy of the pool starts
    its own instead of queueing calls no thread would take."""
    with EnvPool("rlenvs/Arithmetic-v1", 2, max_workers=2) as pool:
        pool.reset(seeds=[1, 2])
        pool.step(dict(enumerate(pool.oracle_actions())))  # the parent's workers exist now
        context = multiprocessing.get_context("fork")
        results = context.Queue()
        child = context.Process(target=_step_in_forked_child, args=(pool, results))
        child.start()
        assert results.get(timeout=30) == [1.0, 1.0]
        child.join(30)
        assert child.exitcode == 0


# --- process mode ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scripted_processes():
    """4 scripted envs on 2 worker processes: envs 0 and 2 on worker 0, 1 and 3 on worker 1.
    Every test resets all envs first, so tests do not depend on one another."""
    with EnvPool(
        ScriptedArithmeticEnv, 4, make_kwargs={"max_turns": 3}, executor="process", max_workers=2, step_timeout_s=1.5
    ) as pool:
        yield pool


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_process_steps_overlap(scripted_processes):
    pool = scripted_processes
    pool.reset(seeds=[1, 2, 3, 4])
    oracles = pool.oracle_actions()
    start = time.monotonic()
    results = pool.step({0: sleepy(0.4, oracles[0]), 1: sleepy(0.4, oracles[1])})
    elapsed = time.monotonic() - start
    assert [r.reward for r in results] == [1.0, 1.0]
    assert elapsed < 0.75 * 2 * 0.4, f"two 400 ms steps on two workers took {elapsed:.2f} s"


def test_process_raising_step_ends_only_its_episode(scripted_processes):
    pool = scripted_processes
    pids = pool.worker_pids()
    pool.reset(seeds=[1, 2, 3, 4])
    oracles = pool.oracle_actions()
    results = pool.step({0: "#raise\n", 1: oracles[1], 2: NO_ANSWER, 3: oracles[3]})
    assert results[0].stop_reason == ENV_ERROR and results[0].terminated and results[0].reward == 0.0
    assert results[0].error == "RuntimeError: scripted failure in step"
    assert [r.reward for r in results[1:]] == [1.0, 0.0, 1.0]
    assert not results[2].done  # no answer on a 3-turn task: a format reminder, the episode goes on
    assert pool.worker_pids() == pids  # an exception is not a reason to replace a worker
    assert pool.step({2: oracles[2]})[0].reward == 1.0
    pool.reset([0], seeds=[1])
    assert pool.step({0: oracles[0]})[0].reward == 1.0


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_process_hanging_step_kills_only_its_worker(scripted_processes):
    pool = scripted_processes
    pool.reset(seeds=[1, 2, 3, 4])
    oracles = pool.oracle_actions()
    pids = pool.worker_pids()
    start = time.monotonic()
    # Worker 0 runs env 2's reply without an answer (episode goes on), then env 0 hangs: killed at 1.5 s,
    # so env 2's state is gone too. Worker 1's envs are untouched.
    results = pool.step([(2, NO_ANSWER), (0, "#hang\n"), (1, NO_ANSWER), (3, sleepy(0.2, oracles[3]))])
    elapsed = time.monotonic() - start
    assert elapsed < 1.5 + 1.5
    assert [r.index for r in results] == [2, 0, 1, 3]
    assert (results[0].reward, results[0].done) == (0.0, False)
    hung = results[1]
    assert (hung.stop_reason, hung.reward, hung.terminated, hung.truncated) == (ENV_TIMEOUT, 0.0, False, True)
    assert "killed and restarted" in hung.error
    assert (results[2].reward, results[2].done, results[3].reward) == (0.0, False, 1.0)
    new_pids = pool.worker_pids()
    assert new_pids[0] != pids[0] and new_pids[1] == pids[1]
    assert not alive(pids[0])

    # Env 2 was mid-episode on the killed worker: its next step reports env_lost without
    # running; env 1 on the other worker goes on with its episode and solves it.
    results = pool.step({2: oracles[2], 1: oracles[1]})
    lost = results[0]
    assert (lost.stop_reason, lost.reward, lost.truncated) == (ENV_LOST, 0.0, True)
    assert "restarted" in lost.error
    assert (results[1].reward, results[1].info["turn"]) == (1.0, 2)
    with pytest.raises(ResetNeeded):
        pool.step({2: oracles[2]})

    pool.reset(seeds=[5, 6, 7, 8])
    assert [r.reward for r in pool.step(dict(enumerate(pool.oracle_actions())))] == [1.0] * 4


def test_process_crashed_worker_is_replaced(scripted_processes):
    pool = scripted_processes
    pool.reset(seeds=[1, 2, 3, 4])
    oracles = pool.oracle_actions()
    pids = pool.worker_pids()
    results = pool.step([(1, "#exit\n"), (3, oracles[3]), (0, oracles[0])])
    crashed = results[0]
    assert crashed.stop_reason == ENV_ERROR and "died (exit code 3)" in crashed.error
    assert results[1].stop_reason == ENV_LOST  # queued behind the crash on the same worker
    assert results[2].reward == 1.0
    new_pids = pool.worker_pids()
    assert new_pids[0] == pids[0] and new_pids[1] != pids[1]
    pool.reset([1, 3], seeds=[2, 4])  # waits for the new worker to be ready
    assert [r.reward for r in pool.step(dict(zip([1, 3], pool.oracle_actions([1, 3]))))] == [1.0, 1.0]


def test_process_reset_whose_worker_dies_runs_again_on_the_new_worker(scripted_processes, tmp_path):
    """A worker killed during a reset made the whole batch's reset raise (issue 20: 1,000
    Arithmetic episodes, a SIGKILL). A reset needs no old state: it runs again on the new
    worker, and the batch's reset raises only when the reset keeps killing its worker."""
    pool = scripted_processes
    pids = pool.worker_pids()
    crash_once = {"crash": str(tmp_path / "crashed-once")}
    started = pool.reset(seeds=[1, 2, 3, 4], options=[None, crash_once, None, None])
    assert len(started) == 4 and pool.worker_pids()[1] != pids[1]  # env 1's worker died once
    assert [r.reward for r in pool.step(dict(enumerate(pool.oracle_actions())))] == [1.0] * 4
    with pytest.raises(RuntimeError, match=r"env 3's reset was started 3 times, and each time the worker process"):
        pool.reset(seeds=[1, 2, 3, 4], options=[None, None, None, {"crash": "always"}])
    pool.reset(seeds=[1, 2, 3, 4])  # the pool goes on
    assert [r.reward for r in pool.step(dict(enumerate(pool.oracle_actions())))] == [1.0] * 4


@pytest.mark.sandbox
def test_process_pool_leaves_no_processes():
    """HumanEval in worker processes: each worker starts sandbox processes of its own;
    close ends the workers and everything below them."""
    with EnvPool("rlenvs/HumanEval-v2", 2, executor="process", step_timeout_s=60) as pool:
        pool.reset(options=[{"task_index": 0}, {"task_index": 1}])
        results = pool.step(dict(enumerate(pool.oracle_actions())))
        assert [r.reward for r in results] == [1.0, 1.0]
        workers = pool.worker_pids()
        below = set().union(*(descendants(pid) for pid in workers))
        assert below, "expected sandbox processes under the workers"
    assert wait_until(lambda: not any(alive(pid) for pid in set(workers) | below), 10.0)
    assert not set(workers) & {p.pid for p in multiprocessing.active_children()}


def pool_workers() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.name.startswith("rlenvs-envpool")}


def test_process_errors_at_make_time():
    before = pool_workers()
    with pytest.raises(gym.error.Error, match="NoSuchEnv"):
        EnvPool("rlenvs/NoSuchEnv-v0", 2, executor="process", max_workers=1)
    assert pool_workers() == before
    with pytest.raises(TypeError, match="cannot be pickled.*module-level"):
        EnvPool(lambda: ScriptedArithmeticEnv(), 2, executor="process")


# --- clear errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_envs": 0}, ValueError, "num_envs must be an int >= 1"),
        ({"num_envs": 2.0}, ValueError, "num_envs must be an int >= 1"),
        ({"executor": "gpu"}, ValueError, "executor must be 'thread'.*'process'.*or 'ray'.*got 'gpu'"),
        ({"ray_actor_options": {"num_cpus": 1}}, ValueError, "ray_actor_options .* is for executor='ray'"),
        ({"max_workers": 0}, ValueError, "max_workers must be an int >= 1"),
        ({"step_timeout_s": 0}, ValueError, "step_timeout_s must be a number of seconds > 0"),
        ({"make_kwargs": [1]}, TypeError, "make_kwargs must be a dict"),
        ({"make_env": 3}, TypeError, "make_env must be an env id"),
    ],
)
def test_bad_pool_arguments(kwargs, error, match):
    arguments = {"make_env": "rlenvs/Arithmetic-v1", "num_envs": 2} | kwargs
    with pytest.raises(error, match=match):
        EnvPool(arguments.pop("make_env"), arguments.pop("num_envs"), **arguments)


def test_bad_calls_name_the_input_and_run_nothing():
    with EnvPool("rlenvs/Arithmetic-v1", 3) as pool:
        with pytest.raises(ResetNeeded, match=r"env 0 has not been reset: call reset\(\[0\], ...\)"):
            pool.step({0: "x"})
        pool.reset([0, 1], seeds=[1, 2])
        with pytest.raises(IndexError, match="there is no env 7; this pool holds 3 envs"):
            pool.step({0: "x", 7: "y"})
        with pytest.raises(TypeError, match="action for env 1 must be the model's reply as a str, got list"):
            pool.step([(0, "x"), (1, [1, 2])])
        with pytest.raises(ValueError, match="env 1 is given twice"):
            pool.step([(1, "x"), (1, "y")])
        with pytest.raises(TypeError, match=r"\(env_index, reply\) pair"):
            pool.step(["x"])
        with pytest.raises(TypeError, match="step expects"):
            pool.step("x")
        with pytest.raises(TypeError, match="env indices are ints"):
            pool.reset(["0"])
        with pytest.raises(TypeError, match=r"seeds must be a list.*\[5\] \* 2"):
            pool.reset([0, 1], seeds=5)
        with pytest.raises(ValueError, match="seeds has 1 entries for 2 indices"):
            pool.reset([0, 1], seeds=[5])
        with pytest.raises(ResetNeeded, match="env 2 has no current task"):
            pool.oracle_actions([2])
        # nothing above ran: env 0 and 1 are still on their first turn
        results = pool.step({0: pool.oracle_actions([0])[0], 1: "\\boxed{-1}"})
        assert [(r.reward, r.info["turn"]) for r in results] == [(1.0, 1), (0.0, 1)]


def test_failed_reset_raises_after_the_batch():
    with EnvPool("rlenvs/GSM8K-v1", 3, make_kwargs={"split": "test"}) as pool:
        with pytest.raises(Exception, match="task_index") as caught:
            pool.reset(options=[{"task_index": 0}, {"task_index": 10**9}, {"task_index": 2}])
        assert "env(s) 1 (error)" in "".join(getattr(caught.value, "__notes__", []))
        # the other resets ran; env 1 needs a good reset
        assert pool.step({0: pool.oracle_actions([0])[0]})[0].reward == 1.0
        with pytest.raises(ResetNeeded, match="env 1 has not been reset"):
            pool.step({1: "x"})
        pool.reset([1], options=[{"task_index": 1}])
        assert pool.step({1: pool.oracle_actions([1])[0]})[0].reward == 1.0


# --- gymnasium's own vector envs ---------------------------------------------------------------


def test_gymnasium_async_vector_env_with_its_default_shared_memory():
    """`gym.make_vec(id, n, vectorization_mode="async")` as written, so with gymnasium's default
    shared_memory=True: the observations equal the sync vector env's at reset and after every
    step (env messages, autoreset prompts, unicode), where they were a million spaces."""
    kwargs = {"level": 1, "max_turns": 2}
    envs = {
        mode: gym.make_vec("rlenvs/Arithmetic-v1", 3, vectorization_mode=mode, **kwargs) for mode in ("async", "sync")
    }
    try:
        assert envs["async"].shared_memory
        seen = {mode: [env.reset(seed=[0, 1, 2])[0]] for mode, env in envs.items()}
        assert isinstance(seen["async"][0], tuple) and all(o.startswith("What is") for o in seen["async"][0])
        for _ in range(2):  # a format reminder and two finished episodes, then the next prompts
            oracle = envs["sync"].call("oracle_action")
            replies = ("no final answer yet", *oracle[1:]) if len(seen["sync"]) == 1 else oracle
            for mode, env in envs.items():
                observations, _rewards, *_ = env.step(replies)
                seen[mode].append(observations)
        assert seen["async"] == seen["sync"]
        assert seen["async"][1][0].startswith("I could not find a final answer") and seen["async"][1][1:] == ("", "")
        assert seen["async"][2][1] != seen["async"][0][1]  # autoreset posed new tasks, not the old texts
        question = "Wie viel ist ½ + ½? 中文 😀 −"
        observations, _ = envs["async"].reset(seed=0, options={"task": {"question": question, "answer": "1"}})
        assert observations == (question,) * 3
    finally:
        for env in envs.values():
            env.close()


def test_async_shared_texts_are_a_live_view_that_copies_to_tuples():
    """With copy=False gymnasium hands out its buffer itself, as for numpy observations: it
    reads the latest step, and copying or pickling it gives a plain tuple."""
    import copy
    import pickle

    envs = gym.make_vec("rlenvs/Arithmetic-v1", 2, vectorization_mode="async", vector_kwargs={"copy": False})
    try:
        first, _ = envs.reset(seed=[0, 1])
        snapshot = copy.deepcopy(first)
        assert isinstance(snapshot, tuple) and pickle.loads(pickle.dumps(first)) == snapshot == first
        envs.step(["x", "y"])  # single-turn: both episodes end, the observations become ""
        assert first == ("", "") and snapshot != first and first[-1] == "" and first[0:1] == ("",)
    finally:
        envs.close()


def test_process_workers_die_with_a_killed_parent_even_mid_call():
    """A trainer SIGKILLed while a worker was stuck in an env's call left the worker running
    (it reads its pipe only between calls): it ends within a second of its parent now."""
    import signal
    import subprocess
    import sys

    script = (
        "from tests.vector.test_pool import ScriptedArithmeticEnv\n"
        "from rlenvs.vector import EnvPool\n"
        "pool = EnvPool(ScriptedArithmeticEnv, 2, executor='process', max_workers=2, step_timeout_s=600)\n"
        "pool.reset(seed=0)\n"
        "print('ready', flush=True)\n"
        "pool.step({0: '#hang\\n', 1: '#hang\\n'})\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2]
    )
    try:
        assert parent.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # both workers are in their hanging step now
        workers = [pid for pid in _children(parent.pid) if b"spawn_main" in _cmdline(pid)]
        assert len(workers) == 2
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 5
        while any(_cmdline(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_cmdline(pid) for pid in workers), "a worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(b")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _cmdline(pid: int) -> bytes:
    """The process's command line; empty once it is gone (or a zombie)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
