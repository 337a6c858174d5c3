"""Playing episodes and judging what they return: `_play` with a policy, the problems of a
step or of an ended episode that every check looks for, and comparing two outcomes."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from rlenvs.testing.envs.reports import _exception_summary, _refused, _shorten
from rlenvs.testing.envs.subjects import _Target

STEP_PARTS = ("observation", "reward", "terminated", "truncated")


@dataclass
class _Episode:
    """One played episode: what went in and what came out, for checks and counterexamples."""

    seed: int | None
    reset: tuple[Any, dict[str, Any]]
    actions: list[str] = field(default_factory=list)
    steps: list[tuple[Any, Any, Any, Any, Any]] = field(default_factory=list)

    @property
    def ended(self) -> bool:
        return bool(self.steps) and bool(self.steps[-1][2] or self.steps[-1][3])

    @property
    def total_reward(self) -> float:
        return float(sum(float(step[1]) for step in self.steps))

    def counterexample(self, **extra: Any) -> dict[str, Any]:
        shown: dict[str, Any] = {"seed": self.seed, "actions": self.actions}
        return {**shown, **extra}


class _EnvRaised(Exception):
    """`reset` or `step` raised; carries the episode so far for the counterexample."""

    def __init__(self, call: str, episode: _Episode, error: Exception) -> None:
        super().__init__(str(error))
        self.call = call
        self.episode = episode
        self.error = error

    def describe(self) -> str:
        return f"{self.call} raised {_exception_summary(self.error)}"


def _play(env: gym.Env, seed: int | None, policy: Callable[[gym.Env, int], str], bound: int) -> _Episode:
    """Reset with `seed` and step `policy`'s replies until the episode ends or `bound` steps
    were taken (the caller decides whether that is a failure)."""
    try:
        reset = env.reset(seed=seed)
    except Exception as error:  # the caller reports it with the seed
        _raise_if_refused(error)
        raise _EnvRaised("reset", _Episode(seed, (None, {})), error) from error
    episode = _Episode(seed, reset)
    while not episode.ended and len(episode.steps) < bound:
        action = policy(env, len(episode.steps))
        episode.actions.append(action)
        try:
            episode.steps.append(env.step(action))
        except Exception as error:  # the caller reports it with the episode
            _raise_if_refused(error)
            raise _EnvRaised("step", episode, error) from error
    return episode


def _raise_if_refused(error: Exception) -> None:
    """A server's refusal of capacity is not the env raising: the check reports it as not run."""
    refused = _refused(error)
    if refused is not None:
        raise refused from error


def _replying(reply: str) -> Callable[[gym.Env, int], str]:
    return lambda env, turn: reply


def _oracle(env: gym.Env, turn: int) -> str:
    return env.oracle_action()  # type: ignore[attr-defined]


def _step_problem(target: _Target, env: gym.Env, step: tuple[Any, Any, Any, Any, Any]) -> str | None:
    """What is wrong with one step's return value, if anything."""
    obs, reward, terminated, truncated, info = step
    if not isinstance(obs, str) or not env.observation_space.contains(obs):
        return f"step returned observation {_shorten(repr(obs), 80)}, not a member of {env.observation_space!r}"
    if isinstance(reward, bool) or not isinstance(reward, (numbers.Real, np.floating, np.integer)):
        return f"step returned reward {reward!r} of type {type(reward).__name__}: return a float"
    low, high = target.reward_bounds
    if not math.isfinite(float(reward)):
        return f"step returned a non-finite reward {reward!r}"
    if not low <= float(reward) <= high:
        return f"step returned reward {reward!r} outside the declared reward_range ({low}, {high})"
    if not isinstance(terminated, (bool, np.bool_)) or not isinstance(truncated, (bool, np.bool_)):
        return f"terminated={terminated!r} and truncated={truncated!r} must be bools"
    if terminated and truncated:
        return "step returned terminated=True and truncated=True together: set one (truncated only for a time limit)"
    if not isinstance(info, dict):
        return f"step returned info of type {type(info).__name__}, not a dict"
    return None


def _follows_chat_convention(reset_info: Mapping[str, Any]) -> bool:
    """rlenvs' chat convention (info["messages"], info["stop_reason"]) applies to envs whose
    reset info has `messages`; other text envs are held to the generic checks only."""
    return "messages" in reset_info


def _end_of_episode_problem(episode: _Episode) -> str | None:
    """Under the chat convention, a finished episode says why and sends no more messages."""
    if not _follows_chat_convention(episode.reset[1]) or not episode.ended:
        return None
    obs, _, _, _, info = episode.steps[-1]
    if not info.get("stop_reason"):
        return f"the last step's info has stop_reason={info.get('stop_reason')!r}: name why the episode ended"
    if obs != "" or info.get("messages") != []:
        return (
            f"the last step returned observation {_shorten(repr(obs), 60)} and messages "
            f"{_shorten(repr(info.get('messages')), 60)}: an ended episode returns '' and []"
        )
    return None


def _first_difference(a: Any, b: Any, names: Sequence[str] = ("observation", "info")) -> tuple[str, Any, Any] | None:
    """The first differing part of two (observation, info, ...) tuples, or None."""
    for name, left, right in zip(names, a, b):
        if isinstance(left, dict) and isinstance(right, dict):
            for key in sorted(set(left) | set(right), key=str):
                if not _same(left.get(key), right.get(key)):
                    return f"{name}[{key!r}]", left.get(key), right.get(key)
        elif not _same(left, right):
            return name, left, right
    return None


def _same(a: Any, b: Any) -> bool:
    """Value equality that handles numpy arrays and NaN inside nested data."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        both = isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
        return both and a.shape == b.shape and bool(np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:  # incomparable values are different
        return False
