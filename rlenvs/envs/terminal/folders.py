"""Terminal-Bench-style task folders as Terminal-v0 tasks (`TerminalEnv(task_dir=...)`).

Two layouts are read; `load_task_folders(path)` takes one task folder or a folder of them
(every subfolder that looks like a task, sorted by name; ids "folder/<name>"):

- Terminal-Bench 1: `task.yaml` (`instruction`; the older `descriptions` list is read
  too), an optional `Dockerfile` and `docker-compose.yaml`, `solution.sh` or
  `solution.yaml`, `run-tests.sh` and `tests/`.
- Terminal-Bench 2 / Harbor: `instruction.md`, `task.toml`, `environment/Dockerfile` (and
  an optional `environment/docker-compose.yaml`), `solution/solve.sh`, `tests/test.sh`.

Both may add `setup.sh` beside the instruction: rlenvs' own extension, run in the workspace
before the agent's first turn (the task's `setup_script`).

How a folder maps onto a `TerminalTask`:

- prompt: the instruction. workdir: the Dockerfile's last WORKDIR, else /app (also the
  starting directory that relative COPY destinations and WORKDIRs are taken from).
- files: what the Dockerfile COPYs (or ADDs, local non-archive files only) from its build
  context (the task folder, `environment/` for Harbor, or the compose file's `build`),
  honouring `.dockerignore`, with each file's permission bits and mtime (`--chmod` wins).
  Every copy must land inside the workspace: the rest of the sandbox is read-only.
  The FROM image is not used: commands run on the host's own /usr (bash, coreutils,
  /usr/bin/python3 with what the host installed), with no network.
- environment: the Dockerfile's ENV (`ENV A=1 B="x y"` and the old `ENV NAME value`), then
  the compose service's `environment`, then Harbor's `[environment].env`, a later value
  winning. The agent's shell starts with them exported. In the container the set-up and
  the tests would see them too, but here they run in fresh shells, so `setup_script`
  starts with `export` lines for them and the tests get them as `test_environment`.
  `$NAME` and `${NAME}` in ENV, WORKDIR and COPY take the value of an earlier ENV, as Docker
  does; a variable no earlier ENV sets
  (the image's own, such as PATH, or a build ARG) and `${NAME:-x}`-style forms are refused,
  and so is a value taken from the host (`${...}` in task.toml; in compose any `$NAME`,
  `$$` being a `$`). Terminal-Bench's compose `TEST_DIR` is left to the test command.
- solution: a one-file solution script is one command, its text; Harbor solutions with
  more files under `solution/` are written to /tmp/rlenvs-solution by the command (which
  then runs solve.sh there, `/solution` in their text read as that folder); each entry of
  a `solution.yaml` is one command (one turn).
- tests: Terminal-Bench 1 puts `run-tests.sh` and the files of `tests/` together in the
  tests folder (/tests there; `TESTS_DIR` here) and runs `bash $TEST_DIR/run-tests.sh`:
  its exit status must be 0 and, as Terminal-Bench parses them (`parser_name: pytest`, the
  only parser read here), the pytest results it prints must all pass
  (`rlenvs.envs.terminal.results`). Harbor puts `tests/` there and runs `bash /tests/test.sh`;
  the reward the script writes to /logs/verifier/reward.txt (or reward.json) decides, and
  only a full reward (>= 1) passes. Both get `TEST_DIR`. The sandbox has no /tests
  nor /logs, so in the test files' text (UTF-8 ones) `/tests` is rewritten to TESTS_DIR
  and `/logs` to a folder inside it. Harbor's `[verifier].env` is set for the tests
  and `[solution].env` exported for the solution (literal values only).
- where the tests run: out of the agent's reach (`rlenvs.sandbox.verdict`): after its
  processes are gone, with /tmp emptied, in a tests folder of a random name (the path
  TESTS_DIR in their text is rewritten to it), with a fresh HOME, a clean environment (the
  task's variables, the system PATH, no user site for python3, the verdict's own
  sitecustomize first on PYTHONPATH, git's hooks and fsmonitor off) and pytest's rootdir
  and config fixed to the tests' own; their folder and the verdict's files are read-only
  while they run (but for the logs and their TMPDIR: tests that write into their own folder
  fail). They start in the WORKDIR, as Terminal-Bench and Harbor start them, with
  PYTHONSAFEPATH=1 (python3 -m and -c find the WORKDIR's modules after Python's own, never
  in their place).
- timeouts: `max_test_timeout_sec` / `[verifier].timeout_sec` is the tests' time limit
  (`test_timeout_s`); without it, the harness's own default (Terminal-Bench 60 s, Harbor
  600 s), never the env's per-command limit. Each command's limit (`timeout_s`) is left
  None, so the env's own `timeout_s` applies: `max_agent_timeout_sec` / `[agent].timeout_sec` bound a whole
  episode, for which Terminal-v0 has turns (`max_turns`) instead. A task with slow
  commands (builds, the reference solution as one command) needs a larger `timeout_s=`.

What cannot run without Docker or network is refused when the folder is loaded, with a
`TaskFolderError` naming the folder and the reason, never skipped and never left to fail
at run time: a Dockerfile that RUNs anything (or has an ENTRYPOINT, several stages, a
non-root USER, or copies outside the workspace), a compose file with more than one service
or a prebuilt image or its own start command, a prebuilt `docker_image`, GPUs, separate
verifier containers or multi-step Harbor tasks, `run_tests_in_same_shell`, test, set-up or
solution scripts that install or download (curl, wget, pip/uv/apt/npm install, git clone,
...) or run pytest when the host's python3 has none. A folder without its instruction or
its tests gets an error naming the missing file.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import json
import os
import posixpath
import re
import shlex
import stat
import subprocess
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rlenvs.envs.terminal.tasks import MAX_SETUP_BYTES, TESTS_DIR, Entry, TerminalTask
from rlenvs.sandbox.launch import SYSTEM_PYTHON, check_workspace_path
from rlenvs.sandbox.session import MAX_COMMAND_BYTES
from rlenvs.sandbox.verdict import LOGS_NAME

DEFAULT_WORKDIR = "/app"
"""Where the workspace is when the Dockerfile sets no WORKDIR (Terminal-Bench's images use /app)."""
SOLUTION_DIR = "/tmp/rlenvs-solution"
"""Where a Harbor solution of several files is written before its solve.sh runs."""
LOGS_DIR = f"{TESTS_DIR}/{LOGS_NAME}"
"""Harbor's /logs: inside the tests folder, which each verdict makes anew under a name of its
own, so nothing the agent left anywhere can pose as the tests' reward."""
SETUP_SCRIPT = "setup.sh"
TERMINAL_BENCH_TEST_TIMEOUT_S = 60.0
"""The tests' time limit of a task.yaml without `max_test_timeout_sec`: Terminal-Bench's own
default for the key (and that of Harbor's mapping of Terminal-Bench 1 tasks)."""
HARBOR_TEST_TIMEOUT_S = 600.0
"""The tests' time limit of a task.toml without `[verifier].timeout_sec`: Harbor's own default."""

_TB_FILES = ("task.yaml", "run-tests.sh", "solution.sh", "solution.yaml", "Dockerfile")
_HARBOR_FILES = ("task.toml", "instruction.md")
_COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml")
_LAYOUTS = (
    "a Terminal-Bench task folder holds task.yaml, run-tests.sh and tests/; a Harbor one instruction.md, "
    "task.toml, environment/ and tests/test.sh"
)
_ARCHIVE = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar\.zst)$", re.IGNORECASE)
_IGNORED_INSTRUCTIONS = frozenset(
    ("LABEL", "MAINTAINER", "EXPOSE", "ARG", "CMD", "SHELL", "HEALTHCHECK", "STOPSIGNAL", "VOLUME", "ONBUILD")
)
"""Dockerfile instructions that change nothing a task's commands see (CMD: both harnesses
start the container with `sleep infinity` in its place)."""
_ROOT_USERS = frozenset(("root", "0", "root:root", "0:0"))
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_READONLY = frozenset(("BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"))
"""Variables bash does not let anyone set, so a task cannot export them."""
_SOLUTION_FAILS = "(its reference solution would fail)"


