"""`rlenvs serve`: any registered env behind OpenEnv's wire protocol (FastAPI and uvicorn).

    RLENVS_SERVE_TOKEN=... rlenvs serve rlenvs/HumanEval-v2 --host 0.0.0.0 --port 8000 --step-timeout 60

Endpoints, as OpenEnv's `HTTPEnvServer` lays them out (see `rlenvs.remote.wire` for the
payloads):

- `WS /ws`: one session per connection, one env per session, made when the client
  connects and closed when it leaves (a `close` message, a dropped socket, a missed
  keepalive ping, an answer it does not take within SEND_TIMEOUT_S, or no message for
  `idle_timeout_s`). Episodes live here.
- `POST /reset`, `POST /step`: stateless, as in OpenEnv: each request runs on a fresh env
  that is closed after it (a `/step` first resets it with the request's `seed` and `options`,
  so it plays a one-step episode). `GET /state` is that of no episode.
- `GET /schema`, `/health`, `/metadata`.

Failure stays inside its session: a malformed request gets an error and the session goes
on; an env that raises, a call that overruns `step_timeout_s`, or an info that JSON cannot
carry ends that session with an error (`session_ended: true`) and closes its env; the server
and the other sessions go on. A Python thread cannot be stopped, so an overrunning call is
abandoned: its thread (one per session) closes the env when the call returns, and
`/health` counts such calls. At `max_sessions` a new connection gets `CAPACITY_REACHED`, and
a client address at `max_sessions_per_client` gets `CLIENT_CAPACITY_REACHED`.

A served env runs the code it is sent, so the server is built to be exposed: a bearer token
(`rlenvs.remote.auth`, required off loopback), requests bounded in size and JSON shape before
they are parsed, large ones parsed off the event loop (`rlenvs.remote.wire`), connections
bounded in number and in the time to send a request head (`rlenvs.remote.guard`), and a
SIGTERM that drains: new sessions and requests are refused, those being answered finish
(up to `drain_timeout_s`), then the server closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from types import FrameType
from typing import Any, NamedTuple, TypeVar

import gymnasium as gym
import uvicorn
from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, Response
from starlette.requests import HTTPConnection

from rlenvs.core.checks import check_int, check_seconds
from rlenvs.core.clock import MIN_WAIT_S, CallClock, Tenant, timing
from rlenvs.core.failures import close_quietly, short_error
from rlenvs.remote import auth, guard, wire

logger = logging.getLogger(__name__)
WS_PING_INTERVAL_S = 20.0
"""uvicorn's keepalive: a client that vanishes without closing its socket is dropped (and its
env closed) after a missed ping, within twice this."""
CLOSE_CODE_TRY_AGAIN = 1013
"""WebSocket close code for a refused session (at capacity): "try again later"."""
CLOSE_CODE_INTERNAL = 1011
CLOSE_CODE_SERVICE_RESTART = 1012
"""WebSocket close code for a session ended because the server is stopping."""
SEND_TIMEOUT_S = 2 * WS_PING_INTERVAL_S
"""How long an answer may wait on a client that does not read it (a stopped trainer, a
partition) before its session ends: keepalive pings queue behind a blocked answer, so this,
not the ping, frees such a session."""
RESET_MISTAKES = (ValueError, TypeError, LookupError)
"""What an env's reset raises for options that pose no task (a task index out of range):
over HTTP a 422, the client's mistake, not a 500."""
START_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 5.0
CUT_OFF_GRACE_S = 1.0
"""After a drain's timeout, how long sessions whose calls were stopped get to say so."""
BODY_TIMEOUT_S = 60.0
"""How long an HTTP request's body may take to arrive (a 12 MiB body at 2 Mbit/s)."""
PARSE_INLINE_BYTES = 64 * 2**10
"""Requests up to this size are parsed on the event loop (well under a millisecond); larger
ones on a thread."""
DRAINING_MESSAGE = "the server is stopping (SIGTERM) and takes no new requests: open a session on another server"
Parsed = TypeVar("Parsed")
T = TypeVar("T")
SESSION_THREAD_PREFIX = "rlenvs-serve-session"


