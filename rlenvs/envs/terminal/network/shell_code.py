"""Connections in the tests' shell scripts, read command by command (rlenvs.envs.terminal.network
explains the rules): curl, wget, nc, ssh, scp, rsync, telnet, git with a literal remote host."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator

from rlenvs.envs.terminal.network.addresses import Connection, host_of, is_local

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
    for line, number in script_lines(text):
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


def script_lines(text: str) -> Iterator[tuple[str, int]]:
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
