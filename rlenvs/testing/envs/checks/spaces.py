"""Checks of the env's shape: gymnasium's own checker, and Text spaces that admit every reply."""

from __future__ import annotations

import warnings

from gymnasium.spaces import Text
from gymnasium.utils.env_checker import check_env

from rlenvs.testing.envs.registry import _check
from rlenvs.testing.envs.replies import GARBAGE_CORPUS, NORMAL_REPLIES
from rlenvs.testing.envs.reports import _Failed
from rlenvs.testing.envs.subjects import _Target


@_check("gymnasium_check_env")
def _gymnasium_check_env(target: _Target) -> str:
    """gymnasium's own checker, with every warning it emits counted as a failure."""
    env = target.make()
    no_spec = env.spec is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=no_spec)
    if caught:
        lines = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
        raise _Failed("check_env warned (warnings count as failures):\n" + "\n".join(lines))
    return "check_env passed with no warnings" + (" (render modes not checked: the env has no spec)" if no_spec else "")


@_check("spaces")
def _spaces(target: _Target) -> str:
    """Text spaces that admit every reply a model may send (the stock `Text` admits only
    alphanumerics, so a space or a newline would make a normal reply invalid)."""
    env = target.make()
    for name in ("observation_space", "action_space"):
        space = getattr(env, name, None)
        if not isinstance(space, Text):
            raise _Failed(f"{name} is {space!r}, not a gymnasium.spaces.Text: text envs use rlenvs.UnicodeText")
    obs, _ = env.reset(seed=target.settings.seeds[0])
    if not env.observation_space.contains(obs):
        raise _Failed(f"reset's observation is not a member of {env.observation_space!r}", counterexample=obs)
    # A normal reply rejected is the clearest counterexample, else the shortest garbage one.
    replies = (*NORMAL_REPLIES, *sorted(GARBAGE_CORPUS, key=len))
    rejected = [reply for reply in replies if not env.action_space.contains(reply)]
    if rejected:
        raise _Failed(
            f"action_space {env.action_space!r} rejects {len(rejected)} of {len(replies)} sample replies, the one "
            f"shown {len(rejected[0])} characters long (any str is a valid action, up to 100 KB): use "
            "rlenvs.UnicodeText(max_length), whose members are every str up to max_length",
            counterexample=rejected[0],
        )
    return f"Text spaces admit reset's observation and all {len(NORMAL_REPLIES) + len(GARBAGE_CORPUS)} sample replies"
