"""What of the agent's shell a `run_tests_in_same_shell` task's tests see, and why no more.

Terminal-Bench 1 runs such a task's tests by typing `bash /tests/run-tests.sh` into the agent's
own shell once it is done. That new, non-interactive bash gets from the agent's shell its
working folder and its exported variables (exported functions among them, and SHELLOPTS or
BASHOPTS where exported), and nothing else of it: not its unexported variables, functions,
aliases or options. So a task may check the shell the agent leaves: `cd` into the project,
`export GREETING=...`, an activated venv.

Here the tests still run out of the agent's reach (`rlenvs.sandbox.shells.verdict`): after its
processes are gone, in a clean environment, with the verdict's protections. What they take from
the agent's shell is read from its saved state (`ShellSession.shell_state`, `declare -p`
output) by the host, with `parse_shell_state` (nothing of the agent's runs to read it), and is
only this (`same_shell`):

- **the working folder**, where it is the workspace or a real folder inside it (the caller
  checks from the host that no symlink is on the way: `real_folder_inside`); else the WORKDIR.
  The verdict counts only the workspace and the scratch folders as the agent's when its
  sitecustomize keeps the agent's modules behind the toolchain's, and `python3 -m`/`-c` put
  their start folder on sys.path: a start folder elsewhere (on an image, any folder the agent,
  root there, wrote) would hand the agent's modules to the toolchain.
- **exported variables the tests can be said to read**: a name of the task's own variables
  (its image's ENV, whose value the agent may change, as in the container) or a word of the
  tests' own text (`os.environ["GREETING"]`, `$GREETING` in run-tests.sh), and never one of
  `DENIED`/`DENIED_PREFIXES`. Those are the variables that change how a program runs rather
  than what it is given: the dynamic loader's (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT,
  GCONV_PATH, GLIBC_TUNABLES), bash's (BASH_ENV, ENV, SHELLOPTS, BASHOPTS with `xtrace`'s PS4
  or `noexec`, exported functions as BASH_FUNC_*, CDPATH, GLOBIGNORE, EXECIGNORE, PROMPT_COMMAND,
  PS1-PS4, IFS), Python's (every PYTHON*: PYTHONPATH and PYTHONHOME shadow the standard
  library, PYTHONOPTIMIZE removes every `assert` of a plain test script, PYTHONPYCACHEPREFIX
  loads bytecode of the agent's in place of the sources, PYTHONWARNINGS and PYTHONBREAKPOINT
  import modules by name), pytest's (PYTEST_ADDOPTS, PYTEST_PLUGINS, ...), git's (GIT_DIR,
  GIT_EXEC_PATH, GIT_CONFIG_*), other runtimes' start-up hooks (NODE_OPTIONS, JAVA_TOOL_OPTIONS,
  PERL5OPT, RUBYOPT, ...), build tools' (CC, MAKEFILES, CFLAGS, ...), OpenSSL's config (which
  can load an engine's shared object), the locale and time zone (the rules a test's sort,
  number formatting and dates compare by), coverage's and uv's, and the verdict's own
  (HOME, TMPDIR, TEST_DIR, RLENVS_*), which stay the verdict's. A name only a program the tests
  run reads, unnamed in the tests' text, is not carried: that is what such a task loses.
- **PATH**: the entries of the agent's PATH that the tests' PATH lacks come after all of its
  folders (the system's first), behind a folder of the verdict's own (`GUARDED`) where every
  program name a test script runs its tests with (python3, pytest, bash, node, make, ...)
  that the system lacks fails with status 127 and says why. A venv's console scripts and an
  agent's own tools run by name; the agent's `python3`, `pytest` or `python` never do, so a
  program of the agent's posing as the tests' interpreter cannot fake their results. On an
  image, a file the episode changed in any folder of that PATH (outside the workspace) keeps
  the tests from running (`toolchain_changes`), as for the image's own PATH. VIRTUAL_ENV is
  not carried: what reads it (uv, a venv's activate script, a test naming
  `$VIRTUAL_ENV/bin/python`) would run the tests on the agent's interpreter, whose
  site-packages `.pth` files run code at its start. What a task loses: tests that run the
  venv's own python or pytest by name (they get the system's), or anything that needs VIRTUAL_ENV.

Not carried at all: unexported variables, functions (exported ones too), aliases, shell
options, umask (Terminal-Bench's child bash would inherit it; the tests here start with the
sandbox's) and an `unset` of a task variable (it keeps the task's value).
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass

DENIED = frozenset((
    # the verdict's own and the harness's
    "PATH", "HOME", "TMPDIR", "TMP", "TEMP", "PWD", "OLDPWD", "SHLVL", "_", "SHELL", "USER", "LOGNAME", "TEST_DIR",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
    # bash and sh
    "ENV", "IFS", "CDPATH", "GLOBIGNORE", "EXECIGNORE", "FIGNORE", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4",
    "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "TMOUT", "INPUTRC", "HISTFILE", "HOSTFILE", "MAIL", "MAILPATH",
    "MAILCHECK", "TERM", "TERMINFO", "TERMINFO_DIRS", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "PY_COLORS",
    "CLICOLOR", "CLICOLOR_FORCE",
    # the dynamic loader and the C library
    "GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "TZ", "TZDIR",
    "LANG", "LANGUAGE", "OPENSSL_CONF", "OPENSSL_MODULES", "OPENSSL_ENGINES", "SSL_CERT_FILE", "SSL_CERT_DIR",
    # runtimes' start-up hooks and search paths
    "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_HOME", "CLASSPATH",
    "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "LUA_INIT", "LUA_PATH", "LUA_CPATH",
    "TCLLIBPATH", "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON", "R_ENVIRON_USER", "R_LIBS", "R_LIBS_USER",
    "DOTNET_STARTUP_HOOKS", "GOFLAGS", "GOPATH", "GOROOT", "GOTOOLCHAIN", "RUSTFLAGS", "RUSTC", "RUSTC_WRAPPER",
    "CARGO_HOME", "CARGO_TARGET_DIR", "GEM_HOME", "GEM_PATH", "OCAMLPARAM", "PHPRC", "PHP_INI_SCAN_DIR",
    # build tools
    "CC", "CXX", "CPP", "LD", "AR", "AS", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LIBS", "MAKEFLAGS", "MFLAGS",
    "MAKEFILES", "MAKELEVEL", "GNUMAKEFLAGS", "CMAKE_PREFIX_PATH", "PKG_CONFIG_PATH", "CPATH", "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "COMPILER_PATH", "GCC_EXEC_PREFIX",
    # pagers and editors a tool may start
    "PAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "MANPAGER", "BROWSER",
))  # fmt: skip
"""Names the tests never take from the agent's shell (see the module docstring)."""
DENIED_PREFIXES = (
    "LD_", "BASH", "PYTHON", "PYTEST", "PY_", "GIT_", "RLENVS_", "LC_", "COV_CORE", "COVERAGE", "UV_", "PIP_",
    "CONDA_", "NPM_", "YARN_", "MALLOC_", "NODE_", "JAVA_", "DYLD_", "DOCKER", "SSH_", "GPG", "GNUPG",
)  # fmt: skip
"""Families of names never taken: BASH covers BASH_ENV, BASH_FUNC_name%% (exported functions),
BASH_XTRACEFD, BASH_LOADABLES_PATH; PYTHON every knob of Python's."""
GUARDED = (
    "python", "python2", "python3", *(f"python3.{minor}" for minor in range(20)), "pip", "pip3", "pytest",
    "py.test", "uv", "uvx", "tox", "nox", "coverage", "bash", "sh", "dash", "env", "timeout", "node", "npm", "npx",
    "java", "javac", "mvn", "gradle", "go", "cargo", "rustc", "ruby", "perl", "make", "cmake", "gcc", "g++", "cc",
    "c++", "clang", "clang++", "jest", "mocha", "bats",
)  # fmt: skip
"""Program names a test script runs its tests with: on the tests' PATH these are the system's or
nobody's, never a folder the agent's shell put there."""


