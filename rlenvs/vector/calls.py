"""One env call as the two runners see it, and what became of it.

The pool turns `reset`/`step`/`oracle_actions` into `Call`s; a runner (threads or
processes) carries each out on the env it hosts and reports an `Outcome` in the same
position. Both runners share `apply` (what a call does to an env) and `discards` (which
failures cost the env object), so the two modes behave the same.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

import gymnasium as gym

from rlenvs.core.failures import EnvLostError, EnvTimeoutError

Op = Literal["reset", "step", "oracle"]
RESET_ATTEMPTS = 3
"""How many times a reset is started before losing its worker or host fails it: a reset needs
no old state, and given its seed and task makes the same episode, so it is run again."""
Status = Literal["ok", "error", "timeout", "lost"]


@dataclass(frozen=True, slots=True)
class Call:
    op: Op
    index: int
    args: tuple = ()
    """reset: (seed, options); step: (action,); oracle: ()."""


@dataclass(frozen=True, slots=True)
class Outcome:
    status: Status
    value: Any = None
    """ok: what the env returned; error: the exception; timeout and lost: why, as text."""


def apply(env: gym.Env, call: Call) -> Any:
    if call.op == "reset":
        seed, options = call.args
        return env.reset(seed=seed, options=options)
    if call.op == "step":
        return env.step(call.args[0])
    if call.op == "oracle":
        # gymnasium 1.x wrappers do not forward attributes; get_wrapper_attr looks through them.
        return env.get_wrapper_attr("oracle_action")()
    raise ValueError(f"unknown env call {call.op!r}")


def discards(call: Call) -> bool:
    """Whether an env whose call raised is thrown away (a fresh one is made on its next reset).

    A step or reset that raised may have left the env half-updated, so it is not trusted again;
    `oracle_action` only reads the env, so its failure leaves the episode as it was.
    """
    return call.op != "oracle"


def failed(exc: BaseException) -> Outcome:
    """The outcome of a call that raised: an env whose host went away or gave up on the call
    (a served env's `EnvLostError`, `EnvTimeoutError`) is lost or timed out, like a worker
    process the pool itself lost or timed out; anything else is the env's own error."""
    if isinstance(exc, EnvLostError):  # the status names the kind: its message alone, once
        return Outcome("lost", str(exc) or type(exc).__name__)
    if isinstance(exc, EnvTimeoutError):
        return Outcome("timeout", str(exc) or type(exc).__name__)
    return Outcome("error", exc)


def overran(call: Call, timeout_s: float, consequence: str) -> Outcome:
    """The outcome of a call past `step_timeout_s`, and what became of its env (each runner's own)."""
    return Outcome(
        "timeout", f"env {call.index}'s {call.op} did not return within step_timeout_s={timeout_s:g} s; {consequence}"
    )


SERVER_SCHEMES = ("http://", "https://", "ws://", "wss://")


def is_server_url(make_env: object) -> TypeGuard[str]:
    """Whether `make_env` names an env server (`rlenvs serve`) rather than an env id."""
    return isinstance(make_env, str) and make_env.startswith(SERVER_SCHEMES)


def env_factory(make_env: str | Callable[..., gym.Env], make_kwargs: Mapping[str, Any]) -> Callable[[], gym.Env]:
    """A zero-argument maker: `RemoteEnv(url, **kwargs)` for a server's address (one session
    each), `gym.make(id, **kwargs)` for an id, else `make_env(**kwargs)`."""
    if is_server_url(make_env):
        from rlenvs.remote.client import RemoteEnv

        return functools.partial(RemoteEnv, make_env, **make_kwargs)
    if isinstance(make_env, str):
        return functools.partial(gym.make, make_env, **make_kwargs)
    return functools.partial(make_env, **make_kwargs)
