"""Checks of whole episodes: the oracle earns the maximum, garbage gets well-formed returns
(the corpus, then hypothesis), and a non-answer still ends the episode within its budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from rlenvs.testing.envs.play import (
    _end_of_episode_problem,
    _EnvRaised,
    _follows_chat_convention,
    _oracle,
    _play,
    _replying,
    _step_problem,
)
from rlenvs.testing.envs.registry import _check
from rlenvs.testing.envs.replies import (
    GARBAGE_CORPUS,
    NON_ANSWER,
    _hypothesis_available,
    garbage_text_strategy,
)
from rlenvs.testing.envs.reports import _Failed, _Skipped
from rlenvs.testing.envs.subjects import _describe_variant, _Target


@_check("oracle_maximality")
def _oracle_maximality(target: _Target) -> str:
    """Every seed: the oracle ends the episode with the maximum reward (the declared
    `reward_range` top), marked correct where the env says; without a declared maximum, at
    least what a non-answer earns on the same task."""
    if not target.has_oracle:
        raise _Skipped("the env has no oracle_action()")
    env = target.make()
    bound = target.step_bound(env)
    best = target.max_reward
    for seed in target.settings.seeds:
        try:
            episode = _play(env, seed, _oracle, bound)
        except _EnvRaised as raised:
            raise _Failed(f"with the oracle's replies, {raised.describe()}", raised.episode.counterexample()) from None
        except NotImplementedError:
            raise _Skipped("oracle_action() raises NotImplementedError") from None
        if not episode.ended:
            raise _Failed(f"the oracle did not end the episode within {bound} steps", episode.counterexample())
        info = episode.steps[-1][4]
        target_reward = best if best is not None else _play(env, seed, _replying(NON_ANSWER), bound).total_reward
        reached = episode.total_reward == best if best is not None else episode.total_reward >= target_reward
        if not reached:
            wanted = f"the maximum reward {best}" if best is not None else f"at least a non-answer's {target_reward}"
            raise _Failed(
                f"the oracle earned {episode.total_reward} on seed={seed}, not {wanted}: "
                "fix oracle_action or the reward",
                counterexample=episode.counterexample(reward=episode.total_reward),
            )
        if "correct" in info and info["correct"] is not True:
            raise _Failed(
                f"the oracle's episode on seed={seed} ended with info['correct']={info['correct']!r}",
                counterexample=episode.counterexample(),
            )
    earned = best if best is not None else "at least a non-answer's reward"
    return f"the oracle earned {earned} on all {len(target.settings.seeds)} seeds"


@_check("garbage_action_totality")
def _garbage_action_totality(target: _Target) -> str:
    """Any string is a valid action: garbage gets a bounded reward and well-formed returns,
    never an exception, at every turn budget tried."""
    failures: list[tuple[int, str, dict[str, Any]]] = []
    episodes = 0
    for overrides in target.turn_variants():
        env = target.make_variant(overrides)
        variant = _describe_variant(env)
        for index, garbage in enumerate(GARBAGE_CORPUS):
            problem, counterexample = _garbage_episode(target, env, index, _replying(garbage))
            episodes += 1
            if problem is not None:
                failures.append((len(garbage), problem, {**counterexample, "env": variant}))
                env = target.make_variant(overrides)  # a step that raised may leave it broken
        if not failures and target.settings.garbage_examples > 0 and _hypothesis_available():
            found = _hypothesis_garbage(target, overrides)
            episodes += target.settings.garbage_examples
            if found is not None:
                failures.append((0, found[0], {**found[1], "env": variant}))
    if failures:
        _, problem, counterexample = min(failures, key=lambda failure: failure[0])
        note = f"\n({len(failures)} failing episodes; the one with the shortest reply shown)"
        note = note if len(failures) > 1 else ""
        raise _Failed(problem + note, counterexample=counterexample)
    source = "the corpus" + (" and hypothesis" if _hypothesis_available() and target.settings.garbage_examples else "")
    if not _hypothesis_available():
        source += " only (hypothesis is not installed)"
    budgets = ", ".join(_describe_variant(target.make_variant(overrides)) for overrides in target.turn_variants())
    return f"{episodes} garbage episodes from {source} ({budgets}): all well-formed"


def _garbage_episode(
    target: _Target, env: gym.Env, seed: int, policy: Callable[[gym.Env, int], str]
) -> tuple[str | None, dict[str, Any]]:
    """Play one episode of garbage; the problem it shows (None if none) and the episode."""
    bound = target.step_bound(env)
    try:
        episode = _play(env, seed, policy, bound)
    except _EnvRaised as raised:
        return raised.describe(), raised.episode.counterexample()
    for step in episode.steps:
        problem = _step_problem(target, env, step)
        if problem is not None:
            return problem, episode.counterexample()
    if not episode.ended:
        return f"the episode was not over after {bound} steps", episode.counterexample()
    problem = _end_of_episode_problem(episode)
    return problem, episode.counterexample()


def _hypothesis_garbage(target: _Target, overrides: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Hypothesis episodes of garbage (a reply drawn per turn); the shrunk failure, if any."""
    if not _hypothesis_available():
        return None
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    replies = garbage_text_strategy()
    env_holder = [target.make_variant(overrides)]
    last_failure: list[tuple[str, dict[str, Any]]] = []

    @settings(
        max_examples=target.settings.garbage_examples,
        deadline=None,
        database=None,
        derandomize=True,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(seed=st.integers(0, 2**32 - 1), data=st.data())
    def garbage_episode(seed: int, data: st.DataObject) -> None:
        def policy(env, turn):
            return data.draw(replies, label=f"reply {turn + 1}")

        problem, counterexample = _garbage_episode(target, env_holder[0], seed, policy)
        if problem is not None:
            # Hypothesis replays the shrunk example last, so the last record is the minimal one.
            last_failure.append((problem, counterexample))
            env_holder[0] = target.make_variant(overrides)
            raise AssertionError(problem)

    try:
        garbage_episode()
    except Exception:  # AssertionError, or hypothesis' Flaky when the env is not deterministic
        if last_failure:
            return last_failure[-1]
        raise
    return None


@_check("episode_length_bound")
def _episode_length_bound(target: _Target) -> str:
    """A reply that resolves nothing still ends the episode within `max_turns` (the env
    enforces its budget itself; no TimeLimit wrapper): terminated for a single turn,
    truncated when a budget of several turns runs out, never both."""
    checked = []
    for overrides in target.turn_variants():
        env = target.make_variant(overrides)
        bound = target.step_bound(env)
        try:
            episode = _play(env, target.settings.seeds[0], _replying(NON_ANSWER), bound)
        except _EnvRaised as raised:
            raise _Failed(raised.describe(), raised.episode.counterexample()) from None
        where = f"{_describe_variant(env)}" if getattr(env, "max_turns", None) is not None else f"cap {bound}"
        if not episode.ended:
            raise _Failed(
                f"the episode was not over after {bound} steps ({where}): end it with truncated=True when the "
                "turn budget runs out",
                counterexample=episode.counterexample(),
            )
        _, _, terminated, truncated, info = episode.steps[-1]
        if terminated and truncated:
            raise _Failed("the last step set terminated and truncated together", episode.counterexample())
        if bound == 1 and getattr(env, "max_turns", None) == 1 and not terminated:
            raise _Failed(
                "with max_turns=1 the one reply must terminate the episode (a single attempt is a terminal state; "
                "truncated is for running out of a budget of several turns)",
                counterexample=episode.counterexample(),
            )
        if truncated and _follows_chat_convention(episode.reset[1]) and info.get("stop_reason") != "max_turns":
            raise _Failed(
                f"a truncated episode has stop_reason={info.get('stop_reason')!r}, not 'max_turns'",
                counterexample=episode.counterexample(),
            )
        checked.append(f"{len(episode.steps)} of {bound} ({where})")
    return "non-answers ended within the budget: " + ", ".join(checked)
