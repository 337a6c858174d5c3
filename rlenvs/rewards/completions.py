"""The shapes completions take in TRL reward functions."""

from __future__ import annotations

from typing import Any


def completion_text(completion: Any) -> str:
    """The text of one TRL completion: a str, or a list of chat messages (the last one)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        return content if isinstance(content, str) else ""
    raise TypeError(f"a completion must be a str or a list of chat messages, got {type(completion).__name__}")
