"""The `rlenvs` command, run as a user runs it: in a subprocess."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pytest

from rlenvs.envs.plugins import all_entries
from tests.conftest import GSM8K_TEST
from tests.support.plugins import (
    GOOD,
    GOOD_BARE_ID,
    GOOD_ENTRY_POINTS,
    GOOD_ID,
    GOOD_SUMMARY,
    run_python,
    write_distribution,
)

ROWS = [json.loads(line) for line in GSM8K_TEST.read_text().splitlines()]


def rlenvs_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlenvs.cli", *args], input=stdin, capture_output=True, text=True, timeout=300
    )


def test_console_script_is_installed() -> None:
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="rlenvs")
    assert script.value == "rlenvs.cli:main"


def test_list_names_every_env() -> None:
    result = rlenvs_cli("list")
    assert result.returncode == 0
    assert "rlenvs/GSM8K-v1" in result.stdout and "math" in result.stdout


def test_list_columns_are_aligned() -> None:
    """Each column starts at one offset on every line (a fixed-width family column was overrun
    by "spreadsheet" and "terminal"). Installed packages' envs (the example packages, in CI)
    follow rlenvs' own, with a package column."""
    entries = all_entries()
    lines = rlenvs_cli("list").stdout.splitlines()
    assert [line.split()[0] for line in lines] == [entry.id for entry in entries]
    columns = [[entry.id for entry in entries], [entry.family or "-" for entry in entries]]
    if any(entry.package != "rlenvs" for entry in entries):
        columns.append([entry.package for entry in entries])
    summary_offset = sum(max(map(len, column)) + 2 for column in columns)
    assert {line.index(entry.summary) for line, entry in zip(lines, entries)} == {summary_offset}, lines
    families = {line.index(f"  {entry.family or '-'}  ") for line, entry in zip(lines, entries)}
    assert len(families) == 1, lines


def test_list_and_info_show_an_installed_packages_envs(tmp_path) -> None:
    """A package declaring envs in the `rlenvs.envs` entry points (tests/support/plugins.py)."""
    write_distribution(tmp_path, "good-plugin", GOOD, GOOD_ENTRY_POINTS)
    commands = [
        ["list"],
        ["info", GOOD_ID],
        ["info", GOOD_BARE_ID],
        ["eval", GOOD_ID, "--policy", "oracle", "--episodes", "2", "--no-progress"],
    ]
    script = f"from rlenvs.cli import main\nfor argv in {commands!r}:\n    print('#', main(argv), flush=True)\n"
    result = run_python(tmp_path, "-c", script)
    assert result.returncode == 0 and "Warning" not in result.stderr, result.stderr
    listing, full, bare, evaluation, _ = result.stdout.split("# 0\n")
    (row,) = [line for line in listing.splitlines() if line.startswith(GOOD_ID + " ")]
    assert row.split()[:3] == [GOOD_ID, "words", "good-plugin"] and row.endswith(GOOD_SUMMARY)
    assert listing.splitlines()[0].split()[:3] == ["rlenvs/GSM8K-v1", "math", "rlenvs"]
    assert full.startswith(f"{GOOD_ID}  (words from good-plugin)\n  {GOOD_SUMMARY}\n  observes:    a word\n")
    assert "entry point: good_plugin.env:GoodEnv" in full and "make kwargs: level=1, max_turns=1" in full
    assert bare.startswith(f"{GOOD_BARE_ID}  (from good-plugin)\n") and "observes" not in bare
    assert "|        2 |      1.0000 |" in evaluation


def test_info_describes_an_env() -> None:
    result = rlenvs_cli("info", "rlenvs/GSM8K-v1")
    assert result.returncode == 0
    assert "split='train'" in result.stdout and "max_turns=1" in result.stdout
    assert "rlenvs:rlenvs/GSM8K-v1" in result.stdout


def test_info_on_an_unknown_id_fails_clearly() -> None:
    result = rlenvs_cli("info", "rlenvs/Nope-v0")
    assert result.returncode == 2 and "unknown env id 'rlenvs/Nope-v0'" in result.stderr


def test_eval_oracle_prints_the_result_table(tmp_path) -> None:
    output = tmp_path / "episodes.jsonl"
    result = rlenvs_cli(
        "eval",
        "rlenvs/GSM8K-v1",
        "--policy",
        "oracle",
        "--episodes",
        "30",  # fewer than the 40 rows of tests/data/samples/gsm8k/test.jsonl: a clone without the full sets runs it
        "--env-arg",
        "split=test",
        "--output",
        str(output),
    )
    assert result.returncode == 0, result.stderr
    header, _rule, values = result.stdout.splitlines()[1:4]
    cells = dict(zip([c.strip() for c in header.split("|")[1:-1]], [c.strip() for c in values.split("|")[1:-1]]))
    assert cells["episodes"] == "30" and cells["mean reward"] == "1.0000" and cells["success rate"] == "100.0%"
    assert cells["mean turns"] == "1.00" and cells["env time per step"].endswith("s")
    assert cells["tasks"] == "30" and cells["infra failures"] == "0" and cells["95% CI"] == "88.6%-100.0%"  # Wilson
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(records) == 30 and all(r["correct"] for r in records)
    assert len({r["task_id"] for r in records}) == 30  # 30 distinct tasks, drawn without replacement
    assert "100%" in result.stderr  # the progress bar


