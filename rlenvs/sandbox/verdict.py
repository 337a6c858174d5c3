"""How a verdict's tests run after an episode: where nothing the agent wrote can reach them.

A task's own tests (a task folder's `run-tests.sh` or `tests/test.sh`, or anything else that
runs tests after an episode) run in the episode's sandbox once the agent is done. By then
every process the agent started is gone (the sandbox kills them all after each command), but
what it wrote is still there, and most of it is no part of what the tests are meant to check,
yet could change how they run: a `usercustomize.py` or `.pth` file in its home's user site, a
`pytest.ini` or `conftest.py` in /tmp above the tests' folder, a `unittest.py` in the
workspace that `python3 -m unittest` run from there imports first, start-up files, variables,
functions and aliases of its shell, a workspace file linked to the tests' own expected output.
So a test run (`VerdictRun`) is built from nothing the agent wrote, but for the workspace:

- /tmp and /dev/shm are emptied first (`SCRATCH_FOLDERS`): the agent's scratch is not its answer;
- the tests get a folder of their own under a random name (`VerdictRun.tests_dir`), which does
  not exist before they are copied in, so no symlink the agent left can point into it (not
  even through /proc/self/cwd: no folder the tests start in is beside it); the name
  `TESTS_DIR` in the tests' text and in their command is rewritten to it;
- they start in an empty folder of their own (`cwd`), not in the workspace, with a fresh HOME;
- with exactly `VerdictRun.environment()`, nothing inherited: the system PATH, that HOME,
  TMPDIR=/tmp, LANG, PYTHONNOUSERSITE=1 (no user site: python3 -s), PYTHONDONTWRITEBYTECODE=1,
  and PYTEST_ADDOPTS giving pytest an explicit rootdir (the tests' folder), an explicit
  config (the tests' own pytest.ini, pyproject.toml, ... at the top of their folder, else an
  empty one) and `-p no:cacheprovider`;
- in a bash without start-up files (`--noprofile --norc`, no BASH_ENV).

What the tests are there to check stays theirs to use: what they import or run from the
workspace runs as they ask, and a test script that cds into the workspace before
`python3 -m ...` gets what is there (the task's choice). The task's own variables are set by
its command (`export` lines). A backend that runs tests elsewhere (a container, another root)
takes the same `VerdictRun`: its folders, `environment()` and `command()`.
"""

from __future__ import annotations

import base64
import secrets
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rlenvs.sandbox.results import ExecResult
from rlenvs.sandbox.session import ShellSession, WorkspaceEntry

TESTS_DIR = "/tmp/rlenvs-tests"
"""The name a task's tests and test command use for the tests' folder; each run rewrites it to
its own `VerdictRun.tests_dir`."""
SCRATCH_FOLDERS = ("/tmp", "/dev/shm")
"""The sandbox's writable folders besides the workspace, emptied before the tests run."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The tests' PATH: the sandbox's read-only system folders only."""
PYTEST_CONFIGS: tuple[tuple[str, bytes], ...] = (
    ("pytest.toml", b""), (".pytest.toml", b""), ("pytest.ini", b""), (".pytest.ini", b""),
    ("pyproject.toml", b"[tool.pytest"), ("tox.ini", b"[pytest]"), ("setup.cfg", b"[tool:pytest]"),
)  # fmt: skip
"""pytest's config files in its order of precedence, each with what its text must hold to be
one (b"": any such file is)."""
VERDICT_ROOT = "/tmp/rlenvs-verdict"
"""Where a test run's folders are made, in a /tmp just emptied."""


