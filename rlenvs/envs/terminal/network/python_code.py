"""Connections in the tests' Python, read with `ast` (rlenvs.envs.terminal.network explains the
rules): network clients called with an address that names a host off this machine."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from rlenvs.envs.terminal.network.addresses import (
    REMOTE_SCHEMES,
    URL_PREFIX,
    Connection,
    host_of,
    is_local,
    remote_host,
)

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
    return PythonModule(tree).connections()


class PythonModule:
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
        match = URL_PREFIX.match(prefix)
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
                    if match.group(1).lower() in REMOTE_SCHEMES and (host := remote_host(match.group(0))) is not None:
                        return host, node.lineno
        return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None
