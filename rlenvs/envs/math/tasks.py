"""The task record shared by the math envs."""

from __future__ import annotations

from dataclasses import dataclass

from rlenvs.core.task import Task


@dataclass(frozen=True)
class MathTask(Task):
    answer: str
    """The gold final answer as written in the data (e.g. "72", "\\frac{3}{4}")."""
    solution: str
    """A gold reply: worked solution ending in the final answer; what `oracle_action` returns."""
