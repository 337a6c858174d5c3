"""`RemoteEnv`: a served env (`rlenvs serve`) as a `gymnasium.Env` in this process.

    env = RemoteEnv("http://cpu-node:8000")
    obs, info = env.reset(seed=0, options={"task_index": 3})
    obs, reward, terminated, truncated, info = env.step(reply)

It holds one WebSocket session (opened on the first reset, and again after the server ended
one), so it goes wherever an env goes: `check_env`, the testing kit, gymnasium's vector envs,
`EnvPool` (`EnvPool("http://cpu-node:8000", 64)` steps 64 sessions). What the env returned
comes back unchanged (see `rlenvs.remote.wire`).

Failures are exceptions, typed for `EnvPool`: the server or the connection going away is
`EnvLostError` (an episode's state went with it); a call the server gave up on, or that got
no answer within `timeout_s`, is `EnvTimeoutError`; an env that raised on the server, or a
request it refused, is `RemoteEnvError` with the server's code and message; a server that is
stopping (`SERVER_DRAINING`) is `EnvLostError`, like one that went away. The keepalive ping
(every 20 s) notices a server that vanished without closing the socket.

A server with a token (`rlenvs serve --token`, or RLENVS_SERVE_TOKEN) takes
`RemoteEnv(url, token=...)`; without `token=`, RemoteEnv reads RLENVS_SERVE_TOKEN too.
"""

from __future__ import annotations

import json
import socket
import struct
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import gymnasium as gym
from gymnasium.error import ResetNeeded

from rlenvs.core.failures import EnvLostError, EnvTimeoutError, short_error
from rlenvs.core.spaces import UnicodeText
from rlenvs.remote import auth, wire

TIMEOUT_MARGIN_S = 30.0
"""By default a call waits for the server's own step limit plus this, so that the server's
STEP_TIMEOUT (which names the cause) arrives before the client gives up."""
PING_INTERVAL_S = 20.0
CLOSE_TIMEOUT_S = 2.0
"""How long close() waits for the server's side of the closing handshake."""
SEND_TIMEOUT_S = 3 * PING_INTERVAL_S
"""The longest a request may take to be sent when there is no timeout_s."""


class RemoteEnvError(RuntimeError):
    """The server's error answer: `code` (OpenEnv's codes, e.g. EXECUTION_ERROR) and whether
    it ended the session (`session_ended`: the next reset opens a new one)."""

    def __init__(self, code: str, message: str, *, session_ended: bool) -> None:
        super().__init__(f"{message} (code: {code})")
        self.code = code
        self.session_ended = session_ended


