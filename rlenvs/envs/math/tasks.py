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


def row_string(value: object, field: str, source: str) -> str:
    """`value`, a `source` row's `field`, where it is a string with text in it; else a
    ValueError that names the field."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{source} row needs a non-empty string {field!r}, got {value!r}")
    return value
