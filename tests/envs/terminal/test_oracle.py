"""The oracles of Terminal-v2 and Spreadsheet-v1 from the middle of an episode (issue 17):
after a step that is not the reference's (a read, an unrelated write, damage to a file or
cell the task needs, a changed shell), following `oracle_action()` to the end still earns
the maximum, and where no reply can, it says why instead of submitting for 0.

Real bubblewrap sessions and the real families; a few tasks each, so that it stays fast."""

from __future__ import annotations

import base64
import os
import tempfile

import numpy as np
import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.envs.spreadsheet.actions import MAX_ACTIONS
from rlenvs.envs.spreadsheet.env import SpreadsheetEnv
from rlenvs.envs.spreadsheet.operations import run_reply
from rlenvs.envs.spreadsheet.oracle import OracleError as SheetOracleError
from rlenvs.envs.spreadsheet.oracle import contents, rewrite
from rlenvs.envs.spreadsheet.tasks import SpreadsheetTask
from rlenvs.envs.terminal.env import TerminalEnv
from rlenvs.envs.terminal.oracle import OracleError, read_tree, replay_command, restore_script, start_lines
from rlenvs.workbook.workbook import Workbook
from tests.envs.terminal.test_folders import harbor_task, terminal_bench_task


def finish(env, reply: str | None = None) -> tuple[float, dict, list[str]]:
    """Step `reply` (if any), then follow the oracle until the episode ends."""
    replies = []
    if reply is not None:
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return reward, info, replies
    while True:
        replies.append(env.oracle_action())
        _, reward, terminated, truncated, info = env.step(replies[-1])
        if terminated or truncated:
            return reward, info, replies


# --- Terminal-v2 --------------------------------------------------------------------------------

TERMINAL_TASKS = [
    ("replace-text", 1),  # `sed -i`: run twice it is wrong
    ("permissions", 2),  # modes over a tree
    ("newer-files", 1),  # mtimes decide
    ("archive", 1),  # the archive is the setup script's: putting it back means running that again
    ("csv-column", 1),  # two commands, a read first
    ("count-files", 1),  # an answer to submit
]
DAMAGE = 'find . -type f | LC_ALL=C sort | head -n 3 | while read -r f; do echo junk > "$f"; done; rm -f -- *.tar.gz'
STEPS = {
    "read": "ls -la",
    "unrelated write": "echo hi > unrelated.txt && mkdir -p extra/deeper && touch /tmp/left-over",
    "damage": DAMAGE,
    "shell": "cd /tmp; alias sed=false; sort() { :; }; find() { :; }; export LC_ALL=tr_TR.UTF-8 GREP_OPTIONS=-v",
}


@pytest.fixture(scope="module")
def terminal_envs():
    made = {task: TerminalEnv(families=task[0], level=task[1], max_turns=8) for task in TERMINAL_TASKS}
    yield made
    for env in made.values():
        env.close()


@pytest.mark.sandbox
@pytest.mark.parametrize("step", list(STEPS))
@pytest.mark.parametrize("task", TERMINAL_TASKS, ids=lambda task: f"{task[0]}-L{task[1]}")
def test_terminal_oracle_earns_the_maximum_after_any_first_step(terminal_envs, task, step):
    env = terminal_envs[task]
    env.reset(options={"task_index": 3})
    reward, info, replies = finish(env, f"```bash\n{STEPS[step]}\n```")
    assert reward == 1.0, (info["failed_checks"], replies)
    if step == "read":  # a read leaves the plan where it was: the reference, command by command
        assert replies == [f"```bash\n{command}\n```" for command in env.task.solution] + [replies[-1]]


