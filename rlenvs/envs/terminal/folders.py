"""Terminal-Bench-style task folders as Terminal-v2 tasks (`TerminalEnv(task_dir=...)`).

Two layouts are read; `load_task_folders(path)` takes one task folder or a folder of them
(every subfolder that looks like a task, sorted by name; ids "folder/<name>"):

- Terminal-Bench 1: `task.yaml` (`instruction`; the older `descriptions` list is read
  too), an optional `Dockerfile` and `docker-compose.yaml`, `solution.sh` or
  `solution.yaml`, `run-tests.sh` and `tests/`.
- Terminal-Bench 2 / Harbor: `instruction.md`, `task.toml`, `environment/Dockerfile` (and
  an optional `environment/docker-compose.yaml`), `solution/solve.sh`, `tests/test.sh`.

Both may add `setup.sh` beside the instruction: rlenvs' own extension, run in the workspace
before the agent's first turn (the task's `setup_script`).

Its machine (`backend`, see BACKENDS): "host", the default, reads the Dockerfile without
building it, as the rest of this docstring describes; "bwrap" builds it into an image as the
folder loads (rlenvs.images: every instruction a task corpus uses, RUN included, with the
network at build time) and the task runs on a copy-on-write view of that image: `files` is
empty (the image has them), the workdir, variables and user are the image's, and the tests
run on its python3 and pytest; "auto" builds only a Dockerfile with RUN lines.

How a folder maps onto a `TerminalTask` on the host backend (the Dockerfile and compose
file are read by `rlenvs.envs.terminal.dockerfile`, which says what of them runs and what
is refused):

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
- where the tests run: out of the agent's reach (`rlenvs.sandbox.shells.verdict`): after its
  processes are gone, with /tmp emptied, in a tests folder of a random name (the path
  TESTS_DIR in their text is rewritten to it), with a fresh HOME, a clean environment (the
  task's variables, the system PATH, no user site for python3, the verdict's own
  sitecustomize first on PYTHONPATH, git's hooks and fsmonitor off) and pytest's rootdir
  and config fixed to the tests' own; their folder and the verdict's files are read-only
  while they run (but for the logs and their TMPDIR: tests that write into their own folder
  fail). They start in the WORKDIR, as Terminal-Bench and Harbor start them, with
  PYTHONSAFEPATH=1 (python3 -m and -c find the WORKDIR's modules after Python's own, never
  in their place). `run_tests_in_same_shell: true` (Terminal-Bench types the test command
  into the agent's own shell) keeps all of that, and the tests start where the agent's shell
  was (a real folder of the workspace), with the exported variables the task's ENV or the
  tests' text name (never a loader's, bash's, Python's, pytest's, git's, ... knob) and the
  agent's PATH entries after the system's: `rlenvs.sandbox.shells.verdict_shell` says what is carried
  and why no more.
- timeouts: `max_test_timeout_sec` / `[verifier].timeout_sec` is the tests' time limit
  (`test_timeout_s`); without it, the harness's own default (Terminal-Bench 60 s, Harbor
  600 s), never the env's per-command limit. Each command's limit (`timeout_s`) is left
  None, so the env's own `timeout_s` applies: `max_agent_timeout_sec` / `[agent].timeout_sec` bound a whole
  episode, for which Terminal-v2 has turns (`max_turns`) instead. A task with slow
  commands (builds, the reference solution as one command) needs a larger `timeout_s=`.

What cannot run is refused when the folder is loaded, with a `TaskFolderError` naming the
folder and the reason, never skipped and never left to fail at run time: on the host
backend a Dockerfile that RUNs anything (or has an ENTRYPOINT, several stages, a non-root
USER, or copies outside the workspace); on the backends that build, one that cannot be built
(the builder's refusals and failures, by line) or a WORKDIR under /proc or /dev (a final
non-root USER is whom the agent's commands run as; the tests stay root; a WORKDIR under /tmp
is the image's own folder there, which the verdict keeps); a compose
file with more than one service or a prebuilt image or its own start command, a prebuilt
`docker_image` without the environment/Dockerfile it was built from (with one, as Terminal-Bench 2
ships them, that Dockerfile is built, as Harbor's force_build does, and `info["stood_in"]` says
so), GPUs, separate verifier containers or multi-step Harbor tasks, test, set-up or
solution scripts that install or download (curl, wget, pip/uv/apt/npm install, git clone, ...;
but for addresses on this machine only, such as `curl http://localhost:8080`) or run pytest
when the python3 the tests run (the host's, or the image's) has none, and tests that connect to
a host off this machine (read from their Python with `ast` and from their scripts:
rlenvs.envs.terminal.network). With `network=True` on Docker or Podman the episodes have
the engine's network, and neither downloads nor connections are refused. A folder without its instruction or its tests gets an
error naming the missing file. The exception (`rlenvs.envs.terminal.boilerplate` says how
each line is read): the steps of a test script that fetch its test tools and packages (apt-get
install curl, uv's installer, `uv venv`, `uv pip install`, `uv add`, `pip install`, `uvx
--with`) are taken out and its pytest run becomes `python3 -m pytest ...`. On the backends
that build an image, what they install, and pytest, are the verdict's own packages, installed
from PyPI as the folder loads (`rlenvs.images.verdict_packages`, cached), read-only (a layer
over the image under bubblewrap, a volume in a container) and first on the tests' PYTHONPATH:
the image needs no pytest. On the host they must already be there (a distribution is found by
its name, `pyyaml`, through its metadata, not by the module it provides).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import os
import re
import shlex
import subprocess
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rlenvs.envs.terminal import dockerfile
from rlenvs.envs.terminal.boilerplate import OfflineRunner, offline_runner
from rlenvs.envs.terminal.folder_files import (  # TaskFolderError: imported from here by users
    Budget,
    TaskFolderError,
    file_entry,
    read_text,
    read_yaml,
    rel,
    short,
    tree,
    walk,
)
from rlenvs.envs.terminal.network import find_connection, read_scanned
from rlenvs.envs.terminal.network.shell_code import only_local
from rlenvs.envs.terminal.tasks import TESTS_DIR, Entry, TerminalTask
from rlenvs.envs.terminal.tool_downloads import wrapper_download
from rlenvs.images.bases import BaseImageError
from rlenvs.images.build import Image, ImageBuildError, build_image
from rlenvs.images.engine_build import EngineImage, build_with_engine
from rlenvs.images.layers import StoreError
from rlenvs.images.verdict_packages import (
    PackagesError,
    distribution_imports,
    image_pytest_plugins,
    image_python_target,
    packages_layer,
    pytest_plugins,
)
from rlenvs.sandbox.launch import SYSTEM_PYTHON, check_workspace_path
from rlenvs.sandbox.shells.containers import ENGINE_OPAQUE_XATTR, ENGINES, ContainerImage, EngineUnavailable, engine
from rlenvs.sandbox.shells.rootfs import OPAQUE_XATTR, EpisodeImage, RootImage, RootUnavailable
from rlenvs.sandbox.shells.session import MAX_COMMAND_BYTES
from rlenvs.sandbox.shells.verdict import LOGS_NAME, PACKAGES_VARIABLE, VERDICT_PACKAGES

ModuleCheck = Callable[[str], bool]
"""Whether the python3 the tests run has a module (the host's, or an image's)."""
BuiltImage = RootImage | ContainerImage
"""A task folder's image, as built for the bwrap backend or a container engine's: a frozen
dataclass, which the loader labels or extends with `dataclasses.replace` (its stand-in, the
verdict's packages) before the task runs on it as an `EpisodeImage`."""
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
_LAYOUTS = (
    "a Terminal-Bench task folder holds task.yaml, run-tests.sh and tests/; a Harbor one instruction.md, "
    "task.toml, environment/ and tests/test.sh"
)
_SOLUTION_FAILS = "(its reference solution would fail)"


BACKENDS = ("host", "bwrap", *ENGINES, "auto")
"""How a task folder's machine is made (`load_task_folders(backend=...)`): "host" reads its
Dockerfile without building it (the host's /usr, the COPYs in the workspace; RUN refused);
"bwrap" builds its image (rlenvs.images) and runs episodes on it under bubblewrap; "docker"
and "podman" have that engine build it and run each episode in a container of it
(rlenvs.images.engine_build); "auto" builds only the folders whose Dockerfile has a RUN
line, with the first engine that can run here (`engine_reason` is None), else with
bubblewrap."""


def load_task_folders(
    path: str | os.PathLike[str], *, backend: str = "host", network: bool = False
) -> list[TerminalTask]:
    """The tasks of the task folder `path`, or of every task folder inside it (sorted by
    name). Every folder that cannot run is named in one TaskFolderError. `backend`: see
    BACKENDS; all but "host" build images as they load (each layer once). `network=True`
    (docker and podman only): episodes get the engine's network, but those of a Harbor task
    whose task.toml says `allow_internet = false`; by default they have none."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}")
    if not isinstance(network, bool):
        raise TypeError(f"network must be True or False, got {network!r}")
    if network and backend not in ENGINES:
        raise ValueError(
            f"network=True needs backend='docker' or 'podman', not {backend!r}: a container engine's network is its "
            "own, where a sandbox on the host's network could reach the host's own services"
        )
    if backend in ENGINES and (reason := engine_reason(backend)) is not None:
        raise TaskFolderError(f"backend={backend!r} cannot run here: {reason}")
    root = Path(path).expanduser()
    if not root.is_dir():
        raise TaskFolderError(f"task_dir {root} {'is not a folder' if root.exists() else 'does not exist'}")
    folders = task_folders(root)
    if folders == [root]:
        return [_load(root, backend, network)]
    if not folders:
        raise TaskFolderError(f"task_dir {root} holds no task folders: {_LAYOUTS}")
    tasks, problems = [], []
    for folder in folders:
        try:
            tasks.append(_load(folder, backend, network))
        except TaskFolderError as error:
            problems.append(str(error))
    if len(problems) == 1:
        raise TaskFolderError(problems[0])
    if problems:
        listed = "\n".join(f"- {problem}" for problem in problems)
        raise TaskFolderError(f"{len(problems)} of the {len(folders)} task folders in {root} cannot run:\n{listed}")
    return tasks


def task_folders(root: Path) -> list[Path]:
    """`root` itself when it is a task folder, else the task folders in it, sorted by name
    (none: an empty list)."""
    if is_task_folder(root):
        return [root]
    return sorted(child for child in root.iterdir() if not child.name.startswith(".") and is_task_folder(child))


def is_task_folder(path: Path) -> bool:
    """Whether `path` holds one task (of either layout), complete or not."""
    return path.is_dir() and (
        any((path / name).is_file() for name in (*_TB_FILES, *dockerfile.COMPOSE_FILES, *_HARBOR_FILES))
        or ((path / "environment").is_dir() and (path / "tests").is_dir())
    )


def _load(folder: Path, backend: str, network: bool) -> TerminalTask:
    """One task folder. The readers below raise their reasons bare; the folder is named here."""
    folder = folder.resolve()
    try:
        has_harbor = any((folder / name).is_file() for name in _HARBOR_FILES)
        if (folder / "task.yaml").is_file():
            if has_harbor:
                other = "task.toml" if (folder / "task.toml").is_file() else "instruction.md"
                raise TaskFolderError(f"it has both task.yaml (Terminal-Bench) and {other} (Harbor); keep one layout")
            return _terminal_bench(folder, backend, network)
        if has_harbor or (folder / "environment").is_dir():
            return _harbor(folder, backend, network)
        raise TaskFolderError(f"task.yaml (the instruction) is missing: {_LAYOUTS}")
    except TaskFolderError as error:
        raise TaskFolderError(f"task folder {folder}: {error}") from None


# --- the two layouts ----------------------------------------------------------------------------


def _terminal_bench(folder: Path, backend: str, network: bool) -> TerminalTask:
    meta = read_yaml(folder / "task.yaml", folder)
    if not isinstance(meta, dict):
        raise TaskFolderError("task.yaml must be a mapping with an `instruction`")
    instruction = meta.get("instruction")
    if instruction is None and isinstance(meta.get("descriptions"), list):  # the older form
        described = [d for d in meta["descriptions"] if isinstance(d, dict)]
        chosen = next((d for d in described if d.get("key") == "base"), described[0] if described else {})
        instruction = chosen.get("description")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskFolderError("task.yaml has no `instruction` (a non-empty string)")
    same_shell = meta.get("run_tests_in_same_shell", False)
    if not isinstance(same_shell, bool):
        raise TaskFolderError(f"task.yaml's run_tests_in_same_shell must be true or false, got {same_shell!r}")
    _check_test_network(folder, folder, folder / "tests", folder / "run-tests.sh", network)  # cheap: before a build
    image, root, has_module = _machine(folder, folder, {}, backend, network)
    runner, tests_dir = folder / "run-tests.sh", folder / "tests"
    if not runner.is_file():
        raise TaskFolderError(
            "run-tests.sh is missing. Terminal-Bench's default installs pytest from the network, and the sandbox "
            "has no network: add a run-tests.sh, e.g. `python3 $TEST_DIR/test_outputs.py` for a "
            "tests/test_outputs.py of plain asserts"
        )
    # the runner's steps that fetch uv, pytest and the test packages are taken out (boilerplate)
    runner_text = runner.read_text(encoding="utf-8", errors="replace")
    offline = offline_runner(runner_text)
    root, has_module, verdict_env = _test_tools(folder, runner, tests_dir, offline, root, has_module)
    _check_tests(folder, tests_dir, runner, runner_text if offline is None else offline.script, has_module, network)
    budget = Budget("tests")
    tests = [entry for entry in tree(tests_dir, folder, budget) if entry.path != "run-tests.sh"]
    runner_entry = file_entry(runner, "run-tests.sh", folder, budget)
    tests.append(runner_entry if offline is None else dataclasses.replace(runner_entry, content=offline.script))
    if (folder / "solution.sh").is_file():
        solution: tuple[str, ...] = (_script(folder, folder / "solution.sh", _SOLUTION_FAILS, network),)
    elif (folder / "solution.yaml").is_file():
        solution = _solution_yaml(folder, network)
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
    task = _task(
        folder, instruction.strip(), image, solution, tests, test_command, test_timeout_s, verdict_env, root, network
    )
    # run_tests_in_same_shell: the tests still run out of the agent's reach, taking from its
    # shell only what rlenvs.sandbox.shells.verdict_shell allows (its folder, named variables, PATH)
    return dataclasses.replace(task, test_parser="pytest", same_shell=same_shell)


def _solution_yaml(folder: Path, network: bool) -> tuple[str, ...]:
    path = folder / "solution.yaml"
    steps = read_yaml(path, folder)
    if not isinstance(steps, list) or not all(isinstance(s, dict) and isinstance(s.get("command"), str) for s in steps):
        raise TaskFolderError("solution.yaml must be a list of {command: ...} entries")
    for step in steps:
        if step.get("append_enter") is False or step.get("block") is False:
            raise TaskFolderError(
                f"solution.yaml types keystrokes into a running program (`{short(step['command'])}` with "
                "append_enter or block false): rlenvs runs whole commands; write the solution as solution.sh"
            )
        _check_script(folder, path, step["command"], _SOLUTION_FAILS, network=network)
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


def _harbor(folder: Path, backend: str, network: bool) -> TerminalTask:
    path = folder / "instruction.md"
    if not path.is_file():
        raise TaskFolderError("instruction.md (the task's instruction) is missing")
    instruction = read_text(path, folder).strip()
    if not instruction:
        raise TaskFolderError("instruction.md is empty")
    config: dict[str, Any] = {}
    if (folder / "task.toml").is_file():
        try:
            config = tomllib.loads(read_text(folder / "task.toml", folder))
        except tomllib.TOMLDecodeError as error:
            raise TaskFolderError(f"task.toml is not valid TOML: {error}") from None
    verifier, environment, solution = (
        config[key] if isinstance(config.get(key), dict) else {} for key in ("verifier", "environment", "solution")
    )
    if config.get("steps"):
        raise TaskFolderError("task.toml has [[steps]]: rlenvs runs single-step tasks only")
    prebuilt = environment.get("docker_image")
    if prebuilt and not (folder / "environment" / "Dockerfile").is_file():
        raise TaskFolderError(
            f"task.toml runs the prebuilt image {prebuilt!r}, and environment/ holds no Dockerfile to build it from "
            "(rlenvs pulls from no registry): add the Dockerfile the image was built from, as Terminal-Bench 2's "
            "tasks ship it"
        )
    if environment.get("gpus"):
        raise TaskFolderError(f"task.toml asks for {environment['gpus']} GPU(s), which the sandbox does not have")
    if verifier.get("environment_mode") == "separate" or "environment" in verifier:
        raise TaskFolderError(
            "task.toml runs the tests in a separate verifier container; rlenvs runs them in the task's own sandbox "
            'after the agent finished (environment_mode = "shared")'
        )
    extra = dockerfile.env_table(environment.get("env"), "task.toml's [environment].env")
    if environment.get("allow_internet") is False:  # the task's say; by default the user's alone
        network = False
    forbidden = environment.get("allow_internet") is False
    runner = folder / "tests" / "test.sh"
    _check_test_network(folder, folder / "environment", folder / "tests", runner, network, forbidden=forbidden)
    image, root, has_module = _machine(folder, folder / "environment", extra, backend, network)
    if prebuilt and root is not None:  # built from its Dockerfile, as Harbor's force_build does: said in info
        built_instead = f"{prebuilt} (built from environment/Dockerfile)"
        root = dataclasses.replace(root, stood_in="; ".join(filter(None, (built_instead, root.stood_in))))
    if not runner.is_file():
        raise TaskFolderError("tests/test.sh (the script that runs the task's tests) is missing")
    # the usual test.sh fetches curl, uv and pytest first: those steps are taken out (boilerplate)
    offline = offline_runner(runner.read_text(encoding="utf-8", errors="replace"))
    root, has_module, verdict_env = _test_tools(folder, runner, folder / "tests", offline, root, has_module)
    _check_tests(folder, folder / "tests", runner, None if offline is None else offline.script, has_module, network)
    logs = Entry(f"{LOGS_DIR[len(TESTS_DIR) + 1 :]}/verifier", is_dir=True)
    tests = [*tree(folder / "tests", folder, Budget("tests")), logs]
    if offline is not None:
        tests = [
            dataclasses.replace(entry, content=offline.script) if entry.path == "test.sh" else entry for entry in tests
        ]
    verifier_env = {**dockerfile.env_table(verifier.get("env"), "task.toml's [verifier].env"), **verdict_env}
    test_command = (
        f"bash {TESTS_DIR}/test.sh\n"
        f"{SYSTEM_PYTHON} -I - {LOGS_DIR}/verifier <<'__RLENVS_REWARD__'\n{_HARBOR_REWARD}__RLENVS_REWARD__\n"
    )
    test_timeout_s = _seconds(verifier.get("timeout_sec"), "task.toml's [verifier].timeout_sec")
    test_timeout_s = HARBOR_TEST_TIMEOUT_S if test_timeout_s is None else test_timeout_s
    solution_commands = _harbor_solution(folder, solution, network)
    return _task(
        folder, instruction, image, solution_commands, tests, test_command, test_timeout_s, verifier_env, root, network
    )


def _harbor_solution(folder: Path, section: Mapping[str, Any], network: bool) -> tuple[str, ...]:
    solution_dir = folder / "solution"
    script = solution_dir / "solve.sh"
    if not script.is_file():
        return ()
    others = [path for path in walk(solution_dir) if path != script]
    for path in others:
        if path.suffix == ".sh" and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            _check_script(folder, path, text, _SOLUTION_FAILS, network=network)
    text = _script(folder, script, _SOLUTION_FAILS, network)
    exports = dockerfile.exports(dockerfile.env_table(section.get("env"), "task.toml's [solution].env"))
    if not others:
        return (exports + text,)
    # Several files: the command writes them where solve.sh will find them, then runs it.
    lines = [f"rm -rf {SOLUTION_DIR} && mkdir -p {SOLUTION_DIR}"]
    for entry in tree(solution_dir, folder, Budget("solution")):
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
    folder: Path,
    instruction: str,
    image: dockerfile.Image,
    solution: tuple[str, ...],
    tests: Iterable[Entry],
    test_command: str,
    test_timeout_s: float | None,
    test_env: Mapping[str, str],
    root: EpisodeImage | None = None,
    network: bool = False,
) -> TerminalTask:
    """What both layouts share: the solution's size, setup.sh, and the image's variables, which
    the set-up gets as `export` lines and the tests (fresh shells with nothing of the agent's,
    unlike its own) as their variables, with TEST_DIR and then `test_env` over them."""
    for command in solution:
        if len(command.encode()) > MAX_COMMAND_BYTES:
            raise TaskFolderError(
                f"its reference solution makes a command of {len(command.encode())} bytes, over the "
                f"{MAX_COMMAND_BYTES}-byte cap of one command: shorten it or split it into several"
            )
    exports = dockerfile.exports(image.environment)
    setup = folder / SETUP_SCRIPT
    setup_script = exports + _script(folder, setup, "when the task is set up", network) if setup.is_file() else ""
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
        image=root,
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
        (
            r"(?<![\w.-])(cargo\s+(install|fetch)|go\s+(get|install|mod\s+download)|gem\s+install)\b",
            "it installs packages",
        ),
        (r"(?<![\w.-])((conda|mamba|micromamba)\s+(install|create)|pipx|poetry\s+install)\b", "it installs packages"),
        (r"(?<![\w.-])docker(?![\w.-])", "it runs Docker"),
    )
)
_PYTEST = re.compile(r"(?<![\w.-])pytest(?![\w.-])")
_LOOKUP = re.compile(r"(?<![\w.-])(command\s+-v|which|type)\s+[\w.-]+")
"""`command -v curl`: asks whether a program is there, runs nothing."""
_COMMENT = re.compile(r"(^|\s)#.*$")
_SPOKEN = re.compile(r"""(?<![\w.-])(echo|printf)\b(?:'[^']*'|"(?:\\.|[^"\\])*"|[^;&|'"])*""")
"""What `echo` and `printf` say (up to the next `;`, `&&`, `||` or `|`): text, never run, so
`echo "Installing uv..."` is no use of uv."""
_LOOPBACK_ONLY = {"it downloads": ("curl", "wget"), "git fetches a repository": ("git",)}
"""Commands of _NETWORK_COMMANDS that need no network when every address they name is on this
machine (`curl -s http://localhost:8080/health`, `git clone /srv/repo.git`): read by
rlenvs.envs.terminal.network.shell_code.only_local, so a task's own server or repository is no refusal."""


