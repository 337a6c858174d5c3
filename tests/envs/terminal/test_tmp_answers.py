"""Which of the agent's /tmp the tests see (rlenvs.envs.terminal.tmp_answers): the paths the
instruction names, patterns and placeholders as wildcards, and the folders on the way."""

from __future__ import annotations

from rlenvs.envs.terminal.tmp_answers import discarded, kept, named_paths


def test_an_instruction_names_tmp_paths_as_written_with_placeholders_as_wildcards():
    instruction = (
        "Read /tmp/inputs/numbers.txt and save the total to /tmp/result.json. Logs go in `/tmp/logs/`, one "
        "report per host as /tmp/reports/<host>.csv or /tmp/out_{date}.txt (see /tmp/x_$USER, /tmp/a.*). "
        "Use /tmp for scratch; /tmp/ too. Again: /tmp/result.json, (/tmp/paren.txt)."
    )
    assert named_paths(instruction) == (
        "/tmp/inputs/numbers.txt", "/tmp/result.json", "/tmp/logs", "/tmp/reports/*.csv", "/tmp/out_*.txt",
        "/tmp/x_*", "/tmp/a", "/tmp/paren.txt",
    )  # fmt: skip


def test_kept_are_matches_what_is_below_them_and_the_folders_on_the_way():
    named = ("/tmp/result.json", "/tmp/logs", "/tmp/reports/*.csv")
    assert [kept(path, named) for path in ("/tmp/result.json", "/tmp/logs/a/b.log", "/tmp/reports")] == [True] * 3
    assert [kept(path, named) for path in ("/tmp/reports/web.csv", "/tmp/reports/web.txt")] == [True, False]
    assert [kept(path, named) for path in ("/tmp/result.json.bak", "/tmp/expected.txt", "/tmp/conftest.py")] == [
        False
    ] * 3


def test_what_is_discarded_is_the_topmost_unnamed_entries_outside_the_workspace():
    paths = [
        "/tmp/venv", "/tmp/venv/bin", "/tmp/venv/bin/python", "/tmp/result.json", "/tmp/grader",
        "/tmp/grader/check.py", "/tmp/reports", "/tmp/reports/a.csv", "/tmp/reports/notes.md", "/tmp/project",
        "/tmp/project/app.py", "/tmp/.bashrc",
    ]  # fmt: skip
    named = ("/tmp/result.json", "/tmp/reports/*.csv")
    assert discarded(paths, named, "/tmp/project") == [
        "/tmp/.bashrc",
        "/tmp/grader",
        "/tmp/reports/notes.md",
        "/tmp/venv",
    ]
    assert discarded(["/tmp/anything"], (), "/app") == ["/tmp/anything"]
