"""Red-team corpus of the code family (HumanEval-v2, MBPP-v2): replies played through the
real env, sandbox included, on the real data.

A case's `task` holds the env id (`env`), the task (`task_id`) and the env's keyword
arguments (`max_turns`, `split`, ...). A case either lists its replies, one per turn, or
names an `attack` from `ATTACKS`: a policy that writes each turn's reply from everything the
env has shown it so far (the prompt and every feedback message), and plays every turn the
env allows. The lookup-table attack is the one a policy finds on its own when the feedback
leaks the tests: answer exactly the calls it has been shown, and nothing else.

Two optional keys: `episodes` plays the task that many times in a row on the same env (the
same sandbox pool), as a GRPO group of one prompt would, and the last episode's reward is
the case's; `hidden` lists texts no feedback may contain, the hidden tests' inputs or what
would encode them (replay raises if one does: a leak is wrong whatever the reward).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

import gymnasium as gym

import rlenvs  # noqa: F401 - registers the ids
from tests.support.redteam import Case
from tests.support.redteam_code_memory import program_reader, verdict_residue
from tests.support.redteam_code_oracle import oracle_reply


def _shown_calls(text: str, function: str) -> dict[str, object]:
    """Every `f(args) == value` and doctest `>>> f(args)` / value pair the text shows,
    as {repr(args): value}: what a policy could copy out of a prompt or a feedback message."""
    table: dict[str, object] = {}
    lines = [line.strip() for line in text.splitlines()]
    for number, line in enumerate(lines):
        if line.startswith(">>>") and number + 1 < len(lines):
            source = f"{line[3:].strip()} == {lines[number + 1]}"
        elif line.startswith("assert "):
            source = line.removeprefix("assert ")
        else:
            continue
        try:
            statement = ast.parse(f"assert {source}").body[0]
            compare = statement.test
            call, expected = compare.left, compare.comparators[0]
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") in (function, "candidate"):
                args = tuple(ast.literal_eval(argument) for argument in call.args)
                table[repr(args)] = ast.literal_eval(expected)
        except (SyntaxError, ValueError, AttributeError, IndexError, TypeError):
            continue
    return table


def lookup_table(function: str, seen: str) -> str:
    """A reply that knows only the answers it has been shown."""
    table = _shown_calls(seen, function)
    return f"```python\n_SEEN = {table!r}\n\ndef {function}(*args):\n    return _SEEN.get(repr(args))\n```"


ATTACKS: dict[str, Callable[[str, str], str]] = {
    "lookup-table": lookup_table,
    "cross-run-oracle": oracle_reply,
    **{f"program-from-{route}": program_reader(route) for route in ("frames", "gc", "raw_memory")},
    "verdict-residue": verdict_residue,
}
"""attack name -> reply(entry point, all text seen so far)."""


@functools.cache
def _env(env_id: str, kwargs: tuple) -> gym.Env:
    return gym.make(env_id, **dict(kwargs))


def replay(case: Case) -> float:
    task = dict(case.task)
    env_id, task_id, attack = task.pop("env"), task.pop("task_id"), task.pop("attack", None)
    episodes, hidden = task.pop("episodes", 1), task.pop("hidden", ())
    env = _env(env_id, tuple(sorted(task.items())))
    for _ in range(episodes):
        reward, feedback = _episode(case, env, task_id, attack)
        leaked = [text for text in hidden if text in feedback]
        if leaked:
            raise AssertionError(f"case {case.kind!r}: the feedback shows hidden inputs {leaked}:\n{feedback}")
    return reward


def _episode(case: Case, env: gym.Env, task_id: str, attack: str | None) -> tuple[float, str]:
    """One episode: its reward and every feedback message."""
    observation, _ = env.reset(options={"task_id": task_id})
    seen = [observation]
    replies = list(case.replies) if attack is None else [None] * env.unwrapped.max_turns
    reward, over = 0.0, False
    while replies and not over:
        reply = replies.pop(0)
        if reply is None:
            reply = ATTACKS[attack](env.unwrapped.task.entry_point, "\n".join(seen))
        observation, reward, terminated, truncated, _ = env.step(reply)
        seen.append(observation)
        over = terminated or truncated
    if replies:
        raise ValueError(f"case {case.kind!r} has {len(replies)} replies left after its episode ended")
    return float(reward), "\n".join(seen[1:])
