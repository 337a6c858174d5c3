"""The file-chore families (rlenvs.envs.terminal.families: count_files, largest_file, newer_files,
log_summary, permissions, archive), played with the host's bash:
every reference solution passes, doing nothing fails, and typical careless work fails too."""

from __future__ import annotations

import re
import subprocess

import pytest

from rlenvs.envs.terminal.families import archive, count_files, largest_file, log_summary, newer_files, permissions
from rlenvs.envs.terminal.tasks import TerminalTask
from rlenvs.envs.terminal.workspace import AnswerIs, FileText
from tests.support.terminal_util import materialise, play, task

SEEDS = range(20)
FAMILIES = tuple(
    module.FAMILY for module in (count_files, largest_file, newer_files, log_summary, permissions, archive)
)


def output_of(t: TerminalTask, root, command: str) -> str:
    """What `command` prints in a fresh copy of the task's starting workspace."""
    root.mkdir()
    materialise(t, root)
    return subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def sizes(t: TerminalTask) -> list[tuple[int, str]]:
    """(size, path) of the starting files, largest first."""
    return sorted(((len(e.data), e.path) for e in t.files if not e.is_dir), reverse=True)


def test_the_six_families():
    assert [family.name for family in FAMILIES] == [
        "count-files",
        "largest-file",
        "newer-files",
        "log-summary",
        "permissions",
        "archive",
    ]
    assert all(len(family.levels) >= 2 for family in FAMILIES)


# --- careless work fails ------------------------------------------------------------------


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize("level", [1, 2])
def test_count_off_by_one_and_counting_decoys_fail(level, tmp_path):
    for index in SEEDS:
        t = task("count-files", level, index)
        right = int(t.answer)
        assert play(t, tmp_path / f"right{index}", [], answer=f" {right} ").passed
        assert not play(t, tmp_path / f"plus{index}", [], answer=str(right + 1)).passed
        assert not play(t, tmp_path / f"minus{index}", [], answer=str(right - 1)).passed
        # L1: any name containing the extension (sales.csv.bak); L2: nothing left out
        (command,) = t.solution
        if level == 1:
            careless = command.replace("' |", "*' |")
        else:
            careless = f"find {command.split()[1]} " + command.split(" -prune -o ")[1]
        wrong = output_of(t, tmp_path / f"careless{index}", careless)
        assert wrong != t.answer, (t.task_id, careless)
        assert not play(t, tmp_path / f"wrong{index}", [], answer=wrong).passed


@pytest.mark.parametrize("level", [1, 2])
def test_largest_runner_up_and_dotted_path_fail(level, tmp_path):
    for index in SEEDS:
        t = task("largest-file", level, index)
        (expect,) = t.expect
        ranked = sizes(t)
        assert ranked[0][0] > ranked[1][0]  # no ties
        assert isinstance(expect, (AnswerIs, FileText))
        right = expect.answer if isinstance(expect, AnswerIs) else expect.text
        wrongs = [ranked[1][1] if level == 2 else ranked[1][1].split("/", 1)[1]]
        if level == 2:
            top_folder = [path for _, path in ranked if path.count("/") == 1]
            wrongs += [f"./{right}", top_folder[0]]  # a leading ./, the largest of the top folder only
        else:
            wrongs.append(ranked[0][1])  # the folder in front of the name
        for n, wrong in enumerate(wrongs):
            assert wrong != right
            if isinstance(expect, AnswerIs):
                verdict = play(t, tmp_path / f"wrong{index}-{n}", [], answer=wrong)
            else:
                verdict = play(t, tmp_path / f"wrong{index}-{n}", [f"echo '{wrong}' > largest.txt"])
            assert not verdict.passed, (t.task_id, wrong)


