"""The table families of Spreadsheet-v1 (rlenvs.envs.spreadsheet.families: sort_rows, dedupe_rows,
fill_missing, rank, date_diff and clean_text): sorting,
deduplicating, filling blanks, ranks, dates and text.

Generation is checked without the env: `truth` reproduces `expected` from the starting
sheets, the untouched workbook does not already pass, tasks differ by seed and repeat by
index, and every reference reply parses. Then whole episodes through the env: the reference
scores 1, submitting at once scores 0, and for formula tasks the right values typed in, or
dressed as formulas that mention a cell but ignore the data, score 0.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401  (registers the envs)
from rlenvs.envs.spreadsheet.actions import parse_actions
from rlenvs.envs.spreadsheet.families import clean_text, date_diff, dedupe_rows, fill_missing, rank, sort_rows
from rlenvs.envs.spreadsheet.families.sort_rows import SORT_KEY_POOLS
from rlenvs.envs.spreadsheet.tasks import SpreadsheetTask, family_task
from rlenvs.rewards.spreadsheet import cells_match, compare_cells

FAMILIES = tuple(module.FAMILY for module in (sort_rows, dedupe_rows, fill_missing, rank, date_diff, clean_text))
BY_NAME = {family.name: family for family in FAMILIES}
SEEDS = range(20)
CASES = [(family.name, level) for family in FAMILIES for level in sorted(family.levels)]
TARGET = re.compile(r"[A-Za-z][A-Za-z0-9_]*![A-Z]{1,3}[1-9]\d*")
FORMULA_FAMILIES = {"rank", "date-diff", "clean-text"}


def task(name: str, level: int, index: int) -> SpreadsheetTask:
    return family_task(BY_NAME[name], level, index)


def as_rows(t: SpreadsheetTask) -> dict[str, list[list]]:
    return {sheet: [list(row) for row in rows] for sheet, rows in t.sheets.items()}


def starting_value(t: SpreadsheetTask, target: str):
    """The value a target cell has before the agent acts (constants only: no sheet of these
    families starts with a formula)."""
    sheet, cell = target.split("!")
    match = re.fullmatch(r"([A-Z]+)(\d+)", cell)
    assert match is not None
    col = 0
    for letter in match.group(1):
        col = col * 26 + ord(letter) - 64
    rows = t.sheets[sheet]
    row = int(match.group(2))
    if row > len(rows) or col > len(rows[row - 1]):
        return None
    return rows[row - 1][col - 1]


def test_the_six_families_with_two_levels_each():
    assert [family.name for family in FAMILIES] == [
        "sort-rows",
        "dedupe-rows",
        "fill-missing",
        "rank",
        "date-diff",
        "clean-text",
    ]
    assert all(sorted(family.levels) == [1, 2] for family in FAMILIES)
    with pytest.raises(ValueError, match="level"):
        task("rank", 3, 0)


def test_sort_key_pools_sort_the_same_with_and_without_case():
    for pool in SORT_KEY_POOLS:
        assert sorted(pool) == sorted(pool, key=str.casefold), pool
        assert all(re.fullmatch(r"[A-Za-z ]+", value) for value in pool), pool


@pytest.mark.parametrize(("name", "level"), CASES)
def test_tasks_are_well_formed_and_doing_nothing_fails(name, level):
    for index in SEEDS:
        t = task(name, level, index)
        where = t.task_id
        instruction = t.prompt.split("\n\n")[0]
        assert instruction.endswith("Reply SUBMIT when done."), where
        assert all(" " not in sheet for sheet in t.sheets), where
        assert all(TARGET.fullmatch(target) for target in t.expected), where
        assert all(rows and rows[0][0] is not None for rows in t.sheets.values()), where
        first = next(iter(t.sheets.values()))
        assert 9 <= len(first) <= 41, (where, len(first))
        for reply in t.solution:
            assert parse_actions(reply), where
        if t.formula_cells:
            assert name in FORMULA_FAMILIES or (name, level) == ("fill-missing", 2), where
            assert set(t.formula_cells) <= set(t.expected) and t.inputs and t.truth is not None, where
            recomputed = t.truth(as_rows(t))
            assert set(recomputed) == set(t.expected), where
            assert all(cells_match(recomputed[c], t.expected[c]) for c in t.expected), where
        else:
            assert not t.inputs and name in ("sort-rows", "dedupe-rows", "fill-missing"), where
        untouched = {target: starting_value(t, target) for target in t.expected}
        assert not compare_cells(untouched, t.expected).all_match, f"{where} passes untouched"


@pytest.mark.parametrize(("name", "level"), CASES)
def test_generation_is_deterministic_and_varies_with_the_seed(name, level):
    tasks = [task(name, level, index) for index in SEEDS]
    again = [task(name, level, index) for index in SEEDS]
    assert [(t.prompt, t.sheets, t.expected, t.solution) for t in tasks] == [
        (t.prompt, t.sheets, t.expected, t.solution) for t in again
    ]
    assert len({(t.prompt, repr(t.sheets)) for t in tasks}) == len(tasks)
    sizes = {len(next(iter(t.sheets.values()))) for t in tasks}
    assert len(sizes) > 5, sizes


def test_truth_follows_changed_inputs():
    """Truth reads the sheets it is given: dates moved, numbers scaled and texts swapped give
    other answers (what the env's check relies on)."""
    t = task("date-diff", 1, 0)
    sheets = as_rows(t)
    for row in next(iter(sheets.values()))[1:]:
        for c, value in enumerate(row):
            if isinstance(value, dt.date):
                row[c] = value + dt.timedelta(days=3 * c)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                row[c] = value * 2
    assert t.truth(sheets) != t.expected
    t = task("clean-text", 1, 0)
    sheets = as_rows(t)
    rows = next(iter(sheets.values()))
    rows[1], rows[2] = rows[2], rows[1]
    changed = t.truth(sheets)
    assert changed != t.expected and sorted(map(str, changed.values())) == sorted(map(str, t.expected.values()))


def test_sort_level_two_needs_both_keys_in_the_right_order():
    for index in SEEDS:
        t = task("sort-rows", 2, index)
        (reply,) = t.solution
        first, second = parse_actions(reply)
        assert first.verb == second.verb == "sort" and first.key_column != second.key_column


def test_dedupe_deletes_bottom_up_and_leaves_the_area_empty_below():
    for level in (1, 2):
        for index in SEEDS:
            t = task("dedupe-rows", level, index)
            (reply,) = t.solution
            rows = [action.target.top for action in parse_actions(reply)]
            assert rows == sorted(rows, reverse=True) and len(rows) >= 1
            sheet, table = next(iter(t.sheets.items()))
            last_row = len(table)
            assert all(t.expected[f"{sheet}!A{r}"] is None for r in range(last_row - 1, last_row + 1)), t.task_id


# --- whole episodes through the env ----------------------------------------------------------


def play(env, index: int, replies) -> tuple[float, dict]:
    env.reset(options={"task_index": index})
    for reply in [*replies, "SUBMIT"]:
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return reward, info
    raise AssertionError("the episode did not end")


def oracle(env, index: int) -> tuple[float, dict]:
    env.reset(options={"task_index": index})
    while True:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        if terminated or truncated:
            return reward, info


def typed(value) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def typed_values(t: SpreadsheetTask) -> str:
    """The reference's formulas replaced by their values typed in."""
    return "```\n" + "\n".join(f"SET {cell} {typed(t.expected[cell])}" for cell in t.formula_cells) + "\n```"


def disguised_values(t: SpreadsheetTask) -> str:
    """The values as formulas that mention a cell but not the data: right now, wrong once the
    inputs change."""
    lines = []
    for cell in t.formula_cells:
        value = t.expected[cell]
        sheet = cell.split("!")[0]
        if isinstance(value, str):
            lines.append(f"SET {cell} ={json.dumps(value)}&LEFT({sheet}!A1,0)")
        else:
            lines.append(f"SET {cell} ={value!r}+0*LEN({sheet}!A1)")
    return "```\n" + "\n".join(lines) + "\n```"


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(("name", "level"), CASES)
def test_episodes_reference_scores_one_and_shortcuts_zero(name, level):
    env = gym.make("rlenvs/Spreadsheet-v1", families=name, level=level)
    try:
        for index in SEEDS:
            reward, info = oracle(env, index)
            assert reward == 1.0, (name, level, index, info.get("mismatches"), info.get("reward_breakdown"))
            assert play(env, index, [])[0] == 0.0, (name, level, index)
            t = task(name, level, index)
            if t.formula_cells:
                assert play(env, index, [typed_values(t)])[0] == 0.0, (name, level, index)
                reward, info = play(env, index, [disguised_values(t)])
                assert info["reward_breakdown"]["values_matched"] == info["reward_breakdown"]["values_total"]
                assert reward == 0.0, (name, level, index, "constants dressed as formulas pass")
    finally:
        env.close()


# --- careless work fails ---------------------------------------------------------------------


def careless_replies(t: SpreadsheetTask) -> list[str]:
    """Plausible wrong answers to this task, each of which must score 0."""
    name, level = t.task_id.split("/")[1], int(t.task_id.split("/")[2][1:])
    (reply,) = t.solution
    lines = reply.strip("`\n").splitlines()
    rows = next(iter(t.sheets.values()))
    wrong = []
    if (name, level) == ("sort-rows", 2):
        wrong += [f"```\n{lines[1]}\n```", f"```\n{lines[1]}\n{lines[0]}\n```"]  # one key; keys in the wrong order
    if name == "dedupe-rows":
        deleted = []
        for action in parse_actions(reply):
            deleted += range(action.target.top, action.target.bottom + 1)
        width = len(rows[0])
        cleared = [f"SET {chr(64 + c)}{r}" for r in deleted for c in range(1, width + 1)]
        wrong.append("```\n" + "\n".join(cleared) + "\n```")  # emptied in place, leaving gaps
        if level == 2:
            key = rows[0].index("Email") if "Email" in rows[0] else 0
            seen, exact = set(), []
            for r, row in enumerate(rows[1:], 2):
                if row[key] in seen:
                    exact.append(r)
                seen.add(row[key])
            if sorted(exact) != sorted(deleted):
                wrong.append("```\n" + "\n".join(f"DELETE ROWS {r}" for r in sorted(exact, reverse=True)) + "\n```")
    if "DATEDIF(C2,$F$2" in reply:
        wrong.append(reply.replace('DATEDIF(C2,$F$2,"Y")', "YEAR($F$2)-YEAR(C2)"))  # ignores the anniversary
    if "COUNTIFS" in reply and name == "rank":
        last = len(rows)
        order = ",1" if '"<"' in reply else ""
        wrong.append(f"```\nSET D2 =RANK(C2,$C$2:$C${last}{order})\nFILL D2 D3:D{last}\n```")  # ignores the groups
    return wrong


def test_careless_work_scores_zero():
    env = gym.make("rlenvs/Spreadsheet-v1", families=["sort-rows", "dedupe-rows", "rank", "date-diff"], level=2)
    tried = 0
    try:
        for index in range(4 * len(SEEDS)):
            env.reset(options={"task_index": index})
            t = env.unwrapped.task
            for reply in careless_replies(t):
                tried += 1
                assert play(env, index, [reply])[0] == 0.0, (t.task_id, reply[:200])
    finally:
        env.close()
    assert tried > 60
