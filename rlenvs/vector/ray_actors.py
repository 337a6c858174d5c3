"""The Ray runner: envs in Ray actors across the nodes of a Ray cluster (`executor="ray"`).

`max_workers` actors; env `i` lives in actor `i % max_workers`, which makes its envs when it
starts and then runs one call at a time. Ray places the actors by the options given
(`ray_actor_options`: `num_cpus`, `resources={"sandbox": 1}` for the nodes that host
sandboxes, `scheduling_strategy`, ...), so sandbox-heavy envs land on CPU nodes while the
trainer keeps its GPUs. Ray is the scheduler; this runner only keeps each actor to one call
in flight (so a batch never has more calls outstanding than there are actors: the
backpressure) and times each call from when it was sent.

Faults, as in the process runner (the other actors' envs are untouched):

- an actor that dies, or whose node dies, during a call: the call reports `env_lost` with
  Ray's error (a reset is run again by the pool, on the replacement);
- a call that overruns `step_timeout_s`: `env_timeout`, and its actor is killed;
- either way the actor is replaced at once by a fresh one (fresh envs, placed by Ray
  wherever the options allow, the dead node excluded), its queued steps report `env_lost`
  without running, and its other envs that were mid-episode report `env_lost` on their next
  step (`take_replaced`). The replacement starts in the background; calls wait for it only
  when they are its own. One that no node can host (no node has its resources free, or it
  is not up within `REPLACE_TIMEOUT_S`) is given up, and its envs move to the actors that
  are up (made fresh there on first use): a cluster that lost a node serves the next batch
  whole, on fewer actors.

Ray itself must be running: `ray.init(address=...)` before making the pool, or it starts a
local one (`ray.init()`, which also honours `RAY_ADDRESS`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym

from rlenvs.core.failures import close_quietly, short_error
from rlenvs.vector.calls import Call, Outcome, apply, discards, env_factory, failed, overran

START_TIMEOUT_S = 120.0
"""How long the pool's actors may take to be placed, start and make their envs."""
REPLACE_TIMEOUT_S = 60.0
"""How long calls wait for a replacement actor before its envs move to the actors that are up."""
ROOM_GRACE_S = 2.0
"""After this long unplaced, a replacement whose resources no node has free gives up at once
(a lost node's share of the cluster is gone until a node joins)."""
CLOSE_TIMEOUT_S = 5.0
DEFAULT_ACTOR_OPTIONS: Mapping[str, Any] = {"num_cpus": 1}


