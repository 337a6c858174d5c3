"""How a verdict's tests run after an episode: where nothing the agent wrote can reach them.

A task's own tests (a task folder's `run-tests.sh` or `tests/test.sh`, or anything else that
runs tests after an episode) run in the episode's sandbox once the agent is done. By then
every process the agent started is gone (the sandbox kills them all after each command), but
what it wrote is still there, and most of it is no part of what the tests are meant to check,
yet could change how they run: a `usercustomize.py` or `.pth` file in its home's user site, a
`pytest.ini` or `conftest.py` above the tests' folder, a `unittest.py` in the
workspace that `python3 -m unittest` run from there imports first, start-up files, variables,
functions and aliases of its shell, a workspace file linked to the tests' own expected output.
So a test run (`VerdictRun`) is built from nothing the agent wrote, but for the workspace:

- /dev/shm is emptied first (`EMPTIED_FOLDERS`), and the verdict's folders are made there: the
  agent's shared memory is not its answer. /tmp is kept, as Terminal-Bench and Harbor keep it:
  on an image it is the image's own folder (files its build put there), and a task may ask
  for its answer there (/tmp/audit_result.json: 204 of TermiGen's 3,566 instructions do).
  Of the agent's entries there, the caller removes those that are no answer (`discard`:
  `rlenvs.envs.terminal.tmp_answers`), and a link among the rest fails the verdict
  (`rlenvs.envs.terminal.links`);
- the tests get a folder of their own under a random name (`VerdictRun.tests_dir`), which does
  not exist before they are copied in, so no symlink the agent left can point into it; the
  name `TESTS_DIR` in the tests' text, their command and their variables is rewritten to it
  (links into /proc, the reading process's own files, or into /dev/shm, are refused
  before: `rlenvs.envs.terminal.links`);
- they start in the workspace (`cwd`), as Terminal-Bench and Harbor start them in the WORKDIR,
  with a fresh HOME, and see the verdict's folders read-only (`VerdictRun.read_only`, below);
- with exactly `VerdictRun.environment()`, nothing inherited: the system PATH, that HOME,
  TMPDIR (a folder of the run's own), LANG, then the task's own variables, then what the
  verdict enforces over them: the task's PATH and PYTHONPATH with the entries the agent could
  write (its `/app`) after the system's folders and Python's own modules
  (`rlenvs.sandbox.shells.search_paths`), PYTHONNOUSERSITE=1 (no user site: python3 -s),
  PYTHONDONTWRITEBYTECODE=1, PYTHONSAFEPATH=1 with PYTHONPATH led by a folder of the
  verdict's own holding its `sitecustomize.py` (`SITECUSTOMIZE`: for -m, -c and stdin the
  start folder goes at the end of sys.path, not the front, so the workspace's `unittest.py`
  does not shadow Python's for `python3 -m unittest`, while the agent's modules still import;
  a script's folder stays first, as Python puts it; and wherever the agent's folders are on
  sys.path, at the end or first by a test's own `sys.path.insert`, the toolchain takes from
  them only the modules the tests import by name (`modules_tests_import`), and the agent's own
  code whatever it imports: copy and pickle trying Jython's `org`, pytest an optional package,
  find nothing of the agent's; written with its bytecode, which the
  sandbox's python3 then loads without compiling it: 0.7-1 ms of every python3's start-up) and
  an empty `usercustomize.py` (a task's `ENV PYTHONPATH=/app`
  must not make every python3 of the tests import the agent's /app/sitecustomize.py), git's hardening
  (`GIT_SETTINGS`), the verdict's own packages (pytest and what the task's script installs,
  `VERDICT_PACKAGES`, a read-only layer of the image) after `site` on PYTHONPATH where the task's
  variables name them (PACKAGES_VARIABLE), PYTEST_ADDOPTS giving pytest an explicit rootdir (the tests' folder),
  an explicit config (the tests' own pytest.ini, pyproject.toml, ... at the top of their
  folder, else an empty one) and `-p no:cacheprovider`, and PYTEST_DISABLE_PLUGIN_AUTOLOAD=1:
  pytest loads no plugin just because a distribution on sys.path declares one (a
  `*.dist-info` with a `pytest11` entry point in the workspace, on sys.path for `python3 -m
  pytest` run there, would turn every test into a pass), only those the tests name (`-p
  name`, which takes a module or an installed plugin's entry-point name, or
  PYTEST_PLUGINS); a task relying on a plugin the host installed must name it;
- in a bash without start-up files (`--noprofile --norc`, no BASH_ENV), which the sandbox
  starts with exactly those variables (`ShellSession.run(environment=...)`): no shell of the
  session's and no `env -i` before it;
- for a task whose tests Terminal-Bench runs in the agent's own shell (`run_tests_in_same_shell`),
  `run_tests(shell=...)` adds what `rlenvs.sandbox.shells.verdict_shell` allows of the shell the agent
  left, and nothing that changes how the tests run: they start in its folder where that is a
  real folder of the workspace, get the exported variables the task or the tests name (never
  a loader's, bash's, Python's, pytest's, git's, ... knob; all that the verdict enforces comes
  after them), and the agent's PATH entries after the system's, behind a folder of the
  verdict's (`VerdictRun.guard`) where interpreter and test-runner names the system lacks fail.

What the tests are there to check stays theirs to use: what they import or run from the
workspace runs as they ask. But code of the agent's that the tests run (a program they test,
a pickle they load, a filter git runs for them) runs as the tests' own uid, and could rewrite
for the tests after it their own files or the verdict's: a module dropped into the tests'
folder (first on a test script's sys.path) and deleted before anything looks, a `.pyc` in its
`__pycache__`, a symlink named like a package, the verdict's sitecustomize made to end every
later python3 with status 0. So the whole of `root` is read-only while the tests run
(`ShellSession.run(read_only=...)`, a read-only bind mount in the command's own mount
namespace): the tests' folder, `site`, the pytest config, git's hooks folder and HOME. Only
`LOGS_NAME` (Harbor's /logs, where the tests write their results) and their TMPDIR stay
writable, and the sandbox's /tmp, /dev/shm and the workspace, where the tests' scratch and
the answer are. The cost: tests that write into their own folder (fill in a fixture, delete
a scratch file, chmod a script, compile a helper beside them) fail there with "Read-only file
system"; a writable copy of the folder would be where a test script imports from, so no
such copy can be given that the code they run could not shadow modules in.

A backend that runs tests elsewhere (a container, another root) takes the same `VerdictRun`:
its folders, what of them is read-only (`read_only`), `environment()` and `command()`.
"""

