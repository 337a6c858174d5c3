"""What a terminal task is: the workspace it starts from, the instruction, a reference
solution, and the expectations the final workspace (and answer) must meet.

A task is plain data, so the same record serves the procedural families, a user's own task
row (`options={"task": {...}}`, JSON-shaped) and a Parquet export. Task `i` of a family at a
level is a pure function of (family, level, i): all its randomness comes from `task_rng`
(`rlenvs.core.procedural`, where `Family` lives too; both are importable from here).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlenvs.core.procedural import Family as Family
from rlenvs.core.procedural import task_rng as task_rng  # the seeding of every family, kept importable here
from rlenvs.core.task import Task
from rlenvs.envs.terminal.workspace import Expectation, expectation_from_dict, normalise_path
from rlenvs.sandbox.shells.rootfs import EpisodeImage
from rlenvs.sandbox.shells.verdict import TESTS_DIR as TESTS_DIR  # the name task folders' tests use for their folder
from rlenvs.sandbox.shells.verdict_shell import words

MAX_SETUP_BYTES = 16 << 20
"""The initial workspace's total size: it is sent to the sandbox once per episode."""


@dataclass(frozen=True)
class Entry:
    """One file or directory of a task's initial workspace."""

    path: str
    """Relative to the workspace, '/'-separated; parent folders are made as needed."""
    content: str | bytes = ""
    """A file's content (str is written as UTF-8); directories have none."""
    mode: int | None = None
    """Permission bits; default 0o644 for a file, 0o755 for a directory."""
    mtime: float | None = None
    """Modification time (seconds since the epoch); default: when the workspace is made."""
    is_dir: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", normalise_path(self.path))
        if self.is_dir and self.content:
            raise ValueError(f"workspace entry {self.path!r} is a directory and cannot have content")
        if not isinstance(self.content, (str, bytes)):
            raise TypeError(
                f"workspace entry {self.path!r}: content must be str or bytes, got {type(self.content).__name__}"
            )
        if self.mode is not None and not (isinstance(self.mode, int) and 0 <= self.mode <= 0o7777):
            raise ValueError(
                f"workspace entry {self.path!r}: mode must be permission bits such as 0o644, got {self.mode!r}"
            )

    @property
    def data(self) -> bytes:
        return self.content.encode() if isinstance(self.content, str) else self.content

    def for_guest(self) -> dict[str, Any]:
        """The record the sandbox's zygote writes into the workspace."""
        return {
            "path": self.path,
            "dir": self.is_dir,
            "data": base64.b64encode(self.data).decode(),
            "mode": self.mode if self.mode is not None else (0o755 if self.is_dir else 0o644),
            "mtime": self.mtime,
        }

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Entry:
        if not isinstance(row, Mapping) or not isinstance(row.get("path"), str):
            raise ValueError(f"a workspace entry needs a 'path' string, got {row!r}")
        mode = row.get("mode")
        if isinstance(mode, str):  # "755" or "0o755", as people write modes in JSON and YAML
            mode = int(mode.removeprefix("0o"), 8)
        content = row.get("content", "")
        if "content_base64" in row:  # binary content, as JSON cannot hold bytes
            content = base64.b64decode(row["content_base64"])
        return cls(
            path=row["path"], content=content, mode=mode, mtime=row.get("mtime"), is_dir=bool(row.get("dir", False))
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready record `from_dict` reads back."""
        record: dict[str, Any] = {"path": self.path, "mode": self.mode, "mtime": self.mtime, "dir": self.is_dir}
        if isinstance(self.content, bytes):
            record["content_base64"] = base64.b64encode(self.content).decode()
        else:
            record["content"] = self.content
        return record


@dataclass(frozen=True)
class TerminalTask(Task):
    files: tuple[Entry, ...]
    """The initial workspace."""
    solution: tuple[str, ...]
    """Reference shell commands, one per turn; the oracle then submits (`answer` if any)."""
    expect: tuple[Expectation, ...]
    """What must hold after the episode for reward 1.0."""
    setup_script: str = ""
    """Shell run in the workspace after the files are written, before the agent's first turn."""
    answer: str | None = None
    """The reference answer for a task that asks a question (the oracle's `submit <answer>`)."""
    timeout_s: float | None = None
    """Per-command time limit for this task (None: the env's)."""
    tests: tuple[Entry, ...] = ()
    """Test files copied in after the agent finished (task folders), out of the agent's sight."""
    test_command: str = ""
    """Run after the agent finished as a `rlenvs.sandbox.shells.verdict` test run (fresh /tmp and
    HOME, clean environment, started in the workspace), with `tests` in the folder TESTS_DIR
    names; exit status 0 (and `test_parser`'s reading) is one more expectation met. Empty:
    the expectations alone decide."""
    test_environment: tuple[tuple[str, str], ...] = ()
    """The task's variables for `test_command` (a folder's Dockerfile ENV, TEST_DIR, Harbor's
    [verifier].env): given to the verdict as data, not as `export` lines, so that what it
    enforces (its own sitecustomize first on PYTHONPATH, git's hardening) comes after them."""
    test_timeout_s: float | None = None
    """Time limit of `test_command` (None: the env's per-command limit)."""
    test_parser: str = ""
    """How the test run's output is read besides its exit status: "pytest" (Terminal-Bench 1's
    `parser_name`): the pytest or unittest results it prints must all pass
    (`rlenvs.envs.terminal.results`); "": the exit status alone."""
    workdir: str = "/workspace"
    """Where the workspace is inside the sandbox (Terminal-Bench tasks expect /app)."""
    environment: tuple[tuple[str, str], ...] = ()
    """Exported variables the agent's shell starts with (a task folder's Dockerfile ENV)."""
    image: EpisodeImage | None = None
    """The built image the task runs on (a task folder loaded with a backend that builds:
    rlenvs.images), under bubblewrap or in Docker containers; None: the host's /usr,
    read-only, with `files` in the workspace."""
    same_shell: bool = False
    """Terminal-Bench's `run_tests_in_same_shell`: the tests start where the agent's shell was
    and see some of its exported variables and PATH, still out of its reach
    (`rlenvs.sandbox.shells.verdict_shell` says what is carried and why no more)."""

    @functools.cached_property
    def test_words(self) -> frozenset[str]:
        """The words of the tests' files and command: the names of the agent's exported
        variables that a same-shell task's tests may see (read once per task)."""
        return words((self.test_command.encode(), *(entry.data for entry in self.tests if not entry.is_dir)))

    def ground_truth(self) -> str:
        """The task as a JSON row (`task_to_row`): what an export's `ground_truth` column
        holds, so another framework can pose and judge the same task."""
        return json.dumps(task_to_row(self))


@dataclass(frozen=True)
class Scenario:
    """One generated task, before it gets its id: what a family's generator returns."""

    instruction: str
    files: tuple[Entry, ...]
    solution: tuple[str, ...]
    expect: tuple[Expectation, ...]
    setup_script: str = ""
    answer: str | None = None


def family_task(family: Family[Scenario], level: int, index: int) -> TerminalTask:
    """Task `index` of `family` at `level`: its scenario with the id that finds it again."""
    scenario = family.scenario(level, index)
    return TerminalTask(
        task_id=family.task_id(level, index, prefix="terminal"),
        prompt=scenario.instruction,
        files=tuple(scenario.files),
        solution=tuple(scenario.solution),
        expect=tuple(scenario.expect),
        setup_script=scenario.setup_script,
        answer=scenario.answer,
    )


def task_from_row(row: Mapping[str, Any], task_id: str) -> TerminalTask:
    """A user's own task: {"instruction", "expect": [...], optional "files", "setup_script",
    "solution", "answer", "timeout_s"}. Errors name the field and the expected shape."""
    instruction = row.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError(f"a Terminal-v2 task row needs a non-empty 'instruction' string, got {instruction!r}")
    expect = row.get("expect")
    if not isinstance(expect, Sequence) or isinstance(expect, str) or not expect:
        raise ValueError(
            "a Terminal-v2 task row needs 'expect': a non-empty list of expectations such as "
            '{"kind": "file_text", "path": "out.txt", "text": "42"} (see rlenvs.envs.terminal.workspace)'
        )
    solution = row.get("solution", ())
    if isinstance(solution, str) or not all(isinstance(command, str) for command in solution):
        raise ValueError(f"'solution' must be a list of shell commands (one per turn), got {solution!r}")
    setup = row.get("setup_script", "")
    if not isinstance(setup, str):
        raise ValueError(f"'setup_script' must be a string of shell, got {type(setup).__name__}")
    answer = row.get("answer")
    if answer is not None and not isinstance(answer, str):
        answer = str(answer)
    timeout = row.get("timeout_s")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ValueError(f"'timeout_s' must be a positive number of seconds, got {timeout!r}")
    files = tuple(Entry.from_dict(item) for item in row.get("files", ()))
    check_size(files, task_id)
    return TerminalTask(
        task_id=task_id,
        prompt=instruction.strip(),
        files=files,
        solution=tuple(solution),
        expect=tuple(expectation_from_dict(item) if isinstance(item, Mapping) else item for item in expect),
        setup_script=setup,
        answer=answer,
        timeout_s=None if timeout is None else float(timeout),
    )


def task_to_row(task: TerminalTask) -> dict[str, Any]:
    """The row `task_from_row` reads back (for exports and for users copying a task). A task
    folder's own tests are not part of a row: such a task is posed from its folder."""
    return {
        "id": task.task_id,
        "instruction": task.prompt,
        "files": [entry.to_dict() for entry in task.files],
        "setup_script": task.setup_script,
        "solution": list(task.solution),
        "expect": [expectation.to_dict() for expectation in task.expect],
        "answer": task.answer,
        "timeout_s": task.timeout_s,
    }


def check_size(files: Sequence[Entry], task_id: str) -> None:
    total = sum(len(entry.data) for entry in files)
    if total > MAX_SETUP_BYTES:
        raise ValueError(f"task {task_id}: its initial workspace is {total} bytes, over the {MAX_SETUP_BYTES}-byte cap")