@dataclass(frozen=True)
class VerdictRun:
    """One verdict's test run: its folders, all below `root`, made fresh for it."""

    token: str
    """The random part of the tests' folder name."""
    root: str = VERDICT_ROOT

    @classmethod
    def new(cls) -> VerdictRun:
        return cls(secrets.token_hex(8))

    @property
    def tests_name(self) -> str:
        """The tests' folder in `root`, named by `token`: what the tests' own processes can
        find (their start folder, HOME) leads nowhere near it."""
        return f"tests-{self.token}"

    @property
    def tests_dir(self) -> str:
        return f"{self.root}/{self.tests_name}"

    @property
    def home(self) -> str:
        return f"{self.root}/home"

    @property
    def cwd(self) -> str:
        """Where the test command starts: an empty folder."""
        return f"{self.root}/run"

    @property
    def empty_config(self) -> str:
        """pytest's config when the tests bring none: an empty pytest.ini."""
        return f"{self.root}/pytest.ini"

    def files(self, tests: Iterable[WorkspaceEntry]) -> list[WorkspaceEntry]:
        """What goes below `root` (paths relative to it): the home, the start folder, the
        empty pytest config, and the tests in their folder, with TESTS_DIR in their text
        rewritten to `tests_dir`."""
        old, new, folder = TESTS_DIR.encode(), self.tests_dir.encode(), self.tests_name
        records = [
            _Record({"path": name, "dir": is_dir, "data": "", "mode": 0o755 if is_dir else 0o644, "mtime": None})
            for name, is_dir in ((folder, True), ("home", True), ("run", True), ("pytest.ini", False))
        ]
        for test in tests:
            record = dict(test.for_guest())
            record["path"] = f"{folder}/{record['path']}"
            data = base64.b64decode(record["data"])
            if old in data:
                record["data"] = base64.b64encode(data.replace(old, new)).decode()
            records.append(_Record(record))
        return records

    def pytest_config(self, files: Iterable[WorkspaceEntry]) -> str:
        """The tests' own pytest config (the first of `PYTEST_CONFIGS` at the top of their
        folder), else `empty_config`."""
        top, folder = {}, f"{self.tests_name}/"
        for entry in files:
            record = entry.for_guest()
            if record["path"].count("/") == 1 and record["path"].startswith(folder) and not record["dir"]:
                top[record["path"].removeprefix(folder)] = record["data"]
        for name, marker in PYTEST_CONFIGS:
            if name in top and marker in base64.b64decode(top[name]):
                return f"{self.tests_dir}/{name}"
        return self.empty_config

    def environment(self, pytest_config: str | None = None) -> dict[str, str]:
        """Every variable the test command starts with (the task's own it exports itself)."""
        config = pytest_config or self.empty_config
        return {
            "PATH": SYSTEM_PATH,
            "HOME": self.home,
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_ADDOPTS": f"-p no:cacheprovider --rootdir={self.tests_dir} -c {config}",
        }

    def command(self, script: str, pytest_config: str | None = None) -> str:
        """Shell that runs `script` (bash, TESTS_DIR naming the tests' folder) as a test run:
        in `cwd`, with exactly `environment()`, in a bash that reads no start-up file."""
        variables = " ".join(shlex.quote(f"{name}={value}") for name, value in self.environment(pytest_config).items())
        script = script.replace(TESTS_DIR, self.tests_dir)
        return (
            f"builtin cd -- {self.cwd} && builtin exec /usr/bin/env -i {variables} "
            f"/bin/bash --noprofile --norc -c {shlex.quote(script)}"
        )


@dataclass(frozen=True)
class _Record:
    """A file or folder already in the form the sandbox writes."""

    record: Mapping[str, Any]

    def for_guest(self) -> dict:
        return dict(self.record)


def run_tests(session: ShellSession, tests: Iterable[WorkspaceEntry], script: str, *, timeout_s: float) -> ExecResult:
    """Run `script` with `tests` in a fresh `VerdictRun` of `session`, after the agent's last
    command: scratch folders emptied, the tests copied in, the script run in a fresh shell.
    Raises SessionError when the sandbox cannot be set up for it (the tests then did not run)."""
    run = VerdictRun.new()
    session.wipe(SCRATCH_FOLDERS)
    files = run.files(tests)
    session.add_files(files, run.root)
    return session.run(run.command(script, run.pytest_config(files)), timeout_s=timeout_s, fresh=True)
