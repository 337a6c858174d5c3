"""rlenvs/ReverseWords-v0, an example: a whole procedural env in one file (CONTRIBUTING.md).

Reply with the given word (level 1) or the words of a short phrase each (level 2) spelled
backwards. It reads top to bottom as every env does: the family (levels and their
generators), the task, the env (task source, judge, oracle). The seeding, the level checks
and the task ids come from `rlenvs.core.procedural`; the contract (reset, step, turns,
errors) from `TextEnv`. tests/project/test_procedural_example.py registers it and runs the contract
kit on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from rlenvs.core import Judgement, Task, TextEnv
from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family, Level, ProceduralEnv
from rlenvs.core.task import content_task_id

WORDS = (
    "apple", "river", "stone", "cloud", "maple", "tiger", "lemon", "piano", "candle", "forest",
    "mirror", "rocket", "garden", "violet", "harbor", "pepper", "silver", "anchor", "marble", "falcon",
)  # fmt: skip

# --- the family: what each level asks, and its generator -------------------------------------


class Puzzle(NamedTuple):
    """What a generator returns, before the task gets its id."""

    text: str
    answer: str


def one_word(rng: np.random.Generator) -> Puzzle:
    word = draw_from(rng, WORDS)
    return Puzzle(word, word[::-1])


def a_phrase(rng: np.random.Generator) -> Puzzle:
    words = draw_sample(rng, WORDS, draw_int(rng, 2, 4))
    return Puzzle(" ".join(words), " ".join(word[::-1] for word in words))


REVERSE = Family.of_levels(
    "reverse",
    "Spell a word, or each word of a phrase, backwards.",
    {1: Level("one word", one_word), 2: Level("each word of a phrase of 2 to 4, in order", a_phrase)},
)

# --- the task ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReverseTask(Task):
    answer: str


def pose(task_id: str, puzzle: Puzzle) -> ReverseTask:
    prompt = f"Spell each word backwards, keeping the word order: {puzzle.text}\nReply with the result only."
    return ReverseTask(task_id=task_id, prompt=prompt, answer=puzzle.answer)


def reverse_task(level: int, index: int) -> ReverseTask:
    """Task `index` at `level`; module level so that an env holding it pickles."""
    return pose(REVERSE.task_id(level, index), REVERSE.scenario(level, index))


# --- the env -----------------------------------------------------------------------------------


class ReverseWordsEnv(ProceduralEnv, TextEnv[ReverseTask]):
    """Reward 1.0 iff the reply, stripped, is the reversed text; a wrong reply gets another
    turn while `max_turns` lasts."""

    env_name = "ReverseWords-v0"
    task_families = {REVERSE.name: REVERSE}

    @classmethod
    def task_of(cls, family: str, level: int, index: int) -> ReverseTask:
        return reverse_task(level, index)

    def __init__(self, level: int = 1, max_turns: int = 1, render_mode: str | None = None) -> None:
        super().__init__(self.level_source(level, reverse_task), max_turns=max_turns, render_mode=render_mode)

    def task_from_row(self, row: Mapping[str, Any]) -> ReverseTask:
        text = row.get("text")
        if not isinstance(text, str) or not text.split():
            raise ValueError(f"a ReverseWords-v0 row needs 'text': a non-empty string of words, got {text!r}")
        words = text.split()
        return pose(content_task_id(REVERSE.name, row), Puzzle(" ".join(words), " ".join(w[::-1] for w in words)))

    def judge(self, task: ReverseTask, reply: str) -> Judgement:
        if reply.strip() == task.answer:
            return Judgement(1.0, resolved=True, correct=True, stop_reason="answered")
        return Judgement(0.0, resolved=False, correct=False, feedback="Not quite: reverse the letters of each word.")

    def oracle_reply(self, task: ReverseTask, turn: int) -> str:
        return task.answer
