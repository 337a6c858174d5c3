"""The text task families (rlenvs.envs.terminal.families: csv_column, rename_files, fix_config,
make_tree, dedupe_sort, replace_text), played with the host's bash:
every reference solution passes, doing nothing fails, and typical careless work fails too."""

from __future__ import annotations

import re

import pytest

from rlenvs.envs.terminal.families import csv_column, dedupe_sort, fix_config, make_tree, rename_files, replace_text
from rlenvs.envs.terminal.workspace import AnswerIs, FileLines, FileText
from tests.support.terminal_util import play, task

SEEDS = range(20)
FAMILIES = tuple(
    module.FAMILY for module in (csv_column, rename_files, fix_config, make_tree, dedupe_sort, replace_text)
)


def test_the_six_families_with_two_levels_each():
    assert [family.name for family in FAMILIES] == [
        "csv-column",
        "rename-files",
        "fix-config",
        "make-tree",
        "dedupe-sort",
        "replace-text",
    ]
    assert all(len(family.levels) >= 2 for family in FAMILIES)


# --- careless work fails ------------------------------------------------------------------


def test_csv_sum_wrong_totals_fail(tmp_path):
    for index in SEEDS:
        t = task("csv-column", 1, index)
        (expect,) = t.expect
        assert isinstance(expect, AnswerIs) and expect.numeric
        right = float(t.answer)
        assert play(t, tmp_path / f"right{index}", [], answer=f" {right} ").passed
        assert not play(t, tmp_path / f"off{index}", [], answer=str(right + 1)).passed
        # skipping the first data row (NR > 2 instead of NR > 1)
        awk = t.solution[-1].replace("NR > 1", "NR > 2")
        result = play(t, tmp_path / f"skip{index}", [awk + " > total.txt"])
        given = (tmp_path / f"skip{index}" / "total.txt").read_text().strip()
        assert float(given) != right
        assert result.passed is False  # no answer submitted


def test_csv_group_unfiltered_or_unsorted_fails(tmp_path):
    filtered = reversed_order = 0
    for index in SEEDS:
        t = task("csv-column", 2, index)
        command = t.solution[-1]
        if "==" in command:
            unfiltered = re.sub(r' && \$\d+ == "[^"]*"', "", command)
            assert not play(t, tmp_path / f"all{index}", [unfiltered]).passed, t.task_id
            filtered += 1
        (expect,) = t.expect
        assert isinstance(expect, FileLines)
        if len([line for line in expect.lines if "total_" not in line]) > 1:
            backwards = command.replace("sort -t, -k1,1", "sort -t, -k1,1 -r")
            assert not play(t, tmp_path / f"rev{index}", [backwards]).passed, t.task_id
            reversed_order += 1
    assert filtered >= 5 and reversed_order >= 10


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_rename_copies_and_sloppy_patterns_fail(tmp_path):
    for level in (1, 2):
        for index in SEEDS:
            t = task("rename-files", level, index)
            copied = [t.solution[-1].replace("mv --", "cp --")]
            assert not play(t, tmp_path / f"cp{level}-{index}", copied).passed, t.task_id
    for index in SEEDS:
        # replacing the first `.txt` anywhere in the name also renames `notes.txt.bak`
        t = task("rename-files", 1, index)
        folder, src, dst = re.match(
            r'for f in (\S+)/\*(\.\w+); do mv -- "\$f" "\$\{f%\.\w+\}(\.\w+)"',
            t.solution[-1],
        ).groups()
        sloppy = f'for f in {folder}/*{src}*; do mv -- "$f" "${{f/{src}/{dst}}}"; done'
        assert not play(t, tmp_path / f"sloppy{index}", [sloppy]).passed, t.task_id
    photos = [t for t in (task("rename-files", 2, i) for i in SEEDS) if "IMG_0}" in t.solution[-1]]
    assert photos
    for t in photos:
        four_digits = t.solution[-1].replace("/IMG_0}", "/IMG_}")
        assert not play(t, tmp_path / f"four{t.task_id.rsplit('/', 1)[1]}", [four_digits]).passed


