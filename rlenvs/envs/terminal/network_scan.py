"""Tests that reach for the network: found in their text, so a folder that can never score is
refused when it loads rather than played for a 0.

The sandbox has no network when a task's tests run (bubblewrap's own network namespace; Docker
and Podman's `--network none` unless the user opts in). A test that POSTs the agent's answer to
a remote judge, downloads its expected output or clones a repository from a forge fails there
whatever the agent did: every episode of that task scores 0, a reward with no signal in it that
trains nothing and looks, in a corpus report, like a broken reference solution. So the loader
scans the tests (`find_connection`) and refuses such a folder by file, line and host.

What the scan must never do is refuse a test that only talks to the agent's own machine: tasks
ask for a web server on port 8080, a socket service, an SSH daemon, and their tests connect to
`localhost`. A false refusal costs a real task, so the rules only refuse what is certain to need
a route off the machine, and read code as code:

- Python (`python_connections`), every `.py` file under the tests folder, read with `ast`
  (comments, docstrings and strings that are only data are never calls): a call of a network
  client (requests, httpx, urllib.request, urllib3, http.client, aiohttp, socket, websocket(s),
  grpc, smtplib, ftplib, telnetlib, asyncio.open_connection, paramiko), directly or through an
  object one made (`requests.Session()`, `socket.socket()`, `httpx.Client()`), whose address is
  a literal naming a host off this machine, or a name whose every binding the module shows is
  such a literal (`os.environ.get("BASE_URL", "http://203.0.113.5")` counts by its default).
  An address the module cannot pin down (a parameter, `os.environ["URL"]`) is refused only when
  the same module holds a literal URL with a remote host (an `http://`, `https://`, `ws://`,
  `wss://` or `ftp://` string outside a docstring): the judge's address written in the file and
  passed around, as in LiveCodeBench Pro's tests.
- Shell (`shell_connections`), the test scripts (the runner as it will run, its fetching of test
  tools taken out): curl, wget, nc/ncat/netcat, ssh, scp, sftp, rsync, telnet, ftp and git
  (clone, fetch, pull, ls-remote) with a literal remote host; `$VAR` addresses are left to the
  loader's command check.

Local, never refused: `localhost` and `*.localhost`, loopback (127.0.0.0/8, ::1), the unspecified
address (0.0.0.0, ::, ""), unix sockets (a path, `unix:`, `http+unix://`), and one-label names
(`db`, `sandbox`): a compose service or the machine's own name, which reach no outside network
(a compose file of several services is refused on its own). A file that is not valid Python
(Python 2, a template) is not scanned: its tests fail on their own, visibly.

The scan reads the tests only; it never sees, and never changes, what an agent does or scores.
"""

from __future__ import annotations

import ast
import dataclasses
import ipaddress
import os
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rlenvs.envs.terminal.boilerplate import offline_runner
from rlenvs.envs.terminal.folder_files import short

MAX_SCANNED_BYTES = 2_000_000
"""A test file larger than this is not read (generated data, not test code)."""


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
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
_REMOTE_SCHEMES = frozenset(("http", "https", "ws", "wss", "ftp", "ftps", "sftp", "ssh", "git", "rsync"))
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
    if _URL.match(text):
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


def _remote(text: str) -> str | None:
    host = host_of(text)
    return host if host is not None and not is_local(host) else None


# --- Python --------------------------------------------------------------------------------------

