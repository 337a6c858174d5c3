"""Checks of how callers talk to the env: rlenvs' chat convention in `info["messages"]`,
loud errors that name the fix for misuse, and render modes."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from gymnasium.error import ResetNeeded

from rlenvs.testing.envs.play import (
    _end_of_episode_problem,
    _follows_chat_convention,
    _oracle,
    _play,
    _replying,
)
from rlenvs.testing.envs.registry import _check
from rlenvs.testing.envs.replies import NON_ANSWER
from rlenvs.testing.envs.reports import _exception_summary, _Failed, _refused, _shorten, _Skipped
from rlenvs.testing.envs.subjects import _describe_variant, _Target

CHAT_ROLES_AT_RESET = ("system", "user")


@_check("chat_messages")
def _chat_messages(target: _Target) -> str:
    """rlenvs' chat convention: reset's `info["messages"]` is the chat to send (ending in the
    observation as a user message), each step's holds the env's next message, and an ended
    episode sends none."""
    env = target.make_variant({"max_turns": 2} if target.can_set_max_turns else {})
    obs, info = env.reset(seed=target.settings.seeds[min(3, len(target.settings.seeds) - 1)])
    if not _follows_chat_convention(info):
        raise _Skipped("reset's info has no 'messages' (rlenvs' chat convention is optional for other envs)")
    messages = info["messages"]
    problem = _messages_problem(messages, CHAT_ROLES_AT_RESET)
    if problem is None and (not messages or messages[-1] != {"role": "user", "content": obs}):
        problem = "reset's info['messages'] must end with the observation as {'role': 'user', 'content': obs}"
    max_turns = getattr(env, "max_turns", None)
    if problem is None and max_turns is not None and info.get("max_turns") != max_turns:
        problem = f"reset's info['max_turns'] is {info.get('max_turns')!r}, the env's max_turns is {max_turns!r}"
    if problem is None and "task_id" in info and not isinstance(info["task_id"], str):
        problem = f"info['task_id'] must be a str, got {type(info['task_id']).__name__}"
    if problem is not None:
        raise _Failed(problem, counterexample={"observation": obs, "info": info})
    episode = _play(env, 0, _replying(NON_ANSWER), target.step_bound(env))
    for step_obs, _, _, _, step_info in episode.steps:
        step_messages = step_info.get("messages")
        problem = _messages_problem(step_messages, ("user", "tool"))
        if problem is None and step_obs and (not step_messages or step_messages[-1]["content"] != step_obs):
            problem = "a step's info['messages'] must end with its observation as the message content"
        if problem is not None:
            raise _Failed(problem, counterexample={"observation": step_obs, "info": step_info})
    problem = _end_of_episode_problem(episode)
    if problem is not None:
        raise _Failed(problem, counterexample=episode.counterexample())
    return f"reset and {len(episode.steps)} steps follow the chat format ({_describe_variant(env)})"


def _messages_problem(messages: Any, roles: Sequence[str]) -> str | None:
    if not isinstance(messages, list):
        return f"info['messages'] must be a list of chat messages, got {type(messages).__name__}"
    for message in messages:
        if not (
            isinstance(message, dict)
            and set(message) == {"role", "content"}
            and message["role"] in roles
            and isinstance(message["content"], str)
        ):
            return (
                f"info['messages'] holds {_shorten(repr(message), 80)}: each message is "
                f"{{'role': one of {list(roles)}, 'content': str}}"
            )
    return None


@_check("misuse_errors")
def _misuse_errors(target: _Target) -> str:
    """Misuse fails loudly and names the fix: stepping before reset or after the episode
    ended raises ResetNeeded, a reply that is not a str (token ids, bytes) raises TypeError."""
    env = target.make()
    if not target.copies_an_instance:
        _expect_error(lambda: env.step("hello"), ResetNeeded, r"reset", "step before reset()")
    env.reset(seed=target.settings.seeds[0])
    _expect_error(lambda: env.step(b"bytes"), TypeError, r"\bstr\b", "step(b'bytes')")
    _expect_error(lambda: env.step(None), TypeError, r"\bstr\b", "step(None)")
    policy = _oracle if target.has_oracle else _replying(NON_ANSWER)
    episode = _play(env, target.settings.seeds[0], policy, target.step_bound(env))
    if not episode.ended:
        raise _Skipped("the episode did not end (see episode_length_bound)")
    says_it_ended = r"(?s)(ended|over|done|finished).*reset|reset.*(ended|over|done|finished)"
    _expect_error(lambda: env.step(NON_ANSWER), ResetNeeded, says_it_ended, "step after the episode ended")
    if target.copies_an_instance:
        return (
            "ResetNeeded after the end, TypeError for bytes and None, each naming the fix (step before reset "
            "not checked: a copy of an instance may already have been reset; pass a factory to check it)"
        )
    return "ResetNeeded before reset and after the end, TypeError for bytes and None, each naming the fix"


def _expect_error(call: Callable[[], Any], expected: type[Exception], pattern: str, what: str) -> None:
    try:
        call()
    except expected as error:
        if not re.search(pattern, str(error), re.IGNORECASE):
            raise _Failed(
                f"{what} raised {type(error).__name__}({str(error)!r}), whose message does not match {pattern!r}: "
                "say what went wrong and how to fix it",
            ) from None
        return
    except Exception as error:  # the wrong exception is the finding (unless a server refused a session)
        refused = _refused(error)
        if refused is not None:
            raise refused from error
        raise _Failed(f"{what} raised {_exception_summary(error)}, expected {expected.__name__}") from None
    raise _Failed(f"{what} raised nothing, expected {expected.__name__}")


@_check("render_modes")
def _render_modes(target: _Target) -> str:
    """`render_mode="ansi"` returns the transcript (the observation and the reply),
    `"human"` prints it and returns None, and an unsupported mode is refused at make."""
    reply = "my reply to the render check"
    modes = [mode for mode in target.sample.metadata.get("render_modes", ()) if mode in ("ansi", "human")]
    if target.env_id is None:
        own = target.sample.render_mode
        modes = [own] if own in modes else []
        if not modes:
            raise _Skipped(f"needs an id to make each render mode ({target.label} has render_mode={own!r})")
    if not modes:
        raise _Skipped("the env declares neither 'ansi' nor 'human' in metadata['render_modes']")
    for mode in modes:
        env = target.make(render_mode=mode) if target.env_id is not None else target.make()
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            obs, _ = env.reset(seed=target.settings.seeds[0])
            env.step(reply)
            rendered = env.render()
        if mode == "ansi" and not (isinstance(rendered, str) and obs in rendered and reply in rendered):
            raise _Failed(
                "render() with render_mode='ansi' must return the transcript text, holding the observation "
                "and the reply",
                counterexample={"rendered": rendered},
            )
        if mode == "human" and (rendered is not None or reply not in printed.getvalue()):
            raise _Failed(
                "render_mode='human' must print the transcript (with the reply) and render() return None",
                counterexample={"rendered": rendered, "printed": printed.getvalue()},
            )
    if target.env_id is not None and "rgb_array" not in target.sample.metadata.get("render_modes", ()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gymnasium's own warning about the same mistake
            _expect_error(
                lambda: target.make(render_mode="rgb_array"),
                ValueError,
                r"render_mode",
                "make(render_mode='rgb_array')",
            )
        return f"{', '.join(modes)} render the transcript; an unsupported render_mode is refused"
    return f"{', '.join(modes)} render the transcript"