class SessionEnded(Exception):
    """The session's env is gone; `code` and the message go to the client before the socket
    closes (with `close_code`). `during`: the call that ended it (reset, step, ...), if an env
    call did."""

    def __init__(
        self, code: str, message: str, during: str | None = None, *, close_code: int = CLOSE_CODE_INTERNAL
    ) -> None:
        super().__init__(message)
        self.code = code
        self.during = during
        self.close_code = close_code


class ClientStalled(Exception):
    """The client took no data for SEND_TIMEOUT_S: it stopped reading, or its network did."""


class Refusal(NamedTuple):
    """Why a session may not open: the error code and message, and the HTTP status for /reset and /step."""

    code: str
    message: str
    http_status: int


class EnvServer:
    """The sessions of one env id; `app()` is the ASGI application that serves them."""

    def __init__(
        self,
        env_id: str,
        make_kwargs: Mapping[str, Any] | None = None,
        *,
        max_sessions: int = wire.DEFAULT_MAX_SESSIONS,
        max_sessions_per_client: int | None = None,
        step_timeout_s: float | None = wire.DEFAULT_STEP_TIMEOUT_S,
        allow_oracle: bool = False,
        idle_timeout_s: float | None = wire.DEFAULT_IDLE_TIMEOUT_S,
        token: str | None = None,
        max_connections: int | None = None,
        head_timeout_s: float = guard.DEFAULT_HEAD_TIMEOUT_S,
        make_env: Callable[..., gym.Env] | None = None,
    ) -> None:
        """`make_env`: a callable used instead of `gym.make(env_id, ...)` (for envs that are
        not registered; `env_id` is then only the name the server reports). `allow_oracle`:
        answer `oracle` messages with a gold reply; off by default, since whoever can reach
        the server would get the answers. `idle_timeout_s`: a session with no message for this
        long is closed (OpenEnv's session_timeout): the backstop for a client that stopped
        reading while a large answer was on its way, which no keepalive ping then reaches.
        `max_sessions_per_client`: sessions one peer address may hold (None: `max_sessions`;
        `rlenvs serve` defaults to half off loopback, `default_sessions_per_client`).
        `token`: every endpoint but /health asks for `Authorization: Bearer <token>` (None:
        no token; then `serve` binds only to loopback). `max_connections` (None: max_sessions
        + 64) and `head_timeout_s`: see `rlenvs.remote.guard`."""
        check_int("max_sessions", max_sessions, at_least=1, meaning="sessions held at once")
        check_int(
            "max_sessions_per_client",
            max_sessions_per_client,
            at_least=1,
            at_most=max_sessions,
            or_none="as many as max_sessions",
            meaning="sessions one client address may hold",
        )
        if max_connections is None:
            max_connections = max_sessions + wire.CONNECTION_HEADROOM
        check_int(
            "max_connections", max_connections, at_least=max_sessions + 1, meaning="open connections, > max_sessions"
        )
        check_seconds("step_timeout_s", step_timeout_s)
        check_seconds("idle_timeout_s", idle_timeout_s)
        check_seconds("head_timeout_s", head_timeout_s)
        if head_timeout_s is None:  # check_seconds takes None as "no limit": not here
            raise ValueError(
                "head_timeout_s must be a number of seconds > 0: a head with no deadline is slowloris' hold"
            )
        self.token = None if token is None else auth.resolve_token(token, what="token")
        self.idle_timeout_s = None if idle_timeout_s is None else float(idle_timeout_s)
        self.env_id = env_id
        self.make_kwargs = dict(make_kwargs or {})
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions if max_sessions_per_client is None else max_sessions_per_client
        self.max_connections = max_connections
        self.head_timeout_s = float(head_timeout_s)
        self.step_timeout_s = None if step_timeout_s is None else float(step_timeout_s)
        self.allow_oracle = allow_oracle
        self._make = make_env if make_env is not None else gym.make
        self._make_args = () if make_env is not None else (env_id,)
        self._lock = threading.Lock()
        self._active = 0
        self._held_by: Counter[str] = Counter()
        self._abandoned = 0
        self._busy = 0
        self._draining = False
        self.cut_off = asyncio.Event()
        """Set when a drain's grace period is over: env calls still running are given up on.
        Each run of the server makes its own (`_uvicorn`): an asyncio Event belongs to the
        event loop it is first awaited on."""
        # Make one env now: a bad id or kwargs fails `rlenvs serve` at start, not each client,
        # and the env's spaces give the schema's text bounds.
        probe = self.make_env()
        try:
            self.observation_bounds = _text_bounds(probe.observation_space, "observation")
            self.action_bounds = _text_bounds(probe.action_space, "action")
        finally:
            close_quietly(probe)
        self.max_request_bytes = wire.max_request_bytes(self.action_bounds[1])

    def make_env(self) -> gym.Env:
        return self._make(*self._make_args, **self.make_kwargs)

    # --- capacity ------------------------------------------------------------------------------

    def try_open(self, client: str) -> Refusal | None:
        """Count a new session of `client` (its address), or say why it may not open."""
        with self._lock:
            if self._draining:
                return Refusal(wire.SERVER_DRAINING, DRAINING_MESSAGE, 503)
            if self._active >= self.max_sessions:
                return Refusal(
                    wire.CAPACITY_REACHED,
                    f"the server holds its maximum of {self.max_sessions} sessions (rlenvs serve --max-sessions): "
                    "close one, or retry later",
                    503,
                )
            if self._held_by[client] >= self.max_sessions_per_client:
                return Refusal(
                    wire.CLIENT_CAPACITY_REACHED,
                    f"{client} holds its maximum of {self.max_sessions_per_client} sessions on this server "
                    "(rlenvs serve --max-sessions-per-client): close one first",
                    429,
                )
            self._active += 1
            self._held_by[client] += 1
            return None

    def release(self, client: str) -> None:
        with self._lock:
            self._active -= 1
            self._held_by[client] -= 1
            if not self._held_by[client]:
                del self._held_by[client]

    def abandon(self, future: Future) -> None:
        """Count a call that overran until its thread returns from it."""
        with self._lock:
            self._abandoned += 1

        def returned(_: Future) -> None:
            with self._lock:
                self._abandoned -= 1

        future.add_done_callback(returned)

    def health(self) -> dict[str, Any]:
        with self._lock:
            return {
                "status": "draining" if self._draining else "healthy",
                "active_sessions": self._active,
                "max_sessions": self.max_sessions,
                "abandoned_calls": self._abandoned,
            }

    # --- draining ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """Count a request from its arrival until its answer is sent: what a drain waits for."""
        with self._lock:
            self._busy += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1

    def start_draining(self) -> None:
        """Refuse new sessions and new requests; those being answered go on."""
        with self._lock:
            self._draining = True

    @property
    def draining(self) -> bool:
        return self._draining

    def cut_off_running_calls(self) -> None:
        """End the drain's grace: every call still running is cancelled and its session told."""
        self.cut_off.set()

    def drained(self) -> bool:
        """Whether a draining server has no request left to answer."""
        with self._lock:
            return self._draining and self._busy == 0

    # --- the application -----------------------------------------------------------------------

    def app(self) -> FastAPI:
        """The FastAPI application (behind the token check when there is a token)."""
        app = FastAPI(title=f"rlenvs: {self.env_id}", description="an rlenvs env behind OpenEnv's protocol")
        if self.token is not None:
            app.add_middleware(auth.BearerTokenAuth, token=self.token)
        server = self

        @app.get("/health")
        def health() -> Response:
            report = server.health()
            return JSONResponse(report, status_code=503 if report["status"] == "draining" else 200)

        @app.get("/metadata")
        def metadata() -> dict[str, Any]:
            from rlenvs import __version__

            return {
                "name": server.env_id,
                "description": _summary(server.env_id),
                "version": __version__,
                "step_timeout_s": server.step_timeout_s,
                "max_request_bytes": server.max_request_bytes,
            }

        @app.get("/schema")
        def schema() -> dict[str, Any]:
            return wire.schemas(server.action_bounds, server.observation_bounds)

        @app.get("/state")
        def state() -> dict[str, Any]:
            return {"episode_id": None, "step_count": 0, "env_id": server.env_id, "done": False}

        async def stateless(request: Request, steps: Callable[[Any], list[tuple[str, dict[str, Any]]]]) -> Response:
            client = _client_address(request)
            try:
                calls = steps(await _read_json_body(request, server.max_request_bytes))
            except wire.WireError as error:
                raise HTTPException(422, detail={"message": str(error), "code": error.code}) from None
            with server.busy():
                refusal = server.try_open(client)
                if refusal is not None:
                    raise HTTPException(refusal.http_status, detail={"message": refusal.message, "code": refusal.code})
                session = Session(server)
                try:
                    await session.start()
                    reply: dict[str, Any] = {}
                    for kind, data in calls:
                        reply = await session.handle(kind, data)
                    # wire.dumps, not JSONResponse: a lone surrogate in a reply is escaped, as on /ws
                    return Response(wire.dumps(reply["data"]), media_type="application/json")
                except wire.WireError as error:
                    raise HTTPException(422, detail={"message": str(error), "code": error.code}) from None
                except SessionEnded as error:
                    mistake = error.during == "reset" and isinstance(error.__cause__, RESET_MISTAKES)
                    raise HTTPException(
                        422 if mistake else 500, detail={"message": str(error), "code": error.code}
                    ) from None
                finally:
                    session.end()
                    server.release(client)

        @app.post("/reset")
        async def reset(request: Request) -> Response:
            return await stateless(request, _reset_calls)

        @app.post("/step")
        async def step(request: Request) -> Response:
            return await stateless(request, _step_calls)

        @app.websocket("/ws")
        async def websocket_session(websocket: WebSocket) -> None:
            await websocket.accept()
            client = _client_address(websocket)
            refusal = server.try_open(client)
            if refusal is not None:
                with contextlib.suppress(Exception):
                    await _send(websocket, _error(refusal.code, refusal.message, ended=True), CLOSE_TIMEOUT_S)
                    await asyncio.wait_for(websocket.close(code=CLOSE_CODE_TRY_AGAIN), CLOSE_TIMEOUT_S)
                return
            session = Session(server)
            close_code = 1000
            try:
                with server.busy():
                    await session.start()
                while await _answer_next(server, session, websocket):
                    pass
            except SessionEnded as error:
                close_code = error.close_code
                with contextlib.suppress(Exception):  # the client may be gone already
                    await _send(websocket, _error(error.code, str(error), ended=True), CLOSE_TIMEOUT_S)
            except (WebSocketDisconnect, ClientStalled):
                pass
            except Exception as error:  # a bug here must still end only this session, and say so
                close_code = CLOSE_CODE_INTERNAL
                logger.exception("session of %s failed", server.env_id)
                with contextlib.suppress(Exception):
                    await _send(
                        websocket, _error(wire.SESSION_ERROR, f"the session failed: {short_error(error)}", ended=True)
                    )
            finally:
                session.end()
                server.release(client)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(websocket.close(code=close_code), CLOSE_TIMEOUT_S)

        return app


