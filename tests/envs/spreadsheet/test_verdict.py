"""The verdict's rules (rlenvs.envs.spreadsheet.verdict), each through the env on a reply a
policy could write: judged on the task's own data, formulas that read the data, no volatile
value on any recalculation, seeded from the episode, rounded where the task asks."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401  (registers the envs)
from rlenvs.envs.spreadsheet.verdict import changed_data
from rlenvs.workbook.workbook import Workbook

SEEDS = range(20)


def block(*lines: str) -> str:
    return "```\n" + "\n".join((*lines, "SUBMIT")) + "\n```"


def play(env, task_id: str, reply: str, seed: int | None = None) -> tuple[float, dict]:
    env.reset(seed=seed, options={"task_id": task_id})
    _, reward, terminated, truncated, info = env.step(reply)
    assert terminated or truncated
    return reward, info


@pytest.fixture(scope="module")
def envs():
    made = {level: gym.make("rlenvs/Spreadsheet-v1", level=level).unwrapped for level in (1, 2)}
    yield made
    for env in made.values():
        env.close()


def test_rand_read_only_where_the_data_changed_scores_zero_on_every_seed(envs):
    """On the starting data C2 reads Z1 (B2 is 57 there), on changed data it reads RAND:
    the volatile check holds on every recalculation the verdict makes, not only the first."""
    reply = block(
        "SET C1 Result",
        'SET C2 =IF(B2>=60,"Pass","Fail")',
        "FILL C2 C3:C14",
        "SET H1 =RAND()",
        'SET C2 =IF(B2=57,"Fail",IF(INDIRECT(IF(B2=57,"Z1","H1"))<0.5,"Pass","Fail"))',
    )
    for seed in SEEDS:
        reward, info = play(envs[1], "spreadsheet/conditional-label/L1/0", reply, seed)
        assert reward == 0.0, (seed, info)
        assert info["reward_breakdown"]["volatile_cells"] >= 1


def test_the_changed_data_come_from_the_episode_seed(envs):
    """The same episode seed gives the same changed copies (an episode replays), another
    seed other ones (a shortcut one set of copies misses is not paid in every episode)."""
    env = envs[1]
    env.reset(options={"task_id": "spreadsheet/conditional-label/L1/0"})
    copies = {seed: [changed_data(env.task, seed, round_) for round_ in range(2)] for seed in (1, 1, 2)}
    assert copies[1] == [changed_data(env.task, 1, round_) for round_ in range(2)] != copies[2]
    env.reset(seed=5, options={"task_id": env.task.task_id})
    first = env.seed_of_episode
    env.reset(seed=5, options={"task_id": env.task.task_id})
    assert env.seed_of_episode == first


def test_a_workbook_copy_draws_what_the_workbook_would_draw():
    """The verdict's copies carry RAND's state: a copy never draws from an unseeded
    generator (which made one reply's reward change from one replay to the next)."""
    wb = Workbook.from_rows({"S": [["=RAND()", "=RANDBETWEEN(1,10^9)"]]})
    wb.seed(11)
    copy = wb.copy()
    assert [copy.value("S!A1"), copy.value("S!B1")] == [wb.value("S!A1"), wb.value("S!B1")]


def test_a_workbook_whose_data_cells_were_changed_scores_0(envs):
    """Every phone rewritten as (555) 123-4567, then a fixed-position MID: 0. And the honest
    formula on the same edited column scores 0 too: it is right, but the user's data is
    gone. The same honest formula on the data as given scores 1; one data cell typed back
    to its own value (5 for 5.0) is no change."""
    env = envs[2]
    env.reset(options={"task_id": "spreadsheet/clean-text/L2/3"})
    rows = env.task.sheets["Customers"]
    lines, rewritten = [], 0
    for r in range(2, len(rows) + 1):
        digits = "".join(ch for ch in rows[r - 1][1] if ch.isdigit())
        lines.append(f'SET B{r} "({digits[:-7]}) {digits[-7:-4]}-{digits[-4:]}"')
        rewritten += lines[-1] != f'SET B{r} "{rows[r - 1][1]}"'
    lines += ["SET C2 =MID(B2,2,3)&MID(B2,7,3)&RIGHT(B2,4)", f"FILL C2 C3:C{len(rows)}"]
    for seed in range(5):
        assert play(env, "spreadsheet/clean-text/L2/3", block(*lines), seed)[0] == 0.0
    formula = ['SET C2 =SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(B2,"(",""),")","")," ",""),"-","")',
               f"FILL C2 C3:C{len(rows)}"]  # fmt: skip
    reward, info = play(env, "spreadsheet/clean-text/L2/3", block(*lines[:-2], *formula), 0)
    assert reward == 0.0 and info["reward_breakdown"]["input_cells_changed"] == rewritten > 0
    assert any("data were changed" in line for line in info["mismatches"])
    assert play(env, "spreadsheet/clean-text/L2/3", block(*formula), 0)[0] == 1.0
    typed_back = f'SET B2 "{rows[1][1]}"'
    assert play(env, "spreadsheet/clean-text/L2/3", block(typed_back, *formula), 0)[0] == 1.0


def test_a_formula_that_reads_only_a_header_is_not_a_formula_of_the_data(envs):
    """The reference, with one label typed as IF(A1=0,"High","High"): A1 is the header, so
    the cell is counted as having no formula that uses the data."""
    env = envs[1]
    env.reset(options={"task_id": "spreadsheet/conditional-label/L1/1"})
    task = env.task
    cell = task.formula_cells[0]
    label = task.expected[cell]
    reply = block(*task.solution[0].strip("`\n").splitlines(), f'SET {cell} =IF(A1=0,"{label}","{label}")')
    for seed in range(5):
        reward, info = play(env, task.task_id, reply, seed)
        assert reward == 0.0 and info["reward_breakdown"]["formula_cells_without_formula"] == 1, info


def test_reads_data_follows_what_a_formula_read_when_it_ran():
    wb = Workbook.from_rows(
        {
            "S": [
                ["Name", "Qty", "x", "y", "z", "w", "v"],
                ["a", 4, "=B2*2", '=IF(A1=0,"k","k")', "=C2+1", '=INDIRECT("B"&ROW())', "=ROW(B2)+COLUMNS(B2:B2)"],
            ]
        }
    )
    wb.mark_data(["S!B2:B2"])
    assert [wb.reads_data(f"S!{c}2") for c in "ABCDEFG"] == [False, False, True, False, True, True, False]
    assert wb.copy().reads_data("S!E2")  # a copy keeps what is marked as data


def test_a_value_left_unrounded_is_named_with_the_rounding_asked(envs):
    env = envs[2]
    env.reset(options={"task_id": "spreadsheet/row-formula/L2/0"})
    reply = block('SET E1 "Net Amount"', "SET E2 =C2*D2*IF(D2>=25,0.92,1)", "FILL E2 E3:E38")
    reward, info = play(env, "spreadsheet/row-formula/L2/0", reply, 0)
    assert reward == 0.0 and any("rounded to 2 decimals" in line for line in info["mismatches"]), info["mismatches"]