def test_config_edits_outside_the_line_fail(tmp_path):
    for index in SEEDS:
        t = task("fix-config", 1, index)
        # no `^` anchor: the commented-out default line changes too
        unanchored = t.solution[-1].replace("s|^", "s|")
        assert not play(t, tmp_path / f"flat{index}", [unanchored]).passed, t.task_id
        (expect,) = t.expect
        assert isinstance(expect, FileText)
        if " = " in t.solution[-1]:  # the right value, but `key=value` instead of `key = value`
            head, _, tail = t.solution[-1].rpartition(" = ")
            assert not play(t, tmp_path / f"tight{index}", [f"{head}={tail}"]).passed
    for index in SEEDS:
        t = task("fix-config", 2, index)
        # without the section range every section's value changes
        everywhere = re.sub(r"'/\^\\\[[^']*?/ s", "'s", t.solution[-1])
        assert everywhere != t.solution[-1]
        assert not play(t, tmp_path / f"ini{index}", [everywhere]).passed, t.task_id


def test_tree_extras_and_wrong_kinds_fail(tmp_path):
    for index in SEEDS:
        t = task("make-tree", 1, index)
        # every path made a folder, files included
        paths = re.findall(r"`([^`]+)`", t.prompt.split("\n", 1)[1])
        all_dirs = ["mkdir -p " + " ".join(p.rstrip("/") for p in paths)]
        assert not play(t, tmp_path / f"dirs{index}", all_dirs).passed, t.task_id
    for index in SEEDS:
        t = task("make-tree", 2, index)
        root = t.prompt.split("```\n", 1)[1].split("/", 1)[0]
        extra = [*t.solution, f"touch {root}/notes.txt"]
        assert not play(t, tmp_path / f"extra{index}", extra).passed, t.task_id
        if ": > " in t.solution[-1]:  # an empty file written as the word "(empty)"
            literal = [
                *t.solution[:-1],
                t.solution[-1].replace(": > ", "echo '(empty)' > "),
            ]
            assert not play(t, tmp_path / f"literal{index}", literal).passed, t.task_id
        if t.files:  # a leftover to delete
            kept = [c for c in t.solution if not c.startswith("rm ")]
            assert not play(t, tmp_path / f"kept{index}", kept).passed, t.task_id


def test_dedupe_careless_sorts_fail(tmp_path):
    for index in SEEDS:
        t = task("dedupe-sort", 1, index)
        source, out = re.match(r"LC_ALL=C sort -u (\S+) > (\S+)", t.solution[0]).groups()
        wrongs = (
            f"LC_ALL=C sort {source} > {out}",  # duplicates kept
            f"uniq {source} > {out}",  # not sorted, repeats not adjacent
            f"LC_ALL=C sort -uf {source} > {out}",  # case folded
        )
        for n, wrong in enumerate(wrongs):
            assert not play(t, tmp_path / f"l1-{index}-{n}", [wrong]).passed, (
                t.task_id,
                wrong,
            )
    kinds = set()
    for index in range(40):
        t = task("dedupe-sort", 2, index)
        command = t.solution[0]
        if "-k2,2n" in command:
            kinds.add("numeric")
            wrong = command.replace("-k2,2n", "-k2,2")  # numbers compared as text
        elif "tolower" in command:
            kinds.add("casefold")
            wrong = command.replace("tolower($0)", "$0")  # case-sensitive
            source = command.split()[2]
            folded = f"LC_ALL=C sort -uf {source} > signups_unique.txt"
            assert not play(t, tmp_path / f"fold{index}", [folded]).passed, t.task_id
        else:
            kinds.add("merge")
            wrong = command.replace("grep -hv '^#'", "cat")  # comment lines kept
            assert not play(t, tmp_path / f"dup{index}", [command.replace("sort -u", "sort")]).passed
        assert not play(t, tmp_path / f"l2-{index}", [wrong]).passed, (t.task_id, wrong)
    assert kinds == {"numeric", "casefold", "merge"}


def test_replace_without_care_fails(tmp_path):
    for index in SEEDS:
        t = task("replace-text", 1, index)
        once = t.solution[-1].replace("/g'", "/'")  # first occurrence per line only
        assert once != t.solution[-1]
        assert not play(t, tmp_path / f"once{index}", [once]).passed, t.task_id
    for index in SEEDS:
        t = task("replace-text", 2, index)
        command = t.solution[-1]
        substring = command.replace("\\b", "")  # also inside longer words
        assert not play(t, tmp_path / f"sub{index}", [substring]).passed, t.task_id
        every_file = re.sub(r" -name '\*\.\w+'", "", command)  # other extensions too
        assert every_file != command
        assert not play(t, tmp_path / f"all{index}", [every_file]).passed, t.task_id
