"""`rlenvs tasks check` (rlenvs.envs.terminal.coverage): a corpus of real task folders, each
loaded on its own and played through the real env (bubblewrap): the table, the JSON Lines
report, refusals by class, a reference that fails, and a rerun that resumes a partial report."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from rlenvs.cli import main
from rlenvs.envs.terminal.coverage import check_corpus, reason_class, sample
from rlenvs.envs.terminal.folders import BACKENDS
from tests.conftest import SHARED_DATA
from tests.envs.terminal.test_folders import harbor_task, terminal_bench_task, write

EVOEVAL = SHARED_DATA / "terminal-bench" / "evoeval"


def corpus(root: Path) -> Path:
    """Five folders: two sound ones (both layouts), one the loader refuses, one whose reference
    solution writes the wrong text, and one that brings no reference solution (as a public
    Harbor corpus of 3,566 tasks does throughout)."""
    tasks = root / "corpus"
    terminal_bench_task(tasks, "hello-tb")
    harbor_task(tasks, "hello-harbor")
    shutil.rmtree(harbor_task(tasks, "no-reference") / "solution")
    (terminal_bench_task(tasks, "no-runner") / "run-tests.sh").unlink()
    wrong = terminal_bench_task(tasks, "wrong-reference")
    write(wrong / "solution.sh", '#!/bin/bash\necho "Goodbye" > /app/hello.txt\n', mode=0o755)
    (tasks / "README.md").write_text("not a task folder, left out\n")
    return tasks


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.sandbox
def test_the_table_and_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.jsonl"
    code = main(["tasks", "check", str(corpus(tmp_path)), "--json", str(report)])
    out, progress = capsys.readouterr()
    assert code == 1, out  # the wrong reference fails the check; the refusal alone would not
    rows = {match[0].strip(): match[1] for match in re.findall(r"^(\S[\w ]*?)\s{2,}(\d+(?: of \d+)?)", out, re.M)}
    assert rows == {
        "folders": "5",
        "loaded": "4",
        "reference 1": "2 of 3",
        "empty submit 0": "4 of 4",
        "refused": "1",
    }, out
    assert "2 of 3 (and 1 without a reference solution)" in out
    assert re.search(r"^  run-tests\.sh missing\s+1  e\.g\. no-runner$", out, re.M), out
    assert re.search(r"^  wrong-reference: reference 0, empty submit 0 .*reference failed: the task's tests", out, re.M)
    assert "[5/5] wrong-reference" in progress

    run, *folders, totals = lines(report)
    assert run["kind"] == "run" and run["backend"] == "host" and run["folders_in_dir"] == 5
    by_name = {record["name"]: record for record in folders}
    assert sorted(by_name) == ["hello-harbor", "hello-tb", "no-reference", "no-runner", "wrong-reference"]
    unchecked = by_name["no-reference"]
    assert unchecked["no_reference"] and unchecked["reference_reward"] is None and unchecked["empty_reward"] == 0.0
    assert by_name["hello-harbor"]["reference_reward"] == 1.0 and by_name["hello-harbor"]["empty_reward"] == 0.0
    assert by_name["hello-tb"]["build_seconds"] >= 0 and by_name["hello-tb"]["episode_seconds"] > 0
    refused = by_name["no-runner"]
    assert not refused["loaded"] and refused["reason_class"] == "run-tests.sh missing"
    assert refused["refusal"].startswith("run-tests.sh is missing")  # the loader's own words
    assert by_name["wrong-reference"]["reference_reward"] == 0.0
    assert totals == {
        "kind": "totals",
        "folders": 5,
        "loaded": 4,
        "reference_1": 2,
        "empty_0": 4,
        "no_reference": 1,
        "errors": 0,
        "refused": 1,
        "refused_by_reason": {"run-tests.sh missing": 1},
    }


@pytest.mark.sandbox
def test_a_rerun_resumes_a_partial_report(tmp_path: Path) -> None:
    tasks = corpus(tmp_path)
    report = tmp_path / "report.jsonl"
    check_corpus(tasks, report=report, limit=2, seed=3)
    run, first, second, _ = report.read_text().splitlines()
    kept = {**json.loads(first), "build_seconds": 1234.5}  # a mark: checked again, it would be gone
    report.write_text("\n".join([run, json.dumps(kept), second[: len(second) // 2]]))  # torn while writing

    records, totals = check_corpus(tasks, report=report, limit=2, seed=3)
    assert [r.name for r in records] == [kept["name"], json.loads(second)["name"]]
    assert records[0].build_seconds == 1234.5
    run_again, *folders, last = lines(report)
    assert run_again == json.loads(run) and len(folders) == 2 and last["folders"] == 2 == totals.folders

    with pytest.raises(ValueError, match=r"another check \(its backend differ\).*same options"):
        check_corpus(tasks, report=report, limit=2, seed=3, backend="bwrap")
    with pytest.raises(TypeError, match="did you mean 'max_turns'"):  # once, not as a fault of every folder
        check_corpus(tasks, env_kwargs={"max_turn": 3})


@pytest.mark.sandbox
@pytest.mark.full_data
def test_evoeval_folders_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("0", "17"):
        shutil.copytree(EVOEVAL / name, tmp_path / "evoeval" / name)
    assert main(["tasks", "check", str(tmp_path / "evoeval"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^reference 1\s+2 of 2$", out, re.M) and re.search(r"^empty submit 0\s+2 of 2$", out, re.M)


def test_reason_classes() -> None:
    failed_pip = (
        "task folder /c/a: /c/a/environment/Dockerfile (line 12: `RUN pip3 install pytest==8.4.1`) failed with exit "
        "status 1; the end of its output:\nERROR: Cannot uninstall pytest 8.3.5"
    )
    assert reason_class(failed_pip) == "RUN step failed (pip3)"
    unreachable = failed_pip.replace(
        "ERROR: Cannot uninstall pytest 8.3.5", "curl: (6) Could not resolve host: golang.org"
    )
    assert reason_class(unreachable) == "RUN step fetches from a host out of reach"
    assert reason_class("task folder /c/b: compose.yaml runs 2 services (app, db): ...") == "several compose services"
    # a message no class knows: its first clause, names and numbers blanked, so that folders group
    one = reason_class("task folder /c/x: the frobnicator `a` at /srv/one failed 3 times: why")
    assert one == reason_class("task folder /c/y: the frobnicator `bb` at /srv/two failed 12 times: other")
    assert one == "other: the frobnicator … at PATH failed N times"


def test_the_sample() -> None:
    folders = [Path(f"/c/{index:02d}") for index in range(10)]
    drawn = sample(folders, 4, seed=1)
    assert drawn == sample(folders, 4, seed=1) == sorted(drawn) and len(drawn) == 4
    assert drawn != sample(folders, 4, seed=2) and sample(folders, None, 0) == folders


def test_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    # Found before any env is made (on a machine without bubblewrap too): the folder is the first fix.
    assert main(["tasks", "check", str(tmp_path / "empty")]) == 2
    assert "holds no task folders" in capsys.readouterr().err
    assert main(["tasks", "check", str(tmp_path), "--backend", "vm"]) == 2
    assert "--backend must be one of host, bwrap" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["tasks", "check", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert all(name in shown for name in BACKENDS), shown  # the help's list kept in step with the loader's
    assert "exit 0 if every loaded folder's reference scored 1 and its empty submit 0" in shown
