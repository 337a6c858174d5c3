"""Where a test connects: a `Connection` (file, line, host, what connects) and the reading of an
address string (`host_of`) and of whether its host stays on this machine (`is_local`)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rlenvs.envs.terminal.folder_files import short


@dataclass(frozen=True)
class Connection:
    """A place in a test file that opens a connection to a host off this machine."""

    line: int
    host: str
    """The remote host, as written (`38.80.122.117`, `api.github.com`)."""
    call: str
    """What connects: `requests.get`, `socket.create_connection`, `curl`, ..."""
    via: str | None = None
    """When the address is not a literal at the call: the name it came through (`BASE`)."""
    literal_line: int | None = None
    """Where the remote host is written, when that is not `line`."""
    code: str | None = None
    """The shell command line, for a script's connection."""
    path: Path | None = None
    """The file, set by `find_connection`."""

    def describe(self, relative: str) -> str:
        """`tests/test_outputs.py (line 12) calls requests.get with the address in `BASE`, which
        needs the network (it connects to 38.80.122.117, written on line 3)`."""
        if self.code is not None:
            what = f"runs `{short(self.code)}`"
        else:
            what = f"calls {self.call}" + (f" with the address in `{self.via}`" if self.via is not None else "")
        written = ""
        if self.literal_line is not None and self.literal_line != self.line:
            written = f", written on line {self.literal_line}"
        return f"{relative} (line {self.line}) {what}, which needs the network (it connects to {self.host}{written})"


# --- hosts ---------------------------------------------------------------------------------------

_HOSTNAME = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$")
URL_PREFIX = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
REMOTE_SCHEMES = frozenset(("http", "https", "ws", "wss", "ftp", "ftps", "sftp", "ssh", "git", "rsync"))
"""Schemes whose URLs name a host to reach; a module literal of one of them with a remote host
is what lets an address from a variable count as remote."""


def is_local(host: str) -> bool:
    """Whether `host` stays on this machine (or is no host of the internet's): loopback, the
    unspecified address, `localhost`, a unix socket path, a one-label name."""
    host = host.strip().strip("[]").lower().rstrip(".")
    if host in ("", "localhost", "ip6-localhost", "ip6-loopback", "*") or host.endswith(".localhost"):
        return True
    if host.startswith(("/", "unix:", "@", "%2f")):  # unix sockets (also abstract, URL-quoted)
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return "." not in host  # a compose service or the machine's own name
    return address.is_loopback or address.is_unspecified


def host_of(text: str) -> str | None:
    """The host an address string names (`http://h:80/x`, `h:80`, `h`, `[::1]:80`), or None
    when it is not an address (a phrase, a path, an HTTP method)."""
    text = text.strip()
    if not text:
        return ""  # `("", port)`: every interface of this machine
    if len(text) > 2048 or any(c.isspace() for c in text):
        return None
    lowered = text.lower()
    if lowered.startswith(("unix:", "http+unix://", "unix+", "/", "./", "../")):
        return "/"  # a socket or a file: local
    if URL_PREFIX.match(text):
        try:
            parts = urlsplit(text)
            host = parts.hostname
        except ValueError:
            return None
        return host if host is not None else ("/" if parts.scheme == "file" else None)
    if "@" in text:  # user@host or user@host:path
        text = text.rsplit("@", 1)[1]
    if text.startswith("["):
        end = text.find("]")
        return text[1:end] if end > 0 else None
    host = re.split(r"[:/?#]", text, maxsplit=1)[0]
    if host.count(":") >= 2:  # a bare IPv6 address
        host = text
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    return host if _HOSTNAME.match(host) and not host.isdigit() else None


def remote_host(text: str) -> str | None:
    host = host_of(text)
    return host if host is not None and not is_local(host) else None
