"""`rlenvs serve`: any registered env behind OpenEnv's wire protocol (FastAPI and uvicorn).

    rlenvs serve rlenvs/HumanEval-v2 --port 8000 --max-sessions 64 --step-timeout 60

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
`/health` counts such calls. At `max_sessions` a new connection gets `CAPACITY_REACHED`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Annotated, Any

import gymnasium as gym
from fastapi import Body, FastAPI, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import Response

from rlenvs.core.checks import check_int, check_seconds
from rlenvs.remote import wire
from rlenvs.vector.calls import close_quietly, short_error

logger = logging.getLogger(__name__)
WS_PING_INTERVAL_S = 20.0
"""uvicorn's keepalive: a client that vanishes without closing its socket is dropped (and its
env closed) after a missed ping, within twice this."""
CLOSE_CODE_TRY_AGAIN = 1013
"""WebSocket close code for a refused session (at capacity): "try again later"."""
CLOSE_CODE_INTERNAL = 1011
SEND_TIMEOUT_S = 2 * WS_PING_INTERVAL_S
"""How long an answer may wait on a client that does not read it (a stopped trainer, a
partition) before its session ends: keepalive pings queue behind a blocked answer, so this,
not the ping, frees such a session."""
RESET_MISTAKES = (ValueError, TypeError, LookupError)
"""What an env's reset raises for options that pose no task (a task index out of range):
over HTTP a 422, the client's mistake, not a 500."""
START_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 5.0


class SessionEnded(Exception):
    """The session's env is gone; `code` and the message go to the client before the socket
    closes. `during`: the call that ended it (reset, step, ...), if an env call did."""

    def __init__(self, code: str, message: str, during: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.during = during


class ClientStalled(Exception):
    """The client took no data for SEND_TIMEOUT_S: it stopped reading, or its network did."""


class EnvServer:
    """The sessions of one env id; `app()` is the ASGI application that serves them."""

    def __init__(
        self,
        env_id: str,
        make_kwargs: Mapping[str, Any] | None = None,
        *,
        max_sessions: int = wire.DEFAULT_MAX_SESSIONS,
        step_timeout_s: float | None = wire.DEFAULT_STEP_TIMEOUT_S,
        allow_oracle: bool = False,
        idle_timeout_s: float | None = wire.DEFAULT_IDLE_TIMEOUT_S,
        make_env: Callable[..., gym.Env] | None = None,
    ) -> None:
        """`make_env`: a callable used instead of `gym.make(env_id, ...)` (for envs that are
        not registered; `env_id` is then only the name the server reports). `allow_oracle`:
        answer `oracle` messages with a gold reply; off by default, since whoever can reach
        the server would get the answers. `idle_timeout_s`: a session with no message for this
        long is closed (OpenEnv's session_timeout): the backstop for a client that stopped
        reading while a large answer was on its way, which no keepalive ping then reaches."""
        check_int("max_sessions", max_sessions, at_least=1, meaning="sessions held at once")
        check_seconds("step_timeout_s", step_timeout_s)
        check_seconds("idle_timeout_s", idle_timeout_s)
        self.idle_timeout_s = None if idle_timeout_s is None else float(idle_timeout_s)
        self.env_id = env_id
        self.make_kwargs = dict(make_kwargs or {})
        self.max_sessions = max_sessions
        self.step_timeout_s = None if step_timeout_s is None else float(step_timeout_s)
        self.allow_oracle = allow_oracle
        self._make = make_env if make_env is not None else gym.make
        self._make_args = () if make_env is not None else (env_id,)
        self._lock = threading.Lock()
        self._active = 0
        self._abandoned = 0
        # Make one env now: a bad id or kwargs fails `rlenvs serve` at start, not each client,
        # and the env's spaces give the schema's text bounds.
        probe = self.make_env()
        try:
            self.observation_bounds = _text_bounds(probe.observation_space, "observation")
            self.action_bounds = _text_bounds(probe.action_space, "action")
        finally:
            close_quietly(probe)

    def make_env(self) -> gym.Env:
        return self._make(*self._make_args, **self.make_kwargs)

    # --- capacity ------------------------------------------------------------------------------

    def try_open(self) -> bool:
        with self._lock:
            if self._active >= self.max_sessions:
                return False
            self._active += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._active -= 1

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
                "status": "healthy",
                "active_sessions": self._active,
                "max_sessions": self.max_sessions,
                "abandoned_calls": self._abandoned,
            }

    # --- the application -----------------------------------------------------------------------

    def app(self) -> FastAPI:
        """The FastAPI application."""
        app = FastAPI(title=f"rlenvs: {self.env_id}", description="an rlenvs env behind OpenEnv's protocol")
        server = self

        @app.get("/health")
        def health() -> dict[str, Any]:
            return server.health()

        @app.get("/metadata")
        def metadata() -> dict[str, Any]:
            from rlenvs import __version__

            return {
                "name": server.env_id,
                "description": _summary(server.env_id),
                "version": __version__,
                "step_timeout_s": server.step_timeout_s,
            }

        @app.get("/schema")
        def schema() -> dict[str, Any]:
            return wire.schemas(server.action_bounds, server.observation_bounds)

        @app.get("/state")
        def state() -> dict[str, Any]:
            return {"episode_id": None, "step_count": 0, "env_id": server.env_id, "done": False}

        async def stateless(steps: list[tuple[str, dict[str, Any]]]) -> Response:
            if not server.try_open():
                raise HTTPException(503, detail=server.capacity_message())
            session = Session(server)
            try:
                await session.start()
                reply: dict[str, Any] = {}
                for kind, data in steps:
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
                server.release()

        @app.post("/reset")
        async def reset(request: Annotated[dict[str, Any], Body(default_factory=dict)]) -> Response:
            return await stateless([("reset", request)])

        @app.post("/step")
        async def step(request: Annotated[dict[str, Any], Body()]) -> Response:
            if not isinstance(request.get("action"), dict):
                raise HTTPException(
                    422,
                    detail={
                        "message": f"a step request is {{'action': {{{wire.ACTION_FIELD!r}: reply}}, 'seed': ..., "
                        "'options': ...}: the env is fresh, so it is reset with seed and options first",
                        "code": wire.VALIDATION_ERROR,
                    },
                )
            extra = {key: value for key, value in request.items() if key not in ("action", "timeout_s", "request_id")}
            return await stateless([("reset", extra), ("step", request["action"])])

        @app.websocket("/ws")
        async def websocket_session(websocket: WebSocket) -> None:
            await websocket.accept()
            if not server.try_open():
                with contextlib.suppress(Exception):
                    await _send(
                        websocket, _error(wire.CAPACITY_REACHED, server.capacity_message(), ended=True), CLOSE_TIMEOUT_S
                    )
                    await asyncio.wait_for(websocket.close(code=CLOSE_CODE_TRY_AGAIN), CLOSE_TIMEOUT_S)
                return
            session = Session(server)
            close_code = 1000
            try:
                await session.start()
                while True:
                    try:
                        message = await asyncio.wait_for(websocket.receive(), server.idle_timeout_s)
                    except TimeoutError:
                        raise SessionEnded(
                            wire.SESSION_ERROR,
                            f"no message for {server.idle_timeout_s:g} s (rlenvs serve --idle-timeout): "
                            "the session is closed",
                        ) from None
                    if message["type"] == "websocket.disconnect":
                        break
                    raw = message.get("text")
                    try:
                        if raw is None:
                            raise wire.WireError(
                                wire.VALIDATION_ERROR, "messages are JSON in text frames; got a binary frame"
                            )
                        kind, data = wire.parse_message(raw)
                        if kind == "close":
                            break
                        reply = await session.handle(kind, data)
                    except wire.WireError as error:
                        await _send(websocket, _error(error.code, str(error), ended=False))
                        continue
                    await _send(websocket, wire.dumps(reply))
            except SessionEnded as error:
                close_code = CLOSE_CODE_INTERNAL
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
                server.release()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(websocket.close(code=close_code), CLOSE_TIMEOUT_S)

        return app

    def capacity_message(self) -> str:
        return (
            f"the server holds its maximum of {self.max_sessions} sessions (rlenvs serve --max-sessions): "
            "close one, or retry later"
        )