async def _answer_next(server: EnvServer, session: Session, websocket: WebSocket) -> bool:
    """Wait for the client's next message and send its answer; False when the client closes.
    A malformed message gets an error and the session goes on; while the server drains, a new
    message ends the session (SessionEnded) instead of starting work."""
    message = await session.next_message(websocket)
    if message["type"] == "websocket.disconnect":
        return False
    with server.busy():
        if server.draining:
            raise SessionEnded(wire.SERVER_DRAINING, DRAINING_MESSAGE, close_code=CLOSE_CODE_SERVICE_RESTART)
        try:
            raw = message.get("text")
            if raw is None:
                raise wire.WireError(wire.VALIDATION_ERROR, "messages are JSON in text frames; got a binary frame")
            kind, data = await _parse(wire.parse_message, raw)
            if kind == "close":
                return False
            answer = wire.dumps(await session.while_connected(websocket, session.handle(kind, data)))
        except wire.WireError as error:
            answer = _error(error.code, str(error), ended=False)
        await _send(websocket, answer)
    return True


def _reset_calls(body: Any) -> list[tuple[str, dict[str, Any]]]:
    """`POST /reset`'s one call: its body (none: a reset with no arguments)."""
    if body is None:
        return [("reset", {})]
    if not isinstance(body, dict):
        raise wire.WireError(wire.VALIDATION_ERROR, "a reset request is a JSON object: {'seed': ..., 'options': ...}")
    return [("reset", body)]