from __future__ import annotations

import ast
import base64
import re
import secrets
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rlenvs.sandbox.results import ExecResult
from rlenvs.sandbox.shells.rootfs import MAX_CHANGES, EpisodeChanges
from rlenvs.sandbox.shells.search_paths import LATE_PYTHONPATH, ordered_path, split_python_path, writable
from rlenvs.sandbox.shells.session import ReadOnlyFolder, ShellSession, WorkspaceEntry
from rlenvs.sandbox.shells.verdict_shell import GUARDED, SameShell, extra_path, guard_script

TESTS_DIR = "/tmp/rlenvs-tests"
"""The name a task's tests and test command use for the tests' folder; each run rewrites it to
its own `VerdictRun.tests_dir`."""
SCRATCH_FOLDERS = ("/tmp", "/dev/shm")
"""The sandbox's writable folders besides the workspace: the agent's, as the workspace is."""
EMPTIED_FOLDERS = ("/dev/shm",)
"""The scratch folders emptied before the tests run, where the verdict's folders are made. Not
/tmp: Terminal-Bench and Harbor run the tests in the container the agent left, and tasks
read answers and inputs there."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The tests' PATH: the sandbox's read-only system folders only."""
PYTEST_CONFIGS: tuple[tuple[str, bytes], ...] = (
    ("pytest.toml", b""), (".pytest.toml", b""), ("pytest.ini", b""), (".pytest.ini", b""),
    ("pyproject.toml", b"[tool.pytest"), ("tox.ini", b"[pytest]"), ("setup.cfg", b"[tool:pytest]"),
)  # fmt: skip
"""pytest's config files in its order of precedence, each with what its text must hold to be
one (b"": any such file is)."""
VERDICT_ROOT = "/dev/shm/rlenvs-verdict"
"""Where a test run's folders are made, in a /dev/shm just emptied (`EMPTIED_FOLDERS`)."""
TEST_IMPORTS = "RLENVS_TEST_IMPORTS"
"""The variable holding the top-level module names the tests import by name (`modules_tests_import`):
the only ones the verdict's sitecustomize lets the toolchain take from the agent's folders."""
AGENT_FOLDERS = "RLENVS_AGENT_FOLDERS"
"""The folders the agent could write (the workspace, the scratch folders), for the sitecustomize."""
VERDICT_FOLDERS = "RLENVS_VERDICT_FOLDERS"
"""The verdict's read-only root, then its folders inside it that stay writable (the tests' logs
and TMPDIR): below the root is the verdict's, but for those."""
LOGS_NAME = ".rlenvs-logs"
"""The folder inside the tests' folder that the tests write their results to (Harbor's /logs):
the one part of it they may change."""
SITECUSTOMIZE = f'''\
"""The verdict's own sitecustomize, first on the tests' PYTHONPATH, so that no other runs.

The tests start in the workspace and run with PYTHONSAFEPATH=1, so python3 -m, -c and stdin
do not put the folder they start in at the front of sys.path, where a module of the agent's
would shadow what the tests import (/app/unittest.py for `python3 -m unittest`). Here that
folder goes back at the end of sys.path instead: what only it holds (the agent's modules a
test imports) still imports, and nothing there shadows the standard library or what is
installed. Before it go the entries of the task's own PYTHONPATH that the agent could write
(its `/app`), which the verdict moved to {LATE_PYTHONPATH}: had they stayed on PYTHONPATH, a
module of the agent's would shadow Python's own, `encodings` before this file even runs. A
script's own folder goes back at the front, where Python puts it: the tests' scripts import
their helpers and the agent's programs their modules as they would anywhere."""
import os
import sys
from importlib.machinery import PathFinder

try:
    for entry in os.environ.get({LATE_PYTHONPATH!r}, "").split(os.pathsep):
        if entry and os.path.abspath(entry) not in sys.path:
            sys.path.append(os.path.abspath(entry))
    if getattr(sys.flags, "safe_path", False):
        first = sys.argv[0] if sys.argv else ""
        if first not in ("", "-", "-c", "-m"):
            script = os.path.realpath(first)
            sys.path.insert(0, script if os.path.isdir(script) else os.path.dirname(script))
        elif os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
except OSError:  # a start folder since removed: nothing relative to put back
    pass


class _ToolchainFirst:
    """The agent's folders (the workspace, /tmp and /dev/shm, however they came onto sys.path:
    put back at the end here, or put first by a test's own `sys.path.insert(0, "/app")`) give
    the tests' interpreter only the modules the tests import by name ({TEST_IMPORTS}), and
    whatever the agent's own code imports; every other name comes from the toolchain or from
    nowhere. The library and pytest try names they may lack (Windows' nt and _wmi, Jython's
    org for copy and pickle, optional packages): an /app/org/ of the agent's would otherwise
    run inside every test run. A name the toolchain has always comes from it, and a name of
    the standard library from nowhere else."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None:
            return None
        spec = PathFinder.find_spec(name, [entry for entry in sys.path if not _agents(entry)], target)
        if spec is not None:
            return spec
        if name not in sys.stdlib_module_names and (name in _allowed or _from_agent_code()):
            return None
        raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)


def _agents(entry):
    """Whether a sys.path entry (or a file) lies in a folder the agent could write. Asked for
    every entry at every top-level import: an absolute path's answer is kept."""
    if not isinstance(entry, str):
        return False
    known = _classified.get(entry)
    if known is None:
        known = _classify(entry)
        if entry.startswith("/"):  # a relative entry moves with the working folder
            _classified[entry] = known
    return known


def _classify(entry):
    try:
        path = os.path.abspath(entry)
    except OSError:  # a relative entry, and the start folder since removed
        return True
    if _under(path, _VERDICT) and not any(_under(path, folder) for folder in _VERDICT_WRITABLE):
        return False
    return any(_under(path, folder) for folder in _AGENT_FOLDERS)


def _under(path, folder):
    return bool(folder) and (path == folder or path.startswith(folder.rstrip("/") + "/"))


def _from_agent_code():
    """Whether the import being run was asked for by code in a file of the agent's folders."""
    frame = sys._getframe(2)
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen importlib") or frame.f_code.co_filename == _IMPORTLIB
    ):
        frame = frame.f_back
    return frame is not None and _agents(frame.f_code.co_filename)


def _folders(name):
    return tuple(os.path.abspath(f) for f in os.environ.get(name, "").split(os.pathsep) if f.startswith("/"))


_classified = {{}}
_allowed = frozenset(name for name in os.environ.get({TEST_IMPORTS!r}, "").split(",") if name)
_AGENT_FOLDERS = _folders({AGENT_FOLDERS!r})
_verdict = _folders({VERDICT_FOLDERS!r})
_VERDICT, _VERDICT_WRITABLE = (_verdict[0], _verdict[1:]) if _verdict else ("", ())
_IMPORTLIB = getattr(sys.modules.get("importlib"), "__file__", None)
sys.meta_path.insert(sys.meta_path.index(PathFinder) if PathFinder in sys.meta_path else 0, _ToolchainFirst)
'''
"""What the verdict's `site/sitecustomize.py` holds (see its docstring)."""
USERCUSTOMIZE = "# The verdict's own: it stands in for any usercustomize.py on the tests' PYTHONPATH.\n"
GIT_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "{hooks}"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gpg.format", "openpgp"),
    ("gpg.program", ""),
    ("core.attributesFile", "/dev/null"),
    ("safe.directory", "*"),
)
"""git settings of the command's scope, which wins over a repository's own .git/config: no
program of the agent's that `git status`, `git commit`, `git tag` or `git rebase` would run
for it (fsmonitor, hooks, pager, editors; signing, which runs `gpg.program` or another
format's program: no signing, and verifying a signature fails rather than run anything), no
attributes file of the user's, and every folder safe (a repository the task made for another
uid still opens). With GIT_CONFIG_NOSYSTEM and GIT_CONFIG_GLOBAL=/dev/null no system or user
config is read either, with GIT_ATTR_NOSYSTEM no system attributes. Not covered, as git has
no setting that turns them off: `diff.external` (an empty one makes every `git diff` fail to
run "") and the filter, textconv and merge drivers a repository names in its .gitattributes
and defines in its .git/config, which git names one by one. What they run is a program of
the agent's that runs as the tests do, like any program of the agent's the tests run: it
cannot rewrite the tests or the verdict's files, which are read-only for the run."""
VERDICT_PACKAGES = "/opt/rlenvs-verdict/packages"
"""Where an image's tests find the verdict's own packages (`rlenvs.images.verdict_packages`:
pytest and what the task's test script installs, built from PyPI when the folder loads, a
read-only layer on top of the image); first on their PYTHONPATH after `site` when the task's
variables name it (PACKAGES_VARIABLE)."""
PACKAGES_VARIABLE = "RLENVS_VERDICT_PACKAGES"
"""The test variable naming VERDICT_PACKAGES for a task whose image carries them."""
VERDICT_OUTPUT_BYTES = 8 << 20
"""A test run's output cap (an agent's command has `Limits.output_bytes`): verbose tests and
build logs print megabytes, and the results a verdict reads come at the end. Eight MiB, as
the worker's answer line (64 MiB) must hold the output even when every byte of it is
escaped six times over in JSON."""


