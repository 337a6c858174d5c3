"""docs/getting-started.md walks a newcomer from a fresh clone through training the quickstart,
evaluating the checkpoint as the run trained and reading its trajectories. A newcomer types
those commands as written, so this test runs them as written, in an empty folder, in the
page's order: the training command (with overrides appended that make it two steps: the
mechanics, not the learning, which tests/rlenvs_train/test_train.py holds), the eval command,
then the Python snippet on the file the eval wrote. Each step's real outcome is checked, and
so is what the page shows it printing: every shown line must have the shape of a line the
command printed (numbers aside, since two steps learn nothing), so the page cannot drift
from the commands."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
NUMBER = r"[-+]?\d+(?:[.,]\d+)*"
TWO_STEPS = [
    "trainer.max_steps=2",
    "trainer.save_steps=100",
    "trainer.sft_warmup.episodes=100",
    "trainer.sft_warmup.epochs=2",  # 2, not 1: the page shows "4 epochs", and one prints "1 epoch"
]
"""Appended to the page's training command: a run of seconds instead of minutes."""
STEP_TIMEOUT_S = 300

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not all(importlib.util.find_spec(name) for name in ("torch", "transformers", "trl", "matplotlib")),
        reason="needs pip install -e '.[train]'",
    ),
]


def fences(language: str) -> list[str]:
    return [code for lang, code in FENCE.findall(PAGE.read_text(encoding="utf-8")) if lang == language]


def shown_session(evaluating: bool, program: str = "rlenvs-train") -> tuple[list[str], list[str]]:
    """The page's one `$ rlenvs-train ...` line (in a plain fence) that trains, or the one that
    evaluates (`$ rlenvs eval --config ...` with program "rlenvs"), split as a shell would, and
    the lines the page shows it printing."""
    sessions = []
    for code in fences(""):
        lines = code.splitlines()
        for at, line in enumerate(lines):
            argv = shlex.split(line[2:]) if line.startswith("$ ") else []
            if program == "rlenvs":
                wanted = argv[:3] == ["rlenvs", "eval", "--config"]
            else:
                wanted = argv[:1] == [program] and (argv[1:2] == ["eval"]) == evaluating
            if wanted:
                output = []
                for shown in lines[at + 1 :]:
                    if shown.startswith("$ "):
                        break
                    output.append(shown)
                sessions.append((argv, output))
    kind = "rlenvs eval --config" if program == "rlenvs" else "rlenvs-train eval" if evaluating else "rlenvs-train"
    assert len(sessions) == 1, f"the page should show `$ {kind} ...` once, found {len(sessions)}"
    return sessions[0]


def shape(line: str) -> re.Pattern[str]:
    """A shown line as a pattern: its words literally, any number where it has a number."""
    return re.compile(NUMBER.join(re.escape(part) for part in re.split(NUMBER, line.strip())))


def assert_printed_as_shown(shown: list[str], printed: str, command: str) -> None:
    """Every line the page shows is a line the command printed, numbers aside; a Markdown
    table by its header's columns and its rows' cell count (its widths follow the numbers);
    `...` elides lines."""
    printed_lines = [line.strip() for line in printed.splitlines()]
    header = next((cells(line) for line in printed_lines if line.startswith("|")), None)
    for line in (line.strip() for line in shown):
        if line in ("", "...") or set(line) <= set("|- "):
            continue
        if line.startswith("|"):
            if re.fullmatch(NUMBER, cells(line)[0]):
                assert header is not None and len(cells(line)) == len(header), f"{command}: the page's row {line!r}"
            else:
                assert cells(line) == header, f"{command}: the page's table header {line!r}, printed {header}"
            continue
        assert any(shape(line).fullmatch(real) for real in printed_lines), (
            f"{command}: the page shows {line!r}, which it does not print; it printed:\n{printed}"
        )


def cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """As a user runs it: the installed console script found on PATH (this interpreter's)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False)


def test_train_then_eval_the_checkpoint_then_read_its_trajectories(tmp_path: Path) -> None:
    train_argv, train_shown = shown_session(evaluating=False)
    eval_argv, eval_shown = shown_session(evaluating=True)
    (snippet,) = [code for code in fences("python") if ".jsonl" in code]

    trained = run([*train_argv, *TWO_STEPS], tmp_path)
    assert trained.returncode == 0, trained.stderr[-3000:]
    run_dir = tmp_path / "runs" / "quickstart"
    assert (run_dir / "final-model" / "config.json").is_file()
    assert (run_dir / "config.yaml").is_file()
    steps = [entry["step"] for entry in json.loads((run_dir / "metrics.json").read_text())["steps"]]
    assert steps == [1, 2]
    assert_printed_as_shown(train_shown, trained.stdout, "rlenvs-train")

    assert "--config" in eval_argv and eval_argv[eval_argv.index("--config") + 1] == "runs/quickstart/config.yaml"
    evaluated = run(eval_argv, tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    trajectories = tmp_path / eval_argv[eval_argv.index("--output") + 1]
    records = [json.loads(line) for line in trajectories.read_text().splitlines()]
    episodes = int(eval_argv[eval_argv.index("--episodes") + 1])
    assert len(records) == episodes
    assert len({record["option"]["task_index"] for record in records}) == episodes  # distinct tasks
    # As the run trained: the quickstart's system_prompt null means no system message.
    assert all(record["messages"][0]["role"] == "user" for record in records)
    solved = sum(record["success"] for record in records)
    rows = [cells(line) for line in evaluated.stdout.splitlines() if line.startswith("|")]
    assert dict(zip(rows[0], rows[2], strict=True))["success rate"] == f"{100 * solved / episodes:.1f}%"
    assert_printed_as_shown(eval_shown, evaluated.stdout + evaluated.stderr, "rlenvs-train eval")

    read = subprocess.run(
        [sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert read.returncode == 0, read.stderr
    first = records[0]
    assert read.stdout.splitlines()[0] == f"{solved} of {episodes} solved"
    assert first["task_id"] in read.stdout.splitlines()[1] and str(first["reward"]) in read.stdout.splitlines()[1]
    for message in first["messages"]:
        assert f"{message['role']}: {message['content']}" in read.stdout
    (snippet_shown,) = [code for code in fences("text") if " solved" in code]
    # Its first line by shape; the episode below it is the model's own, checked against the file above.
    assert_printed_as_shown(snippet_shown.splitlines()[:1], read.stdout, "the reading snippet")

    # Re-scored without the model: the same verdicts, read from the same file.
    rescore_argv, rescore_shown = shown_session(evaluating=True, program="rlenvs")
    assert rescore_argv[rescore_argv.index("--policy") + 1] == f"file:{trajectories.relative_to(tmp_path)}"
    rescored = run(rescore_argv, tmp_path)
    assert rescored.returncode == 0, rescored.stderr[-3000:]
    rows = [cells(line) for line in rescored.stdout.splitlines() if line.startswith("|")]
    assert dict(zip(rows[0], rows[2], strict=True))["success rate"] == f"{100 * solved / episodes:.1f}%"
    assert_printed_as_shown(rescore_shown, rescored.stdout, "rlenvs eval --config")


def shown_oracle_sessions() -> list[tuple[dict[str, str], list[str], list[str]]]:
    """The page's `$ [VAR=VALUE ...] rlenvs eval ID ... --policy oracle` lines: their variables,
    argv and shown output."""
    sessions = []
    for code in fences(""):
        lines = code.splitlines()
        for at, line in enumerate(lines):
            words = shlex.split(line[2:]) if line.startswith("$ ") else []
            variables = dict(word.split("=", 1) for word in words if re.fullmatch(r"[A-Z_]+=\S+", word))
            argv = words[len(variables) :]
            if argv[:2] == ["rlenvs", "eval"] and "oracle" in argv:
                output = [shown for shown in lines[at + 1 :] if not shown.startswith("$ ")]
                sessions.append((variables, argv, output))
    return sessions


@pytest.mark.full_data  # the GSM8K session plays all 1,319 test problems
def test_running_an_env_without_a_model_prints_what_the_page_shows(tmp_path: Path) -> None:
    """`rlenvs eval ... --policy oracle` as the page writes it; its data folder (`~/rlenvs-data`,
    the reader's own) is the one the tests read."""
    from tests.conftest import FULL_DATA

    sessions = shown_oracle_sessions()
    assert len(sessions) == 2, [argv for _, argv, _ in sessions]
    for variables, argv, shown in sessions:
        assert set(variables) <= {"RLENVS_DATA_DIR"}, variables
        env = {**os.environ, **({"RLENVS_DATA_DIR": str(FULL_DATA)} if variables else {})}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        played = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False
        )
        assert played.returncode == 0, played.stderr[-3000:]
        assert_printed_as_shown(shown, played.stdout, " ".join(argv))
        rows = [cells(line) for line in played.stdout.splitlines() if line.startswith("|")]
        assert dict(zip(rows[0], rows[2], strict=True))["success rate"] == "100.0%"