def _check_script(
    folder: Path,
    script: Path,
    text: str,
    stage: str,
    *,
    tests: bool = False,
    has_module: ModuleCheck | None = None,
    network: bool = False,
) -> None:
    """Refuse a script that needs the network (unless the user gave the episodes one,
    `network`: then installs and downloads can run) or (`tests`) a pytest the host's python3
    lacks."""
    for number, line in enumerate(text.splitlines(), 1):
        code = _COMMENT.sub("", line).strip()
        where = f"{rel(script, folder)} (line {number})"
        runs = _SPOKEN.sub(r"\1", _LOOKUP.sub("", code))  # the words a shell would run
        for pattern, what in () if network else _NETWORK_COMMANDS:
            if pattern.search(runs):
                if what in _LOOPBACK_ONLY and only_local(code, _LOOPBACK_ONLY[what]):
                    continue
                raise TaskFolderError(
                    f"{where} runs `{short(code)}`, which needs the network ({what}), and the sandbox has none "
                    f"{stage}. Use only what the host has: bash, coreutils and python3's standard library (tests: "
                    "plain asserts run with `python3 $TEST_DIR/test_outputs.py`), or give the episodes a network "
                    "on a container engine: TerminalEnv(task_dir=..., backend='docker' or 'podman', network=True)"
                )
        if tests and _PYTEST.search(runs) and not (has_module or _host_has_module)("pytest"):
            raise TaskFolderError(
                f"{where} runs pytest (`{short(code)}`), which the sandbox's {SYSTEM_PYTHON} does not have (the "
                "sandbox sees only the host's /usr, with no network to install it). Write the tests with plain "
                "asserts and run them with `python3 $TEST_DIR/test_outputs.py`, or install pytest for the host's "
                "python3 (e.g. apt-get install python3-pytest)"
            )


