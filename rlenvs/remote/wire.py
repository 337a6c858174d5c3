"""What a served rlenvs env says on the wire: OpenEnv's protocol, for text envs.

OpenEnv's server answers every call with `{"observation": {...}, "reward": r, "done": d,
"metadata": {...}}` and takes actions as a JSON object checked against the env's action
schema (`GET /schema`). A text env fills those as follows, so that OpenEnv's
`GenericEnvClient` (and any client that reads OpenEnv's generic wire format) works
unchanged, and `RemoteEnv` gets back exactly what the env's `step` returned:

| gymnasium | on the wire |
|---|---|
| the reply (`action`) | `{"message": reply}`: OpenEnv's convention for a text action |
| `obs` | `observation.text` |
| `terminated`, `truncated` | `observation.terminated`, `observation.truncated`; `done` is either |
| `reward` | `reward` |
| `info` | `metadata` (JSON: the envs' infos are plain JSON values) |

WebSocket messages (`/ws`, one env per connection): `reset` (data: `seed`, `options`,
`episode_id`), `step` (data: the action), `state`, `close`, and, where the server allows it,
`oracle` (rlenvs' own: a gold reply for the current state). Errors come back as
`{"type": "error", "data": {"message", "code"}}` with OpenEnv's codes, plus rlenvs' own:
`STEP_TIMEOUT` for a call that overran the server's per-step limit, `CLIENT_CAPACITY_REACHED`
for a client (peer address) that holds its share of sessions, `SERVER_DRAINING` for a server
that is stopping, `UNAUTHORIZED` for a missing or wrong token.

A request is bounded before it is parsed: its size by the env's longest action
(`max_request_bytes`), its JSON by `MAX_JSON_TOKENS` structural tokens and `MAX_JSON_DEPTH`
levels (`parse_json`), so no request can make the server build more objects than its
few fields need.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rlenvs.core.failures import short_error

ACTION_FIELD = "message"
DEFAULT_MAX_SESSIONS = 64
DEFAULT_STEP_TIMEOUT_S = 300.0
"""The server's limit on one reset or step (a sandboxed step's own limits are far below it)."""
DEFAULT_IDLE_TIMEOUT_S = 900.0
"""A session with no message for this long is closed (longer than any generation round)."""
DEFAULT_DRAIN_TIMEOUT_S = 60.0
"""How long a stopping server (SIGTERM) waits for the requests it is answering."""
CONNECTION_HEADROOM = 64
"""Open connections a server takes beyond one per session (the default --max-connections is
--max-sessions plus this): HTTP calls (RemoteEnv's /schema and /metadata, /reset, /step,
probes) and connections still sending their request heads."""
MAX_MESSAGE_BYTES = 100 * 2**20
"""The largest answer a client takes (OpenEnv's client default, 100 MiB): observations can be big."""
JSON_BYTES_PER_CHAR = 12
"""The most bytes one character of a str takes in JSON text: a code point outside the BMP,
written by an ASCII-only encoder (Python's and OpenEnv's default) as two \\uXXXX escapes."""
REQUEST_OVERHEAD_BYTES = 64 * 2**10
"""Room in a request beyond its action: the envelope, a reset's seed, options and episode id."""
MAX_JSON_TOKENS = 10_000
"""Structural JSON tokens (`{ } [ ] , :`) one request may hold. A step has four; a reset's
options a few dozen. `[{},{},...]` in a 12 MiB frame has 4 million, which json.loads would turn
into 4 million dicts (about 300 MB): refused before parsing, in one pass that stops at the cap."""
MAX_JSON_DEPTH = 32
"""Nesting levels one request may hold (a reset's options are a flat object in every rlenvs env)."""
SERVE_TOKEN_ENV = "RLENVS_SERVE_TOKEN"
"""The environment variable both `rlenvs serve` and `RemoteEnv` read the bearer token from."""
MIN_TOKEN_LENGTH = 16
"""A shorter token could be guessed: `secrets.token_urlsafe(32)` gives 43 characters."""
RESET_FIELDS = ("seed", "options", "episode_id")

# OpenEnv's error codes (openenv.core.env_server.types.WSErrorCode), and rlenvs' one more.
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
FACTORY_ERROR = "FACTORY_ERROR"
SESSION_ERROR = "SESSION_ERROR"
STEP_TIMEOUT = "STEP_TIMEOUT"
CLIENT_CAPACITY_REACHED = "CLIENT_CAPACITY_REACHED"
SERVER_DRAINING = "SERVER_DRAINING"
UNAUTHORIZED = "UNAUTHORIZED"


class WireError(ValueError):
    """A request that does not fit the protocol; `code` is the error code it gets."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def step_payload(observation: str, reward: float, terminated: bool, truncated: bool, info: dict) -> dict[str, Any]:
    _check_text_and_info(observation, info)
    return {
        "observation": {"text": observation, "terminated": bool(terminated), "truncated": bool(truncated)},
        "reward": float(reward),
        "done": bool(terminated or truncated),
        "metadata": info,
    }


def reset_payload(observation: str, info: dict) -> dict[str, Any]:
    _check_text_and_info(observation, info)
    return {
        "observation": {"text": observation, "terminated": False, "truncated": False},
        "reward": None,
        "done": False,
        "metadata": info,
    }


def _check_text_and_info(observation: Any, info: Any) -> None:
    if not isinstance(observation, str):
        raise TypeError(f"the observation is a {type(observation).__name__}, not the str a text env returns")
    if not isinstance(info, dict):
        raise TypeError(f"info is a {type(info).__name__}, not a dict")
    check_plain(info, "info")


def dumps(message: dict[str, Any]) -> str:
    """JSON text of a message. ASCII: a lone surrogate (any str is a valid reply) is escaped,
    not unencodable. NaN and infinities are written as Python's json writes and reads them."""
    return json.dumps(message)


def check_plain(value: Any, path: str = "metadata") -> None:
    """Raise TypeError, naming the place, for what JSON would not hand back as it is: a tuple
    (it comes back a list), a key that is not a str (it comes back a str), a numpy scalar or
    any other object. What the client gets must be what the env returned."""
    if value is None or isinstance(value, (str, int, float)):  # subclasses come back equal
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path} has the key {key!r}, a {type(key).__name__}: JSON keys are str")
            check_plain(item, f"{path}[{key!r}]")
        return
    if isinstance(value, list):
        for position, item in enumerate(value):
            check_plain(item, f"{path}[{position}]")
        return
    raise TypeError(
        f"{path} is a {type(value).__name__}, which JSON would not hand back as it is: return plain "
        "str, int, float, bool, None, list and dict values"
    )


