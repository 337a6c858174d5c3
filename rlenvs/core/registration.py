"""Registering rlenvs' ids with gymnasium, lazily and idempotently.

Entry points are strings, so `import rlenvs` imports no env module: an env's code (and its
dependencies) load on the first `gym.make` of its id. gymnasium 1.x has no plugin entry
points, so `gym.make("rlenvs:rlenvs/GSM8K-v1")` (module prefix) is how to make an id
without importing rlenvs first.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

NAMESPACE = "rlenvs"


class UnknownEnvIdError(ValueError):
    """An env id gymnasium does not know; the message has the close ids and the rlenvs ids.

    A ValueError (bad input), not gymnasium's own `NameNotFound`, so that every command that
    takes an id reports it the same way: one line, exit code 2, no traceback."""


class UnknownKeywordError(TypeError):
    """A keyword an env's constructor does not take; the message names the ones it does."""


@dataclass(frozen=True)
class EnvEntry:
    """One registered id and what `rlenvs list`, `rlenvs info` and the env tables (README.md,
    docs/index.md) say about it.

    rlenvs' own catalog (rlenvs/envs/catalog.py) fills in every field. Another package's entry,
    found through the `rlenvs.envs` entry-point group (rlenvs/envs/plugins.py), needs only `id`,
    `entry_point` and `summary`: the descriptive fields default to "" (shown as "-"), since a
    made-up family or reward line would be worse than none. `entry_point` is a string
    ("package.module:EnvClass") so that the env's module, and what it imports, loads on the
    first `gym.make`, not on `import rlenvs`."""

    id: str
    """`namespace/Name-vN`; the namespace `rlenvs` is rlenvs' own."""
    entry_point: str
    summary: str
    """One line: what the task is."""
    family: str = ""
    """The docs page and table group of an rlenvs env (math, code, ...); free text for another package's."""
    observes: str = ""
    """What the agent sees."""
    acts: str = ""
    """What the agent does."""
    reward: str = ""
    turns: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    nondeterministic: bool = False
    """True where the reward is not a pure function of the actions (a judge, wall-clock)."""
    package: str = NAMESPACE
    """The distribution (the name `pip install` takes) that provides the id: "rlenvs" for the
    catalog; plugin discovery sets it from the entry point's distribution, whatever the entry said."""


def register(entries: Iterable[EnvEntry]) -> None:
    """Register every entry with gymnasium; calling it again is a no-op. An entry of rlenvs'
    own (`package` "rlenvs") must be in the `rlenvs` namespace, and any other must not.

    No `max_episode_steps`: gymnasium's TimeLimit would report `terminated` and `truncated`
    together on a single-turn env, so each env enforces its own `max_turns`.
    """
    for entry in entries:
        ours = entry.package == NAMESPACE
        if ours != entry.id.startswith(NAMESPACE + "/"):
            raise ValueError(
                f"env id {entry.id!r} must be in the {NAMESPACE!r} namespace"
                if ours
                else f"env id {entry.id!r} of package {entry.package!r} must not be in the reserved {NAMESPACE!r} "
                "namespace (rlenvs' own envs): give it the package's own namespace"
            )
        existing = gym.registry.get(entry.id)
        if existing is not None:
            if existing.entry_point != entry.entry_point:
                raise RuntimeError(
                    f"{entry.id} is already registered with entry point {existing.entry_point!r}, "
                    f"not {entry.entry_point!r}: remove the other registration"
                )
            continue
        gym.register(
            id=entry.id,
            entry_point=entry.entry_point,
            kwargs=dict(entry.kwargs),
            nondeterministic=entry.nondeterministic,
        )