@dataclass(frozen=True)
class VerdictRun:
    """One verdict's test run: its folders, all below `root`, made fresh for it."""

    token: str
    """The random part of the tests' folder name."""
    workdir: str = "/workspace"
    """The workspace, where the tests start."""
    root: str = VERDICT_ROOT
    shell: SameShell | None = None
    """What a `run_tests_in_same_shell` task's tests take from the agent's shell
    (`rlenvs.sandbox.shells.verdict_shell`): where they start, some variables, PATH entries."""

    @classmethod
    def new(cls, workdir: str, shell: SameShell | None = None) -> VerdictRun:
        return cls(secrets.token_hex(8), workdir, shell=shell)

    @property
    def tests_name(self) -> str:
        """The tests' folder in `root`, named by `token`: what the tests' own processes can
        find (their start folder, HOME) leads nowhere near it. A Python identifier
        (`tests_<hex>`), as pytest treats a folder with an `__init__.py` as a package only
        when its name is one: tests that import their helpers relatively (`from .helpers
        import x`) then import as they do in the task's own /tests. pytest then puts `root`
        (the package's parent) on sys.path: it holds only the verdict's read-only folders,
        whose names (home, site, tmp, git-hooks) no test imports."""
        return f"tests_{self.token}"

    @property
    def tests_dir(self) -> str:
        return f"{self.root}/{self.tests_name}"

    @property
    def home(self) -> str:
        return f"{self.root}/home"

    @property
    def cwd(self) -> str:
        """Where the test command starts: the workspace, as Terminal-Bench and Harbor start
        their tests in the WORKDIR (relative paths in tests name its files); PYTHONSAFEPATH
        and the verdict's sitecustomize keep its modules from shadowing the tests' own. A
        same-shell task's tests start where the agent's shell was, inside the workspace."""
        return self.shell.cwd if self.shell is not None else self.workdir

    @property
    def guard(self) -> str:
        """A same-shell run's folder of stand-ins for `GUARDED` program names, on PATH between
        the system's folders and the agent's (`rlenvs.sandbox.shells.verdict_shell`)."""
        return f"{self.root}/bin"

    def agent_path(self, present: str) -> list[str]:
        """The entries of the agent's PATH that the tests' PATH `present` lacks, which go after
        it, behind `guard` (none under the scratch folders, emptied, or the verdict's root)."""
        if self.shell is None:
            return []
        return extra_path(self.shell.path, present.split(":"), (*SCRATCH_FOLDERS, self.root))

    @property
    def tmp(self) -> str:
        """The tests' TMPDIR: scratch of theirs, under `root`, where no workspace link may lead."""
        return f"{self.root}/tmp"

    @property
    def site(self) -> str:
        """The folder first on the tests' PYTHONPATH: the verdict's own sitecustomize.py (and
        its bytecode in `__pycache__`) and usercustomize.py."""
        return f"{self.root}/site"

    @property
    def logs(self) -> str:
        """Where the tests write their results (Harbor's /logs), writable while they run."""
        return f"{self.tests_dir}/{LOGS_NAME}"

    def writable(self, entry: str) -> bool:
        """Whether the agent, or what the tests run, could write below the search-path `entry`
        (`rlenvs.sandbox.shells.search_paths.writable`): the workspace, the scratch folders, the
        writable folders of `read_only`, anything relative."""
        scratch = (self.workdir, *SCRATCH_FOLDERS)
        return writable(entry, scratch=scratch, read_only=self.root, inside=(self.logs, self.tmp))

    @property
    def read_only(self) -> ReadOnlyFolder:
        """What the test command sees read-only: all of `root` but `logs` and `tmp`."""
        return ReadOnlyFolder(self.root, (self.logs, self.tmp))

    @property
    def git_hooks(self) -> str:
        """An empty folder, git's hooks folder for the tests."""
        return f"{self.root}/git-hooks"

    @property
    def empty_config(self) -> str:
        """pytest's config when the tests bring none: an empty pytest.ini."""
        return f"{self.root}/pytest.ini"

    def files(self, tests: Iterable[WorkspaceEntry]) -> list[WorkspaceEntry]:
        """What goes below `root` (paths relative to it): the verdict's own folders and files,
        and the tests in their folder, with TESTS_DIR in their text rewritten to `tests_dir`."""
        old, new, folder = TESTS_DIR.encode(), self.tests_dir.encode(), self.tests_name
        folders = (folder, f"{folder}/{LOGS_NAME}", "home", "tmp", "site", "git-hooks")
        records: list[WorkspaceEntry] = [_record(name, None) for name in folders]
        records += [
            _record("pytest.ini", b""),
            _record("site/sitecustomize.py", SITECUSTOMIZE.encode(), pyc=True),
            _record("site/usercustomize.py", USERCUSTOMIZE.encode()),
        ]
        if self.shell is not None and self.shell.path:
            records.append(_record("bin", None))
            records += [_record(f"bin/{name}", guard_script(name), mode=0o755) for name in GUARDED]
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

    def environment(
        self,
        pytest_config: str | None = None,
        task_environment: Iterable[tuple[str, str]] = (),
        imports: Iterable[str] = (),
    ) -> dict[str, str]:
        """Every variable the test command starts with: the verdict's defaults, the task's own
        variables (`task_environment`, TESTS_DIR in them rewritten) over them, and over those
        what the verdict enforces (a task's PYTHONPATH and PYTEST_ADDOPTS come after its own,
        and the entries of its PATH and PYTHONPATH that the agent could write after the
        system's: `rlenvs.sandbox.shells.search_paths`). `imports`: the top-level modules the tests
        import by name (`modules_tests_import`), the only ones the toolchain may take from the agent's
        folders."""
        task = {name: value.replace(TESTS_DIR, self.tests_dir) for name, value in task_environment}
        for name in task:
            if not _NAME.fullmatch(name):
                raise ValueError(f"the test variable {name!r} is not a shell variable name")
        packages = task.pop(PACKAGES_VARIABLE, "")
        if packages not in ("", VERDICT_PACKAGES):
            raise ValueError(
                f"the test variable {PACKAGES_VARIABLE} must be {VERDICT_PACKAGES} (the verdict's own packages), "
                f"got {packages!r}"
            )
        config = pytest_config or self.empty_config
        pytest_options = f"-p no:cacheprovider --rootdir={self.tests_dir} -c {config}"
        git = [(key, value.format(hooks=self.git_hooks)) for key, value in GIT_SETTINGS]
        kept, late = split_python_path(task.get("PYTHONPATH"), self.writable)
        path = ordered_path(task.get("PATH"), SYSTEM_PATH, self.writable)
        agent_path = self.agent_path(path)
        if agent_path:
            path = ":".join((path, self.guard, *agent_path))
        return {
            "HOME": self.home,
            "TMPDIR": self.tmp,
            "LANG": "C.UTF-8",
            **task,
            **(dict(self.shell.variables) if self.shell is not None else {}),
            "PATH": path,
            "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONSAFEPATH": "1",
            "PYTHONPATH": ":".join(path for path in (self.site, packages, kept) if path),
            LATE_PYTHONPATH: late,
            TEST_IMPORTS: ",".join(sorted(set(imports))),
            AGENT_FOLDERS: ":".join((self.workdir, *SCRATCH_FOLDERS)),
            VERDICT_FOLDERS: ":".join((self.root, self.logs, self.tmp)),
            "PYTEST_ADDOPTS": " ".join(part for part in (pytest_options, task.get("PYTEST_ADDOPTS", "")) if part),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_COUNT": str(len(git)),
            **{f"GIT_CONFIG_KEY_{index}": key for index, (key, _) in enumerate(git)},
            **{f"GIT_CONFIG_VALUE_{index}": value for index, (_, value) in enumerate(git)},
        }

    def command(
        self,
        script: str,
        pytest_config: str | None = None,
        task_environment: Iterable[tuple[str, str]] = (),
        imports: Iterable[str] = (),
    ) -> str:
        """Shell that runs `script` (bash, TESTS_DIR naming the tests' folder) as a test run:
        in `cwd`, with exactly `environment()`, in a bash that reads no start-up file. (A
        session runs `script_text` in such a bash directly: `ShellSession.run(environment=)`.)"""
        variables = " ".join(
            shlex.quote(f"{name}={value}")
            for name, value in self.environment(pytest_config, task_environment, imports).items()
        )
        return (
            f"builtin cd -- {self.cwd} && builtin exec /usr/bin/env -i {variables} "
            f"/bin/bash --noprofile --norc -c {shlex.quote(self.script_text(script))}"
        )

    def script_text(self, script: str) -> str:
        """`script` with TESTS_DIR rewritten to `tests_dir`: what the tests' bash runs (first
        into `cwd` where it is not the workspace, where the sandbox starts it)."""
        text = script.replace(TESTS_DIR, self.tests_dir)
        if self.cwd != self.workdir:
            text = f"builtin cd -- {shlex.quote(self.cwd)} || exit 1\n{text}"
        return text


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MODULE_OPTION = re.compile(r"(?:^|\s)(?:-m|-p)\s*([A-Za-z_][\w.]*)")
"""`python3 -m name` and pytest's `-p name` in a script or its variables: modules run by name."""