def max_request_bytes(action_max_length: int) -> int:
    """The largest request (WebSocket message or HTTP body) a server of an env whose actions
    are at most `action_max_length` characters needs to take: any valid action fits."""
    return JSON_BYTES_PER_CHAR * action_max_length + REQUEST_OVERHEAD_BYTES


_JSON_STRING_OR_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.DOTALL)


def parse_json(raw: str | bytes) -> Any:
    """A request's JSON, refused (WireError, INVALID_JSON) before parsing if it holds more than
    MAX_JSON_TOKENS structural tokens or nests deeper than MAX_JSON_DEPTH: what it builds is
    then bounded by its size, not a multiple of it."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(
                INVALID_JSON, f"Invalid JSON: the request is not UTF-8 ({exc.reason} at byte {exc.start})"
            ) from None
    _check_json_shape(raw)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # not JSON; an int past Python's 4300 digits
        raise WireError(INVALID_JSON, f"Invalid JSON: {short_error(exc)}") from exc


def _check_json_shape(text: str) -> None:
    """Count the structural tokens outside strings, stopping at the first bound passed; a
    string is skipped whole by the regex, in C, however long."""
    tokens = depth = 0
    for match in _JSON_STRING_OR_STRUCTURE.finditer(text):
        char = text[match.start()]  # not match.group(): that would copy a long string
        if char == '"':
            continue
        tokens += 1
        if tokens > MAX_JSON_TOKENS:
            raise WireError(
                INVALID_JSON,
                f"Invalid JSON: more than {MAX_JSON_TOKENS} structural tokens ({{ }} [ ] , :); a request "
                "is a small object (a step is {'type': 'step', 'data': {'message': reply}})",
            )
        if char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise WireError(INVALID_JSON, f"Invalid JSON: nested deeper than {MAX_JSON_DEPTH} levels")
        elif char in "]}":
            depth -= 1


def parse_message(raw: str) -> tuple[str, dict[str, Any]]:
    """A client's WebSocket message as (type, data)."""
    message = parse_json(raw)
    if not isinstance(message, dict):
        raise WireError(VALIDATION_ERROR, f"a message is a JSON object with a 'type', got {type(message).__name__}")
    kind = message.get("type")
    if not isinstance(kind, str):
        raise WireError(VALIDATION_ERROR, "a message needs a 'type': reset, step, state or close")
    data = message.get("data", {})
    if not isinstance(data, dict):
        raise WireError(VALIDATION_ERROR, f"a {kind} message's 'data' is a JSON object, got {type(data).__name__}")
    unknown = sorted(set(message) - {"type", "data"})
    if unknown:
        raise WireError(VALIDATION_ERROR, f"a message has the keys 'type' and 'data' only, got also {unknown}")
    return kind, data