_HTTP_VERBS = ("get", "post", "put", "patch", "delete", "head", "options")
_URL_FIRST = {
    **{f"requests.{verb}": 0 for verb in _HTTP_VERBS},
    "requests.request": 1,
    **{f"httpx.{verb}": 0 for verb in _HTTP_VERBS},
    "httpx.request": 1,
    "httpx.stream": 1,
    "urllib.request.urlopen": 0,
    "urllib.request.urlretrieve": 0,
    "urllib.request.Request": 0,
    "urllib3.request": 1,
    "urllib3.connection_from_url": 0,
    "urllib3.HTTPConnectionPool": 0,
    "urllib3.HTTPSConnectionPool": 0,
    "http.client.HTTPConnection": 0,
    "http.client.HTTPSConnection": 0,
    "aiohttp.request": 1,
    "socket.create_connection": 0,
    "socket.getaddrinfo": 0,
    "socket.gethostbyname": 0,
    "socket.gethostbyname_ex": 0,
    "websocket.create_connection": 0,
    "websocket.WebSocketApp": 0,
    "websockets.connect": 0,
    "websockets.client.connect": 0,
    "websockets.sync.client.connect": 0,
    "grpc.insecure_channel": 0,
    "grpc.secure_channel": 0,
    "grpc.aio.insecure_channel": 0,
    "grpc.aio.secure_channel": 0,
    "smtplib.SMTP": 0,
    "smtplib.SMTP_SSL": 0,
    "ftplib.FTP": 0,
    "ftplib.FTP_TLS": 0,
    "telnetlib.Telnet": 0,
    "asyncio.open_connection": 0,
}
"""Module-level calls that connect (or resolve a name), and which positional argument is the
address; `url`/`host`/`address`/`hostname`/`target`/`base_url` keywords are read too."""
_CLIENTS = {
    "requests.Session": {**dict.fromkeys(_HTTP_VERBS, 0), "request": 1},
    "requests.session": {**dict.fromkeys(_HTTP_VERBS, 0), "request": 1},
    "httpx.Client": {**dict.fromkeys(_HTTP_VERBS, 0), "request": 1, "stream": 1},
    "httpx.AsyncClient": {**dict.fromkeys(_HTTP_VERBS, 0), "request": 1, "stream": 1},
    "aiohttp.ClientSession": {**dict.fromkeys(_HTTP_VERBS, 0), "request": 1, "ws_connect": 0},
    "urllib3.PoolManager": {"request": 1, "urlopen": 1},
    "socket.socket": {"connect": 0, "connect_ex": 0},
    "websocket.WebSocket": {"connect": 0},
    "smtplib.SMTP": {"connect": 0},
    "smtplib.SMTP_SSL": {"connect": 0},
    "ftplib.FTP": {"connect": 0},
    "ftplib.FTP_TLS": {"connect": 0},
    "telnetlib.Telnet": {"open": 0},
    "paramiko.SSHClient": {"connect": 0},
    "paramiko.client.SSHClient": {"connect": 0},
}
"""Objects of network clients, by what makes them, and their methods that connect."""
_CLIENT_ADDRESS_KEYWORDS = {
    "httpx.Client": "base_url",
    "httpx.AsyncClient": "base_url",
    "aiohttp.ClientSession": "base_url",
}
"""A client made with a base URL connects there: the keyword is checked at the constructor."""
_ADDRESS_KEYWORDS = ("url", "host", "hostname", "address", "target", "base_url", "uri")
_DEPTH = 8
"""How many names deep an address is followed (`URL = BASE + "/x"`, `BASE = ...`)."""


@dataclass(frozen=True)
class _Text:
    """What an expression's string value is known to be: its start (`prefix`), whether that
    is all of it, and what it could not follow: a name or variable the module never binds (a
    setting from elsewhere: `unknown`), or data computed as the tests run (`opaque`: a field of
    a JSON file, a call's result), which no literal of the module is taken to stand for."""

    prefix: str
    complete: bool
    unknown: str | None = None
    opaque: bool = False
    line: int | None = None
    """The line of the literal the known part comes from."""
    through: str | None = None
    """The name the known part was found through (`BASE`), if any."""


_UNKNOWN = _Text("", False, opaque=True)
_OPAQUE = ast.Constant(None)
"""What a name is bound to when its value is data of the run (`a, b = f()`, a loop over a file)."""