def _check_test_network(
    folder: Path, context: Path, tests_dir: Path, runner: Path, network: bool, *, forbidden: bool = False
) -> None:
    """Refuse tests that connect to a host off this machine (rlenvs.envs.terminal.network:
    Python read with `ast`, shell scripts by command) or run a build tool that would download
    itself (rlenvs.envs.terminal.tool_downloads: a Gradle wrapper in the build `context` whose
    release the image lacks), unless the user gave the episodes a network (`network=True` on
    Docker or Podman). Without one such tests fail whatever the agent does, so the task could
    only ever score 0. The scripts are read as they will run, their fetching of test tools taken
    out (that is the command check's to refuse, after this one, where the loader cannot take it out)."""
    if network:
        return
    found = find_connection(tests_dir, runner)
    if found is not None:
        connection, places = found
        assert connection.path is not None  # find_connection names the file
        more = f" (and {places - 1} more place{'s' if places > 2 else ''} in the tests)" if places > 1 else ""
        what = f"{connection.describe(rel(connection.path, folder))}{more}"
    elif runner.is_file() and (
        download := wrapper_download(context, read_scanned(runner), read_scanned(context / "Dockerfile"))
    ):
        what = (
            f"{rel(runner, folder)} runs the Gradle wrapper, which needs the network (it downloads Gradle from "
            f"{download.host}, {rel(download.properties, folder)}'s distributionUrl, then the build's dependencies; "
            "the image's build never ran it)"
        )
    else:
        return
    fix = (
        "task.toml says allow_internet = false, so no backend gives them one: make the tests check the workspace "
        "instead"
        if forbidden
        else "If the tests are meant to reach it, give the episodes a network on a container engine: "
        "TerminalEnv(task_dir=..., backend='docker' or 'podman', network=True) (`rlenvs tasks check --backend docker "
        "--env-arg network=true`); else make the tests check the workspace instead"
    )
    raise TaskFolderError(
        f"{what}, and the sandbox has none when the tests run: they would fail whatever the agent did (every "
        f"episode scoring 0). {fix}"
    )