class EnvHost:
    """The body of one actor: the envs of its indices, made by `make_env`."""

    def __init__(self, make_env: Any, make_kwargs: Mapping[str, Any], indices: Sequence[int]) -> None:
        self.factory: Callable[[], gym.Env] = env_factory(make_env, make_kwargs)
        self.envs: dict[int, gym.Env | None] = {}
        for index in indices:
            self.envs[index] = self.factory()

    def where(self) -> tuple[int, str]:
        """(process id, Ray node id): answered once the envs are made."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    def call(self, op: str, index: int, args: tuple) -> Any:
        call = Call(op, index, args)  # type: ignore[arg-type]
        env = self.envs.get(index)
        if env is None:
            env = self.envs[index] = self.factory()
        try:
            return apply(env, call)
        except BaseException:
            if discards(call):
                close_quietly(env)
                self.envs[index] = None
            raise

    def close(self) -> None:
        for env in self.envs.values():
            close_quietly(env)
        self.envs.clear()


class _Actor:
    def __init__(self, slot: int, indices: list[int]) -> None:
        self.slot = slot
        self.indices = indices
        """The envs it makes when it starts (others homed on it later are made on first use)."""
        self.handle: Any = None
        self.node: str | None = None
        self.ready = False
        self.started: Any = None
        """While starting: the reference that resolves when its envs are made."""
        self.start_deadline = 0.0
        self.launched_at = 0.0


class RayRunner:
    def __init__(
        self,
        make_env: Any,
        make_kwargs: Mapping[str, Any],
        num_envs: int,
        num_actors: int,
        timeout_s: float | None,
        actor_options: Mapping[str, Any] | None,
    ) -> None:
        import ray

        if not ray.is_initialized():
            ray.init()
        options = dict(DEFAULT_ACTOR_OPTIONS if actor_options is None else actor_options)
        # This runner replaces a dead actor itself (with its own placement and bookkeeping);
        # Ray's restarts would bring back an actor whose envs' state is gone anyway.
        options.update(max_restarts=0, max_task_retries=0)
        self._remote = ray.remote(EnvHost).options(**options)
        self._demand = {"CPU": float(options.get("num_cpus", 1)), **dict(options.get("resources") or {})}
        self.make_env, self.make_kwargs = make_env, dict(make_kwargs)
        self.timeout_s = timeout_s
        self.actors = [_Actor(slot, list(range(slot, num_envs, num_actors))) for slot in range(num_actors)]
        self.home = [index % num_actors for index in range(num_envs)]
        """The slot of the actor each env lives on."""
        self.replaced: set[int] = set()
        """Envs whose actor was replaced since the pool last asked (their episodes are gone)."""
        try:
            for actor in self.actors:
                self._launch(actor, START_TIMEOUT_S)
            for actor in self.actors:
                ray.wait([actor.started], timeout=max(0.0, actor.start_deadline - time.monotonic()))
                failure = self._poll_start(actor, room_check=False)
                if failure is not None:
                    raise failure
        except BaseException:
            self.close()
            raise

    def nodes(self) -> list[str | None]:
        """The Ray node id of the actor each env lives on (None while it has none)."""
        return [self.actors[slot].node for slot in self.home]

    def take_replaced(self) -> set[int]:
        replaced, self.replaced = self.replaced, set()
        return replaced

    # --- actors --------------------------------------------------------------------------------

    def _launch(self, actor: _Actor, timeout_s: float) -> None:
        actor.handle = self._remote.remote(self.make_env, self.make_kwargs, actor.indices)
        actor.started = actor.handle.where.remote()
        actor.ready, actor.node = False, None
        actor.launched_at = time.monotonic()
        actor.start_deadline = actor.launched_at + timeout_s

    def _poll_start(self, actor: _Actor, *, room_check: bool = True) -> BaseException | None:
        """Whether a starting actor is up: None while it starts or once it is ready (then
        `actor.ready`), else why it will not start (it is then killed)."""
        import ray

        if ray.wait([actor.started], timeout=0)[0]:
            try:
                _, actor.node = ray.get(actor.started)
            except Exception as exc:
                return self._start_failure(actor, _cause(exc))
            actor.ready, actor.started = True, None
            return None
        now = time.monotonic()
        if now > actor.start_deadline:
            return self._start_failure(
                actor, TimeoutError(f"no Ray node hosted it within {actor.start_deadline - actor.launched_at:g} s")
            )
        if room_check and now - actor.launched_at > ROOM_GRACE_S and not self._room():
            return self._start_failure(
                actor, RuntimeError(f"no Ray node has the resources it asks for ({self._demand}) free")
            )
        return None

    def _room(self) -> bool:
        import ray

        free = ray.available_resources()
        return all(free.get(name, 0.0) >= amount for name, amount in self._demand.items() if amount)

    def _start_failure(self, actor: _Actor, cause: BaseException) -> BaseException:
        self._kill(actor)
        error = RuntimeError(f"the Ray actor for envs {actor.indices} did not start: {short_error(cause)}")
        error.__cause__ = cause
        return error

    def _kill(self, actor: _Actor) -> None:
        import ray

        if actor.handle is not None:
            with contextlib.suppress(Exception):  # it may be dead already
                ray.kill(actor.handle, no_restart=True)
        actor.handle, actor.node, actor.ready, actor.started = None, None, False, None

    # --- a batch -------------------------------------------------------------------------------

    def run(self, calls: Sequence[Call]) -> list[Outcome]:
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        outcomes: list[Outcome | None] = [None] * len(calls)
        queues: dict[int, deque[int]] = {actor.slot: deque() for actor in self.actors}
        for position, call in enumerate(calls):
            queues[self.home[call.index]].append(position)
        busy: dict[Any, tuple[_Actor, int, float]] = {}  # ref -> (actor, position of its call, deadline)

        def replace(actor: _Actor, why: str) -> None:
            """Replace an actor that died or overran: see the module docstring."""
            self._kill(actor)
            self.replaced.update(index for index, slot in enumerate(self.home) if slot == actor.slot)
            queue = queues[actor.slot]
            for position in list(queue):
                if calls[position].op != "reset":  # a reset needs no old state: it runs on the new actor
                    queue.remove(position)
                    outcomes[position] = Outcome("lost", why)
            self._launch(actor, REPLACE_TIMEOUT_S)

        def rehome(actor: _Actor, failure: BaseException) -> None:
            """Move the envs of an actor that cannot start to the actors that are up."""
            live = [other for other in self.actors if other.ready and other is not actor]
            queue = queues[actor.slot]
            if not live:
                for position in queue:
                    outcomes[position] = Outcome("error", failure)
                queue.clear()
                return
            for k, index in enumerate([i for i, slot in enumerate(self.home) if slot == actor.slot]):
                self.home[index] = live[k % len(live)].slot
            while queue:
                position = queue.popleft()
                queues[self.home[calls[position].index]].append(position)

        try:
            while True:
                for actor in self.actors:
                    queue = queues[actor.slot]
                    if not queue or any(owner is actor for owner, _, _ in busy.values()):
                        continue
                    if actor.handle is None:  # its last start failed: try again now that it is needed
                        self._launch(actor, REPLACE_TIMEOUT_S)
                    if not actor.ready:
                        failure = self._poll_start(actor)
                        if failure is not None:
                            rehome(actor, failure)
                        continue
                    position = queue.popleft()
                    call = calls[position]
                    deadline = time.monotonic() + self.timeout_s if self.timeout_s is not None else float("inf")
                    busy[actor.handle.call.remote(call.op, call.index, call.args)] = (actor, position, deadline)
                starting = [a for a in self.actors if queues[a.slot] and not a.ready and a.started is not None]
                if not busy and not starting:
                    if any(queues.values()):
                        continue  # calls moved to another actor's queue: dispatch them
                    break
                deadlines = [deadline for _, _, deadline in busy.values()]
                deadlines += [min(a.start_deadline, a.launched_at + ROOM_GRACE_S) for a in starting]
                wait = max(0.0, min(deadlines) - time.monotonic()) if min(deadlines) != float("inf") else None
                if starting:  # poll the room check now and then while an actor waits to be placed
                    wait = ROOM_GRACE_S if wait is None else min(wait, ROOM_GRACE_S)
                ready, _ = ray.wait(list(busy) + [a.started for a in starting], num_returns=1, timeout=wait)
                for ref in ready:
                    if ref not in busy:
                        continue  # an actor is up: the next pass sends it its calls
                    actor, position, _ = busy.pop(ref)
                    call = calls[position]
                    try:
                        outcomes[position] = Outcome("ok", ray.get(ref))
                        if call.op == "reset":
                            self.replaced.discard(call.index)  # a new episode on the new env
                    except RayTaskError as exc:  # the env raised inside its actor
                        outcomes[position] = failed(_cause(exc))
                    except RayActorError as exc:  # the actor or its node died
                        why = (
                            f"the Ray actor hosting env {call.index} died during its {call.op} "
                            f"({short_error(exc).splitlines()[0]}); it was replaced with fresh envs"
                        )
                        outcomes[position] = Outcome("lost", why)
                        replace(actor, why)
                now = time.monotonic()
                for ref, (actor, position, deadline) in list(busy.items()):
                    if deadline <= now:
                        assert self.timeout_s is not None  # without a timeout every deadline is inf
                        del busy[ref]
                        call = calls[position]
                        outcomes[position] = overran(
                            call, self.timeout_s, "its Ray actor was killed and replaced with fresh envs"
                        )
                        replace(
                            actor,
                            f"env {call.index}'s {call.op} overran step_timeout_s={self.timeout_s:g} s on the same "
                            "Ray actor, which was killed and replaced with fresh envs",
                        )
        finally:
            # Interrupted (KeyboardInterrupt): a busy actor's envs are in no known state.
            for actor, _, _ in busy.values():
                self._kill(actor)
                self.replaced.update(index for index, slot in enumerate(self.home) if slot == actor.slot)
        return outcomes  # type: ignore[return-value]

    def close(self) -> None:
        import ray

        closing = [actor.handle.close.remote() for actor in self.actors if actor.ready]
        if closing:
            with contextlib.suppress(Exception):
                ray.wait(closing, num_returns=len(closing), timeout=CLOSE_TIMEOUT_S)
        for actor in self.actors:
            self._kill(actor)


def _cause(exc: BaseException) -> BaseException:
    """The env's own exception inside Ray's RayTaskError (Ray keeps it as `cause`)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc
