"""rlenvs/Spreadsheet-v1 end to end: the families through the env, the actions on a real
workbook, the formula check by perturbation, and the .xlsx an episode leaves."""

from __future__ import annotations

import datetime as dt

import gymnasium as gym
import numpy as np
import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.envs.spreadsheet.env import SpreadsheetEnv, refers_to_cells
from rlenvs.envs.spreadsheet.families import FAMILIES
from rlenvs.envs.spreadsheet.perturb import perturb
from rlenvs.workbook.workbook import Workbook

SEEDS = range(20)


@pytest.fixture(scope="module")
def env():
    made = gym.make("rlenvs/Spreadsheet-v1", max_turns=6).unwrapped
    yield made
    made.close()


def play_oracle(env: SpreadsheetEnv, options: dict) -> tuple[float, dict]:
    env.reset(options=options)
    while True:
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            return reward, info


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(
    ("family", "level"), [(name, level) for name, family in FAMILIES.items() for level in family.levels]
)
def test_every_family_and_level_the_reference_scores_one_and_submitting_at_once_zero(family, level):
    env = SpreadsheetEnv(families=family, level=level)
    for index in SEEDS:
        reward, info = play_oracle(env, {"task_index": index})
        assert reward == 1.0, f"{family} L{level} #{index}: {info['mismatches']} {info['reward_breakdown']}"
        env.reset(options={"task_index": index})
        _, reward, terminated, _, info = env.step("SUBMIT")
        assert (reward, terminated) == (0.0, True), f"{family} L{level} #{index} passes untouched"


def test_at_least_ten_families_with_two_levels_each():
    assert len(FAMILIES) >= 10 and all(len(family.levels) >= 2 for family in FAMILIES.values())


def test_the_prompt_shows_the_instruction_and_the_sheets_as_grids(env):
    observation, info = env.reset(options={"task_index": 0})
    sheet = next(iter(env.task.sheets))
    assert observation.startswith(env.task.prompt.split("\n\n")[0])
    assert f"{sheet} (A1:" in observation and "\n 1 | " in observation
    assert info["messages"][0]["role"] == "system" and "SUBMIT" in info["messages"][0]["content"]


def test_a_malformed_reply_changes_nothing_and_the_episode_goes_on(env):
    env.reset(options={"task_index": 0})
    before = env.workbook.copy()
    observation, reward, terminated, truncated, _ = env.step("SET Z1 5\nFROB A1\nSET Z2 6")
    assert observation.startswith("Nothing was changed. line 2 `FROB A1`: unknown action")
    assert (reward, terminated, truncated) == (0.0, False, False)
    sheet = env.workbook.sheet_names[0]
    assert env.workbook.value(f"{sheet}!Z1") is None and before.sheet_names == env.workbook.sheet_names


def test_actions_on_a_real_workbook():
    workbook = Workbook.from_rows(
        {"Data": [["Item", "Qty", "Price"], ["pen", 3, 1.5], ["ink", 1, 7.0], ["pad", 2, 4.0]]}
    )
    env = SpreadsheetEnv(families=next(iter(FAMILIES)))
    env.reset(options={"task_index": 0})
    env.workbook = workbook
    observation, *_ = env.step("```\nSET D1 Total\nSET D2 =B2*C2\nFILL D2 D3:D4\nSET E1 =SUM(D2:D4)\nREAD D1:E4\n```")
    assert "Data!D2 = =B2*C2 -> 4.5" in observation and "filled Data!D3:D4 from Data!D2" in observation
    assert "=B4*C4 -> 8" in observation and "=SUM(D2:D4) -> 19.5" in observation
    env.step("INSERT ROWS 3 1\nSET A3 cap\nSET B3 4\nSET C3 0.5\nFILL D2 D3")
    assert workbook.content("Data!E1") == "=SUM(D2:D5)" and workbook.value("Data!E1") == 21.5
    env.step("SORT A2:D5 BY D DESC")
    assert [workbook.value(f"Data!A{r}") for r in range(2, 6)] == ["pad", "ink", "pen", "cap"]
    assert workbook.content("Data!D2") == "=B2*C2" and workbook.value("Data!E1") == 21.5
    env.step("DELETE ROWS 2")
    assert workbook.content("Data!E1") == "=SUM(D2:D4)" and workbook.value("Data!E1") == 13.5
    observation, *_ = env.step("READ Nope!A1\nREAD A1")
    assert "line 1: not done: there is no sheet 'Nope'" in observation and "Item" in observation


def test_quoted_text_keeps_its_spaces_in_a_fenced_block():
    """Spaces were collapsed in every action line of a fenced block (a step meant only for
    telling a plan from its repeat), so `" LARS  "` was written as `" LARS "`: a data cell
    typed back as its own value read as changed. Found by certify's spreadsheet moves."""
    env = SpreadsheetEnv(families=next(iter(FAMILIES)))
    env.reset(options={"task_index": 0})
    env.workbook = Workbook.from_rows({"Data": [["Name"], [" LARS  "]]})
    env.step('```\nSET B2  "a  b"\nSET A2 " LARS  "\n```')
    assert env.workbook.content("Data!B2") == "a  b" and env.workbook.content("Data!A2") == " LARS  "


def test_typed_in_values_where_formulas_are_asked_score_zero():
    formula_tasks = [
        (name, level)
        for name, family in FAMILIES.items()
        for level in family.levels
        if SpreadsheetEnv(families=name, level=level).tasks.get(0).formula_cells
    ]
    assert formula_tasks
    for name, level in formula_tasks:
        env = SpreadsheetEnv(families=name, level=level)
        env.reset(options={"task_index": 3})
        lines = []
        for cell, value in env.task.expected.items():
            lines.append(f"SET {cell} {value!r}" if not isinstance(value, str) else f'SET {cell} "{value}"')
        _, reward, _, _, info = env.step("```\n" + "\n".join(lines) + "\nSUBMIT\n```")
        assert reward == 0.0, f"{name} L{level}: typed values passed"
        assert info["reward_breakdown"]["values_matched"] == info["reward_breakdown"]["values_total"]


def test_refers_to_cells():
    assert refers_to_cells("=B2*C2") and refers_to_cells("=SUM(Data!$C$2:C9)")
    assert not refers_to_cells("=42") and not refers_to_cells('="B2"') and not refers_to_cells("B2")
    assert not refers_to_cells("=LOG10(100)") and not refers_to_cells("=SUM(")  # a name is not a cell
    assert not refers_to_cells(42) and not refers_to_cells(None)
    assert refers_to_cells('=INDIRECT("B"&ROW())*2') and refers_to_cells(
        "=OFFSET(E2,0,-2)*D2"
    )  # read what they compute
    assert not refers_to_cells("=ROW(B5)-1") and not refers_to_cells("=COLUMNS(A1:C1)")  # a position is not data


def test_a_judged_value_computed_from_a_volatile_function_scores_zero():
    """RAND()*0 changes nothing and the values match, yet the reward is 0 and says why: a
    value drawn again at every recalculation is no function of the data."""
    env = SpreadsheetEnv(families="row-formula", level=1)
    env.reset(options={"task_index": 0})
    lines = []
    for reply in env.task.solution:
        lines += [line.replace("=C2*D2", "=C2*D2+0*RAND()") for line in reply.strip("`\n").splitlines()]
    assert any("RAND" in line for line in lines), env.task.solution
    _, reward, _, _, info = env.step("```\n" + "\n".join([*lines, "SUBMIT"]) + "\n```")
    assert reward == 0.0 and info["reward_breakdown"]["volatile_cells"] > 0
    assert info["reward_breakdown"]["values_matched"] == info["reward_breakdown"]["values_total"]
    assert any("RAND, RANDBETWEEN, NOW or TODAY" in line for line in info["mismatches"])


def test_the_same_seed_replays_the_same_random_draws(env):
    def draw(seed: int) -> str:
        env.reset(seed=seed)
        return env.step("SET Z1 =RAND()\nREAD Z1")[0]

    assert "#NAME?" not in draw(3) and draw(3) == draw(3) != draw(4)


def test_perturbation_changes_only_the_inputs_in_kind():
    sheets = {"S": (("name", "qty", "price", "when", "note"),
                    ("a", 3, 2.5, dt.date(2024, 1, 5), "x"), ("b", 8, 4.0, dt.date(2024, 2, 1), "y"),
                    ("c", 5, 1.25, dt.date(2024, 3, 9), "z"))}  # fmt: skip
    changed = perturb(sheets, ["S!A2:D4"], np.random.default_rng(0))["S"]
    assert changed[0] == list(sheets["S"][0]) and [row[4] for row in changed[1:]] == ["x", "y", "z"]
    assert sorted(row[0] for row in changed[1:]) == ["a", "b", "c"]
    assert all(isinstance(row[1], int) and row[1] > 0 for row in changed[1:])
    assert [row[1:4] for row in changed[1:]] != [list(row[1:4]) for row in sheets["S"][1:]]
    assert all(isinstance(row[3], dt.date) for row in changed[1:])


def test_the_episode_workbook_opens_in_openpyxl_with_its_formulas(env, tmp_path):
    env.reset(options={"task_index": 1})
    for reply in env.task.solution:
        env.step(reply)
    path = tmp_path / "episode.xlsx"
    env.save_workbook(str(path))
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == env.workbook.sheet_names
    formulas = [
        cell.value
        for sheet in book
        for row in sheet.iter_rows()
        for cell in row
        if isinstance(cell.value, str) and cell.value.startswith("=")
    ]
    assert formulas or not env.task.formula_cells


def test_user_rows_are_refused_with_the_way_to_pose_a_task(env):
    with pytest.raises(ValueError, match="task folders"):
        env.reset(options={"task": {"instruction": "x"}})


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    reply=st.one_of(
        st.text(max_size=200),
        st.lists(
            st.sampled_from(
                [
                    "SET A1 =1/0",
                    "SET B2 =A1+",
                    "FILL A1 A2:A999",
                    "SORT A1:A1 BY A",
                    "INSERT ROWS 1 1000",
                    "DELETE ROWS 1:9999",
                    "READ A1:CV10000",
                    "SET C3 =C3",
                    "SET A1 =INDEX(A:A,1)",
                    "SET D4 =SUM(Nope!A1:A3)",
                    'SET A1 "x"',
                    "SET E5 =VLOOKUP(A1,A1:B2,5,0)",
                ]
            ),
            max_size=6,
        ).map("\n".join),
    ),
    index=st.integers(0, 100),
)
def test_any_reply_gets_an_observation_and_never_raises(env, reply, index):
    env.reset(options={"task_index": index})
    observation, reward, terminated, truncated, _ = env.step(reply)
    assert isinstance(observation, str) and 0.0 <= reward <= 1.0 and not (terminated and truncated)
