"""Cells, sheets and replies of the formula families (row-formula, group-totals, lookup,
percent-of-total, running-total, conditional-label): reading the sheets `truth` receives,
cell references, the reference reply, and `_column_task`, a task whose answer is one new
column of formulas.

Each formula family builds a small workbook of realistic data (orders, payroll, expenses,
price lists, bank statements, grades; 8-40 rows) and names exactly which cells to fill and
which header to write. Every computed target is a formula cell: the env scales each number
of the task's `inputs` by 0.5-1.5 (kept to two decimals, whole numbers kept whole), runs the
task's `changes` (`perturb`), recalculates the agent's workbook and compares it with `truth`
of the changed data, so values typed in from a calculator score 0 and only formulas that
follow the data score 1. The inputs are always numbers the targets are computed from, never
a column no target reads. Header cells are judged too, as text, but are not formula cells.

Every generator draws its data from the `rng` it is given (`task_rng` of the task id) and
describes the task three ways that must agree: the instruction, the reference `solution`
(actions with FILL, as a person would write them) and `truth`, a module-level function
(bound with `functools.partial` to plain parameters) that recomputes every target from the
sheets' values in plain Python, reading the same cells the formulas read."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rlenvs.envs.spreadsheet.perturb import Change
from rlenvs.envs.spreadsheet.tasks import Rows, Scenario
from rlenvs.workbook.cells import column_letters

Sheets = Mapping[str, Sequence[Sequence[Any]]]


FORMULAS = "Use formulas, not typed values: the data will change."


SUBMIT = "Reply SUBMIT when done."


def _get(sheets: Sheets, sheet: str, row: int, col: int) -> Any:
    """The value at 1-based (row, col) of a sheet; None outside the data."""
    rows = sheets.get(sheet) or ()
    if row - 1 >= len(rows) or col - 1 >= len(rows[row - 1]):
        return None
    return rows[row - 1][col - 1]


def _num(value: Any) -> float:
    """A value as arithmetic sees it: an empty cell is 0."""
    if value is None or value == "":
        return 0.0
    return float(value)


def _ref(sheet: str, col: int, row: int) -> str:
    return f"{sheet}!{column_letters(col)}{row}"


def _block(*lines: str) -> str:
    return "```\n" + "\n".join(lines) + "\n```"


def _column_task(
    instruction: str,
    sheets: Mapping[str, Rows],
    truth: Any,
    *,
    sheet: str,
    column: str,
    header: str,
    formula: str,
    last: int,
    inputs: Sequence[str],
    changes: Sequence[Change] = (),
    decimals: int | None = None,
) -> Scenario:
    """A task whose answer is one new column of `sheet`: `header` in row 1 and `formula` in
    row 2, filled down to row `last` (the reference solution); every cell below the header
    is a formula cell. `inputs` and `changes`: what the check changes (see `perturb`);
    `decimals`: what the instruction asks the values rounded to."""
    cells = tuple(f"{sheet}!{column}{row}" for row in range(2, last + 1))
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth(sheets),
        solution=(
            _block(
                f"SET {column}1 {_text(header)}", f"SET {column}2 {formula}", f"FILL {column}2 {column}3:{column}{last}"
            ),
        ),
        formula_cells=cells,
        inputs=tuple(inputs),
        changes=tuple(changes),
        truth=truth,
        decimals=dict.fromkeys(cells, decimals) if decimals is not None else {},
    )


def _text(value: str) -> str:
    """A SET value for a header: JSON-quoted."""
    return json.dumps(value)


def _sheet_rows(header: Sequence[Any] | None, rows: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    """A sheet's rows (the header first, if given), padded with None to one width."""
    table = ([list(header)] if header is not None else []) + [list(row) for row in rows]
    width = max(len(row) for row in table)
    return tuple(tuple(row + [None] * (width - len(row))) for row in table)


def _span(rows: int) -> str:
    """'rows 2-24' for `rows` data rows under a header."""
    return f"rows 2-{rows + 1}"


def _columns(header: Sequence[str]) -> str:
    return ", ".join(header[:-1]) + " and " + header[-1]
