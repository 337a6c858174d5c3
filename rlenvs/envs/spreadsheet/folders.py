"""SpreadsheetBench-style task folders as Spreadsheet-v1 tasks (`SpreadsheetEnv(task_dir=...)`).

SpreadsheetBench (RUCKBReasoning/SpreadsheetBench, CC BY-SA 4.0) ships a data folder with a
dataset file and one folder of workbooks per question:

    data/dataset.json            [{"id", "instruction", "spreadsheet_path", "instruction_type",
                                   "answer_position"}, ...]   (or dataset.jsonl, one per line)
    data/spreadsheet/<id>/1_<id>_input.xlsx, 1_<id>_answer.xlsx, 2_<id>_input.xlsx, ...

`load_task_folders(path)` reads such a data folder (every test case a task, id
"<id>/<n>"), or one task folder of our own: `task.json` ({"instruction", "answer_position"})
beside `<n>_..._input.xlsx` / `<n>_..._answer.xlsx` pairs.

The judged cells are `answer_position` ("H3:H5", "'Sheet 1'!A1:B9", several ranges
separated by commas; without a sheet, the first sheet), with the answer workbook's values:
the values Excel saved with it, or, for a formula saved without one, what our engine
computes from that workbook. Nothing asks for formulas here (a folder carries no rule to
recompute its answers), so the oracle types the answer values in.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rlenvs.envs.spreadsheet.render import render_workbook
from rlenvs.envs.spreadsheet.tasks import SpreadsheetTask
from rlenvs.rewards.spreadsheet import EXCEL_EPOCH
from rlenvs.workbook.cells import column_letters, parse_range, quote_sheet
from rlenvs.workbook.workbook import Workbook
from rlenvs.workbook.xlsx import read_xlsx

DATASET_FILES = ("dataset.json", "dataset.jsonl")
_CASE = re.compile(r"(\d+)_(.+)_input\.xlsx")


class TaskFolderError(ValueError):
    """A folder that is not a SpreadsheetBench-style task; the message names the file and the fix."""


def load_task_folders(path: str | Path) -> list[SpreadsheetTask]:
    root = Path(path)
    if not root.is_dir():
        raise TaskFolderError(f"spreadsheet task folder {root} does not exist or is not a folder")
    dataset = next((root / name for name in DATASET_FILES if (root / name).is_file()), None)
    if dataset is not None:
        return [task for record in _records(dataset) for task in _cases(record, root)]
    if (root / "task.json").is_file():
        record = _load_json(root / "task.json")
        return list(_cases({**record, "id": record.get("id", root.name), "spreadsheet_path": "."}, root))
    raise TaskFolderError(
        f"{root} holds neither a SpreadsheetBench dataset file ({' or '.join(DATASET_FILES)}) nor a task.json "
        '({"instruction": ..., "answer_position": ...} beside 1_<id>_input.xlsx and 1_<id>_answer.xlsx)'
    )


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise TaskFolderError(f"{path} is not valid JSON: {error}") from None


def _records(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        records = [_line(path, number, line) for number, line in enumerate(lines, 1)]
    else:
        records = _load_json(path)
    if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
        raise TaskFolderError(f"{path} must hold a list of task records")
    return records


def _line(path: Path, number: int, line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError as error:
        raise TaskFolderError(f"{path} line {number} is not valid JSON: {error}") from None


def _cases(record: dict[str, Any], root: Path) -> Iterator[SpreadsheetTask]:
    for field in ("id", "instruction", "spreadsheet_path", "answer_position"):
        if not isinstance(record.get(field), (str, int)) or not str(record[field]).strip():
            raise TaskFolderError(f"task record {str(record)[:120]} needs a non-empty {field!r}")
    folder = root / str(record["spreadsheet_path"])
    inputs = sorted((int(m.group(1)), p) for p in folder.glob("*_input.xlsx") if (m := _CASE.fullmatch(p.name)))
    if not inputs:
        raise TaskFolderError(f"task {record['id']}: no <n>_<id>_input.xlsx in {folder}")
    for number, input_path in inputs:
        answer_path = input_path.with_name(input_path.name.replace("_input.xlsx", "_answer.xlsx"))
        if not answer_path.is_file():
            raise TaskFolderError(f"task {record['id']}: {input_path.name} has no {answer_path.name} beside it")
        yield _task(
            f"{record['id']}/{number}",
            str(record["instruction"]).strip(),
            input_path,
            answer_path,
            str(record["answer_position"]),
        )


def _task(task_id: str, instruction: str, input_path: Path, answer_path: Path, position: str) -> SpreadsheetTask:
    start = read_xlsx(input_path)
    sheets = {name: _rows(start, name) for name in start.sheet_names}
    expected = _answers(answer_path, position, task_id)
    lines = [f"SET {cell} {_typed(value)}" for cell, value in expected.items()]
    return SpreadsheetTask(
        task_id=task_id,
        prompt=f"{instruction}\n\n{render_workbook(start)}",
        sheets=sheets,
        expected=expected,
        solution=("```\n" + "\n".join(lines) + "\n```",),
    )


def _rows(workbook: Workbook, sheet: str) -> tuple[tuple[Any, ...], ...]:
    rows, cols = workbook.used_range(sheet)
    if rows == 0:
        return ()
    return tuple(tuple(row) for row in workbook.contents(f"{quote_sheet(sheet)}!A1:{_corner(rows, cols)}"))


def _corner(rows: int, cols: int) -> str:
    return f"{column_letters(cols)}{rows}"


def _answers(path: Path, position: str, task_id: str) -> dict[str, Any]:
    """{cell: value} over `answer_position`: Excel's saved values, else our engine's."""
    import openpyxl  # type: ignore[import-untyped]  # openpyxl ships no types

    saved = openpyxl.load_workbook(path, data_only=True)
    computed = read_xlsx(path)
    first = computed.sheet_names[0]
    expected: dict[str, Any] = {}
    for part in position.split(","):
        try:
            area = parse_range(part.strip())
        except ValueError as error:
            raise TaskFolderError(f"task {task_id}: answer_position {position!r}: {error}") from None
        sheet = _sheet(computed, area.sheet or first, task_id)
        for row in range(area.start.row, area.end.row + 1):
            for col in range(area.start.col, area.end.col + 1):
                cell = f"{quote_sheet(sheet)}!{_corner(row, col)}"
                value = saved[sheet].cell(row, col).value
                expected[cell] = computed.value(cell) if value is None and computed.content(cell) is not None else value
    return expected


def _sheet(workbook: Workbook, name: str, task_id: str) -> str:
    for sheet in workbook.sheet_names:
        if sheet.lower() == name.strip("'").lower():
            return sheet
    raise TaskFolderError(f"task {task_id}: answer_position names sheet {name!r}, not one of {workbook.sheet_names}")


def _typed(value: Any) -> str:
    """A value as SET writes it (text quoted, so "007" or "=x" stay text)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dt.datetime):
        return repr((value - EXCEL_EPOCH).total_seconds() / 86_400)  # its serial: the same value
    if isinstance(value, dt.date):
        return f"=DATE({value.year},{value.month},{value.day})"
    return json.dumps(str(value))