def env_id_problem(env_id: Any) -> str | None:
    """None when `gym.make(env_id)` would find the id; else why not, with the closest
    registered ids. The one wording every command uses for an unknown id (`rlenvs eval`,
    `play`, `info`, `export`, `check-env`, `sft-data`, `rlenvs-train`, `rlenvs-train eval`).

    'module:Name-v0' imports the module first, as `gym.make` does, so another package's
    ids are known once it registers them."""
    if not isinstance(env_id, str) or not env_id:
        return f"an env id is a string such as '{NAMESPACE}/Arithmetic-v1', got {env_id!r}"
    module, _, name = env_id.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except ImportError as error:
            return (
                f"unknown env id {env_id!r}: its module {module!r} cannot be imported ({error}); install the "
                f"package that registers it, or use an id from `rlenvs list`"
            )
    if name in gym.registry or _gymnasium_finds(name):
        return None
    ids = list(gym.registry)
    close = close_ids(name, ids)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    ours = ", ".join(i for i in ids if i.startswith(NAMESPACE + "/")) or f"none registered (import {NAMESPACE})"
    return (
        f"unknown env id {env_id!r}{hint} (rlenvs ids: {ours}; `rlenvs list` describes them and every installed "
        f"package's; a package without an rlenvs.envs entry point is named 'module:ns/Name-v0' so that its module "
        "registers it)"
    )


def close_ids(name: str, ids: Iterable[str], n: int = 3) -> list[str]:
    """The registered ids whose bare name is close to `name`'s, best first.

    Compared without namespace, version and case: whole ids share "rlenvs/" and "-v0", which
    makes any two look alike (a plain ratio offers MBPP-v2 for Nope-v0), while a case slip
    (gsm8k), a missing namespace or a wrong version is still the id the user meant."""
    wanted = _bare(name)
    scored = []
    for candidate in ids:
        ratio = difflib.SequenceMatcher(None, wanted, _bare(candidate)).ratio()
        if ratio >= 0.75:
            scored.append((-ratio, candidate))
    return [candidate for _, candidate in sorted(scored)[:n]]


def _bare(env_id: str) -> str:
    name = env_id.rpartition("/")[2]
    stem, dash, version = name.rpartition("-v")
    return (stem if dash and version.isdigit() else name).lower()


def _gymnasium_finds(name: str) -> bool:
    """Whether gymnasium resolves an id that is not a registry key as written."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gym.spec(name)
    except gym.error.Error:
        return False
    return True


def check_env_id(env_id: Any) -> str:
    """`env_id` if gymnasium knows it; else `UnknownEnvIdError` (see `env_id_problem`)."""
    problem = env_id_problem(env_id)
    if problem is not None:
        raise UnknownEnvIdError(problem)
    return env_id


def make_parameters(env_id: str) -> Mapping[str, inspect.Parameter] | None:
    """The keyword arguments `gym.make(env_id, ...)` passes on to the env's constructor; None
    where that cannot be told (a constructor taking **kwargs, an entry point that does not load)."""
    spec = gym.spec(env_id.rpartition(":")[2])
    try:
        entry = spec.entry_point
        if entry is None:
            return None
        creator = entry if callable(entry) else gym.envs.registration.load_env_creator(entry)
        return keyword_parameters(creator)
    except (ImportError, AttributeError, ValueError, TypeError):
        return None


def keyword_parameters(creator: Callable[..., Any]) -> Mapping[str, inspect.Parameter] | None:
    """The parameters of `creator` (a class or function) that can be passed by keyword;
    None where it takes **kwargs, so any keyword may be right."""
    parameters = inspect.signature(creator).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return {
        name: p
        for name, p in parameters.items()
        if name != "self" and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }


def keyword_problem(owner: str, valid: Iterable[str], given: Iterable[str]) -> str | None:
    """None when every name in `given` is in `valid`; else which are not, the close valid one
    for each, and all the valid ones (a typo like max_turn for max_turns is fixed at a glance)."""
    valid = list(valid)
    unknown = [name for name in given if name not in valid]
    if not unknown:
        return None
    matches = {name: difflib.get_close_matches(name, valid, n=1, cutoff=0.6) for name in unknown}
    guesses = {name: close[0] for name, close in matches.items() if close}
    noun = "keyword argument" if len(unknown) == 1 else "keyword arguments"
    message = f"{owner} got an unexpected {noun} {', '.join(map(repr, unknown))}"
    if len(unknown) == 1 and guesses:
        message += f"; did you mean {guesses[unknown[0]]!r}?"
    elif guesses:
        message += "; did you mean " + ", ".join(f"{right!r} for {wrong!r}" for wrong, right in guesses.items()) + "?"
    # Ends in a parenthesis: gym.make appends " was raised from the environment creator for ...".
    return message + f" (its keywords: {', '.join(valid) or 'none'})"