class Session:
    """One client's env, its episode bookkeeping, and the one thread its calls run on."""

    def __init__(self, server: EnvServer) -> None:
        self.server = server
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlenvs-serve-session")
        self.env: gym.Env | None = None
        self.episode_id: str | None = None
        self.step_count = 0
        self.phase = "new"  # new | active | over

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
        future = self.executor.submit(call)
        timeout = self.server.step_timeout_s
        wrapped = asyncio.wrap_future(future)
        done, _ = await asyncio.wait({wrapped}, timeout=timeout)
        if not done:  # (a TimeoutError the env itself raises is the env's error, below)
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
        self.discard()
        self.executor.shutdown(wait=False)


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
    from rlenvs.envs.catalog import CATALOG

    for entry in CATALOG:
        if entry.id == env_id:
            return entry.summary
    return ""


def _uvicorn(server: EnvServer, host: str, port: int, log_level: str) -> Any:
    import uvicorn

    config = uvicorn.Config(
        server.app(),
        host=host,
        port=port,
        log_level=log_level,
        ws="websockets-sansio",
        ws_ping_interval=WS_PING_INTERVAL_S,
        ws_ping_timeout=WS_PING_INTERVAL_S,
        ws_max_size=wire.MAX_MESSAGE_BYTES,
    )
    return uvicorn.Server(config)


def serve(
    server: EnvServer,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "warning",
    on_listening: Callable[[], None] | None = None,
) -> None:
    """Run `server` with uvicorn until interrupted (what `rlenvs serve` does). The port is bound
    first, so a port in use is a ValueError naming it before anything says "serving"; then
    `on_listening()` runs. Ctrl-C ends it quietly."""
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
    try:
        _uvicorn(server, host, listener.getsockname()[1], log_level).run(sockets=[listener])
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C: stopping is what was asked
        pass
    finally:
        listener.close()


@contextlib.contextmanager
def serving(server: EnvServer, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run `server` on a background thread of this process; yields its URL (port 0: a free
    port). For notebooks and tests; a fleet runs `rlenvs serve` instead."""
    listener = socket.create_server((host, port))
    runner = _uvicorn(server, host, listener.getsockname()[1], "warning")
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