def _step_calls(body: Any) -> list[tuple[str, dict[str, Any]]]:
    """`POST /step`'s calls: the env is fresh, so a reset with the body's seed and options, then the step."""
    if not isinstance(body, dict) or not isinstance(body.get("action"), dict):
        raise wire.WireError(
            wire.VALIDATION_ERROR,
            f"a step request is {{'action': {{{wire.ACTION_FIELD!r}: reply}}, 'seed': ..., 'options': ...}}: "
            "the env is fresh, so it is reset with seed and options first",
        )
    extra = {key: value for key, value in body.items() if key not in ("action", "timeout_s", "request_id")}
    return [("reset", extra), ("step", body["action"])]


async def _read_json_body(request: Request, limit: int) -> Any:
    """The request's JSON body (None if empty): 413 past `limit` bytes (by its Content-Length,
    or as it arrives), 408 unless all of it arrives within BODY_TIMEOUT_S."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, detail=_too_big(int(declared), limit))
    body = bytearray()
    try:
        async with asyncio.timeout(BODY_TIMEOUT_S):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise HTTPException(413, detail=_too_big(len(body), limit))
    except TimeoutError:
        raise HTTPException(
            408,
            detail={"message": f"the body did not arrive within {BODY_TIMEOUT_S:g} s", "code": wire.VALIDATION_ERROR},
        ) from None
    return await _parse(wire.parse_json, bytes(body)) if body else None


def _too_big(size: int, limit: int) -> dict[str, str]:
    return {
        "message": f"the request is {size} bytes or more; this server takes at most {limit} (its env's longest "
        "action as JSON, and 64 KiB for the rest): send a shorter reply",
        "code": wire.VALIDATION_ERROR,
    }


async def _parse(parse: Callable[[Any], Parsed], raw: str | bytes) -> Parsed:
    """`parse(raw)`: at once if small, else on a thread, so that scanning and parsing a request
    of megabytes does not hold the event loop, and with it every other session's answers."""
    if len(raw) <= PARSE_INLINE_BYTES:
        return parse(raw)
    return await asyncio.to_thread(parse, raw)