def _check_tests(
    folder: Path,
    tests_dir: Path,
    runner: Path,
    runner_text: str | None = None,
    has_module: ModuleCheck | None = None,
    network: bool = False,
) -> None:
    """Refuse test scripts that need the network (unless the episodes have one, `network`);
    `runner_text`: what runs as the runner, when the caller has it (read from the file otherwise)."""
    others = [path for path in walk(tests_dir) if path.suffix == ".sh" and path != runner]
    for script in (runner, *others):
        text = runner_text if script == runner and runner_text is not None else None
        if text is None and script.is_file():
            text = script.read_text(encoding="utf-8", errors="replace")
        if text is not None:
            stage = "when the tests run"
            _check_script(folder, script, text, stage, tests=True, has_module=has_module, network=network)


def _test_tools(
    folder: Path,
    runner: Path,
    tests_dir: Path,
    offline: OfflineRunner | None,
    root: BuiltImage | None,
    has_module: ModuleCheck | None,
) -> tuple[BuiltImage | None, ModuleCheck | None, dict[str, str]]:
    """What the tests run with: on an image (bubblewrap, Docker, Podman), the verdict's own
    packages (rlenvs.images.verdict_packages: pytest and what the runner installs, from PyPI,
    cached), a layer on top of the image's under bubblewrap, a read-only volume in a
    container, with the variables that put them on the tests' PYTHONPATH and load the pytest
    plugins among them and those the image's own build installed; the image then needs no
    pytest of its own. On the host's python3,
    what the runner installs must already be there: checked here by distribution name (its
    metadata says which modules `pyyaml` or `scikit-learn` provide).
    Returns the image, the module check for the tests' scripts, and the test variables."""
    requirements = offline.requirements if offline is not None else ()
    scripts = [runner, *(path for path in walk(tests_dir) if path.suffix == ".sh")]
    runs_pytest = any(_PYTEST.search(path.read_text(encoding="utf-8", errors="replace")) for path in scripts)
    if isinstance(root, (RootImage, ContainerImage)) and (requirements or runs_pytest):
        opaque = ENGINE_OPAQUE_XATTR if isinstance(root, ContainerImage) else OPAQUE_XATTR
        try:
            target = image_python_target(root.lowers, opaque)
            layer = packages_layer(target, requirements)
        except (PackagesError, StoreError) as error:
            raise TaskFolderError(f"{rel(runner, folder)}: {error}") from None
        variables = {PACKAGES_VARIABLE: VERDICT_PACKAGES}
        plugins = sorted({*pytest_plugins(layer), *image_pytest_plugins(root.lowers, target.version, opaque)})
        if plugins:
            variables["PYTEST_PLUGINS"] = ",".join(plugins)
        image_check = has_module

        def with_packages(name: str) -> bool:
            return name == "pytest" or image_check is None or image_check(name)

        if isinstance(root, ContainerImage):
            mounted = str(layer / VERDICT_PACKAGES.lstrip("/"))
            return dataclasses.replace(root, read_only=((mounted, VERDICT_PACKAGES),)), with_packages, variables
        return dataclasses.replace(root, lowers=(str(layer), *root.lowers)), with_packages, variables
    if offline is None or root is not None:  # an image whose tests neither run pytest nor install anything
        return root, has_module, {}
    if offline.plugins:
        raise TaskFolderError(
            f"{rel(runner, folder)} adds the pytest plugin{'s' if len(offline.plugins) > 1 else ''} "
            f"{', '.join(offline.plugins)}, and the host's pytest loads only the plugins the tests name "
            "(PYTEST_DISABLE_PLUGIN_AUTOLOAD=1): run pytest with `-p <plugin module>`, or use an image backend "
            "(backend='bwrap', 'docker' or 'podman'), where the verdict installs and loads them"
        )
    found = distribution_imports(SYSTEM_PYTHON, offline.packages)
    missing = [name.replace("_", "-") for name, modules in found.items() if not modules]
    if missing:
        raise TaskFolderError(
            f"{rel(runner, folder)} installs {', '.join(missing)} for the tests, which the sandbox's {SYSTEM_PYTHON} "
            "does not have, and the tests run offline: install them for the host's python3 (apt-get install "
            "python3-<name>), or use an image backend (backend='bwrap', 'docker' or 'podman'), where the verdict "
            "installs them"
        )
    return root, has_module, {}