def python_connections(source: str) -> list[Connection]:
    """The connections to remote hosts the Python module `source` makes (module docstring)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return _Module(tree).connections()


class _Module:
    """One parsed module: its imports (what a call's name means), and where each name is bound
    (per function, as Python scopes them, so that a `url` of one test is not another's)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.bindings: dict[tuple[int, str], list[ast.expr]] = {}
        self.docstrings: set[int] = set()
        self.parameters: dict[str, list[tuple[ast.AST, str]]] = {}
        self.scope_of: dict[int, ast.AST] = {}
        self.parent: dict[int, ast.AST] = {}
        self.known: dict[int, _Text] = {}
        """What each expression evaluated to: a name bound many times over (`url = url + "a"`
        in a loop of lines) is followed once per binding, not once per path through them."""
        self.following: set[int] = set()
        self._visit(tree, tree)
        for node in ast.walk(tree):  # what the module's own functions are called with
            if isinstance(node, ast.Call):
                called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                parameters = self.parameters.get(called or "")
                if parameters is None or any(isinstance(arg, ast.Starred) for arg in node.args):
                    continue
                for (function, parameter), value in zip(parameters, node.args):
                    self._add(function, parameter, value)
                for keyword in node.keywords:
                    for function, parameter in parameters:
                        if parameter == keyword.arg:
                            self._add(function, parameter, keyword.value)

    def _visit(self, node: ast.AST, scope: ast.AST) -> None:
        self.scope_of[id(node)] = scope
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                self.aliases[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self._bind(scope, target, node.value)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind(scope, item.optional_vars, item.context_expr)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            self._bind_loop(scope, node.target, node.iter)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                self.docstrings.add(id(body[0].value))
        inner = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = node
            self.parent[id(node)] = scope
            self._function(node)
        for child in ast.iter_child_nodes(node):
            self._visit(child, inner)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        """A function's parameters, bound to their defaults and (after the walk) to what the
        module's calls of it pass; what it returns or yields, bound to `name()`: a helper or
        pytest fixture that gives the address (a test's parameter of that name gets it)."""
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        for argument, default in zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults):
            self._add(node, argument.arg, default)
        for keyword_only, keyword_default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            if keyword_default is not None:
                self._add(node, keyword_only.arg, keyword_default)
        if isinstance(node, ast.Lambda):
            return
        names = [argument.arg for argument in positional]
        if names and names[0] in ("self", "cls"):
            names = names[1:]
        self.parameters[node.name] = [(node, name) for name in names + [a.arg for a in arguments.kwonlyargs]]
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Return, ast.Yield)) and inner.value is not None:
                self._add(self.tree, f"{node.name}()", inner.value)

    def _add(self, scope: ast.AST, name: str, value: ast.expr) -> None:
        self.bindings.setdefault((id(scope), name), []).append(value)

    def _bind(self, scope: ast.AST, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for one, other in zip(target.elts, value.elts):
                    self._bind(scope, one, other)
            else:  # `a, b = f()`: data of the run
                for one in target.elts:
                    self._bind(scope, one, _OPAQUE)
            return
        name = _dotted(target)
        if name is not None:  # `self.url = ...`: an attribute, seen module-wide
            self._add(scope if isinstance(target, ast.Name) else self.tree, name, value)

    def _bind_loop(self, scope: ast.AST, target: ast.expr, iterable: ast.expr) -> None:
        """`for url in ("http://localhost:1", ...)`: each element; over anything else, data."""
        if isinstance(iterable, (ast.Tuple, ast.List, ast.Set)) and not isinstance(target, (ast.Tuple, ast.List)):
            for element in iterable.elts:
                self._bind(scope, target, element)
        else:
            self._bind(scope, target, _OPAQUE)

    def values(self, name: str, at: ast.AST) -> list[ast.expr]:
        """What `name` may hold where `at` is: the innermost enclosing function that binds it,
        out to the module; an attribute (`self.url`) or a fixture (`name()`) module-wide."""
        scope: ast.AST | None = self.scope_of.get(id(at), self.tree)
        while scope is not None:
            found = self.bindings.get((id(scope), name))
            if found:
                return found
            scope = self.parent.get(id(scope)) if scope is not self.tree else None
        if "." in name or name.endswith("()"):
            return self.bindings.get((id(self.tree), name), [])
        return []

    # what a call is

    def qualified(self, node: ast.expr) -> str | None:
        """`requests.get` for `requests.get`, `r.get` (import requests as r), `get` (from
        requests import get); `requests.Session().get` for a method of an object made inline."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Call):
                made = self.qualified(node.value.func)
                return f"{made}().{node.attr}" if made is not None else None
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base is not None else None
        return None

    def client(self, node: ast.expr) -> str | None:
        """What made the object `node` (`requests.Session`), when it is a network client."""
        return next((made for made in sorted(self._makers(node)) if made in _CLIENTS), None)

    def _makers(self, node: ast.expr) -> set[str]:
        """The calls that may have made the value `node` holds (`requests.Session` for `s` after
        `s = requests.Session()`), followed through names, each binding once."""
        makers: set[str] = set()
        queue, seen = [node], set[int]()
        while queue and len(seen) < 10_000:
            value = queue.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, ast.Call):
                made = self.qualified(value.func)
                if made is not None:
                    makers.add(made)
            elif (name := _dotted(value)) is not None:
                queue += self.values(name, value)
        return makers

    def connections(self) -> list[Connection]:
        found: list[Connection] = []
        calls: list[tuple[ast.Call, str, int | None]] = []
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            name = self.qualified(node.func)
            if name in _URL_FIRST:
                calls.append((node, name, _URL_FIRST[name]))
            if name in _CLIENT_ADDRESS_KEYWORDS:
                calls.append((node, name, None))
            if isinstance(node.func, ast.Attribute):
                made = self.client(node.func.value)
                if made is not None and node.func.attr in _CLIENTS[made]:
                    calls.append((node, f"{made}().{node.func.attr}", _CLIENTS[made][node.func.attr]))
        remote_literal: tuple[str, int] | None = None
        for node, name, position in calls:
            address = self._address(node, position)
            if address is None:
                continue
            text, via = address
            host = self._host(text)
            if host is not None:
                if not is_local(host):
                    found.append(Connection(node.lineno, host, name, via, text.line))
                continue
            # an address the module cannot pin down: remote if the module names a remote URL
            if remote_literal is None:
                remote_literal = self._remote_literal() or ("", 0)
            if remote_literal[0] and not text.opaque:
                unknown = text.unknown or via or "an argument"
                found.append(Connection(node.lineno, remote_literal[0], name, unknown, remote_literal[1]))
        return sorted(found, key=lambda connection: connection.line)

    def _address(self, call: ast.Call, position: int | None) -> tuple[_Text, str | None] | None:
        """The call's address argument, as far as it is known, and the name it came through."""
        node: ast.expr | None = None
        if (
            position is not None
            and len(call.args) > position
            and not any(isinstance(arg, ast.Starred) for arg in call.args[: position + 1])
        ):
            node = call.args[position]
        else:
            node = next((k.value for k in call.keywords if k.arg in _ADDRESS_KEYWORDS), None)
        if node is None:
            return None  # `httpx.Client()` without a base URL; `f(*args)`: no address to judge here
        if isinstance(node, (ast.Tuple, ast.List)) and node.elts:  # socket addresses: (host, port)
            node = node.elts[0]
        if self.client(node) is not None or self._is_request(node):
            return None  # urlopen(Request(...)): the Request call is checked itself
        text = self._text(node, 0)
        return text, text.through

    def _is_request(self, node: ast.expr) -> bool:
        return bool(self._makers(node) & {"urllib.request.Request", "requests.Request"})

    def _host(self, text: _Text) -> str | None:
        """The host `text` names, when what is known of it says: all of a string, or a URL's
        start up to the end of its host (`f"http://localhost:{port}"`)."""
        if text.complete:
            return host_of(text.prefix)
        prefix = text.prefix
        match = _URL.match(prefix)
        if match is None:
            if prefix.startswith(("/", "unix:")):
                return "/"
            return None
        rest = prefix[match.end() :]
        if "@" in rest.split("/", 1)[0]:
            rest = rest.split("@", 1)[1]
        end = re.search(r"[:/?#]", rest[1:] if rest.startswith("[") else rest)
        if end is None:
            return None  # `http://{host}...`, `http://local{x}`: the host is not all there
        return host_of(prefix)

    def _text(self, node: ast.expr, depth: int) -> _Text:
        """What is known of the string `node` evaluates to: literals, names bound to them
        (every binding must agree that the host is local for it to be local: the first remote
        one is what counts), f-strings, `+`, `%`, `.format`, `os.environ.get(K, default)`.
        A name that leads back to itself, or deeper than _DEPTH, is data of the run: unknown,
        and no refusal."""
        if depth > _DEPTH or id(node) in self.following:
            return _UNKNOWN
        if id(node) not in self.known:
            self.following.add(id(node))
            try:
                self.known[id(node)] = self._evaluate(node, depth)
            finally:
                self.following.discard(id(node))
        return self.known[id(node)]

    def _evaluate(self, node: ast.expr, depth: int) -> _Text:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return _Text(node.value, True, line=node.lineno)
            if isinstance(node.value, bytes):
                return _Text(node.value.decode("latin-1"), True, line=node.lineno)
            return _UNKNOWN
        if isinstance(node, ast.JoinedStr):
            return self._join(node.values, depth)
        if isinstance(node, ast.FormattedValue):
            return self._text(node.value, depth + 1) if node.format_spec is None else _UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._join([node.left, node.right], depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self._text(node.left, depth + 1)
            return _Text(left.prefix.split("%", 1)[0], False, left.unknown, left.opaque, left.line, left.through)
        if isinstance(node, ast.Call):
            return self._call_text(node, depth)
        if isinstance(node, (ast.BoolOp, ast.IfExp)):
            options = node.values if isinstance(node, ast.BoolOp) else [node.body, node.orelse]
            return self._first_remote([self._text(option, depth + 1) for option in options])
        if isinstance(node, ast.Subscript):
            return self._subscript_text(node, depth)
        name = _dotted(node)
        if name is None:
            return _UNKNOWN
        values = self.values(name, node) or self.values(f"{name}()", node)  # a fixture's name
        if not values and isinstance(node, ast.Attribute):
            values = self.values(node.attr, node)
        if not values:
            return _Text("", False, name)
        found = self._first_remote([self._text(value, depth + 1) for value in values], name)
        return found if found.through is not None else dataclasses.replace(found, through=name)

    def _first_remote(self, texts: list[_Text], name: str | None = None) -> _Text:
        """Of the values a name may hold, the first that names a remote host, else the first
        local one; else what is unknown (one unknown value makes the whole unknown)."""
        local = None
        for text in texts:
            host = self._host(text)
            if host is not None and not is_local(host):
                return text
            if host is not None and local is None:
                local = text
        if all(self._host(text) is not None for text in texts) and local is not None:
            return local
        unknown = next((t.unknown for t in texts if not t.complete and not t.opaque), None)
        if unknown is None and all(t.opaque for t in texts if self._host(t) is None):
            return _UNKNOWN
        return _Text("", False, unknown or name)

    def _join(self, parts: Iterable[ast.expr], depth: int) -> _Text:
        prefix, line, through = "", None, None
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                prefix += part.value
                line = line or part.lineno
                continue
            text = self._text(part, depth + 1)
            prefix += text.prefix
            line, through = line or text.line, through or text.through
            if not text.complete:
                return _Text(prefix, False, text.unknown, text.opaque, line, through)
        return _Text(prefix, True, line=line, through=through)

    def _call_text(self, node: ast.Call, depth: int) -> _Text:
        name = self.qualified(node.func)
        if name in ("os.environ.get", "os.getenv") and len(node.args) >= 2:
            return self._text(node.args[1], depth + 1)
        if name in ("os.environ.get", "os.getenv") and node.args:
            key = node.args[0]
            return _Text("", False, f"${key.value!s}" if isinstance(key, ast.Constant) else "the environment")
        if name in ("urllib.parse.urljoin",) and node.args:
            return self._text(node.args[0], depth + 1)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            base = self._text(node.func.value, depth + 1)
            complete = base.complete and "{" not in base.prefix
            return _Text(base.prefix.split("{", 1)[0], complete, base.unknown, base.opaque, base.line, base.through)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("rstrip", "strip", "lower"):
            return self._text(node.func.value, depth + 1)  # `BASE.rstrip("/")`: the same host
        if isinstance(node.func, ast.Name) and (values := self.values(f"{node.func.id}()", node)):
            return self._first_remote([self._text(value, depth + 1) for value in values], f"{node.func.id}()")
        return _UNKNOWN  # what a call returns is data of the run

    def _subscript_text(self, node: ast.Subscript, depth: int) -> _Text:
        """`os.environ["URL"]` (a setting: unknown), `URLS["judge"]` of a literal dict (its
        entry), anything else (a field of data read at run time: opaque)."""
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if self.qualified(node.value) == "os.environ":
            return _Text("", False, f"${key}" if isinstance(key, str) else "the environment")
        name = _dotted(node.value)
        if key is None or name is None:
            return _UNKNOWN
        entries = [
            value
            for mapping in self.values(name, node)
            if isinstance(mapping, ast.Dict)
            for item, value in zip(mapping.keys, mapping.values)
            if isinstance(item, ast.Constant) and item.value == key
        ]
        return self._first_remote([self._text(value, depth + 1) for value in entries], name) if entries else _UNKNOWN

    def _remote_literal(self) -> tuple[str, int] | None:
        """The first remote URL written in the module outside its docstrings: what makes an
        address the module cannot follow count as remote."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in self.docstrings:
                for match in re.finditer(r"\b([A-Za-z][A-Za-z0-9+.-]*)://[^\s'\"<>]+", node.value):
                    if match.group(1).lower() in _REMOTE_SCHEMES and (host := _remote(match.group(0))) is not None:
                        return host, node.lineno
        return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


# --- shell ---------------------------------------------------------------------------------------

_SEPARATORS = re.compile(r"\$\(|`|(?<![$\w])\(|\)|&&|\|\||[;&|]|\bthen\b|\bdo\b|\belse\b")
_SHELL_COMMENT = re.compile(r"(^|\s)#.*$")
_VALUE_OPTIONS = {
    "curl": frozenset("-o -O -H -d -X -u -w -A -e -m -F -T -x -b -c -K -E -r -y -Y -z -C -U -Q".split())
    | frozenset(("--output", "--header", "--data", "--data-raw", "--data-binary", "--data-urlencode",
                 "--request", "--user", "--write-out", "--user-agent", "--referer", "--max-time", "--form",
                 "--upload-file", "--proxy", "--cookie", "--cookie-jar", "--config", "--cert", "--retry",
                 "--retry-delay", "--connect-timeout", "--resolve", "--unix-socket", "--cacert", "--key",
                 "--json", "--variable", "--expand-url")),
    "wget": frozenset("-O -o -a -P -U -t -T -e -i -B".split()),
    "nc": frozenset("-p -s -w -i -q -X -x -O -P -T -I -W -e -c".split()),
    "ssh": frozenset("-p -i -o -l -F -J -L -R -D -E -b -c -m -O -S -W -w -Q -e -B -I".split()),
    "scp": frozenset("-P -i -o -F -J -l -c -S".split()),
    "sftp": frozenset("-P -i -o -F -J -l -c -S -b -B -R -s".split()),
    "rsync": frozenset(("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--port")),
    "telnet": frozenset("-l -n -e".split()),
}  # fmt: skip
"""Options that take the next word as their value (a file, a header): not an address."""
_ALIASES = {"ncat": "nc", "netcat": "nc", "ftp": "telnet"}
_GIT_REMOTE = frozenset(("clone", "fetch", "pull", "ls-remote", "push"))
_SCP_LIKE = re.compile(r"^(?:[\w.-]+@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_][\w.-]*):")


def shell_connections(text: str) -> list[Connection]:
    """The connections to remote hosts the shell script `text` makes (module docstring)."""
    found = []
    for line, number in _lines(text):
        for words in _commands(line):
            for host in _targets(words):
                if not is_local(host):
                    found.append(Connection(number, host, _program(words) or words[0], code=line.strip()))
    return found


def only_local(line: str, programs: Iterable[str]) -> bool:
    """Whether every run of `programs` in the shell `line` names an address, each local
    (`curl -s http://localhost:8080/health`): such a line needs no network. A run with no
    address it can read (`curl $URL`) or a remote one makes it False."""
    wanted, seen = set(programs), False
    for words in _commands(_SHELL_COMMENT.sub("", line)):
        program = _program(words)
        if program is None or program.split()[0] not in wanted:
            continue
        targets = _targets(words)
        if not targets or not all(is_local(host) for host in targets) or _has_unknown(words):
            return False
        seen = True
    return seen


def _lines(text: str) -> Iterator[tuple[str, int]]:
    """Logical lines (backslash continuations joined), comments out, with their first line's number."""
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        yield _SHELL_COMMENT.sub("", pending + raw), start
        pending = ""
    if pending:
        yield _SHELL_COMMENT.sub("", pending), start


def _commands(line: str) -> Iterator[list[str]]:
    for part in _SEPARATORS.split(line):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and (
            ("=" in words[0] and not words[0].startswith("-"))
            or words[0] in ("sudo", "exec", "time", "timeout", "env", "!")
        ):
            words = words[1:]
            if words and words[0].replace(".", "").isdigit():  # timeout 10 curl ...
                words = words[1:]
        if words:
            yield words


def _program(words: list[str]) -> str | None:
    name = words[0].rsplit("/", 1)[-1]
    name = _ALIASES.get(name, name)
    if name == "git":
        verb = next((w for w in words[1:] if not w.startswith("-")), None)
        return f"git {verb}" if verb in _GIT_REMOTE else None
    return name if name in _VALUE_OPTIONS else None


def _operands(words: list[str], program: str) -> list[str]:
    takes_value = _VALUE_OPTIONS.get(program.split()[0], frozenset())
    operands, skip = [], False
    for word in words[1:]:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in takes_value
            continue
        operands.append(word)
    return operands


def _targets(words: list[str]) -> list[str]:
    """The hosts one simple command addresses, where they are literal."""
    program = _program(words)
    if program is None:
        return []
    operands = [word for word in _operands(words, program) if "$" not in word]
    if program in ("curl", "wget"):
        return [h for w in operands if (h := host_of(w)) is not None and ("://" in w or _IPISH.match(w))]
    if program == "nc":
        if any(
            w in ("-l", "-U", "--listen") or (w.startswith("-") and not w.startswith("--") and ("l" in w or "U" in w))
            for w in words[1:]
        ):
            return ["localhost"]  # listening, or a unix socket
        return [h for h in (host_of(w) for w in operands[:1]) if h is not None]
    if program in ("ssh", "telnet"):
        return [h for h in (host_of(w) for w in operands[:1]) if h is not None]
    if program.startswith("git "):
        operands = operands[1:]  # the verb
        found = []
        for word in operands:
            if "://" in word or _SCP_LIKE.match(word):
                host = host_of(word) if "://" in word else _SCP_LIKE.match(word).group(1)  # type: ignore[union-attr]
                if host is not None:
                    found.append(host)
            elif word.startswith(("/", ".", "~")):
                found.append("/")
        return found
    # scp, sftp, rsync: host:path operands
    found = []
    for word in operands:
        if "://" in word:
            if (host := host_of(word)) is not None:
                found.append(host)
        elif (match := _SCP_LIKE.match(word)) is not None and not word.startswith("/"):
            found.append(match.group(1).strip("[]"))
        elif program == "sftp" and (host := host_of(word)) is not None:
            found.append(host)
    return found


_IPISH = re.compile(r"^(localhost|\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\])(:\d+)?(/|$)")
"""A bare curl/wget operand that is an address (`localhost:8080/x`, `10.0.0.5`), not a file name."""


def _has_unknown(words: list[str]) -> bool:
    program = _program(words)
    return program is not None and any("$" in word for word in _operands(words, program))


# --- a tests folder ------------------------------------------------------------------------------


def find_connection(tests_dir: Path, runner: Path) -> tuple[Connection, int] | None:
    """The first connection to a remote host in the tests, with how many places in all
    connect; None when none does. What is read is what runs: the `runner` script, the
    folder's shell scripts it names (and those they name), each as the loader will run it
    (its steps that fetch test tools, such as uv's installer from astral.sh, taken out by
    rlenvs.envs.terminal.boilerplate: not the tests' own reach, and no refusal of theirs), the
    `.py` files under `tests_dir` that pytest collects (`test_*.py`, `*_test.py`,
    `conftest.py`) or a script names, with the folder's modules these import. A file nothing
    runs (a fixture generator kept beside the tests, a helper the runner's rewrite no longer
    sources) is no part of the tests; names in comments do not count."""
    shell: dict[str, list[Path]] = {}
    python: dict[str, list[Path]] = {}
    for root, _, files in os.walk(tests_dir):  # follows no symlinked folder
        for name in files:
            path = Path(root, name)
            if path.is_symlink() or not path.is_file():
                continue
            if name.endswith(".sh"):
                shell.setdefault(name, []).append(path)
            elif name.endswith(".py"):
                python.setdefault(name[:-3], []).append(path)
    found: list[Connection] = []
    texts: list[str] = []
    queue = [runner] if runner.is_file() else []
    seen = set(queue)
    while queue:
        path = queue.pop(0)
        text = _read(path)
        offline = offline_runner(text)
        text = text if offline is None else offline.script
        found += [_at(path, c) for c in shell_connections(text)]
        code = "\n".join(line for line, _ in _lines(text))
        texts.append(code)
        for name, paths in sorted(shell.items()):
            for other in paths:
                if name in code and other not in seen:
                    seen.add(other)
                    queue.append(other)
    named = "\n".join(texts)
    modules = sorted(
        path
        for stem, paths in python.items()
        for path in paths
        if stem.startswith("test_") or stem.endswith("_test") or stem == "conftest" or path.name in named
    )
    read: set[Path] = set()
    while modules:
        path = modules.pop(0)
        if path in read:
            continue
        read.add(path)
        connections, imported = _python_file(_read(path))
        found += [_at(path, c) for c in connections]
        modules += sorted(p for stem in imported for p in python.get(stem, ()) if p not in read)
    return (found[0], len(found)) if found else None


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_SCANNED_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _python_file(source: str) -> tuple[list[Connection], set[str]]:
    """A test module's connections, and the names of the modules it imports (each part of
    a dotted name: `from helpers.net import x` may be `helpers/net.py` of the folder)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return [], set()
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {part for alias in node.names for part in alias.name.split(".")}
        elif isinstance(node, ast.ImportFrom):
            imported |= set((node.module or "").split(".")) | {alias.name for alias in node.names}
    return _Module(tree).connections(), imported - {""}


def _at(path: Path, connection: Connection) -> Connection:
    return dataclasses.replace(connection, path=path)
