"""A policy served behind an OpenAI-compatible chat API: `vllm serve`, `trl vllm-serve`, a
hosted API. The standard library's urllib is enough for one POST per turn, so `rlenvs eval`
needs no client package; the request and the reading of the answer are pure functions, so
what is sent is tested without a server.

Failures of the server (refused connections, timeouts, 5xx, 429) are retried, then raised as
`PolicyError` naming the URL: an evaluation counts them apart from wrong answers. A 4xx other
than 429 is the request's fault (a wrong model name, a prompt over the context) and is raised
at once with the server's own message.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

API_KEY_ENV = "OPENAI_API_KEY"
"""The environment variable the API key is read from (never a flag: it would show in `ps`)."""

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class PolicyError(RuntimeError):
    """The policy could not give a reply (its server failed or timed out): an infrastructure
    failure of the episode, not a wrong answer."""


def api_base(url: str) -> str:
    """The API base from `openai:URL`: `http://host:8000/v1` as OpenAI clients take it; a bare
    `http://host:8000` gets `/v1`, the path every OpenAI-compatible server serves under."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(
            f"openai:{url}: the URL must start with http:// or https://, e.g. openai:http://127.0.0.1:8000/v1"
        )
    url = url.rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


API_PATHS = {"chat": "chat/completions", "completions": "completions"}
"""The two OpenAI APIs a policy can ask: chat (the server applies the model's chat template to
the messages) or completions (a prompt rendered here, for a server without a chat template)."""


def chat_request(
    model: str,
    messages: Sequence[Mapping[str, str]],
    *,
    temperature: float,
    max_tokens: int | None,
    seed: int | None,
) -> dict[str, Any]:
    """The body of a POST to `{base}/chat/completions` for one turn: the conversation so far."""
    body = {"model": model, "messages": [{"role": m["role"], "content": m["content"]} for m in messages]}
    return body | _sampling(temperature, max_tokens, seed)


def completions_request(
    model: str, prompt: str, *, temperature: float, max_tokens: int | None, seed: int | None
) -> dict[str, Any]:
    """The body of a POST to `{base}/completions` for one turn: the conversation rendered."""
    return {"model": model, "prompt": prompt} | _sampling(temperature, max_tokens, seed)


def _sampling(temperature: float, max_tokens: int | None, seed: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"temperature": temperature, "n": 1}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if seed is not None:
        body["seed"] = seed
    return body


@dataclass(frozen=True)
class ServedReply:
    text: str
    finish_reason: str | None
    """"stop", or "length" when the reply was cut at max_tokens."""


def read_reply(body: Mapping[str, Any], url: str, api: str = "chat") -> ServedReply:
    """The generated text of a chat (`choices[0].message.content`) or completions
    (`choices[0].text`) response; a response of another shape is a PolicyError (the URL is
    likely not an OpenAI-compatible endpoint of that API)."""
    where = "message.content" if api == "chat" else "text"
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"] if api == "chat" else choice["text"]
    except (KeyError, IndexError, TypeError):
        raise PolicyError(f"{url} answered without choices[0].{where}: {json.dumps(body)[:300]}") from None
    return ServedReply(text=content or "", finish_reason=choice.get("finish_reason"))


def only_model(body: Mapping[str, Any], base: str) -> str:
    """The model of a `GET {base}/models` answer when the server serves exactly one (as
    `vllm serve` does), so `--model` can be left out; otherwise a ValueError listing them."""
    names = [str(m.get("id")) for m in body.get("data", []) if isinstance(m, Mapping)]
    if len(names) != 1:
        raise ValueError(
            f"{base}/models lists {len(names)} models ({', '.join(names[:10]) or 'none'}): name one with --model"
        )
    return names[0]


def call_json(
    url: str,
    payload: Mapping[str, Any] | None,
    *,
    timeout_s: float,
    retries: int,
    api_key: str | None = None,
) -> Any:
    """GET (payload None) or POST JSON to `url` and return the decoded answer, retrying server
    failures `retries` times with a growing pause; then PolicyError naming the URL."""
    key = os.environ.get(API_KEY_ENV) if api_key is None else api_key
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None if payload is None else json.dumps(payload).encode()
    last = ""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(2.0**attempt, 30.0))
        request = urllib.request.Request(url, data=data, headers=headers, method="GET" if data is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:500]
            if error.code not in RETRYABLE_STATUS:
                raise PolicyError(f"{url} refused the request (HTTP {error.code}): {detail}") from None
            last = f"HTTP {error.code}: {detail}"
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            last = f"{type(error).__name__}: {getattr(error, 'reason', error)}"
        except json.JSONDecodeError as error:
            raise PolicyError(f"{url} answered with something that is not JSON: {error}") from None
    raise PolicyError(f"{url} failed {retries + 1} times (timeout {timeout_s:g} s each); last: {last}")