def _machine(
    folder: Path, base: Path, extra: Mapping[str, str], backend: str, network: bool
) -> tuple[dockerfile.Image, BuiltImage | None, ModuleCheck | None]:
    """The task's machine: read from its Dockerfile for the host backend (no image), or
    built (rlenvs.images) for the others, and how to tell whether its python3 has a module."""
    context, path, compose_env = dockerfile.build_source(folder, base)
    if backend == "host" or (backend == "auto" and not (path.is_file() and dockerfile.runs_anything(path))):
        return dockerfile.image(folder, base, extra), None, None
    if backend == "auto":
        backend = next((name for name in ENGINES if engine_reason(name) is None), "bwrap")
    if not path.is_file():
        raise TaskFolderError(f"{rel(path, folder)} is missing: the {backend} backend builds the task's image from it")
    try:
        built: Image | EngineImage
        if backend == "bwrap":
            built = build_image(path, context)
            root: BuiltImage = built.root()
        else:  # network: load_task_folders allows it for ENGINES only
            built = build_with_engine(path, context, engine_name=backend)
            root = built.root(network=network)
    except (ImageBuildError, BaseImageError, StoreError, RootUnavailable, EngineUnavailable) as error:
        raise TaskFolderError(str(error)) from None
    try:
        check_workspace_path(built.workdir, on_image=True)
    except ValueError as error:
        raise TaskFolderError(
            f"{rel(path, folder)}'s WORKDIR {built.workdir} cannot be the workspace: {error}"
        ) from None
    environment = {**built.environment, **compose_env, **extra}
    if built.agent_user is not None:  # whom the agent's commands run as; the tests stay root
        environment.setdefault("HOME", built.agent_user.home)  # as a container's USER has it
    return dockerfile.Image(built.workdir, (), environment), root, built.has_python_module


def engine_reason(name: str) -> str | None:
    """Why the backend of the container engine `name` cannot run here (no client, SDK or
    daemon, storage it cannot read, containers it cannot start: the fix included), or None."""
    try:
        engine(name)
    except EngineUnavailable as error:
        return str(error)
    return None


def _script(folder: Path, path: Path, stage: str, network: bool = False) -> str:
    text = read_text(path, folder)
    _check_script(folder, path, text, stage, network=network)
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


def _seconds(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskFolderError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)
