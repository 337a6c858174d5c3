"""Connections a served env takes: bounded in number, in the time to send a request head, and
in what they make the server log.

uvicorn gives a connection as long as it likes to send its request head: a client that
sends one header byte now and then (slowloris) holds a file descriptor forever, and enough of
them took every descriptor `rlenvs serve` had and locked the real clients out. uvicorn's
`limit_concurrency` would not help: it answers 503 to every new request once the count is
reached, the real clients' included. So the server's HTTP protocol (uvicorn's h11 one, whose
request head is capped at `HEAD_MAX_BYTES`) is wrapped here:

- a connection must send a whole request head within `head_timeout_s` of connecting (or of
  its last answer, on a kept-alive connection), else it is closed;
- at `max_connections` open connections, a new one closes the connection that has waited
  longest without a whole head, so clients that send whole requests always get in; only
  when every connection is a session or a request being served is the new one refused (503);
- these closes are counted and logged at most once a minute (`ConnectionGuard`), and
  uvicorn's own per-connection warnings go through `RepeatFilter`, so an attack does not
  fill the disk.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import Counter
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)
HEAD_MAX_BYTES = 16 * 2**10
"""A request head (request line and headers) still unfinished past this many bytes gets 400
(h11's bound: a head that arrives whole in one read, at most 256 KiB, is parsed as it is)."""
DEFAULT_HEAD_TIMEOUT_S = 10.0
"""How long a connection has to send a whole request head."""
FDS_PER_SESSION = 8
"""File descriptors a session may use besides its socket (a sandboxed step's pipes and files)."""
FDS_BASE = 64
"""File descriptors the process holds anyway (Python, the listener, logs, data files)."""
LOG_EVERY_S = 60.0
"""The shortest time between two log lines about the same kind of event."""
_REFUSAL = b"server at its connection limit (rlenvs serve --max-connections): retry later\n"
_REFUSAL_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n"
    b"content-length: " + str(len(_REFUSAL)).encode() + b"\r\n\r\n" + _REFUSAL
)


class ConnectionGuard:
    """The connections of one server still sending a request head, oldest first, with the
    deadline of each; and the counts of connections closed, for the log."""

    def __init__(self, max_connections: int, head_timeout_s: float) -> None:
        self.max_connections = max_connections
        self.head_timeout_s = head_timeout_s
        self._awaiting_head: dict[GuardedH11Protocol, asyncio.TimerHandle] = {}
        self._closed = _CountedLog(
            "closed {total} connections in the last minute or so: {counts} (rlenvs serve --max-connections "
            f"{max_connections}, a request head within {head_timeout_s:g} s)"
        )

    def admit(self, connection: GuardedH11Protocol, open_connections: set[Any]) -> bool:
        """Make room for `connection` (already counted in `open_connections`): close the
        connection that has waited longest for its head, or refuse this one if none is."""
        if len(open_connections) <= self.max_connections:
            return True
        oldest = next((waiting for waiting in self._awaiting_head if waiting is not connection), None)
        if oldest is None:
            self._closed.count("refused: every connection was a session or a request being served")
            return False
        self._close(oldest, open_connections, "evicted while still sending its request head")
        return True

    def await_head(self, connection: GuardedH11Protocol) -> None:
        """Start (again) the time `connection` has to send a whole request head."""
        self.head_received(connection)
        loop = asyncio.get_running_loop()
        self._awaiting_head[connection] = loop.call_later(self.head_timeout_s, self._head_overdue, connection)

    def head_received(self, connection: GuardedH11Protocol) -> None:
        timer = self._awaiting_head.pop(connection, None)
        if timer is not None:
            timer.cancel()

    def _head_overdue(self, connection: GuardedH11Protocol) -> None:
        self._close(connection, connection.connections, f"no whole request head within {self.head_timeout_s:g} s")

    def _close(self, connection: GuardedH11Protocol, open_connections: set[Any], why: str) -> None:
        self.head_received(connection)
        open_connections.discard(connection)  # what connection_lost does, soon; counted out now
        connection.transport.abort()
        self._closed.count(why)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under a `ConnectionGuard` (`bound_to` gives the class uvicorn takes)."""

    guard: ClassVar[ConnectionGuard]

    @classmethod
    def bound_to(cls, guard: ConnectionGuard) -> type[GuardedH11Protocol]:
        return type(cls.__name__, (cls,), {"guard": guard})

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        if not self.guard.admit(self, self.connections):
            self.connections.discard(self)
            transport.write(_REFUSAL_RESPONSE)
            transport.close()
            return
        self.guard.await_head(self)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # A whole head moves h11 past IDLE (a WebSocket upgrade hands the socket on meanwhile).
        if self.conn.their_state is not h11.IDLE:
            self.guard.head_received(self)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.guard.await_head(self)  # kept alive: the next request's head is on the same clock

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.head_received(self)
        super().connection_lost(exc)


class _CountedLog:
    """Counts events by kind; logs one warning with the counts, at most every LOG_EVERY_S."""

    def __init__(self, template: str) -> None:
        self.template = template
        self.counts: Counter[str] = Counter()
        self.next_log_at = 0.0

    def count(self, kind: str) -> None:
        self.counts[kind] += 1
        now = time.monotonic()
        if now >= self.next_log_at:
            counts = ", ".join(f"{number} {kind}" for kind, number in self.counts.items())
            logger.warning(self.template.format(total=self.counts.total(), counts=counts))
            self.counts.clear()
            self.next_log_at = now + LOG_EVERY_S


class RepeatFilter(logging.Filter):
    """Lets one warning (or worse) of each message template through every LOG_EVERY_S; the next
    one that passes says how many it stood for. uvicorn warns once per bad connection ("Invalid HTTP
    request received."), which an attacker can make as often as it connects."""

    def __init__(self) -> None:
        super().__init__()
        self._next_at: dict[tuple[str, object], float] = {}
        self._suppressed: Counter[tuple[str, object]] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:  # asked for (--log-level info): an access log is one line a request
            return True
        key = (record.name, record.msg)
        now = time.monotonic()
        if now < self._next_at.get(key, 0.0):
            self._suppressed[key] += 1
            return False
        self._next_at[key] = now + LOG_EVERY_S
        suppressed = self._suppressed.pop(key, 0)
        if suppressed:
            record.msg = f"{record.msg} (and {suppressed} more like it since the last one, not logged)"
        return True


REPEAT_FILTER = RepeatFilter()


def limit_repeated_logs(*names: str) -> None:
    """Put the one REPEAT_FILTER on these loggers (once each)."""
    for name in names:
        named = logging.getLogger(name)
        if REPEAT_FILTER not in named.filters:
            named.addFilter(REPEAT_FILTER)


def ensure_file_descriptors(max_connections: int, max_sessions: int) -> None:
    """Raise this process's soft limit on open files to what `max_connections` connections and
    `max_sessions` sessions need (up to the hard limit), so the connection cap, not the
    kernel, refuses connections; ValueError naming the fix if the hard limit is too low."""
    needed = max_connections + FDS_PER_SESSION * max_sessions + FDS_BASE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ValueError(
            f"{max_connections} connections and {max_sessions} sessions need about {needed} open files, and this "
            f"process may open at most {hard}: raise the limit (ulimit -n {needed}, or LimitNOFILE= in a systemd "
            "unit) or lower --max-connections and --max-sessions"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
