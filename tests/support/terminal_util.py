"""Playing a terminal task's reference solution with the host's bash in a temp folder: a fast
check of a family's generator and expectations, separate from the sandboxed env (which
tests/envs/terminal/test_env.py drives end to end)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rlenvs.envs.terminal.families import FAMILIES
from rlenvs.envs.terminal.tasks import TerminalTask, family_task
from rlenvs.envs.terminal.workspace import Verdict, judge_workspace


def materialise(task: TerminalTask, root: Path) -> None:
    for entry in task.files:
        target = root / entry.path
        if entry.is_dir:
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(entry.data)
        os.chmod(target, entry.mode if entry.mode is not None else (0o755 if entry.is_dir else 0o644))
        if entry.mtime is not None:
            os.utime(target, (entry.mtime, entry.mtime))
    if task.setup_script:
        subprocess.run(["bash", "-c", task.setup_script], cwd=root, check=True, timeout=30)


def task(family: str, level: int, index: int) -> TerminalTask:
    return family_task(FAMILIES[family], level, index)


def play(task: TerminalTask, root: Path, commands=None, answer: str | None = None) -> Verdict:
    """Build the workspace in a new folder `root`, run `commands` (default: the reference
    solution) one by one with bash, and judge the result with `answer` (default: the
    reference answer)."""
    root.mkdir(parents=True)
    materialise(task, root)
    for command in task.solution if commands is None else commands:
        subprocess.run(["bash", "-c", command], cwd=root, timeout=30, capture_output=True, check=False)
    return judge_workspace(root, task.expect, task.answer if answer is None and commands is None else answer)
