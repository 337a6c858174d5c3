"""`EnvPool`: reset and step many text envs at once, in submission order.

The pool keeps every env's episode phase itself, so a batch is checked before any env is
touched (an unknown index, an env not reset, a reply that is not a str: nothing runs), and
so a failure in one env ends only that env's episode:

| what happened in the step | result | the env afterwards |
|---|---|---|
| the env stepped | its own (obs, reward, terminated, truncated, info) | as the env says |
| it raised | reward 0, terminated, stop_reason "env_error", `error` = the exception | discarded; reset makes a fresh one |
| it overran `step_timeout_s` | reward 0, truncated, stop_reason "env_timeout" | discarded (threads) or its worker restarted (processes) |
| its worker process was replaced | reward 0, truncated, stop_reason "env_lost" | fresh, in the new worker |

Resets and `oracle_actions` that fail raise instead (after the whole batch has run): a
failed reset leaves no prompt to generate from, so there is nothing to put in a result. A
reset whose worker process died, or whose env server went away, is first run again (on the
new worker, on a new session: `calls.RESET_ATTEMPTS` starts in all): a batch's reset raises
only for a reset that keeps losing its host.

`make_env` may also be a served env's address (`rlenvs serve`, `http://host:port`): each env
is then a `RemoteEnv` session on that server, on threads (they only wait on the network).
"""

from __future__ import annotations

import copy
import os
import pickle
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self

import gymnasium as gym
from gymnasium.error import ResetNeeded

from rlenvs.core.checks import check_seconds, is_int
from rlenvs.core.failures import EnvLostError, short_error
from rlenvs.vector.calls import RESET_ATTEMPTS, Call, Outcome, env_factory, is_server_url
from rlenvs.vector.processes import ProcessRunner
from rlenvs.vector.results import (
    ENV_ERROR,
    ENV_LOST,
    ENV_TIMEOUT,
    ResetResult,
    StepResult,
    failed_step,
)
from rlenvs.vector.threads import ThreadRunner

if TYPE_CHECKING:
    from rlenvs.vector.ray_actors import RayRunner

EXECUTORS = ("thread", "process", "ray")
MAX_DEFAULT_THREADS = 32

_NEW, _ACTIVE, _OVER, _LOST = "new", "active", "over", "lost"
"""Episode phases: never reset (or its reset failed); going on; ended (see `_stop_reason`);
its worker was replaced mid-episode (its next step reports env_lost)."""