def _client_address(connection: HTTPConnection) -> str:
    """The peer's address, what per-client session caps count by (the proxy's address behind a
    proxy uvicorn does not trust; uvicorn trusts X-Forwarded-For from 127.0.0.1 only)."""
    return connection.client.host if connection.client is not None else "unknown"


class Session:
    """One client's env, its episode bookkeeping, and the one thread its calls run on."""

    def __init__(self, server: EnvServer) -> None:
        self.server = server
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=SESSION_THREAD_PREFIX)
        self.env: gym.Env | None = None
        self.episode_id: str | None = None
        self.step_count = 0
        self.phase = "new"  # new | active | over
        self.tenant = Tenant()
        """The session as a tenant of the process's shared workers (sandbox slots go to the
        tenant that has used them least: `rlenvs.sandbox.execution.slots`)."""
        self.clock: CallClock | None = None
        """The env call in flight, if any: cancelled when the session ends."""
        self._receiving: asyncio.Future[Any] | None = None
        """The client's next message, read while a call ran (`while_connected`)."""

    async def next_message(self, websocket: WebSocket) -> Any:
        """The client's next ASGI message (perhaps read already, during the last call)."""
        receiving = self._receiving or asyncio.ensure_future(websocket.receive())
        self._receiving = None
        try:
            return await asyncio.wait_for(receiving, self.server.idle_timeout_s)
        except TimeoutError:
            raise SessionEnded(
                wire.SESSION_ERROR,
                f"no message for {self.server.idle_timeout_s:g} s (rlenvs serve --idle-timeout): the session is closed",
            ) from None

    async def while_connected(self, websocket: WebSocket, work: Awaitable[T]) -> T:
        """`await work`, reading the client's next message meanwhile: a client that leaves
        mid-call has the call cancelled (`CallClock.cancel`: its sandbox run is stopped rather
        than left to run to its limit for nobody). A message that arrives instead is kept for
        `next_message`."""
        task = asyncio.ensure_future(work)
        if self._receiving is None:
            self._receiving = asyncio.ensure_future(websocket.receive())
        done, _ = await asyncio.wait({task, self._receiving}, return_when=asyncio.FIRST_COMPLETED)
        if task not in done and _is_disconnect(self._receiving) and self.clock is not None:
            self.clock.cancel()
        return await task

    async def start(self) -> None:
        try:
            self.env = await self._call(self.server.make_env)
        except SessionEnded:
            raise
        except Exception as exc:
            raise SessionEnded(wire.FACTORY_ERROR, f"making {self.server.env_id} failed: {short_error(exc)}") from exc

    async def handle(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        """The reply to one message; WireError for a bad request, SessionEnded when the env is gone."""
        env = self.env
        assert env is not None
        if kind == "reset":
            seed, options, episode_id = wire.reset_arguments(data)
            payload = await self._env_call(
                "reset", lambda: env.reset(seed=seed, options=options), lambda result: wire.reset_payload(*result)
            )
            self.episode_id = episode_id if episode_id is not None else str(uuid.uuid4())
            self.step_count, self.phase = 0, "active"
            return {"type": "observation", "data": payload}
        if kind == "step":
            if self.phase != "active":
                raise wire.WireError(
                    wire.VALIDATION_ERROR,
                    "step before reset: send a reset first"
                    if self.phase == "new"
                    else "the episode is over: send a reset before stepping again",
                )
            action = wire.action_text(data)
            payload = await self._env_call("step", lambda: env.step(action), lambda result: wire.step_payload(*result))
            self.step_count += 1
            if payload["done"]:
                self.phase = "over"
            return {"type": "observation", "data": payload}
        if kind == "state":
            return {"type": "state", "data": self.state()}
        if kind == "oracle":
            if not self.server.allow_oracle:
                raise wire.WireError(
                    wire.UNKNOWN_TYPE,
                    "this server does not hand out gold replies: start it with rlenvs serve --oracle to allow 'oracle'",
                )
            if self.phase != "active":
                raise wire.WireError(wire.VALIDATION_ERROR, "oracle needs an episode going: send a reset first")
            try:
                action = await self._call(env.get_wrapper_attr("oracle_action"))
            except SessionEnded:
                raise
            except Exception as exc:  # oracle_action only reads the env: the episode goes on
                raise wire.WireError(wire.EXECUTION_ERROR, f"oracle_action failed: {short_error(exc)}") from exc
            return {"type": "oracle", "data": {"action": action}}
        raise wire.WireError(
            wire.UNKNOWN_TYPE,
            f"Unknown message type: {kind!r} (reset, step, state, close"
            + (", oracle)" if self.server.allow_oracle else ")"),
        )

    def state(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "step_count": self.step_count,
            "env_id": self.server.env_id,
            "done": self.phase == "over",
        }

    async def _env_call(self, what: str, call: Callable[[], Any], shape: Callable[[Any], dict[str, Any]]) -> Any:
        """`shape(call())`, the payload of what the env returned; an env that raised, or
        returned what the wire cannot carry as it is (a reward that is no number, an info
        value JSON would change), ends the session here, not mid-send."""
        try:
            return shape(await self._call(call))
        except SessionEnded:
            raise
        except Exception as exc:
            self.discard()
            raise SessionEnded(
                wire.EXECUTION_ERROR,
                f"{self.server.env_id}'s {what} raised {short_error(exc)}; the session is closed",
                during=what,
            ) from exc

    async def _call(self, call: Callable[[], Any]) -> Any:
        """`call()` on the session's thread, within the server's step timeout counted in working
        time (`rlenvs.core.clock`: the wait for a sandbox slot is other sessions' doing, not
        this call's); a call past it is cancelled, which stops its sandbox wait or run."""
        clock = self.clock = CallClock(self.tenant)
        future = self.executor.submit(_timed, clock, call)
        timeout = self.server.step_timeout_s
        wrapped = asyncio.wrap_future(future)
        try:
            done = await _finished_in_time(wrapped, clock, timeout, self.server.cut_off)
        except BaseException:  # the session's task was cancelled (server shutdown): so is its call
            clock.cancel()
            raise
        finally:
            self.clock = None
        if not done and self.server.cut_off.is_set():
            clock.cancel()
            self.server.abandon(future)
            self.discard()
            raise SessionEnded(
                wire.SERVER_DRAINING,
                "the server is stopping (SIGTERM) and its drain timeout (rlenvs serve --drain-timeout) passed "
                "before this call returned: the call was stopped; open a session on another server",
            )
        if not done:  # (a TimeoutError the env itself raises is the env's error, below)
            clock.cancel()
            self.server.abandon(future)
            self.discard()
            raise SessionEnded(
                wire.STEP_TIMEOUT,
                f"the call did not return within the server's step timeout of {timeout:g} s "
                "(rlenvs serve --step-timeout); the session's env is abandoned",
            )
        return wrapped.result()

    def discard(self) -> None:
        """Drop the env (its own thread closes it, after any call still running)."""
        env, self.env = self.env, None
        if env is not None:
            self.executor.submit(close_quietly, env)

    def end(self) -> None:
        if self.clock is not None:
            self.clock.cancel()
        if self._receiving is not None:
            self._receiving.cancel()
        self.discard()
        self.executor.shutdown(wait=False)


def _timed(clock: CallClock, call: Callable[[], T]) -> T:
    with timing(clock):
        return call()


async def _finished_in_time(
    future: asyncio.Future[Any], clock: CallClock, timeout: float | None, cut_off: asyncio.Event
) -> bool:
    """Wait for `future` while its call has worked under `timeout` seconds (None: for ever)
    and `cut_off` is not set; whether it finished. Working time grows no faster than the wall
    clock, so each wait may last what is left of it."""
    stop = asyncio.ensure_future(cut_off.wait())
    try:
        while timeout is None or clock.worked_s() < timeout:
            left = None if timeout is None else max(MIN_WAIT_S, clock.left_s(timeout))
            await asyncio.wait({future, stop}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if future.done() or stop.done():
                break
        return future.done()
    finally:
        stop.cancel()


def _is_disconnect(receiving: asyncio.Future[Any]) -> bool:
    return receiving.done() and not receiving.cancelled() and receiving.result()["type"] == "websocket.disconnect"


def _error(code: str, message: str, *, ended: bool) -> str:
    return wire.dumps({"type": "error", "data": {"message": message, "code": code, "session_ended": ended}})


async def _send(websocket: WebSocket, text: str, timeout_s: float = SEND_TIMEOUT_S) -> None:
    try:
        await asyncio.wait_for(websocket.send_text(text), timeout_s)
    except TimeoutError:
        raise ClientStalled() from None


def _text_bounds(space: gym.Space, what: str) -> tuple[int, int]:
    if not isinstance(space, gym.spaces.Text):
        raise TypeError(
            f"rlenvs serve serves text envs: the env's {what} space is {space!r}, not a gymnasium Text space"
        )
    return int(space.min_length), int(space.max_length)


def _summary(env_id: str) -> str:
    """The served id's one line, rlenvs' own or an installed package's; "" for an id registered
    with gymnasium by other means, which has none."""
    from rlenvs.envs.plugins import all_entries

    name = env_id.rpartition(":")[2]
    return next((entry.summary for entry in all_entries() if entry.id == name), "")


def default_sessions_per_client(max_sessions: int, host: str) -> int:
    """`rlenvs serve`'s default for --max-sessions-per-client: half the sessions on a server
    other machines reach, so one client (a runaway trainer, a stolen token) cannot hold them
    all; all of them on loopback, where every client has the same address."""
    return max_sessions if auth.is_loopback(host) else max(1, max_sessions // 2)


class DrainingUvicorn(uvicorn.Server):
    """uvicorn's server, stopped by SIGTERM once the env server has drained: new sessions and
    requests are refused meanwhile, and those being answered get their answers, for up to
    `drain_timeout_s`; calls still running then are stopped and their sessions get
    SERVER_DRAINING. A second SIGTERM, or SIGINT (Ctrl-C), stops at once."""

    def __init__(self, config: uvicorn.Config, env_server: EnvServer, drain_timeout_s: float) -> None:
        super().__init__(config)
        self.env_server = env_server
        self.drain_timeout_s = drain_timeout_s
        self.drain_requested_at: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # A signal handler: it may run while the event loop holds the env server's lock, so it
        # only notes the time; on_tick, on the loop, starts the drain.
        if sig == signal.SIGTERM and self.drain_requested_at is None:
            self.drain_requested_at = time.monotonic()
        else:
            super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self.drain_requested_at is not None:
            self.env_server.start_draining()
            overdue_s = time.monotonic() - self.drain_requested_at - self.drain_timeout_s
            if overdue_s >= 0:
                # Calls still running are stopped, and their sessions told so, before uvicorn
                # closes the connections: given CUT_OFF_GRACE_S to send that, it then exits.
                self.env_server.cut_off_running_calls()
            if self.env_server.drained() or overdue_s >= CUT_OFF_GRACE_S:
                self.should_exit = True
        return await super().on_tick(counter)


def _uvicorn(server: EnvServer, host: str, port: int, log_level: str, drain_timeout_s: float) -> DrainingUvicorn:
    server.cut_off = asyncio.Event()
    guard.ensure_file_descriptors(server.max_connections, server.max_sessions)
    config = uvicorn.Config(
        server.app(),
        host=host,
        port=port,
        log_level=log_level,
        # uvicorn's h11 protocol caps a request head (httptools' does not); the guard bounds
        # the time to send one and the connections held (rlenvs.remote.guard).
        http=guard.GuardedH11Protocol.bound_to(guard.ConnectionGuard(server.max_connections, server.head_timeout_s)),
        h11_max_incomplete_event_size=guard.HEAD_MAX_BYTES,
        ws="websockets-sansio",
        ws_ping_interval=WS_PING_INTERVAL_S,
        ws_ping_timeout=WS_PING_INTERVAL_S,
        ws_max_size=server.max_request_bytes,
        timeout_graceful_shutdown=math.ceil(CLOSE_TIMEOUT_S),
    )
    guard.limit_repeated_logs("uvicorn.error", __name__)
    return DrainingUvicorn(config, server, drain_timeout_s)


def serve(
    server: EnvServer,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "warning",
    drain_timeout_s: float = wire.DEFAULT_DRAIN_TIMEOUT_S,
    on_listening: Callable[[], None] | None = None,
) -> None:
    """Run `server` with uvicorn until interrupted (what `rlenvs serve` does). The port is bound
    first, so a port in use is a ValueError naming it before anything says "serving"; then
    `on_listening()` runs. Ctrl-C stops it and then raises KeyboardInterrupt, as Ctrl-C does in
    any Python call (`rlenvs serve` turns it into one line and status 130); SIGTERM drains it
    first (up to `drain_timeout_s`) and returns; env calls still running after either do not
    keep the process up. A server without a token binds only to loopback (ValueError naming the fix)."""
    auth.require_token_off_loopback(host, server.token)
    check_seconds("drain_timeout_s", drain_timeout_s)
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} is not a TCP port: use 1-65535 (or 0 for any free one)")
    try:
        listener = socket.create_server((host, port))
    except OSError as error:
        raise ValueError(
            f"cannot listen on {host}:{port} ({error.strerror or error}): pick another --port or --host"
        ) from None
    if on_listening is not None:
        on_listening()
    interrupted = False
    try:
        _uvicorn(server, host, listener.getsockname()[1], log_level, drain_timeout_s).run(sockets=[listener])
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C (asyncio's CancelledError is one too)
        interrupted = True
    finally:
        listener.close()
    _exit_past_running_calls(130 if interrupted else 0)
    if interrupted:
        raise KeyboardInterrupt  # bare, after the shutdown: no traceback of uvicorn's internals chained


def _exit_past_running_calls(status: int) -> None:
    """End the process now if env calls are still running on session threads after
    CLOSE_TIMEOUT_S: Python would otherwise wait for them (a hung step: forever) at exit."""
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    for thread in threading.enumerate():
        if thread.name.startswith(SESSION_THREAD_PREFIX):
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
    running = sum(thread.name.startswith(SESSION_THREAD_PREFIX) for thread in threading.enumerate())
    if running:
        logger.warning("%d env call(s) still running at exit; the process ends without them", running)
        logging.shutdown()
        os._exit(status)


@contextlib.contextmanager
def serving(server: EnvServer, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run `server` on a background thread of this process; yields its URL (port 0: a free
    port). For notebooks and tests; a fleet runs `rlenvs serve` instead."""
    auth.require_token_off_loopback(host, server.token)
    listener = socket.create_server((host, port))
    runner = _uvicorn(server, host, listener.getsockname()[1], "warning", wire.DEFAULT_DRAIN_TIMEOUT_S)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [listener]}, name="rlenvs-serve", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not runner.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the env server for {server.env_id} did not start within {START_TIMEOUT_S:g} s")
            time.sleep(0.01)
        yield f"http://{host}:{listener.getsockname()[1]}"
    finally:
        runner.should_exit = True
        thread.join(timeout=START_TIMEOUT_S)
        listener.close()