@dataclass(frozen=True)
class ShellState:
    """What a saved shell state says of the shell a `bash run-tests.sh` would start from."""

    cwd: str | None
    """The working folder (None: the state did not say)."""
    exported: tuple[tuple[str, str], ...]
    """Every exported scalar variable with a value, in the state's order (not yet filtered)."""


_CD = re.compile(r"builtin cd -- (?P<path>.*)")
_DECLARE = re.compile(r"declare -(?P<flags>[a-zA-Z-]+) (?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<value>.*))?")
_ANSI_ESCAPES = {"a": 7, "b": 8, "e": 27, "E": 27, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}


def parse_shell_state(state: str) -> ShellState | None:
    """The working folder and exported variables of a state saved after a command
    (`builtin cd -- %q`, `umask -p`, then `declare -p` whose lines end at the first that is no
    declaration: functions and aliases follow). None for a state no command has saved (the
    session's start: nothing of the agent's to carry). A value that does not parse exactly as
    bash prints it is left out, never guessed."""
    lines = state.split("\n")
    if not lines or not lines[0].startswith("builtin cd -- "):
        return None
    match = _CD.fullmatch(lines[0])
    cwd = _unquote_percent_q(match.group("path")) if match else None
    exported: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line.startswith("umask "):
            continue
        declared = _DECLARE.fullmatch(line)
        if declared is None:
            break  # the functions begin (`name () `): their bodies are no variables
        flags, value = declared.group("flags"), declared.group("value")
        if "x" not in flags or any(flag in flags for flag in "aAn") or value is None:
            continue
        text = _unquote_declared(value)
        if text is not None:
            exported.append((declared.group("name"), text))
    return ShellState(cwd if cwd and cwd.startswith("/") else None, tuple(exported))


