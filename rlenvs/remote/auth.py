"""The bearer token of a served env: who may make it run code.

A served env runs whatever code its clients send (a HumanEval reply is a program), so a server
reachable from other machines must know its clients. `rlenvs serve --token TOKEN` (or the
environment variable RLENVS_SERVE_TOKEN, which stays out of `ps`) makes every endpoint but
`/health` and the WebSocket upgrade ask for `Authorization: Bearer TOKEN`; without a token
the server only binds to loopback. `/health` stays open for load balancers and probes, which
send no headers; it tells session counts, nothing about the env or its tasks.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from typing import Any

from rlenvs.remote import wire

OPEN_PATHS = frozenset({"/health"})
"""What answers without a token: probes send none."""
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def resolve_token(token: str | None, *, what: str) -> str | None:
    """The token given, else RLENVS_SERVE_TOKEN, else None; a token too short to be secret is
    a ValueError naming `what` passed it and how to make a good one."""
    if token is None:
        token = os.environ.get(wire.SERVE_TOKEN_ENV) or None
        what = wire.SERVE_TOKEN_ENV
    if token is None:
        return None
    if not isinstance(token, str) or len(token) < wire.MIN_TOKEN_LENGTH or token != token.strip():
        raise ValueError(
            f"{what} must be a secret of at least {wire.MIN_TOKEN_LENGTH} characters without surrounding "
            "whitespace, e.g. the output of: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return token


def is_loopback(host: str) -> bool:
    """Whether `host` (what the server binds to) is reachable only from this machine."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return False


def require_token_off_loopback(host: str, token: str | None) -> None:
    """ValueError, naming the fix, for a server that would run code for anyone who reaches it."""
    if token is None and not is_loopback(host):
        raise ValueError(
            f"--host {host} lets other machines reach the server, and a served env runs the code it is sent: "
            f"set a token first (export {wire.SERVE_TOKEN_ENV}=$(python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))'), or --token TOKEN) and give it to the clients "
            f"(RemoteEnv(url, token=...) or {wire.SERVE_TOKEN_ENV} there too); or serve on 127.0.0.1"
        )


def authorization_headers(token: str | None) -> dict[str, str]:
    """The headers a client sends with `token` (none without one)."""
    return {} if token is None else {"Authorization": f"Bearer {token}"}


class BearerTokenAuth:
    """ASGI middleware: a request without `Authorization: Bearer <token>` gets 401 (a WebSocket
    upgrade too, before any session or env is made). The comparison takes the same time
    whatever the bytes presented, so the token cannot be guessed a byte at a time."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS or self._authorized(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await _refuse(send, "http.response.start", "http.response.body")
        else:
            await receive()  # websocket.connect
            await _refuse(send, "websocket.http.response.start", "websocket.http.response.body")

    def _authorized(self, scope: dict[str, Any]) -> bool:
        presented = [value for name, value in scope["headers"] if name == b"authorization"]
        return len(presented) == 1 and hmac.compare_digest(presented[0], self.expected)


async def _refuse(send: Any, start: str, body: str) -> None:
    detail = {
        "message": "this server needs its token: send the header 'Authorization: Bearer TOKEN' "
        f"(RemoteEnv(url, token=...) or {wire.SERVE_TOKEN_ENV}; OpenEnv's client: headers={{'Authorization': ...}})",
        "code": wire.UNAUTHORIZED,
    }
    content = json.dumps({"detail": detail}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(content)).encode()),
        (b"www-authenticate", b"Bearer"),
    ]
    await send({"type": start, "status": 401, "headers": headers})
    await send({"type": body, "body": content})
