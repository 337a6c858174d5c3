"""How the machinery around an env fails, in the words every layer shares: the pool
(rlenvs.vector), a served env's client and server (rlenvs.remote), Ray actors. Kept in core so
that none of them imports another for an exception type or a one-line message."""

from __future__ import annotations

import contextlib

import gymnasium as gym


class EnvLostError(ConnectionError):
    """Raised by an env whose host went away mid-call (a served env's server or connection, a
    Ray actor or node): `EnvPool` reports `env_lost` for a step and runs a reset again."""


class EnvTimeoutError(TimeoutError):
    """Raised by an env whose host gave up on a call that overran (a served env's per-step
    limit): `EnvPool` reports `env_timeout`, as for its own `step_timeout_s`."""


def short_error(exc: BaseException) -> str:
    """`Type: message` (or the type alone), the one line a failed call is reported by."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def close_quietly(env: gym.Env | None) -> None:
    """Close an env being thrown away; a failure to close must not hide why it is thrown away."""
    if env is None:
        return
    with contextlib.suppress(Exception):  # the env is discarded either way
        env.close()
