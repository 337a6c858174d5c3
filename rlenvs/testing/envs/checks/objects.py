"""The fresh-objects check: every call returns new objects, and editing them changes
nothing inside the env."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from rlenvs.testing.envs.registry import _check
from rlenvs.testing.envs.replies import NON_ANSWER
from rlenvs.testing.envs.reports import _Failed
from rlenvs.testing.envs.subjects import _Target

TAMPER_MARK = "<tampered by check_text_env>"


@_check("fresh_objects")
def _fresh_objects(target: _Target) -> str:
    """Every reset and step returns new info (and observation) objects, and editing what was
    returned changes nothing inside the env: callers append to `info["messages"]` freely."""
    overrides: dict[str, Any] = {"max_turns": 3} if target.can_set_max_turns else {}
    if target.env_id is not None and "ansi" in target.sample.metadata.get("render_modes", ()):
        overrides["render_mode"] = "ansi"
    env = target.make_variant(overrides)
    seed = target.settings.seeds[0]
    calls: list[tuple[str, Any]] = [("reset 1", env.reset(seed=seed)), ("reset 2", env.reset(seed=seed))]
    _tamper(calls[-1][1][1])
    after_tampering = []
    for turn in (1, 2):
        obs, _, terminated, truncated, info = env.step(NON_ANSWER)
        after_tampering.append((f"step {turn}", (obs, info)))
        if terminated or truncated:
            break
    calls += after_tampering
    _raise_if_shared(calls)
    # Look for the edit before the next reset replaces the episode's state.
    leaks = [source for source, returned in after_tampering if TAMPER_MARK in repr(returned)]
    rendered = env.render() if env.render_mode == "ansi" else None
    transcript = getattr(env, "transcript_text", None)
    if isinstance(rendered, str) and TAMPER_MARK in rendered:
        leaks.append("render()")
    if callable(transcript) and TAMPER_MARK in transcript():
        leaks.append("transcript_text()")
    if leaks:
        raise _Failed(
            f"editing reset's info changed what the env returned later ({', '.join(leaks)}): copy what you "
            "return, or keep a copy of it",
            counterexample={"mark": TAMPER_MARK, "seen_in": leaks},
        )
    calls.append(("reset 3", env.reset(seed=seed)))
    obs, _, _, _, info = env.step(NON_ANSWER)
    calls.append(("the step after reset 3", (obs, info)))
    _raise_if_shared(calls)
    return f"{len(calls)} calls returned unshared objects; editing reset's info changed nothing in the env"


def _raise_if_shared(calls: list[tuple[str, Any]]) -> None:
    """Fail if two calls returned the same mutable object. Every object is kept alive in
    `calls`, so `id`s stay unique."""
    seen: dict[int, tuple[str, str]] = {}
    for source, returned in calls:
        for part, value in zip(("observation", "info"), returned):
            for path, obj in _mutable_objects(value, part):
                if id(obj) in seen and seen[id(obj)][0] != source:
                    other_source, other_path = seen[id(obj)]
                    raise _Failed(
                        f"{source} returned as {path} the same object that {other_source} returned as {other_path}: "
                        "return new objects on every call, as callers keep and edit them",
                        counterexample={"first": f"{other_source}: {other_path}", "second": f"{source}: {path}"},
                    )
                seen.setdefault(id(obj), (source, path))


def _tamper(data: Any) -> None:
    """Edit everything mutable in `data` (as a careless caller would)."""
    if isinstance(data, dict):
        for key, value in list(data.items()):
            if isinstance(value, str):
                data[key] = TAMPER_MARK
            else:
                _tamper(value)
    elif isinstance(data, list):
        for item in data:
            _tamper(item)
        data.append({"role": "user", "content": TAMPER_MARK})


def _mutable_objects(data: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every mutable container reachable from `data`, with where it is. (gymnasium's own
    `data_shares_objects` skips lists, which is where `info["messages"]` lives.)"""
    if isinstance(data, (dict, list, set, bytearray)) or (isinstance(data, np.ndarray) and data.flags.writeable):
        yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _mutable_objects(value, f"{path}[{key!r}]")
    elif isinstance(data, (list, tuple)):
        for index, value in enumerate(data):
            yield from _mutable_objects(value, f"{path}[{index}]")
