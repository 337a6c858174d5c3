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

- Python (`python_code.python_connections`), every `.py` file under the tests folder, read with `ast`
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
- Shell (`shell_code.shell_connections`), the test scripts (the runner as it will run, its fetching of test
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
import os
from pathlib import Path

from rlenvs.envs.terminal.boilerplate import offline_runner
from rlenvs.envs.terminal.network.addresses import Connection
from rlenvs.envs.terminal.network.python_code import PythonModule
from rlenvs.envs.terminal.network.shell_code import script_lines, shell_connections

MAX_SCANNED_BYTES = 2_000_000
"""A test file larger than this is not read (generated data, not test code)."""


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
        text = read_scanned(path)
        offline = offline_runner(text)
        text = text if offline is None else offline.script
        found += [_at(path, c) for c in shell_connections(text)]
        code = "\n".join(line for line, _ in script_lines(text))
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
        connections, imported = _python_file(read_scanned(path))
        found += [_at(path, c) for c in connections]
        modules += sorted(p for stem in imported for p in python.get(stem, ()) if p not in read)
    return (found[0], len(found)) if found else None


def read_scanned(path: Path) -> str:
    """A file's text for a scan: "" when it is missing, unreadable or over MAX_SCANNED_BYTES
    (generated data, not code); undecodable bytes replaced."""
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
    return PythonModule(tree).connections(), imported - {""}


def _at(path: Path, connection: Connection) -> Connection:
    return dataclasses.replace(connection, path=path)