def _unquote_declared(value: str) -> str | None:
    """A `declare -p` value: "..." (with \\ before " $ ` \\) or $'...' (ANSI-C)."""
    if value.startswith("$'"):
        return _ansi_c(value)
    if len(value) >= 2 and value[0] == value[-1] == '"':
        out, body, index = [], value[1:-1], 0
        while index < len(body):
            char = body[index]
            if char == "\\" and index + 1 < len(body) and body[index + 1] in '"$`\\':
                out.append(body[index + 1])
                index += 2
                continue
            if char in '"`$' or (char == "\\" and index + 1 == len(body)):
                return None  # unescaped: not what declare -p prints
            out.append(char)
            index += 1
        return "".join(out)
    return None


def _ansi_c(value: str) -> str | None:
    """$'...' as bash prints it: letter escapes, \\\\, \\', octal \\NNN and \\xHH bytes."""
    if not (value.startswith("$'") and value.endswith("'") and len(value) >= 3):
        return None
    body, out, index = value[2:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char == "'":
            return None
        if char != "\\":
            out += char.encode("utf-8", "surrogateescape")
            index += 1
            continue
        if index + 1 >= len(body):
            return None
        code = body[index + 1]
        if code in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[code])
            index += 2
        elif code in "\\'\"?":
            out += code.encode()
            index += 2
        elif code in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[index + 1 :]).group(0)  # type: ignore[union-attr]
            out.append(int(digits, 8) & 0xFF)
            index += 1 + len(digits)
        elif code == "x" and re.match(r"[0-9a-fA-F]{1,2}", body[index + 2 :]):
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[index + 2 :]).group(0)  # type: ignore[union-attr]
            out.append(int(digits, 16))
            index += 2 + len(digits)
        else:
            return None
    return out.decode("utf-8", "replace")