def test_newer_without_type_f_or_name_filter_fails(tmp_path):
    for index in SEEDS:
        t = task("newer-files", 1, index)
        (command,) = t.solution
        assert not play(t, tmp_path / f"dirs{index}", [command.replace(" -type f", "")]).passed  # lists the folder too
        t = task("newer-files", 2, index)
        (command,) = t.solution
        unfiltered = re.sub(r" -name '[^']*'", "", command)
        assert not play(t, tmp_path / f"all{index}", [unfiltered]).passed  # other extensions changed too
        reversed_order = command.replace("LC_ALL=C sort", "LC_ALL=C sort -r")
        assert not play(t, tmp_path / f"order{index}", [reversed_order]).passed


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_log_grep_and_careless_sorting_fail(tmp_path):
    for index in SEEDS:
        t = task("log-summary", 1, index)
        (command,) = t.solution
        path = command.split()[-3]
        assert not play(t, tmp_path / f"grep{index}", [f"grep ERROR {path} > errors.txt"]).passed
        assert not play(t, tmp_path / f"word{index}", [f"grep -w ERROR {path} > errors.txt"]).passed
        t = task("log-summary", 2, index)
        (command,) = t.solution
        reverse_all = command.replace("sort -k2,2nr -k1,1", "sort -rn -k2")
        assert not play(t, tmp_path / f"ties{index}", [reverse_all]).passed  # equal counts: names descending
        rotated = command.replace("logs/*.log", "logs/*")
        assert rotated != command
        assert not play(t, tmp_path / f"rotated{index}", [rotated]).passed
        any_mention = (
            r"grep -hw ERROR logs/*.log | sed 's/.*\[\([a-z]*\)\].*/\1/' | LC_ALL=C sort | uniq -c"
            r" | sed 's/^ *\([0-9]*\) \(.*\)/\2 \1/' | LC_ALL=C sort -k2,2nr -k1,1 > error_counts.txt"
        )
        assert not play(t, tmp_path / f"warn{index}", [any_mention]).passed  # WARN lines that quote ERROR
        assert play(
            t, tmp_path / f"levels{index}", [any_mention.replace("grep -hw ERROR", "grep -h '^[^ ]* ERROR '")]
        ).passed


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_chmod_everything_or_in_the_wrong_order_fails(tmp_path):
    for index in SEEDS:
        for level in (1, 2):
            t = task("permissions", level, index)
            assert not play(t, tmp_path / f"all{level}-{index}", ["chmod -R 777 ."]).passed
        t = task("permissions", 1, index)
        folder = t.solution[0].split()[2].split("/")[0]
        assert not play(t, tmp_path / f"plusx{index}", [f"chmod +x {folder}/*.sh"]).passed
        t = task("permissions", 2, index)
        dirs, scripts, private = t.solution
        assert not play(t, tmp_path / f"order{index}", [dirs, private, scripts]).passed  # rule 3 must win
        root = dirs.split()[1]
        assert not play(t, tmp_path / f"recursive{index}", [f"chmod -R 700 {root}", scripts, private]).passed


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_careless_extraction_fails(tmp_path):
    for index in SEEDS:
        t = task("archive", 1, index)
        (command,) = t.solution
        other = (
            command.replace(" --strip-components=1", "") if "--strip" in command else command + " --strip-components=1"
        )
        assert not play(t, tmp_path / f"layout{index}", [other]).passed
        t = task("archive", 2, index)
        (command,) = t.solution
        assert not play(t, tmp_path / f"all{index}", [command.replace(" -T manifest.txt", "")]).passed
        t = task("archive", 3, index)
        (command,) = t.solution
        target, outer, inner = command.split()[2], command.split()[6], command.split()[7]
        leftovers = f"tar -xf {outer} && mkdir -p {target} && tar -xzf {inner} -C {target} --strip-components=1"
        assert not play(t, tmp_path / f"leftovers{index}", [leftovers]).passed
        assert play(t, tmp_path / f"tidy{index}", [leftovers + f" && rm -r {inner.split('/')[0]}"]).passed


def test_dotfiles_left_behind_by_mv_star_fail(tmp_path):
    """Dropping the top folder with `mv top/* .` leaves its hidden files behind."""
    checked = 0
    for index in SEEDS:
        t = task("archive", 1, index)
        (command,) = t.solution
        if "--strip" not in command:
            continue
        assert any(e.path.split("/")[2].startswith(".") for e in t.files)  # a hidden file at the top
        target, archive = command.split()[2], command.split()[6]
        top = t.files[0].path.split("/")[1]
        careless = f"mkdir -p {target} && tar -xzf {archive} -C {target} && mv {target}/{top}/* {target}/ && rmdir {target}/{top}"
        assert not play(t, tmp_path / f"mv{index}", [careless]).passed
        checked += 1
    assert checked >= 3