@pytest.mark.sandbox
def test_after_a_reference_command_and_damage_the_workspace_is_put_back_exactly(terminal_envs):
    """What the re-planning reply restores is the start, to the nanosecond of each mtime and
    the bit of each mode (permissions decide this family; mtimes the newer-files family)."""
    for task in (("permissions", 2), ("newer-files", 1)):
        env = terminal_envs[task]
        env.reset(options={"task_index": 1})
        env.step(env.oracle_action())  # the first reference command, then damage of every kind
        env.step(
            '```bash\nchmod -R 700 .; touch -d 2001-01-01 $(find . | head -4); rm -rf -- "$(ls | head -1)"; '
            "ln -s /etc/passwd link; mkfifo pipe; echo x > /dev/shm/x\n```"
        )
        session = env.session
        restore = restore_script(env.task, env._oracle_start, read_tree(session), False)
        assert session.run(replay_command(env.task, "/workspace", "umask 0022", restore, start_lines(()), ())).ok
        assert read_tree(session) == env._oracle_start


@pytest.mark.sandbox
def test_terminal_oracle_fits_its_turns():
    """With fewer turns than reference commands left, the oracle folds them (and the submit)
    into one reply instead of running out of turns before the answer."""
    for family, turns, used in (
        ("csv-column", 2, 1),
        ("csv-column", 3, 3),
        ("count-files", 1, 1),
        ("replace-text", 1, 1),
    ):
        env = TerminalEnv(families=family, max_turns=turns)
        try:
            env.reset(options={"task_index": 0})
            reward, info, replies = finish(env)
            assert (reward, info["stop_reason"], len(replies)) == (1.0, "submitted", used), replies
        finally:
            env.close()


@pytest.mark.sandbox
@pytest.mark.parametrize("layout", [terminal_bench_task, harbor_task], ids=["terminal-bench", "harbor"])
def test_terminal_oracle_replans_task_folders(layout, tmp_path):
    env = TerminalEnv(task_dir=str(layout(tmp_path)), max_turns=5)
    try:
        for step in (
            "ls -la",
            "rm greeting.txt",
            "echo wrong > hello.txt; chmod 000 bin 2>/dev/null; true",
            "declare -r PATH=/nowhere; python3() { :; }",
        ):
            env.reset(seed=0)
            reward, info, replies = finish(env, f"```bash\n{step}\n```")
            assert reward == 1.0, (step, info["failed_checks"], replies)
    finally:
        env.close()


@pytest.mark.sandbox
def test_terminal_oracle_says_why_it_cannot_go_on():
    rng = np.random.default_rng(0)
    blob = {"path": "blob.bin", "content_base64": base64.b64encode(rng.bytes(90_000)).decode()}
    big = {"instruction": "Copy blob.bin to copy.bin, then submit.", "files": [blob],
           "solution": ["cp blob.bin copy.bin"], "expect": [{"kind": "file_text", "path": "copy.bin", "text": "?"}]}  # fmt: skip
    unsolved = {"instruction": "Write 1 into one.txt, then submit.",
                "expect": [{"kind": "file_text", "path": "one.txt", "text": "1"}]}  # fmt: skip
    env = TerminalEnv(max_turns=4)
    try:
        env.reset(options={"task": big})
        env.step("```bash\nrm blob.bin\n```")  # 90 KB of random bytes to write back: over one command
        with pytest.raises(OracleError, match="over the 100000-byte cap of one command. It works from the start"):
            env.oracle_action()
        env.reset(options={"task": unsolved})
        with pytest.raises(OracleError, match="has no reference solution"):
            env.oracle_action()
        env.reset(options={"task": big})
        finish(env)
        assert env.oracle_action() == "submit"  # over: what a vector env asks of every sub-env, then ignores
    finally:
        env.close()