class EnvPool:
    """`num_envs` envs made by `make_env`, stepped concurrently.

    `make_env`: an env id (`gym.make(make_env, **make_kwargs)`) or a zero-argument callable
    returning an env (called with `**make_kwargs`). In process mode it is pickled to the
    workers: an id must be registered by `import rlenvs` or written `"module:Id"`, and a
    callable must be importable by name (a module-level function or class, or a
    `functools.partial` of one; not a lambda). Or a served env's address
    (`"http://host:8000"`): env `i` is then `RemoteEnv(url, **make_kwargs)`, a session of
    its own on that server, and thread mode defaults to one thread per env.

    `executor="thread"` (default): the envs live in this process and each call runs on its
    own thread, at most `max_workers` at once (default `min(num_envs, 32)`): for steps that
    wait on the sandbox or the network. The sandbox has its own, smaller pool of workers,
    shared fairly between the envs' episodes (`rlenvs.sandbox.execution.slots`).
    `executor="process"`: env `i` lives in worker process `i % max_workers` (default
    `min(num_envs, os.cpu_count())`): for CPU-bound steps. See `rlenvs.vector.threads` and
    `rlenvs.vector.processes` for how each mode bounds and recovers from a stuck env.

    `executor="ray"`: env `i` lives in Ray actor `i % max_workers` (default: `num_envs`
    actors, or as many as the cluster has CPUs if fewer), placed by `ray_actor_options`
    (default `{"num_cpus": 1}`; e.g. `{"num_cpus": 1, "resources": {"sandbox": 1}}`) on the
    nodes of the Ray cluster this process is connected to (`ray.init(address=...)` first;
    else a local one is started). See `rlenvs.vector.ray_actors`.

    `step_timeout_s`: the longest any one call (step, reset, oracle_action) may work, timed
    from when it starts, not from when the batch was submitted, and (on threads) less the
    time it waits for a shared worker such as a sandbox slot (`rlenvs.core.clock`): that
    queue is other envs' doing. A call past it is cancelled, which also stops its sandbox
    run. None waits for ever. (A process or Ray worker runs one call at a time, so its own
    sandbox pool has no queue.)

    Calls from several threads: on threads (`executor="thread"`, served envs included) calls
    on different envs run at once (the rollout engine's continuous schedule steps each episode
    as its turn ends), all of them within `max_workers`; a call on an env that has one running
    raises. Process and Ray pools run one call at a time (a lock).
    """

    def __init__(
        self,
        make_env: str | Callable[..., gym.Env],
        num_envs: int,
        *,
        make_kwargs: Mapping[str, Any] | None = None,
        executor: Literal["thread", "process", "ray"] = "thread",
        max_workers: int | None = None,
        step_timeout_s: float | None = None,
        ray_actor_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(make_env, str) and not callable(make_env):
            raise TypeError(
                f"make_env must be an env id (e.g. 'rlenvs/GSM8K-v1') or a callable that returns an env, "
                f"got {type(make_env).__name__} {make_env!r}"
            )
        if not is_int(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1 (how many envs the pool holds), got {num_envs!r}")
        if make_kwargs is None:
            make_kwargs = {}
        if not isinstance(make_kwargs, Mapping) or not all(isinstance(key, str) for key in make_kwargs):
            raise TypeError(f"make_kwargs must be a dict of keyword arguments for make_env, got {make_kwargs!r}")
        if executor not in EXECUTORS:
            raise ValueError(
                f"executor must be 'thread' (steps that wait on a sandbox or the network), 'process' "
                f"(CPU-bound steps) or 'ray' (envs in Ray actors across a cluster), got {executor!r}"
            )
        if ray_actor_options is not None and (executor != "ray" or not isinstance(ray_actor_options, Mapping)):
            raise ValueError(
                f"ray_actor_options (a dict of Ray actor options, e.g. {{'num_cpus': 1}}) is for executor='ray'; "
                f"got {ray_actor_options!r} with executor={executor!r}"
            )
        if max_workers is None:
            if is_server_url(make_env) and executor == "thread":
                cap = num_envs  # a session's calls only wait on the server
            elif executor == "ray":
                cap = _ray_cpus()
            else:
                cap = MAX_DEFAULT_THREADS if executor == "thread" else (os.cpu_count() or 1)
            max_workers = min(num_envs, cap)
        elif not is_int(max_workers) or max_workers < 1:
            raise ValueError(
                f"max_workers must be an int >= 1 or None (a default for the executor), got {max_workers!r}"
            )
        check_seconds("step_timeout_s", step_timeout_s)

        self.num_envs = int(num_envs)
        self.executor = executor
        self.max_workers = int(min(max_workers, num_envs) if executor != "thread" else max_workers)
        self.step_timeout_s = None if step_timeout_s is None else float(step_timeout_s)
        self._lock = threading.Lock()
        self._calls_done = threading.Condition(self._lock)
        """Notified when a batch ends (close waits for those running)."""
        self._in_flight: set[int] = set()
        """Envs with a call running (see `_run`)."""
        self._closed = False
        self._phase = [_NEW] * self.num_envs
        self._stop_reason: list[str | None] = [None] * self.num_envs
        self._runner: ThreadRunner | ProcessRunner | RayRunner
        if executor == "ray":
            from rlenvs.vector.ray_actors import RayRunner

            self._runner = RayRunner(
                make_env, make_kwargs, self.num_envs, self.max_workers, self.step_timeout_s, ray_actor_options
            )
        elif executor == "thread":
            self._runner = ThreadRunner(
                env_factory(make_env, dict(make_kwargs)), self.num_envs, self.max_workers, self.step_timeout_s
            )
        else:
            try:
                pickle.dumps((make_env, dict(make_kwargs)))
            except Exception as exc:
                raise TypeError(
                    f"executor='process' sends make_env and make_kwargs to worker processes, but they cannot be "
                    f"pickled ({short_error(exc)}): pass an env id, or a module-level function or class "
                    f"(not a lambda or a local function)"
                ) from exc
            self._runner = ProcessRunner(make_env, make_kwargs, self.num_envs, self.max_workers, self.step_timeout_s)

    # --- the batch API ------------------------------------------------------------------------

    def reset(
        self,
        indices: Iterable[int] | None = None,
        *,
        seeds: Sequence[int | None] | None = None,
        seed: int | Sequence[int | None] | None = None,
        options: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[ResetResult]:
        """Start a new episode in each env of `indices` (default: all), in that order.

        `seeds`: one per index (or None). `seed`: gymnasium's spelling, as in
        `VectorEnv.reset(seed=...)`: a list is `seeds`, an int `s` seeds the k-th index with
        `s + k` (so `pool.reset(seed=0)` reads as in a gymnasium loop); give one of the two.
        `options`: one dict for all (each env gets its own copy), or one per index; e.g.
        `{"task_index": 7}` for a GRPO group of one task. Raises, once every reset has run,
        if any failed: the first error, noting which envs.
        """
        with self._lock:
            self._check_open()
            indices = self._indices(indices, "reset")
            self._check_free(indices, "reset")
            if seed is not None:
                if seeds is not None:
                    raise TypeError(
                        "reset got both seeds= and seed=: pass one (seed= is gymnasium's spelling of seeds=)"
                    )
                if isinstance(seed, bool) or not isinstance(seed, (int, Sequence)) or isinstance(seed, (str, bytes)):
                    raise TypeError(
                        f"seed must be an int, a list of one seed (or None) per index, or None; got {seed!r}"
                    )
                seeds = [seed + k for k in range(len(indices))] if isinstance(seed, int) else seed
            seeds = self._per_index(seeds, indices, "seeds")
            for index, seed in zip(indices, seeds):
                if seed is not None and not is_int(seed):
                    raise TypeError(f"seeds[{indices.index(index)}] (env {index}) must be an int or None, got {seed!r}")
            if options is None or isinstance(options, Mapping):
                options = [options] * len(indices)
            options = self._per_index(options, indices, "options")
            for index, option in zip(indices, options):
                if option is not None and not isinstance(option, Mapping):
                    raise TypeError(f"options for env {index} must be a dict or None, got {type(option).__name__}")
            calls = [
                Call(
                    "reset",
                    index,
                    (None if seed is None else int(seed), None if option is None else copy.deepcopy(dict(option))),
                )
                for index, seed, option in zip(indices, seeds, options)
            ]
            outcomes = self._run(calls)
            for _ in range(RESET_ATTEMPTS - 1):  # a reset whose host went away runs again (module docstring)
                again = [position for position, outcome in enumerate(outcomes) if outcome.status == "lost"]
                if not again:
                    break
                for position, outcome in zip(again, self._run([calls[position] for position in again])):
                    outcomes[position] = outcome
            results, failures = [], []
            for call, outcome in zip(calls, outcomes):
                if outcome.status == "ok":
                    observation, info = outcome.value
                    self._phase[call.index], self._stop_reason[call.index] = _ACTIVE, None
                    results.append(ResetResult(call.index, observation, info))
                else:
                    self._phase[call.index], self._stop_reason[call.index] = _NEW, None
                    failures.append((call, outcome))
            self._mark_lost()
            if failures:
                raise _batch_error("reset", failures)
            return results

    def step(self, actions: Mapping[int, str] | Sequence[tuple[int, str]]) -> list[StepResult]:
        """Step each env with its reply; one `StepResult` per pair, in submission order.

        `actions`: `{index: reply}` or `[(index, reply), ...]`. Every env must be mid-episode
        (reset, not yet done). A step that raises, overruns `step_timeout_s` or loses its
        worker ends only that env's episode (see the module docstring); the batch completes.
        """
        with self._lock:
            self._check_open()
            pairs = self._pairs(actions)
            self._check_free([index for index, _ in pairs], "step")
            results: dict[int, StepResult] = {}
            calls = []
            for index, action in pairs:
                if self._phase[index] == _LOST:
                    results[index] = failed_step(
                        index, ENV_LOST, f"env {index}'s worker process was restarted mid-episode; reset it"
                    )
                    self._end(index, ENV_LOST)
                else:
                    calls.append(Call("step", index, (action,)))
            for call, outcome in zip(calls, self._run(calls)):
                results[call.index] = self._step_result(call.index, outcome)
            self._mark_lost()
            return [results[index] for index, _ in pairs]

    def oracle_actions(self, indices: Iterable[int] | None = None) -> list[str]:
        """Each env's `oracle_action()` (a gold reply for its current state), in order of
        `indices` (default: all). For self-checks and tests; raises if any env has none."""
        with self._lock:
            self._check_open()
            indices = self._indices(indices, "oracle_actions")
            self._check_free(indices, "oracle_actions")
            for index in indices:
                failed = self._stop_reason[index] in (ENV_ERROR, ENV_TIMEOUT, ENV_LOST)  # the env was discarded
                if self._phase[index] in (_NEW, _LOST) or failed:
                    raise ResetNeeded(
                        f"oracle_actions: env {index} has no current task (phase {self._phase[index]!r}, "
                        f"stop_reason={self._stop_reason[index]!r}): reset it first"
                    )
            calls = [Call("oracle", index) for index in indices]
            outcomes = self._run(calls)
            self._mark_lost()
            failures = [(call, outcome) for call, outcome in zip(calls, outcomes) if outcome.status != "ok"]
            if failures:
                raise _batch_error("oracle_action", failures)
            return [outcome.value for outcome in outcomes]

    def close(self) -> None:
        """Close every env and stop every worker thread or process. Idempotent.

        Waits for the calls other threads have running. Thread mode: a call abandoned after a
        timeout cannot be stopped; its thread ends (and closes its env) when the call returns."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._calls_done.wait_for(lambda: not self._in_flight)
            self._runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self._phase.count(_ACTIVE)} active"
        return (
            f"EnvPool(num_envs={self.num_envs}, executor={self.executor!r}, max_workers={self.max_workers}, "
            f"step_timeout_s={self.step_timeout_s}, {state})"
        )

    @property
    def concurrent_calls(self) -> bool:
        """Whether calls from several threads on different envs run at once (thread mode)."""
        return isinstance(self._runner, ThreadRunner)

    def actor_nodes(self) -> list[str | None]:
        """Ray mode: the Ray node id of each actor (changes when an actor is replaced)."""
        from rlenvs.vector.ray_actors import RayRunner

        if not isinstance(self._runner, RayRunner):
            raise RuntimeError(f"actor_nodes() is for executor='ray'; this pool's executor is {self.executor!r}")
        return self._runner.nodes()

    def worker_pids(self) -> list[int | None]:
        """Process mode: each worker's process id (changes when a worker is replaced)."""
        if not isinstance(self._runner, ProcessRunner):
            raise RuntimeError("worker_pids() is for executor='process'; this pool runs envs on threads")
        return self._runner.pids()

    # --- internals ----------------------------------------------------------------------------

    def _check_free(self, indices: list[int], what: str) -> None:
        running = sorted(set(indices) & self._in_flight)
        if running:
            raise RuntimeError(
                f"{what}: env(s) {running} have a call running (from another thread): an env takes one call at "
                "a time; wait for it to return"
            )

    def _run(self, calls: list[Call]) -> list[Outcome]:
        """Run a batch; the caller (holding the pool's lock) then sets the phases of its envs
        from the outcomes. On threads the lock is let go while the calls run, so that other
        threads' calls on other envs run too (`_check_free` keeps them apart); the process
        and Ray runners take one batch at a time, under the lock."""
        if not calls:
            return []
        indices = [call.index for call in calls]
        self._in_flight.update(indices)
        let_go = self.concurrent_calls
        try:
            if let_go:
                self._lock.release()
            try:
                return self._runner.run(calls)
            finally:
                if let_go:
                    self._lock.acquire()
        except BaseException:  # interrupted (KeyboardInterrupt): no env of the batch is in a known state
            for call in calls:
                if self._phase[call.index] == _ACTIVE:
                    self._phase[call.index] = _LOST
            self._mark_lost()
            raise
        finally:
            self._in_flight.difference_update(indices)
            self._calls_done.notify_all()

    def _mark_lost(self) -> None:
        """After a batch's phases are set: envs whose worker was replaced mid-episode are lost."""
        if not isinstance(self._runner, ThreadRunner):
            for index in self._runner.take_replaced():
                if self._phase[index] == _ACTIVE:
                    self._phase[index] = _LOST

    def _step_result(self, index: int, outcome: Outcome) -> StepResult:
        if outcome.status == "ok":
            observation, reward, terminated, truncated, info = outcome.value
            result = StepResult(index, observation, float(reward), bool(terminated), bool(truncated), info)
            if result.done:
                self._end(index, info.get("stop_reason") if isinstance(info, dict) else None)
            else:
                self._phase[index] = _ACTIVE
            return result
        if outcome.status == "error":
            result = failed_step(index, ENV_ERROR, short_error(outcome.value))
        elif outcome.status == "timeout":
            result = failed_step(index, ENV_TIMEOUT, outcome.value)
        else:
            result = failed_step(index, ENV_LOST, outcome.value)
        self._end(index, result.stop_reason)
        return result

    def _end(self, index: int, stop_reason: str | None) -> None:
        self._phase[index], self._stop_reason[index] = _OVER, stop_reason

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this EnvPool is closed: make a new one")

    def _index(self, index: Any, what: str) -> int:
        if not is_int(index):
            raise TypeError(
                f"{what}: env indices are ints in 0..{self.num_envs - 1}, got {type(index).__name__} {index!r}"
            )
        if not 0 <= index < self.num_envs:
            raise IndexError(
                f"{what}: there is no env {index}; this pool holds {self.num_envs} envs (indices 0..{self.num_envs - 1})"
            )
        return int(index)

    def _indices(self, indices: Iterable[int] | None, what: str) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (str, bytes)) or not isinstance(indices, Iterable):
            raise TypeError(f"{what}: indices must be a list of env indices (or None for all), got {indices!r}")
        indices = [self._index(index, what) for index in indices]
        _no_repeats(indices, what)
        return indices

    @staticmethod
    def _per_index(values: Any, indices: list[int], name: str) -> list[Any]:
        if values is None:
            return [None] * len(indices)
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
            raise TypeError(
                f"{name} must be a list with one entry per index ({len(indices)}), got {type(values).__name__} "
                f"{values!r}"
                + (f": for one seed everywhere pass [{values!r}] * {len(indices)}" if name == "seeds" else "")
            )
        if len(values) != len(indices):
            raise ValueError(f"{name} has {len(values)} entries for {len(indices)} indices: give one per index")
        return list(values)

    def _pairs(self, actions: Any) -> list[tuple[int, str]]:
        if isinstance(actions, Mapping):
            items = list(actions.items())
        elif isinstance(actions, (str, bytes)) or not isinstance(actions, Iterable):
            raise TypeError(
                f"step expects {{env_index: reply}} or [(env_index, reply), ...], got {type(actions).__name__}"
            )
        else:
            items = list(actions)
            for item in items:
                if not (isinstance(item, (tuple, list)) and len(item) == 2):
                    raise TypeError(f"step: each entry must be an (env_index, reply) pair, got {item!r}")
        pairs = []
        for index, action in items:
            index = self._index(index, "step")
            if not isinstance(action, str):
                raise TypeError(
                    f"step: the action for env {index} must be the model's reply as a str, got "
                    f"{type(action).__name__}: decode token ids to text first"
                )
            phase = self._phase[index]
            if phase == _NEW:
                raise ResetNeeded(
                    f"step: env {index} has not been reset: call reset([{index}], ...) before stepping it"
                )
            if phase == _OVER:
                raise ResetNeeded(
                    f"step: env {index}'s episode is over (stop_reason={self._stop_reason[index]!r}): "
                    f"reset it before stepping it again"
                )
            pairs.append((index, action))
        _no_repeats([index for index, _ in pairs], "step")
        return pairs


def _ray_cpus() -> int:
    """The CPUs of the Ray cluster this process is connected to (one is started if none is)."""
    import ray

    if not ray.is_initialized():
        ray.init()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _no_repeats(indices: list[int], what: str) -> None:
    seen: set[int] = set()
    for index in indices:
        if index in seen:
            raise ValueError(f"{what}: env {index} is given twice in one batch; each env takes one call per batch")
        seen.add(index)


def _batch_error(what: str, failures: list[tuple[Call, Outcome]]) -> BaseException:
    """The first failure of a batch, as raised, with a note naming every env that failed."""
    _, outcome = failures[0]
    if outcome.status == "error":
        error = outcome.value
    elif outcome.status == "timeout":
        error = TimeoutError(outcome.value)
    else:  # lost: its worker process or env server went away each time it was started
        error = EnvLostError(outcome.value)
    envs = ", ".join(f"{c.index} ({o.status})" for c, o in failures)
    error.add_note(f"EnvPool {what} failed for env(s) {envs}; the other envs of the batch were done")
    return error