def reset_arguments(data: dict[str, Any]) -> tuple[int | None, dict | None, str | None]:
    """(seed, options, episode_id) of a reset request, each checked."""
    unknown = sorted(set(data) - set(RESET_FIELDS))
    if unknown:
        raise WireError(
            VALIDATION_ERROR,
            f"reset takes {', '.join(RESET_FIELDS)}; unknown: {', '.join(unknown)} "
            f"(a task is chosen with options, e.g. {{'options': {{'task_index': 3}}}})",
        )
    seed, options, episode_id = data.get("seed"), data.get("options"), data.get("episode_id")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise WireError(VALIDATION_ERROR, f"reset: seed must be an int >= 0 or null, got {seed!r}")
    if options is not None and not isinstance(options, dict):
        raise WireError(VALIDATION_ERROR, f"reset: options must be a JSON object or null, got {options!r}")
    if episode_id is not None and not isinstance(episode_id, str):
        raise WireError(VALIDATION_ERROR, f"reset: episode_id must be a string or null, got {episode_id!r}")
    return seed, options, episode_id


def action_text(data: dict[str, Any]) -> str:
    """The reply in a step request's action object."""
    if set(data) != {ACTION_FIELD} or not isinstance(data[ACTION_FIELD], str):
        raise WireError(
            VALIDATION_ERROR,
            f"a step's action is {{{ACTION_FIELD!r}: the model's reply as a string}}, got {_preview(data)}",
        )
    return data[ACTION_FIELD]


def schemas(action_bounds: tuple[int, int], observation_bounds: tuple[int, int]) -> dict[str, Any]:
    """`GET /schema`: JSON schemas of the action, observation and state; the text bounds,
    (min_length, max_length), are the env's spaces (`RemoteEnv` builds its spaces from them)."""

    def text(bounds: tuple[int, int], description: str) -> dict[str, Any]:
        return {"type": "string", "minLength": bounds[0], "maxLength": bounds[1], "description": description}

    return {
        "action": {
            "title": "TextAction",
            "type": "object",
            "properties": {ACTION_FIELD: text(action_bounds, "the model's whole reply for the turn")},
            "required": [ACTION_FIELD],
            "additionalProperties": False,
        },
        "observation": {
            "title": "TextObservation",
            "type": "object",
            "properties": {
                "text": text(observation_bounds, "the env's message: the prompt after reset, feedback after a step"),
                "terminated": {"type": "boolean"},
                "truncated": {"type": "boolean"},
            },
            "required": ["text", "terminated", "truncated"],
        },
        "state": {
            "title": "TextEnvState",
            "type": "object",
            "properties": {
                "episode_id": {"type": ["string", "null"]},
                "step_count": {"type": "integer", "minimum": 0},
                "env_id": {"type": "string"},
                "done": {"type": "boolean"},
            },
        },
    }


def text_bounds(schema: dict[str, Any], part: str) -> tuple[int, int]:
    """(min_length, max_length) of the text in a `/schema` answer's action or observation."""
    field = ACTION_FIELD if part == "action" else "text"
    try:
        text = schema[part]["properties"][field]
        return int(text.get("minLength", 0)), int(text["maxLength"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"the server's /schema has no text bounds for the {part} ({part}.properties.{field}.maxLength): "
            "is it an rlenvs env server (rlenvs serve)?"
        ) from exc


def _preview(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
