"""Whether a model path is worth handing to transformers or vLLM: one rule for the training
config and for `evaluate`, so that the same text is accepted or refused by both. A hub id is
also checked to be fetchable (in the local cache, or on a hub that answers): offline, the
loaders retried for about a minute and then raised a raw OSError."""

from __future__ import annotations

import functools
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
        return hub_model_problem(text)
    return f"{text!r} is neither an existing local folder nor a hub id (name or org/name)"


def checked_model_path(text: str, what: str = "model") -> str:
    """`text`, checked before transformers or vLLM take minutes to say it is wrong: a local
    path made absolute-ready (`~` expanded), or the hub id as given (the loader fetches it)."""
    problem = model_path_problem(text)
    if problem is not None:
        raise FileNotFoundError(f"{what}: {problem}")
    path = Path(text).expanduser()
    return str(path) if path.exists() else text


OFFLINE_VALUES = {"1", "true", "yes", "on"}
HUB_TIMEOUT_S = 10.0


@functools.lru_cache(maxsize=64)
def hub_model_problem(repo_id: str) -> str | None:
    """None when the hub model `repo_id` can be loaded here: its config.json is in the local
    Hugging Face cache, or the hub answers for it; else one line saying why not and what to
    do (offline: download it where there is network). Asked once per id and process (the
    config is checked twice before a run). An answer the hub gives with another error
    (rate limit, a server error) is left to the loader, which retries it."""
    from huggingface_hub import HfApi, constants, try_to_load_from_cache
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError

    if isinstance(try_to_load_from_cache(repo_id, "config.json"), str):
        return None
    fix = (
        f"download it where there is network (`hf download {repo_id}`) and copy {constants.HF_HUB_CACHE} or the "
        "model's folder here, or give a local model folder"
    )
    offline = constants.HF_HUB_OFFLINE or any(
        os.environ.get(name, "").lower() in OFFLINE_VALUES for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )
    if offline:
        return f"hub model {repo_id!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set: {fix}"
    try:
        HfApi().model_info(repo_id, timeout=HUB_TIMEOUT_S)
    except GatedRepoError:
        return f"hub model {repo_id!r} is gated: accept its terms on huggingface.co and log in (`hf auth login`)"
    except RepositoryNotFoundError:
        return f"hub model {repo_id!r} is not on the Hugging Face hub (a typo, or private: `hf auth login`)"
    except HfHubHTTPError:
        return None
    except Exception as error:  # no answer at all: DNS, connection refused, timeout, proxy
        reason = " ".join(str(error).split()) or type(error).__name__
        return (
            f"hub model {repo_id!r} is not in the local Hugging Face cache and the hub cannot be reached ({reason}). "
            f"Offline? {fix} (HF_HUB_OFFLINE=1 then skips the hub)"
        )
    return None