def _unquote_percent_q(text: str) -> str | None:
    """`printf %q` of a path: $'...' or a word with backslash escapes ('' for empty)."""
    if text.startswith("$'"):
        return _ansi_c(text)
    if text == "''":
        return ""
    out, index = [], 0
    while index < len(text):
        if text[index] == "\\":
            if index + 1 >= len(text):
                return None
            out.append(text[index + 1])
            index += 2
        elif text[index] in "'\"$`":
            return None
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def denied(name: str) -> bool:
    """Whether the tests never take the variable `name` from the agent's shell."""
    return name in DENIED or name.startswith(DENIED_PREFIXES)


_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def words(texts: Iterable[bytes]) -> frozenset[str]:
    """Every word that could name a variable in `texts` (the tests' files and command)."""
    return frozenset(match.group(0).decode() for text in texts for match in _WORD.finditer(text))


@dataclass(frozen=True)
class SameShell:
    """What a test run takes from the agent's shell (`rlenvs.sandbox.shells.verdict.run_tests(shell=)`)."""

    cwd: str
    """Where the tests start: the workspace or a real folder in it."""
    variables: tuple[tuple[str, str], ...] = ()
    """The agent's exported variables that are carried (`same_shell` filtered them)."""
    path: tuple[str, ...] = ()
    """The absolute entries of the agent's PATH, in its order (the verdict appends those its
    PATH lacks, behind `GUARDED`)."""


def same_shell(
    state: ShellState | None, *, workdir: str, cwd_ok: bool, named: Iterable[str], protected: Iterable[str] = ()
) -> SameShell:
    """The module docstring's rule applied to a parsed state: the working folder where
    `cwd_ok` (the caller checked it from the host: `real_folder_inside`), the exported
    variables whose names are in `named` (the task's variables, the tests' words) and neither
    `denied` nor `protected` (the test variables the harness sets: TEST_DIR, ...), the PATH."""
    if state is None:
        return SameShell(workdir)
    named, protected = set(named), set(protected)
    variables = tuple(
        (name, value)
        for name, value in state.exported
        if name in named and name not in protected and not denied(name) and "\0" not in value
    )
    agent_path = dict(state.exported).get("PATH", "")
    path = tuple(dict.fromkeys(posixpath.normpath(entry) for entry in agent_path.split(":") if entry.startswith("/")))
    cwd = posixpath.normpath(state.cwd) if cwd_ok and state.cwd else workdir
    return SameShell(cwd, variables, path)


def inside(path: str, folder: str) -> bool:
    path, folder = posixpath.normpath(path), posixpath.normpath(folder)
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def real_folder_inside(host_root: str, workdir: str, path: str) -> bool:
    """Whether the sandbox's `path` is `workdir` or a folder below it with no symlink on the
    way, read from the host (`host_root`: where the workspace `workdir` is for the host),
    following no link: a `cd` through `/app/link -> /opt` would start the tests in /opt."""
    path = posixpath.normpath(path)
    if not inside(path, workdir):
        return False
    current = host_root
    for part in [part for part in path[len(posixpath.normpath(workdir)) :].split("/") if part]:
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode):
            return False
    return True


def guard_script(name: str) -> bytes:
    """The verdict's stand-in for `name` behind the system's folders on a same-shell run's PATH."""
    return (
        "#!/bin/sh\n"
        f"echo 'rlenvs verdict: {name}: not found on the system PATH; the tests do not run a {name} from the "
        "folders the agent put on PATH' >&2\nexit 127\n"
    ).encode()


def extra_path(entries: Iterable[str], present: Iterable[str], refused: Iterable[str]) -> list[str]:
    """The agent's PATH `entries` the tests' PATH (`present`) lacks, without those under any of
    `refused` (the scratch folders, emptied, and the verdict's root)."""
    have = {posixpath.normpath(entry) for entry in present if entry}
    refused = tuple(refused)
    return [entry for entry in entries if entry not in have and not any(inside(entry, folder) for folder in refused)]
