"""SpreadsheetBench-style folders (rlenvs.envs.spreadsheet.folders) through the real env: the
dataset layout and our one-folder layout, answers saved by a spreadsheet program or not."""

from __future__ import annotations

import datetime as dt
import json

import gymnasium as gym
import openpyxl
import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.envs.spreadsheet.folders import TaskFolderError, load_task_folders

SALES = [("Region", "Amount", "Closed"), ("North", 120, dt.date(2024, 1, 5)), ("South", 80, dt.date(2024, 2, 9)),
         ("North", 45.5, dt.date(2024, 3, 1))]  # fmt: skip


def workbook(path, rows, extra=None, sheet="Sales"):
    book = openpyxl.Workbook()
    book.active.title = sheet
    for row in rows:
        book.active.append(row)
    for cell, value in (extra or {}).items():
        book.active[cell] = value
    book.save(path)


def spreadsheetbench_folder(root):
    """Two questions, the first with two test cases, as SpreadsheetBench lays them out."""
    records = [
        {"id": "101", "instruction": "In E2 write the total amount of North.", "spreadsheet_path": "spreadsheet/101",
         "instruction_type": "Cell-Level Manipulation", "answer_position": "E2"},
        {"id": "202", "instruction": "Copy the close date of each deal into D2:D4.", "spreadsheet_path": "spreadsheet/202",
         "instruction_type": "Cell-Level Manipulation", "answer_position": "'Sales'!D2:D4"},
    ]  # fmt: skip
    (root / "dataset.json").write_text(json.dumps(records))
    for record in records:
        (root / record["spreadsheet_path"]).mkdir(parents=True)
    folder = root / "spreadsheet" / "101"
    workbook(folder / "1_101_input.xlsx", SALES)
    workbook(folder / "1_101_answer.xlsx", SALES, {"E2": 165.5})  # a value, as saved
    other = [SALES[0], ("North", 7, dt.date(2024, 1, 1)), ("East", 3, dt.date(2024, 1, 2))]
    workbook(folder / "2_101_input.xlsx", other)
    workbook(folder / "2_101_answer.xlsx", other, {"E2": '=SUMIF(A2:A3,"North",B2:B3)'})  # a formula, no saved value
    folder = root / "spreadsheet" / "202"
    workbook(folder / "1_202_input.xlsx", SALES)
    workbook(folder / "1_202_answer.xlsx", SALES, {f"D{r}": f"=C{r}" for r in (2, 3, 4)})
    return root


def test_a_spreadsheetbench_data_folder_gives_one_task_per_test_case(tmp_path):
    tasks = load_task_folders(spreadsheetbench_folder(tmp_path))
    assert [t.task_id for t in tasks] == ["101/1", "101/2", "202/1"]
    assert tasks[0].expected == {"Sales!E2": 165.5} and tasks[1].expected == {"Sales!E2": 7}
    assert tasks[0].prompt.startswith("In E2 write the total amount of North.\n\nSales (A1:C4")
    assert tasks[0].formula_cells == () and tasks[0].sheets["Sales"][1] == ("North", 120, dt.date(2024, 1, 5))


def test_the_env_plays_folder_tasks_oracle_one_and_idle_zero(tmp_path):
    env = gym.make("rlenvs/Spreadsheet-v1", task_dir=str(spreadsheetbench_folder(tmp_path))).unwrapped
    for index in range(3):
        env.reset(options={"task_index": index})
        for reply in env.task.solution:
            env.step(reply)
        _, reward, terminated, _, info = env.step("SUBMIT")
        assert (reward, terminated) == (1.0, True), info
        env.reset(options={"task_index": index})
        assert env.step("SUBMIT")[1] == 0.0
    env.reset(options={"task_id": "101/1"})
    assert env.step('```\nSET E2 =SUMIF(A2:A4,"North",B2:B4)\nSUBMIT\n```')[1] == 1.0


def test_our_one_folder_layout(tmp_path):
    (tmp_path / "task.json").write_text(json.dumps({"instruction": "Total in E2.", "answer_position": "E2"}))
    workbook(tmp_path / "1_x_input.xlsx", SALES)
    workbook(tmp_path / "1_x_answer.xlsx", SALES, {"E2": "=SUM(B2:B4)"})
    [task] = load_task_folders(tmp_path)
    assert task.task_id == f"{tmp_path.name}/1" and task.expected == {"Sales!E2": 245.5}


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda root: None, "neither a SpreadsheetBench dataset file"),
        (lambda root: (root / "dataset.json").write_text("{nope"), "not valid JSON"),
        (
            lambda root: (root / "dataset.json").write_text('[{"id": "1", "instruction": "x"}]'),
            "needs a non-empty 'spreadsheet_path'",
        ),
        (
            lambda root: (root / "dataset.json").write_text(
                '[{"id": "1", "instruction": "x", "spreadsheet_path": ".", "answer_position": "A1"}]'
            ),
            "no <n>_<id>_input.xlsx",
        ),
    ],
)
def test_bad_folders_name_the_problem(tmp_path, setup, message):
    setup(tmp_path)
    with pytest.raises(TaskFolderError, match=message):
        load_task_folders(tmp_path)


def test_an_answer_position_on_a_missing_sheet_is_named(tmp_path):
    (tmp_path / "task.json").write_text(json.dumps({"instruction": "x", "answer_position": "Nope!E2"}))
    workbook(tmp_path / "1_x_input.xlsx", SALES)
    workbook(tmp_path / "1_x_answer.xlsx", SALES)
    with pytest.raises(TaskFolderError, match="names sheet 'Nope'"):
        load_task_folders(tmp_path)