def test_eval_scores_completions_from_a_file(tmp_path) -> None:
    completions = tmp_path / "completions.jsonl"
    lines = [
        {"task_id": "gsm8k/test/0", "completion": ROWS[0]["answer"]},  # right
        {"task_index": 1, "completion": "\\boxed{-1}"},  # wrong
        {
            "task_id": "gsm8k/test/2",
            "completions": ["hmm", "\\boxed{" + ROWS[2]["answer"].split("####")[1].strip() + "}"],
        },
        {"task_id": "gsm8k/test/3", "completion": "no answer at all"},
    ]
    completions.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    output = tmp_path / "out.jsonl"
    result = rlenvs_cli(
        "eval",
        "rlenvs/GSM8K-v1",
        "--policy",
        f"file:{completions}",
        "--env-arg",
        "split=test",
        "--env-arg",
        "max_turns=2",
        "--output",
        str(output),
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["correct"] for r in records] == [True, False, True, False]
    assert [r["turns"] for r in records] == [1, 1, 2, 1]
    assert records[3]["stop_reason"] == "policy_exhausted"
    assert "50.0%" in result.stdout


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(
    "args,message",
    [
        (["--policy", "oracle", "--episodes", "100000"], "--episodes 100000 is more than the "),
        (["--policy", "greedy", "--episodes", "2"], "unknown policy 'greedy'"),
        (["--policy", "oracle", "--samples", "2", "--pass-at", "4"], "each k must be in 1..--samples (2)"),
        (["--policy", "file:/nowhere.jsonl"], "not found: /nowhere.jsonl"),
        (["--policy", "oracle", "--episodes", "2", "--env-arg", "split"], "KEY=VALUE"),
        (["--policy", "oracle", "--episodes", "2", "--env-arg", "split=dev"], "unknown GSM8K split 'dev'"),
    ],
)
def test_eval_bad_input(args: list[str], message: str) -> None:
    result = rlenvs_cli("eval", "rlenvs/GSM8K-v1", *args)
    assert result.returncode == 2 and message in result.stderr


def test_eval_completions_file_errors_name_the_line(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"task_id": "gsm8k/test/0", "completion": "x"}\n{"completion": "y"}\n')
    result = rlenvs_cli("eval", "rlenvs/GSM8K-v1", "--policy", f"file:{path}", "--env-arg", "split=test")
    assert result.returncode == 2 and f"{path}:2: each line needs 'task_id' or 'task_index'" in result.stderr


def test_play_takes_typed_replies(tmp_path) -> None:
    one_task = tmp_path / "one.jsonl"  # a one-task data set, so the seed cannot pick another
    one_task.write_text(json.dumps(ROWS[0]) + "\n")
    gold = ROWS[0]["answer"].split("####")[1].strip()
    session = f"let me think\n.\nso it is \\boxed{{{gold}}}\n.\n/quit\n"
    result = rlenvs_cli(
        "play",
        "rlenvs/GSM8K-v1",
        "--seed",
        "0",
        "--env-arg",
        f"data_files={one_task}",
        "--env-arg",
        "max_turns=2",
        stdin=session,
    )
    assert result.returncode == 0, result.stderr
    assert ROWS[0]["question"].strip() in result.stdout
    assert "I could not find a final answer" in result.stdout
    assert "Episode over: answered, total reward 1, correct: True" in result.stdout


TYPO = "rlenvs/Arithmetc-v0"


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(
    "command",
    [
        ["rlenvs.cli", "eval", TYPO, "--policy", "oracle", "--episodes", "1"],
        ["rlenvs.cli", "play", TYPO],
        ["rlenvs.cli", "info", TYPO],
        ["rlenvs.cli", "check-env", TYPO],
        ["rlenvs.cli", "export", TYPO, "--output-dir", "out", "--num-train", "1"],
        ["rlenvs.cli", "sft-data", TYPO, "--episodes", "1", "--output", "out.jsonl"],
        ["rlenvs_train.cli", f"data.env={TYPO}", "inference.backend=hf"],
        ["rlenvs_train.cli", "eval", "--model", "tiny", "--env", TYPO, "--episodes", "1"],
    ],
    ids=lambda command: " ".join(command[:2]),
)
def test_every_command_rejects_an_unknown_id_the_same_way(command: list[str], tmp_path) -> None:
    """One message for an unknown id, with the close id, from every command that takes one:
    exit code 2 and no traceback (eval and play printed gymnasium's NameNotFound traceback)."""
    from rlenvs.core.registration import env_id_problem

    message = env_id_problem(TYPO)
    assert "did you mean rlenvs/Arithmetic-v1 or rlenvs/Arithmetic-Tool-v1?" in message
    result = subprocess.run(
        [sys.executable, "-m", *command], cwd=tmp_path, input="", capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert message in result.stderr
    assert not any(tmp_path.iterdir())  # nothing was written


def test_eval_with_a_keyword_typo_names_the_valid_keywords() -> None:
    result = rlenvs_cli(
        "eval", "rlenvs/Arithmetic-v1", "--policy", "oracle", "--episodes", "1", "--env-arg", "max_turn=2"
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unexpected keyword argument 'max_turn'; did you mean 'max_turns'?" in result.stderr