def test_unsafe_mode_replans_inside_its_workspace_and_leaves_the_hosts_tmp_alone():
    with tempfile.NamedTemporaryFile(prefix="rlenvs-oracle-sentinel-", delete=False) as sentinel:
        pass  # a file of the host's /tmp, which the sandbox-less session shares
    env = TerminalEnv(families="replace-text", unsafe_sandbox=True, max_turns=6)
    try:
        with pytest.warns(RuntimeWarning, match="UNSAFE"):
            env.reset(options={"task_index": 2})
        reward, info, _ = finish(env, f"```bash\n{DAMAGE}; cd /; export LC_ALL=C\n```")
        assert reward == 1.0, info["failed_checks"]
        assert os.path.exists(sentinel.name)
    finally:
        env.close()
        os.unlink(sentinel.name)


# --- Spreadsheet-v1 -------------------------------------------------------------------------------

SHEET_TASKS = [
    ("running-total", 1),
    ("sort-rows", 2),
    ("dedupe-rows", 1),
    ("fill-missing", 1),
    ("lookup", 2),
    ("date-diff", 1),
]


@pytest.fixture(scope="module")
def sheet_envs():
    return {task: SpreadsheetEnv(families=task[0], level=task[1]) for task in SHEET_TASKS}


def _damage(env: SpreadsheetEnv) -> str:
    """A reply that writes junk into a cell the verdict judges."""
    cell = next(iter(env.task.expected))
    return f"SET {cell} 12345"


@pytest.mark.parametrize(
    "step", ["READ A1:B2", "SET Z99 5", "damage", "INSERT ROWS 1 2", "DELETE ROWS 2:3", "SORT A2:D9 BY B DESC"]
)
@pytest.mark.parametrize("task", SHEET_TASKS, ids=lambda task: f"{task[0]}-L{task[1]}")
def test_spreadsheet_oracle_earns_the_maximum_after_any_first_step(sheet_envs, task, step):
    env = sheet_envs[task]
    for index in range(3):
        env.reset(options={"task_index": index}, seed=index)
        reply = _damage(env) if step == "damage" else step
        try:
            reward, info, replies = finish(env, reply)
        except SheetOracleError as error:  # a date typed over that the verdict needs: said, not scored 0
            assert step.startswith(("DELETE", "INSERT")) and "no SET can type" in str(error), error
            continue
        assert reward == 1.0, (index, info["mismatches"], replies)
        if step.startswith("READ"):
            assert replies == [*env.task.solution, "SUBMIT"]


def test_spreadsheet_oracle_says_why_when_a_needed_date_is_gone(sheet_envs):
    env = sheet_envs[("dedupe-rows", 1)]
    env.reset(options={"task_index": 2}, seed=2)
    env.step("SET A2 junk")  # the only cell holding this date, which the verdict reads
    with pytest.raises(SheetOracleError, match=r"Timesheet!A2 \(datetime.date\(2024, 2, 23\)\) must hold"):
        env.oracle_action()


def test_spreadsheet_oracle_fits_its_turns(sheet_envs):
    env = SpreadsheetEnv(families="running-total", max_turns=2)
    env.reset(options={"task_index": 0})
    reward, _, replies = finish(env, "SET Z99 5")  # one turn left: the rewrite and SUBMIT in one reply
    assert (reward, len(replies), replies[-1].endswith("SUBMIT")) == (1.0, 1, True)


def test_a_rewrite_of_many_cells_is_split_into_replies_that_reach_the_target():
    start = Workbook.from_rows({"Data": [[i, f"  two  spaces `{i}` \u2028", None] for i in range(1, 301)]})
    goal = Workbook.from_rows({"Data": [[None, f"x{i}", f"=A{i}*2"] for i in range(1, 301)]})
    task = SpreadsheetTask(task_id="synthetic", prompt="", sheets={}, expected={}, solution=())
    replies, lost = rewrite(task, goal, contents(start))  # back from goal to start: text with odd characters
    assert not lost and len(replies) == 5 and replies[-1].endswith("SUBMIT")
    assert all(len(reply.splitlines()) <= MAX_ACTIONS for reply in replies)
    submitted = [run_reply(goal, reply)[1] for reply in replies]
    assert submitted == [False] * 4 + [True] and contents(goal) == contents(start)