class TaskFolderError(ValueError):
    """A task folder that cannot be read, or cannot run in rlenvs' sandbox; the message
    names the folder and says why."""


def load_task_folders(path: str | os.PathLike[str]) -> list[TerminalTask]:
    """The tasks of the task folder `path`, or of every task folder inside it (sorted by
    name). Every folder that cannot run is named in one TaskFolderError."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise TaskFolderError(f"task_dir {root} {'is not a folder' if root.exists() else 'does not exist'}")
    if _is_task_folder(root):
        return [_load(root)]
    folders = sorted(child for child in root.iterdir() if not child.name.startswith(".") and _is_task_folder(child))
    if not folders:
        raise TaskFolderError(f"task_dir {root} holds no task folders: {_LAYOUTS}")
    tasks, problems = [], []
    for folder in folders:
        try:
            tasks.append(_load(folder))
        except TaskFolderError as error:
            problems.append(str(error))
    if len(problems) == 1:
        raise TaskFolderError(problems[0])
    if problems:
        listed = "\n".join(f"- {problem}" for problem in problems)
        raise TaskFolderError(f"{len(problems)} of the {len(folders)} task folders in {root} cannot run:\n{listed}")
    return tasks


def _is_task_folder(path: Path) -> bool:
    """Whether `path` holds one task (of either layout), complete or not."""
    return path.is_dir() and (
        any((path / name).is_file() for name in (*_TB_FILES, *_COMPOSE_FILES, *_HARBOR_FILES))
        or ((path / "environment").is_dir() and (path / "tests").is_dir())
    )


def _load(folder: Path) -> TerminalTask:
    """One task folder. The readers below raise their reasons bare; the folder is named here."""
    folder = folder.resolve()
    try:
        has_harbor = any((folder / name).is_file() for name in _HARBOR_FILES)
        if (folder / "task.yaml").is_file():
            if has_harbor:
                other = "task.toml" if (folder / "task.toml").is_file() else "instruction.md"
                raise TaskFolderError(f"it has both task.yaml (Terminal-Bench) and {other} (Harbor); keep one layout")
            return _terminal_bench(folder)
        if has_harbor or (folder / "environment").is_dir():
            return _harbor(folder)
        raise TaskFolderError(f"task.yaml (the instruction) is missing: {_LAYOUTS}")
    except TaskFolderError as error:
        raise TaskFolderError(f"task folder {folder}: {error}") from None


# --- the two layouts ----------------------------------------------------------------------------


def _terminal_bench(folder: Path) -> TerminalTask:
    meta = _read_yaml(folder / "task.yaml", folder)
    if not isinstance(meta, dict):
        raise TaskFolderError("task.yaml must be a mapping with an `instruction`")
    instruction = meta.get("instruction")
    if instruction is None and isinstance(meta.get("descriptions"), list):  # the older form
        described = [d for d in meta["descriptions"] if isinstance(d, dict)]
        chosen = next((d for d in described if d.get("key") == "base"), described[0] if described else {})
        instruction = chosen.get("description")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskFolderError("task.yaml has no `instruction` (a non-empty string)")
    if meta.get("run_tests_in_same_shell"):
        raise TaskFolderError(
            "task.yaml sets run_tests_in_same_shell, and rlenvs runs the tests in a fresh shell after the agent's "
            "is gone; check the workspace instead of the shell's state"
        )
    image = _image(folder, folder)
    runner, tests_dir = folder / "run-tests.sh", folder / "tests"
    if not runner.is_file():
        raise TaskFolderError(
            "run-tests.sh is missing. Terminal-Bench's default installs pytest from the network, and the sandbox "
            "has no network: add a run-tests.sh, e.g. `python3 $TEST_DIR/test_outputs.py` for a "
            "tests/test_outputs.py of plain asserts"
        )
    _check_tests(folder, tests_dir, runner)
    budget = _Budget("tests")
    tests = [entry for entry in _tree(tests_dir, folder, budget) if entry.path != "run-tests.sh"]
    tests.append(_file_entry(runner, "run-tests.sh", folder, budget))
    if (folder / "solution.sh").is_file():
        solution: tuple[str, ...] = (_script(folder, folder / "solution.sh", _SOLUTION_FAILS),)
    elif (folder / "solution.yaml").is_file():
        solution = _solution_yaml(folder)
    else:
        solution = ()
    parser = meta.get("parser_name", "pytest")
    if parser != "pytest":
        raise TaskFolderError(
            f"task.yaml's parser_name is {parser!r}: rlenvs reads pytest's results only (parser_name: pytest, "
            "Terminal-Bench's default)"
        )
    test_command = f"bash {TESTS_DIR}/run-tests.sh"
    test_timeout_s = _seconds(meta.get("max_test_timeout_sec"), "task.yaml's max_test_timeout_sec")
    test_timeout_s = TERMINAL_BENCH_TEST_TIMEOUT_S if test_timeout_s is None else test_timeout_s
    task = _task(folder, instruction.strip(), image, solution, tests, test_command, test_timeout_s, {})
    return dataclasses.replace(task, test_parser="pytest")


def _solution_yaml(folder: Path) -> tuple[str, ...]:
    path = folder / "solution.yaml"
    steps = _read_yaml(path, folder)
    if not isinstance(steps, list) or not all(isinstance(s, dict) and isinstance(s.get("command"), str) for s in steps):
        raise TaskFolderError("solution.yaml must be a list of {command: ...} entries")
    for step in steps:
        if step.get("append_enter") is False or step.get("block") is False:
            raise TaskFolderError(
                f"solution.yaml types keystrokes into a running program (`{_short(step['command'])}` with "
                "append_enter or block false): rlenvs runs whole commands; write the solution as solution.sh"
            )
        _check_script(folder, path, step["command"], _SOLUTION_FAILS)
    return tuple(step["command"] for step in steps)


_HARBOR_REWARD = """\
import json, math, os, sys
folder = sys.argv[1]
text, data = os.path.join(folder, "reward.txt"), os.path.join(folder, "reward.json")
def full(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 1
if os.path.isfile(text):
    raw = open(text, encoding="utf-8", errors="replace").read(200).strip()
    try:
        reward = float(raw)
    except ValueError:
        sys.exit(f"reward.txt holds {raw!r}, not a number")
    if not full(reward):
        sys.exit(f"the tests gave the reward {raw} (a pass is 1)")
elif os.path.isfile(data):
    try:
        rewards = json.load(open(data, encoding="utf-8"))
    except ValueError:
        sys.exit("reward.json is not JSON")
    values = [rewards["reward"]] if isinstance(rewards, dict) and "reward" in rewards else (
        list(rewards.values()) if isinstance(rewards, dict) else [rewards])
    if not values or not all(full(value) for value in values):
        sys.exit(f"the tests gave the rewards {rewards!r} (a pass is 1)")
else:
    sys.exit("the tests wrote no reward (reward.txt or reward.json in /logs/verifier)")
"""


def _harbor(folder: Path) -> TerminalTask:
    path = folder / "instruction.md"
    if not path.is_file():
        raise TaskFolderError("instruction.md (the task's instruction) is missing")
    instruction = _read_text(path, folder).strip()
    if not instruction:
        raise TaskFolderError("instruction.md is empty")
    config: dict[str, Any] = {}
    if (folder / "task.toml").is_file():
        try:
            config = tomllib.loads(_read_text(folder / "task.toml", folder))
        except tomllib.TOMLDecodeError as error:
            raise TaskFolderError(f"task.toml is not valid TOML: {error}") from None
    verifier, environment, solution = (
        config[key] if isinstance(config.get(key), dict) else {} for key in ("verifier", "environment", "solution")
    )
    if config.get("steps"):
        raise TaskFolderError("task.toml has [[steps]]: rlenvs runs single-step tasks only")
    if environment.get("docker_image"):
        raise TaskFolderError(
            f"task.toml runs the prebuilt image {environment['docker_image']!r}, which needs Docker; rlenvs builds "
            "the workspace from environment/Dockerfile's WORKDIR, ENV and COPY lines"
        )
    if environment.get("gpus"):
        raise TaskFolderError(f"task.toml asks for {environment['gpus']} GPU(s), which the sandbox does not have")
    if verifier.get("environment_mode") == "separate" or "environment" in verifier:
        raise TaskFolderError(
            "task.toml runs the tests in a separate verifier container; rlenvs runs them in the task's own sandbox "
            'after the agent finished (environment_mode = "shared")'
        )
    image = _image(folder, folder / "environment", _env_table(environment.get("env"), "task.toml's [environment].env"))
    runner = folder / "tests" / "test.sh"
    if not runner.is_file():
        raise TaskFolderError("tests/test.sh (the script that runs the task's tests) is missing")
    _check_tests(folder, folder / "tests", runner)
    logs = Entry(f"{LOGS_DIR[len(TESTS_DIR) + 1 :]}/verifier", is_dir=True)
    tests = [*_tree(folder / "tests", folder, _Budget("tests")), logs]
    verifier_env = _env_table(verifier.get("env"), "task.toml's [verifier].env")
    test_command = (
        f"bash {TESTS_DIR}/test.sh\n"
        f"{SYSTEM_PYTHON} -I - {LOGS_DIR}/verifier <<'__RLENVS_REWARD__'\n{_HARBOR_REWARD}__RLENVS_REWARD__\n"
    )
    test_timeout_s = _seconds(verifier.get("timeout_sec"), "task.toml's [verifier].timeout_sec")
    test_timeout_s = HARBOR_TEST_TIMEOUT_S if test_timeout_s is None else test_timeout_s
    solution_commands = _harbor_solution(folder, solution)
    return _task(folder, instruction, image, solution_commands, tests, test_command, test_timeout_s, verifier_env)


def _harbor_solution(folder: Path, section: Mapping[str, Any]) -> tuple[str, ...]:
    solution_dir = folder / "solution"
    script = solution_dir / "solve.sh"
    if not script.is_file():
        return ()
    others = [path for path in _walk(solution_dir) if path != script]
    for path in others:
        if path.suffix == ".sh" and path.is_file():
            _check_script(folder, path, path.read_text(encoding="utf-8", errors="replace"), _SOLUTION_FAILS)
    text = _script(folder, script, _SOLUTION_FAILS)
    exports = _exports(_env_table(section.get("env"), "task.toml's [solution].env"))
    if not others:
        return (exports + text,)
    # Several files: the command writes them where solve.sh will find them, then runs it.
    lines = [f"rm -rf {SOLUTION_DIR} && mkdir -p {SOLUTION_DIR}"]
    for entry in _tree(solution_dir, folder, _Budget("solution")):
        target = shlex.quote(f"{SOLUTION_DIR}/{entry.path}")
        if entry.is_dir:
            lines.append(f"mkdir -p {target}")
        else:
            encoded = base64.b64encode(_relocate(entry.data, _SOLUTION_PATHS)).decode()
            lines.append(f"base64 -d > {target} <<'__RLENVS_EOF__'\n{encoded}\n__RLENVS_EOF__")
            lines.append(f"chmod {entry.mode:o} {target}")
    lines.append(f"{exports}bash {SOLUTION_DIR}/solve.sh")
    return ("\n".join(lines),)


def _task(
    folder: Path, instruction: str, image: _Image, solution: tuple[str, ...], tests: Iterable[Entry],
    test_command: str, test_timeout_s: float | None, test_env: Mapping[str, str],
) -> TerminalTask:  # fmt: skip
    """What both layouts share: the solution's size, setup.sh, and the image's variables, which
    the set-up gets as `export` lines and the tests (fresh shells with nothing of the agent's,
    unlike its own) as their variables, with TEST_DIR and then `test_env` over them."""
    for command in solution:
        if len(command.encode()) > MAX_COMMAND_BYTES:
            raise TaskFolderError(
                f"its reference solution makes a command of {len(command.encode())} bytes, over the "
                f"{MAX_COMMAND_BYTES}-byte cap of one command: shorten it or split it into several"
            )
    exports = _exports(image.environment)
    setup = folder / SETUP_SCRIPT
    setup_script = exports + _script(folder, setup, "when the task is set up") if setup.is_file() else ""
    return TerminalTask(
        task_id=f"folder/{folder.name}",
        prompt=instruction,
        files=image.files,
        solution=solution,
        expect=(),
        setup_script=setup_script,
        tests=tuple(_relocated(tests, _TEST_PATHS)),
        test_command=test_command,
        test_environment=tuple({**image.environment, "TEST_DIR": TESTS_DIR, **test_env}.items()),
        test_timeout_s=test_timeout_s,
        workdir=image.workdir,
        environment=tuple(image.environment.items()),
    )


# --- scripts that need the network (or pytest) ---------------------------------------------------

_NETWORK_COMMANDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), what)
    for pattern, what in (
        (r"(?<![\w.-])(curl|wget)(?![\w.-])", "it downloads"),
        (r"(?<![\w.-])(pip3?|python3?(\.\d+)?\s+-m\s+pip)\s+install\b", "pip installs packages"),
        (r"(?<![\w.-])uvx?(?![\w.-])", "uv fetches Python and packages"),
        (r"(?<![\w.-])(setup|run)-uv-pytest\.sh\b", "Terminal-Bench's helper scripts download uv and pytest"),
        (r"(?<![\w.-])apt(-get)?\s+(-\S+\s+)*(install|update|upgrade)\b", "apt installs packages"),
        (r"(?<![\w.-])(apk\s+add|(yum|dnf|zypper|pacman)\s+(install|-S))\b", "it installs packages"),
        (r"(?<![\w.-])git\s+(clone|fetch|pull|submodule\s+update)\b", "git fetches a repository"),
        (r"(?<![\w.-])(npm|pnpm|yarn|bun)\s+(install|i|ci|add)\b|(?<![\w.-])npx(?![\w.-])", "it installs packages"),
        (r"(?<![\w.-])(cargo\s+(install|fetch)|go\s+(get|install|mod\s+download)|gem\s+install)\b", "it installs packages"),
        (r"(?<![\w.-])((conda|mamba|micromamba)\s+(install|create)|pipx|poetry\s+install)\b", "it installs packages"),
        (r"(?<![\w.-])docker(?![\w.-])", "it runs Docker"),
    )
)  # fmt: skip
_PYTEST = re.compile(r"(?<![\w.-])pytest(?![\w.-])")
_COMMENT = re.compile(r"(^|\s)#.*$")


def _check_script(folder: Path, script: Path, text: str, stage: str, *, tests: bool = False) -> None:
    """Refuse a script that needs the network or (`tests`) a pytest the host's python3 lacks."""
    for number, line in enumerate(text.splitlines(), 1):
        code = _COMMENT.sub("", line).strip()
        where = f"{_rel(script, folder)} (line {number})"
        for pattern, what in _NETWORK_COMMANDS:
            if pattern.search(code):
                raise TaskFolderError(
                    f"{where} runs `{_short(code)}`, which needs the network ({what}), and the sandbox has none "
                    f"{stage}. Use only what the host has: bash, coreutils and python3's standard library (tests: "
                    "plain asserts run with `python3 $TEST_DIR/test_outputs.py`)"
                )
        if tests and _PYTEST.search(code) and not _host_has_module("pytest"):
            raise TaskFolderError(
                f"{where} runs pytest (`{_short(code)}`), which the sandbox's {SYSTEM_PYTHON} does not have (the "
                "sandbox sees only the host's /usr, with no network to install it). Write the tests with plain "
                "asserts and run them with `python3 $TEST_DIR/test_outputs.py`, or install pytest for the host's "
                "python3 (e.g. apt-get install python3-pytest)"
            )


def _check_tests(folder: Path, tests_dir: Path, runner: Path) -> None:
    others = [path for path in _walk(tests_dir) if path.suffix == ".sh" and path != runner]
    for script in (runner, *others):
        if script.is_file():
            text = script.read_text(encoding="utf-8", errors="replace")
            _check_script(folder, script, text, "when the tests run", tests=True)


def _script(folder: Path, path: Path, stage: str) -> str:
    text = _read_text(path, folder)
    _check_script(folder, path, text, stage)
    return text


@functools.cache
def _host_has_module(name: str) -> bool:
    """Whether the system python (the one on the sandbox's PATH) can import `name`."""
    try:
        done = subprocess.run(
            [SYSTEM_PYTHON, "-I", "-c", f"import {name}"], check=False, capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


# --- rewriting the paths the sandbox does not have ---------------------------------------------------


def _relocations(pairs: Mapping[str, str]) -> list[tuple[re.Pattern[str], str]]:
    # `/tests` as a path of its own: not /app/tests, ./tests, ~/tests, ${X}/tests or /tests-old.
    return [
        (re.compile(rf"(?<![\w.\-/~$}}]){re.escape(old)}(?=/|$|[\s'\"`;:,)\]}}|&<>])", re.MULTILINE), new)
        for old, new in pairs.items()
    ]


_TEST_PATHS = _relocations({"/tests": TESTS_DIR, "/logs": LOGS_DIR})
_SOLUTION_PATHS = _relocations({"/solution": SOLUTION_DIR})


def _relocate(data: bytes, rules: list[tuple[re.Pattern[str], str]]) -> bytes:
    """`data` with the paths in `rules` rewritten, if it is UTF-8 text (binary data as is)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    for pattern, new in rules:
        text = pattern.sub(new, text)
    return text.encode("utf-8")


def _relocated(entries: Iterable[Entry], rules: list[tuple[re.Pattern[str], str]]) -> Iterator[Entry]:
    for entry in entries:
        yield entry if entry.is_dir else dataclasses.replace(entry, content=_relocate(entry.data, rules))


# --- variables ----------------------------------------------------------------------------------------


def _exports(environment: Mapping[str, str]) -> str:
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in environment.items())


def _variable_name(name: str, where: str = "") -> str:
    if not _NAME.fullmatch(name):
        raise TaskFolderError(f"{where}sets {name!r}, which is not a shell variable name")
    if name in _READONLY:
        raise TaskFolderError(f"{where}sets {name}, which bash keeps read-only")
    return name


def _env_table(table: Any, where: str, *, compose: bool = False) -> dict[str, str]:
    """Literal NAME=value settings: a task.toml env table, or (`compose`) a compose service's
    `environment`, a list or a mapping. A value taken from the host is refused (`${...}`; in
    compose any `$NAME`, `$$` being a `$`, and a name without a value): nothing of the host's
    goes into the sandbox."""
    if not table:
        return {}
    if compose and isinstance(table, list):
        table = dict(item.split("=", 1) if "=" in item else (item, None) for item in map(str, table))
    if not isinstance(table, dict):
        raise TaskFolderError(f'{where} must be a table of NAME = "value"')
    environment = {}
    for name, value in table.items():
        if compose and name == "TEST_DIR":
            continue  # Terminal-Bench's own, for the tests; the test command sets it here
        if isinstance(value, (dict, list)):
            raise TaskFolderError(f"{where}'s {name} must be a string or a number, got {value!r}")
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if value is None or ("$" in text.replace("$$", "") if compose else "${" in text):
            raise TaskFolderError(
                f"{where} takes {name} from the host's environment ({'no value' if value is None else repr(text)}): "
                "rlenvs passes nothing from the host into the sandbox; write the value out"
            )
        environment[_variable_name(str(name), f"{where} ")] = text.replace("$$", "$") if compose else text
    return environment


def _words(text: str, env: Mapping[str, str], escape: str, *, split: bool = True) -> list[str]:
    """Docker's word processing (ENV, WORKDIR, COPY): quotes group and are removed, `escape`
    escapes any character (in double quotes only `"`, `$` and itself), and $NAME / ${NAME}
    (not in single quotes) take values from `env`, the earlier ENVs. Without `split` the
    whole text is one word, its whitespace kept."""
    words: list[str] = []
    word: list[str] = []
    quote, quoted, i = "", False, 0
    while i < len(text):
        char, i = text[i], i + 1
        if quote == "'":
            quote = "" if char == "'" else quote
            word.append("" if char == "'" else char)
        elif char == escape and i < len(text) and (not quote or text[i] in ('"', "$", escape)):
            word.append(text[i])
            i += 1
        elif char == "$":
            value, i = _variable(text, i, env)
            word.append(value)
        elif char in "'\"" and quote in ("", char):
            quote, quoted = ("" if quote else char), True
        elif split and not quote and char.isspace():
            if word or quoted:
                words.append("".join(word))
            word, quoted = [], False
        else:
            word.append(char)
    if quote:
        raise TaskFolderError(f"has an unmatched {quote}")
    if word or quoted or not split:
        words.append("".join(word))
    return words


def _variable(text: str, i: int, env: Mapping[str, str]) -> tuple[str, int]:
    """The value of the reference whose `$` is at text[i - 1], and where the text goes on."""
    if text.startswith("{", i):
        end = text.find("}", i)
        name = text[i + 1 : end]
        if end < 0 or not _NAME.fullmatch(name):
            raise TaskFolderError(
                f"uses `${text[i : end + 1] if end > 0 else text[i:]}`, which rlenvs does not expand: only "
                "$NAME and ${NAME} of an earlier ENV"
            )
        i = end + 1
    else:
        match = _NAME.match(text, i)
        if match is None:
            return "$", i
        name, i = match.group(), match.end()
    if name not in env:
        raise TaskFolderError(
            f"refers to ${name}, which no earlier ENV sets: rlenvs uses neither the image (its PATH and the like) "
            "nor build ARGs, so write the value out"
        )
    return env[name], i


def _env_instruction(args: str, env: Mapping[str, str], escape: str) -> dict[str, str]:
    """One ENV's settings, in either form; its references see the ENVs before it, as in
    Docker (`ENV A=2 B=$A` gives B the earlier A)."""
    head = args.split(None, 1)
    if head and "=" not in head[0]:  # the old form: ENV NAME the rest of the line
        if len(head) < 2:
            raise TaskFolderError("sets no value: write ENV NAME=value")
        pairs = [(head[0], _words(head[1], env, escape, split=False)[0])]
    else:
        words = _words(args, env, escape)
        if not words or not all("=" in word for word in words):
            raise TaskFolderError('cannot be read: write ENV NAME=value, or NAME="a value" with spaces')
        pairs = [tuple(word.split("=", 1)) for word in words]
    return {_variable_name(name): value for name, value in pairs}


# --- the Dockerfile --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Instruction:
    line: int
    keyword: str
    args: str

    def text(self) -> str:
        return _short(f"{self.keyword} {self.args}")


@contextlib.contextmanager
def _at(where: str, ins: _Instruction) -> Iterator[None]:
    """Name the Dockerfile line in the reasons raised within."""
    try:
        yield
    except TaskFolderError as error:
        raise TaskFolderError(f"{where} (line {ins.line}: `{ins.text()}`) {error}") from None


@dataclass(frozen=True)
class _Copy:
    ins: _Instruction
    sources: tuple[str, ...]
    dest: PurePosixPath
    """Absolute (a relative destination is taken from the WORKDIR at that point)."""
    dest_is_dir: bool
    chmod: int | None


@dataclass(frozen=True)
class _Image:
    """What a task takes from its Dockerfile and compose file."""

    workdir: str = DEFAULT_WORKDIR
    files: tuple[Entry, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)


def _image(folder: Path, base: Path, extra: Mapping[str, str] | None = None) -> _Image:
    """The image of the Dockerfile (or compose file) in `base`; `extra`: variables set over it."""
    compose = next((base / name for name in _COMPOSE_FILES if (base / name).is_file()), None)
    context, dockerfile, environment = _compose(compose, folder) if compose else (base, base / "Dockerfile", {})
    environment = {**environment, **(extra or {})}
    if not dockerfile.is_file():
        return _Image(environment=environment)
    where = f"its {_rel(dockerfile, folder)}"
    workdir, copies, image_env = _parse_dockerfile(_read_text(dockerfile, folder), where)
    try:
        check_workspace_path(workdir)
    except ValueError as error:
        raise TaskFolderError(f"{where}'s WORKDIR cannot be the workspace: {error}") from None
    files = _workspace_files(PurePosixPath(workdir), copies, context, folder, where)
    return _Image(workdir, files, {**image_env, **environment})


def _instructions(text: str) -> tuple[str, list[_Instruction]]:
    """A Dockerfile's escape character and instructions, continuation lines joined, comments
    and blank lines dropped (inside a continued instruction too, as Docker does)."""
    escape = "\\"
    lines = text.splitlines()
    for line in lines:  # parser directives: comments before anything else
        if match := re.fullmatch(r"\s*#\s*escape\s*=\s*(\S)\s*", line):
            escape = match.group(1)
        elif not re.fullmatch(r"\s*#\s*\w+\s*=.*", line):
            break
    code = [(number, line.strip()) for number, line in enumerate(lines, 1) if line.strip() and line.strip()[0] != "#"]
    found, parts, start = [], [], 0
    for index, (number, line) in enumerate(code):
        start = start if parts else number
        continued = line.endswith(escape)
        parts.append(line[:-1] if continued else line)
        if not continued or index == len(code) - 1:
            words = " ".join(part for part in parts if part).split(None, 1)
            if words:
                found.append(_Instruction(start, words[0].upper(), words[1].strip() if len(words) > 1 else ""))
            parts = []
    return escape, found


def _parse_dockerfile(text: str, where: str) -> tuple[str, list[_Copy], dict[str, str]]:
    """The Dockerfile's last WORKDIR, its COPYs and its ENV variables."""
    escape, instructions = _instructions(text)
    runs = [ins for ins in instructions if ins.keyword == "RUN"]
    if runs:
        first = runs[0]
        more = f"line {first.line}" if len(runs) == 1 else f"{len(runs)} RUN instructions; the first at line {first.line}"
        raise TaskFolderError(
            f"{where} runs `{first.text()}` ({more}): building that image needs Docker, and rlenvs runs task "
            "folders without Docker, on the host's own tools (its /usr) with no network. Move set-up that needs "
            "no network into setup.sh (run in the workspace before the agent starts), or drop the Dockerfile"
        )
    workdir, copies, env, stages = PurePosixPath(DEFAULT_WORKDIR), [], {}, 0
    for ins in instructions:
        with _at(where, ins):
            if ins.keyword == "FROM":
                stages += 1
                if stages > 1:
                    raise TaskFolderError(
                        "is a second FROM: several build stages need Docker to build, and rlenvs runs task folders "
                        "without Docker; keep one FROM with WORKDIR, ENV and COPY only"
                    )
            elif ins.keyword == "ENV":
                env.update(_env_instruction(ins.args, env, escape))
            elif ins.keyword == "WORKDIR":
                workdir = _absolute(workdir, _words(ins.args, env, escape, split=False)[0])
            elif ins.keyword in ("COPY", "ADD"):
                copies.append(_parse_copy(ins, workdir, env, escape))
            elif ins.keyword == "USER":
                if ins.args not in _ROOT_USERS:
                    raise TaskFolderError(
                        "switches user: the sandbox has one user, so the task cannot count on another one; drop "
                        "the USER line"
                    )
            elif ins.keyword == "ENTRYPOINT":
                raise TaskFolderError(
                    "starts a process with the container: rlenvs keeps no process running between the agent's "
                    "commands; drop the ENTRYPOINT"
                )
            elif ins.keyword not in _IGNORED_INSTRUCTIONS:
                raise TaskFolderError(
                    "cannot be done without Docker: only FROM, WORKDIR, ENV and COPY (and ADD of local files) shape "
                    "a task's workspace"
                )
    return str(workdir), copies, env


def _parse_copy(ins: _Instruction, workdir: PurePosixPath, env: Mapping[str, str], escape: str) -> _Copy:
    args, chmod = ins.args, None
    if "<<" in args:
        raise TaskFolderError("writes a file with a heredoc; put the file in the folder and COPY it")
    while args.startswith("--"):
        flag, _, args = args.partition(" ")
        args = args.lstrip()
        name, _, value = flag[2:].partition("=")
        if name == "chmod":
            if not re.fullmatch(r"[0-7]{3,4}", value):
                raise TaskFolderError(f"has --chmod={value}: write it in octal, e.g. --chmod=755")
            chmod = int(value, 8)
        elif name in ("from", "parents", "exclude", "checksum", "keep-git-dir"):
            raise TaskFolderError(f"uses --{name}, which rlenvs does not support without Docker")
        elif name not in ("chown", "link"):
            raise TaskFolderError(f"has the unknown flag --{name}")
    try:  # the JSON form, else (as in Docker, also when it is not valid JSON) the shell form
        listed = json.loads(args) if args.startswith("[") else None
    except ValueError:
        listed = None
    if isinstance(listed, list) and all(isinstance(word, str) for word in listed):
        words = [_words(word, env, escape, split=False)[0] for word in listed]
    else:
        words = _words(args, env, escape)
    if len(words) < 2:
        raise TaskFolderError("needs a source and a destination")
    *sources, dest = words
    dest_is_dir = dest.endswith("/") or len(sources) > 1 or any(map(_is_glob, sources))
    return _Copy(ins, tuple(sources), _absolute(workdir, dest), dest_is_dir, chmod)


def _absolute(base: PurePosixPath, path: str) -> PurePosixPath:
    """`path` taken from `base` when relative, with "." and ".." resolved."""
    return PurePosixPath(posixpath.normpath(str(base / path)))


def _is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def _dockerignore(context: Path) -> list[tuple[bool, re.Pattern[str]]]:
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    rules = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
        if pattern in ("", "."):
            continue
        regex = ""
        for token in re.split(r"(\*\*/?|\*|\?|\[[^\]]*\])", pattern):
            if token.startswith("**"):
                regex += "(.*/)?" if token.endswith("/") else ".*"
            elif token in ("*", "?"):
                regex += "[^/]*" if token == "*" else "[^/]"
            elif token.startswith("[") and token.endswith("]"):
                regex += token
            else:
                regex += re.escape(token)
        rules.append((line.startswith("!"), re.compile(regex)))
    return rules


def _ignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or a folder above it decides."""
    parts = rel.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for negate, pattern in rules:
        if any(pattern.fullmatch(candidate) for candidate in candidates):
            ignored = not negate
    return ignored


def _sources(text: str, copy: _Copy, context: Path, rules: list[tuple[bool, re.Pattern[str]]]) -> list[Path]:
    """The files and folders of the build context that one COPY source names."""
    if "://" in text:
        raise TaskFolderError(f"downloads {text}: the sandbox has no network; put the file in the folder and COPY it")
    if ".." in PurePosixPath(text).parts or text.startswith("/"):
        raise TaskFolderError(f"copies {text}, which is outside its build context {context}")
    if _is_glob(text):
        found = sorted(path for path in context.glob(text) if not _ignored(path.relative_to(context).as_posix(), rules))
    else:
        path = context / text
        visible = path == context or not _ignored(path.relative_to(context).as_posix(), rules)
        found = [path] if visible and (path.exists() or path.is_symlink()) else []
    if not found:
        raise TaskFolderError(f"copies {text}, which is not in its build context {context}")
    for path in found:
        if copy.ins.keyword == "ADD" and path.is_file() and _ARCHIVE.search(path.name):
            raise TaskFolderError(
                f"unpacks the archive {path.name} with ADD, which rlenvs does not do: unpack it into the task folder "
                "and COPY the result"
            )
    return found


def _workspace_files(
    workdir: PurePosixPath, copies: list[_Copy], context: Path, folder: Path, where: str
) -> tuple[Entry, ...]:
    """What the Dockerfile's COPYs put into the workspace, later copies over earlier ones."""
    rules = _dockerignore(context)
    budget = _Budget("workspace (what the Dockerfile copies)")
    files: dict[str, Entry] = {}
    dirs = {PurePosixPath("/"), *workdir.parents, workdir}

    def place(target: PurePosixPath, source: Path, chmod: int | None) -> None:
        if target != workdir and workdir not in target.parents:
            raise TaskFolderError(
                f"copies {_rel(source, folder)} to {target}, outside the workspace {workdir}: the rest of the sandbox "
                "is read-only, so a task's files must be under its WORKDIR (setup.sh may write /tmp)"
            )
        if target == workdir:
            return
        rel = target.relative_to(workdir).as_posix()
        budget.left += len(files[rel].data) if rel in files else 0
        files[rel] = _file_entry(source, rel, folder, budget, chmod)
        dirs.update([target] if files[rel].is_dir else [], target.parents)

    for copy in copies:
        with _at(where, copy.ins):
            for text in copy.sources:
                for source in _sources(text, copy, context, rules):
                    if source.is_dir() and not source.is_symlink():
                        place(copy.dest, source, copy.chmod)  # the folder itself, with its mode
                        for path in _walk(source):
                            if not _ignored(path.relative_to(context).as_posix(), rules):
                                place(copy.dest / path.relative_to(source).as_posix(), path, copy.chmod)
                        dirs.add(copy.dest)
                    elif copy.dest_is_dir or copy.dest in dirs:
                        place(copy.dest / source.name, source, copy.chmod)
                    else:
                        place(copy.dest, source, copy.chmod)
    return tuple(files.values())


def _compose(compose: Path, folder: Path) -> tuple[Path, Path, dict[str, str]]:
    """The build context, Dockerfile and environment of a compose file's one service."""
    data = _read_yaml(compose, folder)
    where = _rel(compose, folder)
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services:
        raise TaskFolderError(f"{where} defines no services")
    if len(services) > 1:
        raise TaskFolderError(
            f"{where} runs {len(services)} services ({', '.join(map(str, services))}): rlenvs runs each task in one "
            "sandbox without Docker, so a task needing other containers cannot run"
        )
    ((name, service),) = services.items()
    service = service if isinstance(service, dict) else {}
    build = service.get("build")
    if build is None:
        raise TaskFolderError(
            f"{where}'s service {name} uses the prebuilt image {service.get('image')!r}: that needs Docker; give the "
            "task a Dockerfile with FROM, WORKDIR, ENV and COPY only"
        )
    spec = {"context": build} if isinstance(build, str) else build if isinstance(build, dict) else {}
    context = (compose.parent / str(spec.get("context", "."))).resolve()
    if not context.is_relative_to(folder):
        raise TaskFolderError(f"{where} builds from {context}, outside the task folder")
    for key in ("command", "entrypoint"):
        value = service.get(key)
        text = " ".join(map(str, value)) if isinstance(value, list) else str(value or "")
        if text and not re.search(r"\bsleep\b|tail\s+-f\s+/dev/null", text):
            raise TaskFolderError(
                f"{where}'s service {name} starts `{_short(text)}` ({key}): rlenvs keeps no process running between "
                "the agent's commands"
            )
    environment = _env_table(service.get("environment"), f"{where}'s environment", compose=True)
    return context, context / str(spec.get("dockerfile", "Dockerfile")), environment


# --- reading files ---------------------------------------------------------------------------------


@dataclass
class _Budget:
    """The bytes a task may bring along (its workspace, its tests), counted while reading so
    that a huge folder fails early instead of being read into memory."""

    what: str
    left: int = MAX_SETUP_BYTES

    def take(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise TaskFolderError(
                f"its {self.what} is over {MAX_SETUP_BYTES} bytes, the cap on what goes into the sandbox each episode"
            )


def _file_entry(path: Path, rel: str, folder: Path, budget: _Budget, mode: int | None = None) -> Entry:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise TaskFolderError(
            f"{_rel(path, folder)} is a symbolic link, which rlenvs cannot put in the sandbox: copy the file itself, "
            "or make the link in setup.sh (`ln -s ...`)"
        )
    mode = stat.S_IMODE(info.st_mode) if mode is None else mode
    if stat.S_ISDIR(info.st_mode):
        return Entry(rel, is_dir=True, mode=mode, mtime=info.st_mtime)
    if not stat.S_ISREG(info.st_mode):
        raise TaskFolderError(f"{_rel(path, folder)} is not a regular file or folder")
    budget.take(info.st_size)
    return Entry(rel, path.read_bytes(), mode=mode, mtime=info.st_mtime)


def _walk(top: Path) -> list[Path]:
    """Everything below `top` (folders before what they hold), sorted, no symlink followed."""
    found = []
    for root, dirs, files in os.walk(top, followlinks=False):
        dirs.sort()
        found += [Path(root, name) for name in sorted(dirs + files)]
    return sorted(found, key=lambda p: p.relative_to(top).parts)


def _tree(top: Path, folder: Path, budget: _Budget) -> list[Entry]:
    """The files and folders below `top` (none if it is missing), as entries at their paths below it."""
    return [_file_entry(path, path.relative_to(top).as_posix(), folder, budget) for path in _walk(top)]


def _read_text(path: Path, folder: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TaskFolderError(f"{_rel(path, folder)} is not UTF-8 text") from None


def _read_yaml(path: Path, folder: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise TaskFolderError(f"reading {path.name} needs PyYAML, which is not installed: pip install pyyaml") from None
    try:
        return yaml.safe_load(_read_text(path, folder))
    except yaml.YAMLError as error:
        raise TaskFolderError(f"{_rel(path, folder)} is not valid YAML: {error}") from None


def _rel(path: Path, folder: Path) -> str:
    return path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _seconds(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskFolderError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)