class RemoteEnv(gym.Env[str, str]):
    """The env served at `url` (`http://host:port` or `ws://host:port`).

    `timeout_s`: the longest one call waits for its answer; default: the server's step
    timeout plus 30 s (no limit if the server has none; the keepalive still notices a dead
    server). `connect_timeout_s`: for opening a session and for the HTTP calls. `token`: the
    server's bearer token (default: the environment variable RLENVS_SERVE_TOKEN, if set).
    """

    metadata = {"render_modes": []}

    def __init__(
        self, url: str, *, timeout_s: float | None = None, connect_timeout_s: float = 10.0, token: str | None = None
    ) -> None:
        self.url, self.ws_url = _urls(url)
        self.connect_timeout_s = float(connect_timeout_s)
        self._headers = auth.authorization_headers(auth.resolve_token(token, what="RemoteEnv's token"))
        schema = self._get("/schema")
        server = self._get("/metadata")
        self.env_id = str(server.get("name", ""))
        self.server_step_timeout_s = server.get("step_timeout_s")
        if timeout_s is None and self.server_step_timeout_s is not None:
            timeout_s = float(self.server_step_timeout_s) + TIMEOUT_MARGIN_S
        self.timeout_s = timeout_s
        low, high = wire.text_bounds(schema, "observation")
        self.observation_space = UnicodeText(high, min_length=low)
        low, high = wire.text_bounds(schema, "action")
        self.action_space = UnicodeText(high, min_length=low)
        self.max_request_bytes = wire.max_request_bytes(high)
        """What the server takes in one message (rlenvs serve's cap): a longer request is refused here."""
        self._ws: Any = None
        self._active = False
        self._episode: list[Any] = []
        """The current episode as sent: its reset's data, then each reply (a copy replays it)."""
        self._replay = False

    # --- gymnasium -----------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._active = False
        if self._ws is None:
            self._connect()
        data: dict[str, Any] = {}
        if seed is not None:
            data["seed"] = seed
        if options is not None:
            data["options"] = options
        self._episode, self._replay = [], False
        payload = self._request({"type": "reset", "data": data}, "observation")
        self._episode, self._active = [data], True
        return payload["observation"]["text"], payload.get("metadata") or {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if not isinstance(action, str):
            raise TypeError(
                f"RemoteEnv.step: the action is the model's reply as a str, got {type(action).__name__}: "
                "decode token ids to text first"
            )
        if not self._active:
            raise ResetNeeded(
                f"RemoteEnv({self.url}): the episode is over: call reset() before stepping again"
                if self._episode
                else f"RemoteEnv({self.url}): call reset() first; there is no episode going"
            )
        self._catch_up()
        payload = self._request({"type": "step", "data": {wire.ACTION_FIELD: action}}, "observation")
        if payload["reward"] is None:
            self._drop()
            raise RemoteEnvError(
                wire.SESSION_ERROR,
                f"{self.url} answered a step without a reward; the session was dropped",
                session_ended=True,
            )
        self._episode.append(action)
        observation = payload["observation"]
        if payload["done"]:
            self._active = False
        return (
            observation["text"],
            float(payload["reward"]),
            bool(observation["terminated"]),
            bool(observation["truncated"]),
            payload.get("metadata") or {},
        )

    def oracle_action(self) -> str:
        """A gold reply for the current state (the server must run with --oracle)."""
        if not self._active:
            raise ResetNeeded(f"RemoteEnv({self.url}): oracle_action needs an episode going: reset first")
        self._catch_up()
        return self._request({"type": "oracle"}, "oracle")["action"]

    def state(self) -> dict[str, Any]:
        """The session's OpenEnv state: episode_id, step_count, env_id, done."""
        self._catch_up()
        if self._ws is None:
            return {"episode_id": None, "step_count": 0, "env_id": self.env_id, "done": False}
        return self._request({"type": "state"}, "state")

    def close(self) -> None:
        ws, self._ws, self._active = self._ws, None, False
        if ws is not None:
            try:
                ws.send(json.dumps({"type": "close"}))
            except Exception:  # the server may be gone; closing is all that is left
                pass
            ws.close()

    def __repr__(self) -> str:  # never the token
        return f"RemoteEnv({self.url!r}, env_id={self.env_id!r})"

    __str__ = __repr__  # gym.Env's own __str__ prints "<RemoteEnv instance>"

    # --- copies: a new session that replays the episode ------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """A copy or pickle holds the episode so far, not the connection: on its first call it
        opens its own session and replays the reset and the replies, which puts a deterministic
        env in the same state (what vector workers, checkpoints and tree search expect)."""
        state = self.__dict__.copy()
        state["_ws"], state["_replay"] = None, bool(self._active and self._episode)
        return state

    def _catch_up(self) -> None:
        if not self._replay:
            return
        reset, *replies = self._episode
        self._replay = False
        self._connect()
        self._request({"type": "reset", "data": reset}, "observation")
        for reply in replies:
            self._request({"type": "step", "data": {wire.ACTION_FIELD: reply}}, "observation")

    # --- the session ---------------------------------------------------------------------------

    def _connect(self) -> None:
        from websockets.sync.client import connect

        try:
            self._ws = connect(
                self.ws_url,
                open_timeout=self.connect_timeout_s,
                ping_interval=PING_INTERVAL_S,
                ping_timeout=PING_INTERVAL_S,
                max_size=wire.MAX_MESSAGE_BYTES,
                additional_headers=self._headers,
                compression=None,  # loopback and LAN: deflate costs more CPU than it saves
                close_timeout=CLOSE_TIMEOUT_S,
                legacy=True,  # the connection itself, held across calls (websockets 17's spelling)
            )
        except (OSError, TimeoutError) as exc:
            raise EnvLostError(f"cannot open a session at {self.ws_url}: {exc} (is `rlenvs serve` running?)") from exc
        except Exception as exc:  # the handshake was refused (websockets.exceptions.InvalidHandshake)
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if status == 401:
                raise self._unauthorized("/ws") from None
            raise EnvLostError(f"cannot open a session at {self.ws_url}: {exc}") from exc
        # A send to a server that stopped reading (stopped, or partitioned away) would block for
        # as long as TCP keeps the connection: bound it like the answer's wait.
        seconds = max(self.timeout_s if self.timeout_s is not None else SEND_TIMEOUT_S, 0.001)
        try:
            self._ws.socket.setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", int(seconds), int(seconds % 1 * 1e6))
            )
        except OSError:  # the server closed it at once (a session refused at capacity): the reason is queued
            pass

    def _request(self, message: dict[str, Any], expect: str) -> Any:
        from websockets.exceptions import ConnectionClosed

        ws = self._ws
        if ws is None:
            raise ResetNeeded(f"RemoteEnv({self.url}): the session has ended; call reset() to open a new one")
        text = wire.dumps(message)
        if len(text) > self.max_request_bytes:  # the server would close the session (1009, too big)
            raise ValueError(
                f"RemoteEnv({self.url}): this {message['type']} is {len(text)} bytes as JSON, and the server takes "
                f"at most {self.max_request_bytes} (the env's longest action as JSON, and 64 KiB more): "
                "send a shorter reply or smaller options"
            )
        try:
            try:
                ws.send(text)
            except ConnectionClosed:
                pass  # a session refused at once (at capacity) sent its reason first: read it below
            raw = ws.recv(timeout=self.timeout_s)
        except TimeoutError:
            self._drop()
            raise EnvTimeoutError(
                f"{self.url} did not answer a {message['type']} within timeout_s={self.timeout_s:g} s; "
                "the session was dropped"
            ) from None
        except ConnectionClosed as exc:
            self._drop()
            raise EnvLostError(
                f"the env server at {self.url} closed the session during a {message['type']} ({exc})"
            ) from None
        except OSError as exc:
            self._drop()
            raise EnvLostError(f"the connection to {self.url} failed during a {message['type']}: {exc}") from None
        try:
            kind, data = _parse_answer(raw, expect)
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            self._drop()  # the answers may be out of step with the requests now
            raise RemoteEnvError(
                wire.SESSION_ERROR,
                f"{self.url} answered a {message['type']} with what is not OpenEnv's protocol ({short_error(exc)}); "
                "the session was dropped",
                session_ended=True,
            ) from None
        if kind == "error":
            code, text = str(data.get("code", "UNKNOWN")), str(data.get("message", ""))
            ended = bool(data.get("session_ended", False))
            if ended:
                self._drop()
            if code == wire.STEP_TIMEOUT:
                raise EnvTimeoutError(f"{text} (code: {code})")
            if code == wire.SERVER_DRAINING:
                raise EnvLostError(f"{self.url}: {text} (code: {code})")
            raise RemoteEnvError(code, text, session_ended=ended)
        return data

    def _drop(self) -> None:
        """Forget the session at once: no closing handshake with a server that failed it."""
        ws, self._ws, self._active, self._episode = self._ws, None, False, []
        if ws is not None:
            try:
                ws.close_socket()
            except Exception:  # already broken
                pass

    def _get(self, path: str) -> dict[str, Any]:
        request = urllib.request.Request(self.url + path, headers=self._headers)
        try:
            with urllib.request.urlopen(request, timeout=self.connect_timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                raise self._unauthorized(path) from None
            raise EnvLostError(
                f"the env server at {self.url} answered {path} with HTTP {exc.code}: {exc.reason}"
            ) from exc
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise EnvLostError(
                f"cannot reach the env server at {self.url} ({path}): {exc} (is `rlenvs serve` running?)"
            ) from exc

    def _unauthorized(self, path: str) -> RemoteEnvError:
        given = "the token it was given is not the server's" if self._headers else "no token was given"
        return RemoteEnvError(
            wire.UNAUTHORIZED,
            f"the env server at {self.url} refused {path}: it needs its token, and {given} "
            f"(RemoteEnv(url, token=...), EnvPool(url, n, make_kwargs={{'token': ...}}) or {wire.SERVE_TOKEN_ENV})",
            session_ended=True,
        )


def _urls(url: str) -> tuple[str, str]:
    """(http base URL, ws session URL) of a server address."""
    if not isinstance(url, str):
        raise TypeError(f"url must be the server's address as a str, e.g. 'http://localhost:8000', got {url!r}")
    parts = urlsplit(url.rstrip("/"))
    schemes = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
    if parts.scheme not in schemes or not parts.netloc:
        raise ValueError(
            f"url must look like http://HOST:PORT (or https, ws, wss), got {url!r}: "
            "the address `rlenvs serve` prints when it starts"
        )
    http = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = parts.path.removesuffix("/ws")
    return (
        urlunsplit((http, parts.netloc, path, "", "")),
        urlunsplit((schemes[parts.scheme], parts.netloc, path + "/ws", "", "")),
    )


def _parse_answer(raw: Any, expect: str) -> tuple[str, dict[str, Any]]:
    """(type, data) of a server's answer, checked: an error, or the answer `expect`ed with
    the fields RemoteEnv reads. Raises ValueError, TypeError or KeyError otherwise."""
    if not isinstance(raw, str):
        raise TypeError("a binary frame")
    answer = json.loads(raw)
    if not isinstance(answer, dict) or not isinstance(answer.get("data"), dict):
        raise ValueError(f"not an object with a 'data' object: {raw[:80]!r}")
    kind, data = answer.get("type"), answer["data"]
    if kind == "error":
        return kind, data
    if kind != expect:
        raise ValueError(f"expected a {expect!r} answer, got {kind!r}")
    if kind == "observation":
        observation = data["observation"]
        if not (
            isinstance(observation, dict)
            and isinstance(observation["text"], str)
            and isinstance(observation["terminated"], bool)
            and isinstance(observation["truncated"], bool)
            and isinstance(data["done"], bool)
            and (data["reward"] is None or isinstance(data["reward"], (int, float)))
            and isinstance(data.get("metadata") or {}, dict)
        ):
            raise ValueError(f"an observation without its text, flags, reward or metadata: {raw[:120]!r}")
    elif kind == "oracle" and not isinstance(data.get("action"), str):
        raise ValueError("an oracle answer without its action")
    return kind, data