def modules_tests_import(
    files: Iterable[WorkspaceEntry], script: str, environment: Iterable[tuple[str, str]] = ()
) -> set[str]:
    """The top-level module names the tests import by name: every `import x` and `from x import`
    (absolute) in their Python files, `importlib.import_module("x")` and `__import__("x")`
    with a literal name, and `-m x` / `-p x` in the test command, the tests' other files (a
    run-tests.sh) and the task's variables (`python3 -m pytest`, a plugin by name). A name
    built at run time is not seen, and so not taken from the agent's folders."""
    names = {
        match.group(1).split(".")[0]
        for text in (script, *(v for _, v in environment))
        for match in _MODULE_OPTION.finditer(text)
    }
    for entry in files:
        record = entry.for_guest()
        if record.get("dir"):
            continue
        data = base64.b64decode(record["data"])
        if not record["path"].endswith(".py"):  # a run-tests.sh, a pytest.ini's addopts
            names.update(m.group(1).split(".")[0] for m in _MODULE_OPTION.finditer(data.decode("utf-8", "replace")))
            continue
        names |= imported_modules(data)
    return {name for name in names if _NAME.fullmatch(name)}


def imported_modules(source: str | bytes) -> set[str]:
    """The top-level modules a Python file imports by name: `import x`, `from x import`
    (absolute), `importlib.import_module("x")` and `__import__("x")` with a literal name.
    Nothing for a file that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names.add(node.args[0].value.split(".")[0])
    return names


@dataclass(frozen=True)
class _Record:
    """A file or folder already in the form the sandbox writes."""

    record: Mapping[str, Any]

    def for_guest(self) -> dict:
        return dict(self.record)


def _record(path: str, data: bytes | None, *, pyc: bool = False, mode: int | None = None) -> _Record:
    """A folder (`data` None) or a file of the verdict's own; `pyc`: a Python file the sandbox
    also writes the bytecode of, beside it in `__pycache__` (its interpreter's, hash-checked:
    python3 then starts without compiling it)."""
    is_dir = data is None
    encoded = "" if data is None else base64.b64encode(data).decode()
    mode = mode if mode is not None else 0o755 if is_dir else 0o644
    record = {"path": path, "dir": is_dir, "data": encoded, "mode": mode, "mtime": None}
    return _Record({**record, "pyc": True} if pyc else record)


TOOLCHAIN_PREFIXES = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives", VERDICT_PACKAGES,
)  # fmt: skip
"""On an image the agent is root and may write anywhere; the tests then run the image's own
interpreter, shell, libraries and pytest. What lives here is theirs: an episode that changed
any of it gets no test run (`toolchain_changes`)."""
TOOLCHAIN_FILES = re.compile(
    r"^/etc/(ld\.so\.(preload|conf|cache)|ld\.so\.conf\.d(/.*)?|python3[^/]*(/.*)?)$"
    r"|/(sitecustomize|usercustomize)\.py$|\.pth$"
)
"""The dynamic loader's configuration, Python's, and what every python3 loads at start."""


def toolchain_changes(changes: EpisodeChanges, workdir: str, path: str = "", python_path: str = "") -> list[str]:
    """What an episode changed (rlenvs.sandbox.ShellSession.image_changes) that the tests would
    run on: anything under TOOLCHAIN_PREFIXES or matching TOOLCHAIN_FILES, a file in a folder
    of the tests' `path` (a `python3` ahead of the image's), anything in a folder of their
    `python_path` (a `pathlib.py` ahead of Python's), and such a folder itself or one above
    it (replaced by a link to the agent's own); not the workspace, which is the agent's to
    change. Changes too many to read are all suspect."""
    if not changes.complete:
        return [f"over {MAX_CHANGES} entries, too many to check"]
    search = {folder.rstrip("/") for folder in path.split(":") if folder.startswith("/")}
    modules = {folder.rstrip("/") for folder in python_path.split(":") if folder.startswith("/")}
    folders = search | modules | {parent for folder in search | modules for parent in _parents(folder)}
    inside = workdir.rstrip("/") + "/"
    found = []
    for changed in changes.changed:
        if changed == workdir or changed.startswith(inside):
            continue
        if (
            any(changed == prefix or changed.startswith(prefix + "/") for prefix in TOOLCHAIN_PREFIXES)
            or TOOLCHAIN_FILES.search(changed)
            or changed.rsplit("/", 1)[0] in search
            or changed in folders
            or any(changed.startswith(folder + "/") for folder in modules)
        ):
            found.append(changed)
    return found


def _parents(folder: str) -> list[str]:
    parts = folder.strip("/").split("/")
    return ["/" + "/".join(parts[:depth]) for depth in range(1, len(parts))]


def run_tests(
    session: ShellSession,
    tests: Iterable[WorkspaceEntry],
    script: str,
    *,
    timeout_s: float,
    environment: Iterable[tuple[str, str]] = (),
    shell: SameShell | None = None,
    discard: Iterable[str] = (),
) -> ExecResult:
    """Run `script` with `tests` in a fresh `VerdictRun` of `session`, after the agent's last
    command: /dev/shm emptied, the tests copied in, the script run in a fresh shell
    with the task's `environment` (name, value pairs) and the verdict's folders read-only.
    `shell`: for a `run_tests_in_same_shell` task, what the tests take from the agent's shell
    (`rlenvs.sandbox.shells.verdict_shell`; on an image the folders of its PATH count among those
    the episode must not have changed). `discard`: entries of the agent's removed first (its
    scratch in /tmp that is not its answer: `rlenvs.envs.terminal.tmp_answers`). Raises SessionError when the sandbox cannot be set up
    for it (the tests then did not run); a run whose folders could not be made read-only did
    not run either and fails, saying so in its output."""
    environment = tuple(environment)
    if session.image is not None:
        variables = dict(environment)
        path, python_path = variables.get("PATH", session.image.path), variables.get("PYTHONPATH", "")
        if shell is not None and shell.path:  # a python3 of the agent's in /opt/venv/bin: not run
            path = ":".join((path, *shell.path))
        if variables.get(PACKAGES_VARIABLE):  # its folders above count too: /opt replaced by a link
            python_path = f"{python_path}:{VERDICT_PACKAGES}"
        changes = session.image_changes(skip=(session.workdir.rstrip("/"),))  # the workspace is the agent's
        tampered = toolchain_changes(changes, session.workdir, path, python_path)
        if tampered:
            shown = ", ".join(tampered[:5]) + (f" and {len(tampered) - 5} more" if len(tampered) > 5 else "")
            reason = (
                f"the episode changed what the tests run on ({shown}): the image's interpreter, shell, libraries "
                "and test tools are the tests' own, so they were not run"
            )
            return ExecResult("error", reason, "", None, None, False, 0.0, reason)
    run = VerdictRun.new(session.workdir, shell)
    files = run.files(tests)
    session.add_files(files, run.root, wipe=EMPTIED_FOLDERS, remove=discard)  # nothing of the agent's below root
    variables = run.environment(run.pytest_config(files), environment, modules_tests_import(files, script, environment))
    return session.run(
        run.script_text(script),
        timeout_s=timeout_s,
        fresh=True,
        output_bytes=VERDICT_OUTPUT_BYTES,
        read_only=run.read_only,
        environment=variables,
    )
