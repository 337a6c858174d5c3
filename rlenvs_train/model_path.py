"""Whether a model path is worth handing to transformers or vLLM: one rule for the training
config and for `evaluate`, so that the same text is accepted or refused by both."""

from __future__ import annotations

import os
import re
from pathlib import Path

HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")
"""What a Hugging Face hub id looks like: `name` (gpt2) or `org/name`."""


def model_path_problem(text: str) -> str | None:
    """None when `text` is an existing local path or reads as a hub id; else what is wrong.

    A path that is plainly local (absolute, starting with . or ~, with a backslash, or
    `models/x` beside a `models/` folder) must exist: sent to the hub it would only fail
    later, after the loader's retries, with a download error about a repository."""
    path = Path(text).expanduser()
    if path.exists():
        return None
    if os.path.isabs(text) or text.startswith((".", "~")) or "\\" in text or ("/" in text and path.parent.is_dir()):
        return f"model path {text!r} does not exist"
    if HUB_ID.fullmatch(text):
        return None
    return f"{text!r} is neither an existing local folder nor a hub id (name or org/name)"
