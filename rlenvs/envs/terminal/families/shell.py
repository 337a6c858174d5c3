"""Quoting for the reference solutions' shell commands."""

from __future__ import annotations

import shlex


def quote(text: str) -> str:
    return shlex.quote(text)
