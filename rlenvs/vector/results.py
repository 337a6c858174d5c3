"""What `EnvPool` hands back: one result per submitted env, in submission order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ENV_ERROR = "env_error"
"""stop_reason of an episode whose step raised: the env is discarded and remade on reset."""
ENV_TIMEOUT = "env_timeout"
"""stop_reason of an episode whose step overran `step_timeout_s`."""
ENV_LOST = "env_lost"
"""stop_reason of an episode whose worker process was restarted (another env on it overran
or crashed) while the episode was still going: its state went with the old process."""
ENV_FAILURES = (ENV_TIMEOUT, ENV_LOST, ENV_ERROR)
"""The stop_reasons of episodes the env machinery failed to play: their reward 0 is no verdict
on the replies (training leaves them out of the loss, evaluation counts them apart)."""


@dataclass(frozen=True, slots=True)
class ResetResult:
    index: int
    observation: str
    info: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StepResult:
    """One env's step. `error` is None for a step the env itself made; otherwise a short
    message, and `info["stop_reason"]` is `env_error`, `env_timeout` or `env_lost`."""

    index: int
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    error: str | None = None

    @property
    def done(self) -> bool:
        """The episode is over: reset this env before stepping it again."""
        return self.terminated or self.truncated

    @property
    def stop_reason(self) -> str | None:
        return self.info.get("stop_reason")


def failed_step(index: int, stop_reason: str, error: str) -> StepResult:
    """The result of a step the env could not make: reward 0 and the episode over.

    An env that raised ends in a terminal state (`terminated`, as the issue asks: it cannot
    go on); a step cut off by the clock or by a lost worker is `truncated`, like any time limit.
    """
    info = {"stop_reason": stop_reason, "messages": [], "error": error}
    return StepResult(
        index=index,
        observation="",
        reward=0.0,
        terminated=stop_reason == ENV_ERROR,
        truncated=stop_reason != ENV_ERROR,
        info=info,
        error=error,
    )
