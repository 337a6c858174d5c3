"""The env under test: an id, a factory or an instance resolved into a `_Target`, which
makes fresh envs for each check and knows what the first one told us about the env."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from rlenvs.core.registration import check_env_id
from rlenvs.testing.envs.reports import _exception_summary, _Failed, _Skipped

EPISODE_STEP_CAP = 100
"""The steps an episode must end within when the env has no `max_turns` and the caller
gives no `max_episode_steps`: far above any text task's turns, low enough to stay fast."""


@dataclass(frozen=True)
class _Settings:
    seeds: tuple[int, ...]
    garbage_examples: int
    max_turns_to_try: tuple[int, ...]
    max_episode_steps: int | None


@dataclass
class _Target:
    """How checks get fresh envs, and what the first one told us about the env."""

    label: str
    env_id: str | None
    make_kwargs: dict[str, Any]
    factory: Callable[[], gym.Env] | None
    settings: _Settings
    copies_an_instance: bool = False
    """Fresh envs are deep copies of the caller's instance, which may have been reset."""
    sample: gym.Env = field(init=False)
    made: list[gym.Env] = field(init=False, default_factory=list)
    """Every env made (or copied, `adopt`) since the last `close_made`: the check closes them."""

    def make(self, **overrides: Any) -> gym.Env:
        """A fresh, unwrapped env; `overrides` are constructor arguments, so they need an id."""
        if self.env_id is not None:
            made = gym.make(self.env_id, **{**self.make_kwargs, **overrides})
            self.made.append(made)  # the whole wrapper chain: its close reaches the env's
            return made.unwrapped
        if overrides:
            raise _Skipped(f"needs the env made with {overrides}: pass an id instead of {self.label} to check it")
        assert self.factory is not None
        env = self.factory()
        if not isinstance(env, gym.Env):
            raise _Failed(f"{self.label} returned {type(env).__name__}, not a gymnasium.Env")
        self.made.append(env)
        return env.unwrapped

    def adopt(self, env: gym.Env) -> gym.Env:
        """An env a check made itself (a deep copy, an unpickled clone), closed like the others."""
        self.made.append(env)
        return env

    def close_made(self) -> list[str]:
        """Close every env made since the last call, each even if another's close raised; what
        each close that raised said (`Type: message`), so the check can report it."""
        made, self.made = self.made, []
        problems = []
        for env in made:
            try:
                env.close()
            except Exception as error:  # the check reports it; the other envs still get closed
                problems.append(f"{type(env.unwrapped).__name__}.close: {_exception_summary(error, frames=1)}")
        return problems

    @property
    def has_oracle(self) -> bool:
        return callable(getattr(self.sample, "oracle_action", None))

    @property
    def reward_bounds(self) -> tuple[float, float]:
        """The declared `reward_range`, or (-inf, inf) where the env declares none."""
        declared = getattr(self.sample, "reward_range", None)
        if declared is None:
            return (-math.inf, math.inf)
        low, high = declared
        return (float(low), float(high))

    @property
    def max_reward(self) -> float | None:
        high = self.reward_bounds[1]
        return high if math.isfinite(high) else None

    @property
    def nondeterministic(self) -> bool:
        spec = getattr(self.sample, "spec", None)
        return bool(spec is not None and spec.nondeterministic)

    def step_bound(self, env: gym.Env) -> int:
        """The steps an episode of `env` must end within."""
        max_turns = getattr(env, "max_turns", None)
        if isinstance(max_turns, int) and not isinstance(max_turns, bool) and max_turns >= 1:
            return max_turns
        return self.settings.max_episode_steps or EPISODE_STEP_CAP

    @property
    def can_set_max_turns(self) -> bool:
        """`max_turns` can be passed to the constructor: the env has one and is made by id."""
        return self.env_id is not None and isinstance(getattr(self.sample, "max_turns", None), int)

    def turn_variants(self) -> list[dict[str, Any]]:
        """Constructor overrides for each `max_turns` to try: the env's default, then each of
        `max_turns_to_try` where `can_set_max_turns`."""
        variants: list[dict[str, Any]] = [{}]
        if self.can_set_max_turns:
            default = self.sample.max_turns  # type: ignore[attr-defined]
            variants += [{"max_turns": k} for k in self.settings.max_turns_to_try if k != default]
        return variants

    def make_variant(self, overrides: dict[str, Any]) -> gym.Env:
        env = self.make(**overrides)
        wanted = overrides.get("max_turns")
        if wanted is not None and getattr(env, "max_turns", None) != wanted:
            raise _Failed(
                f"made with max_turns={wanted}, the env has max_turns={getattr(env, 'max_turns', None)!r}: "
                "the constructor argument must set the attribute (or pass max_turns_to_try=())"
            )
        return env


def _describe_variant(env: gym.Env) -> str:
    max_turns = getattr(env, "max_turns", None)
    return f"max_turns={max_turns}" if max_turns is not None else "default arguments"


def _target(env_or_id: Any, make_kwargs: Mapping[str, Any] | None, settings: _Settings) -> _Target:
    if isinstance(env_or_id, str):
        _check_registered(env_or_id)
        return _Target(env_or_id, env_or_id, dict(make_kwargs or {}), None, settings)
    if make_kwargs:
        raise ValueError(
            f"make_kwargs={dict(make_kwargs)} apply only to an id: build the instance or factory with them instead"
        )
    if isinstance(env_or_id, gym.Env):
        instance = env_or_id
        label = f"{type(instance.unwrapped).__name__} instance"

        def deep_copy() -> gym.Env:
            try:
                return copy.deepcopy(instance)
            except Exception as error:  # the fix depends on the input form
                raise _Failed(
                    f"cannot deep-copy {label} ({_exception_summary(error, frames=0)}): checks need fresh "
                    "envs; pass a zero-argument factory (e.g. lambda: MyEnv()) or a registered id"
                ) from error

        return _Target(label, None, {}, deep_copy, settings, copies_an_instance=True)
    if callable(env_or_id):
        label = f"factory {getattr(env_or_id, '__qualname__', repr(env_or_id))}"
        return _Target(label, None, {}, env_or_id, settings)
    raise TypeError(
        f"check_text_env takes an env id, a gymnasium.Env or a zero-argument factory, got {type(env_or_id).__name__}"
    )


def _check_registered(env_id: str) -> None:
    """Unknown ids are bad input (ValueError), not a report full of the same failure."""
    check_env_id(env_id)
