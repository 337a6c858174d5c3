"""The `rlenvs` command where a person drives it: `--version`, `--env-arg`'s None, line editing
in `rlenvs play` at a real terminal (a pseudo-terminal), and Ctrl-C (SIGINT) ending a command
with one line and status 130 instead of a traceback."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import pytest

import rlenvs
from rlenvs.cli import env_kwargs_from_args
from tests.conftest import GSM8K_TEST
from tests.support.ctrl_c import sigint_as_at_a_terminal

FIRST_ROW = json.loads(GSM8K_TEST.read_text().splitlines()[0])
GOLD = FIRST_ROW["answer"].split("####")[1].strip()
LEFT_ARROW = "\x1b[D"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "rlenvs.cli", *args]


def _one_task_play(tmp_path) -> list[str]:
    """`rlenvs play` on a one-task GSM8K file, so that the task (and its gold) is known."""
    one_task = tmp_path / "one.jsonl"
    one_task.write_text(json.dumps(FIRST_ROW) + "\n")
    return _cli("play", "rlenvs/GSM8K-v1", "--env-arg", f"data_files={one_task}", "--env-arg", "max_turns=1")


def test_version_names_the_package_version() -> None:
    done = subprocess.run(_cli("--version"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == f"rlenvs {rlenvs.__version__}\n"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("None", None), ("null", None), ("True", True), ("false", False), ('"None"', "None"), ("none", "none")],
)
def test_env_arg_reads_python_and_json_literals(value: str, expected: object) -> None:
    """`system_prompt=None` was the string "None", sent to the model as its system message."""
    assert env_kwargs_from_args([f"system_prompt={value}"]) == {"system_prompt": expected}


def test_play_with_system_prompt_none_sends_no_system_message(tmp_path) -> None:
    done = subprocess.run(
        [*_one_task_play(tmp_path), "--env-arg", "system_prompt=None"],
        input="/quit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "[user]" in done.stdout and "[system]" not in done.stdout and "None" not in done.stdout


def _read_until(fd: int, pattern: bytes, timeout: float) -> bytes:
    """What the terminal shows until `pattern` (a regular expression) matches all of it so far."""
    seen = b""
    deadline = time.monotonic() + timeout
    while not re.search(pattern, seen, re.DOTALL):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(
                f"no {pattern!r} within {timeout} s; the terminal showed {seen.decode(errors='replace')}"
            )
        try:
            seen += os.read(fd, 4096)
        except OSError:  # the other end closed: the process ended
            break
    return seen


def _at_a_terminal(command: list[str]) -> tuple[subprocess.Popen, int]:
    """`command` with a pseudo-terminal as its stdin, stdout and stderr, as a person runs it."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command, stdin=follower, stdout=follower, stderr=follower, env={**os.environ, "TERM": "xterm"}
    )
    os.close(follower)
    return process, leader


def test_play_edits_the_line_with_the_arrow_keys(tmp_path) -> None:
    """The answer typed with its last digit missing, then the left arrow (before the closing
    brace) and the digit: with readline that is the right answer; without it the escape code
    landed in the reply and the answer was wrong."""
    process, terminal = _at_a_terminal(_one_task_play(tmp_path))
    try:
        _read_until(terminal, b"> your reply:", timeout=60)
        typed = f"\\boxed{{{GOLD[:-1]}}}{LEFT_ARROW}{GOLD[-1]}\r.\r"
        os.write(terminal, typed.encode())
        shown = _read_until(terminal, rb"Episode over[^\n]*\n", timeout=60)
        assert re.search(rb"Episode over[^\n]*correct: True", shown), shown.decode(errors="replace")
        os.write(terminal, b"/quit\r")
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        os.close(terminal)


def test_ctrl_c_in_play_is_one_line_and_status_130(tmp_path) -> None:
    process = subprocess.Popen(
        _one_task_play(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_at_a_terminal,
    )
    assert process.stdout.readline().startswith("Playing rlenvs/GSM8K-v1")
    process.send_signal(signal.SIGINT)
    _, errors = process.communicate(timeout=30)
    assert process.returncode == 130 and errors == "rlenvs play: interrupted\n", errors
    # `rlenvs serve`: tests/remote/test_server.py (its Ctrl-C test)
