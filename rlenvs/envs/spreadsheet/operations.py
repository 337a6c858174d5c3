"""Carrying out parsed actions (`actions.py`) on a workbook, and what the agent is told.

Each action reports one short result; an action that cannot be carried out (a sheet that
does not exist, a sort over formulas that would break) reports why and changes nothing,
and the actions after it still run, as in a spreadsheet program.
"""

from __future__ import annotations

from rlenvs.envs.spreadsheet.actions import Action, ActionError, Area, cell_name, parse_actions
from rlenvs.envs.spreadsheet.render import format_value, render_area
from rlenvs.workbook.cells import column_letters, quote_sheet
from rlenvs.workbook.formulas import shift_formula
from rlenvs.workbook.workbook import Workbook


class OperationError(ValueError):
    """An action that parsed but cannot be done on this workbook."""


def ref(sheet: str, row: int, col: int) -> str:
    return f"{quote_sheet(sheet)}!{cell_name(row, col)}"


def sheet_of(workbook: Workbook, area: Area) -> str:
    if area.sheet is None:
        return workbook.sheet_names[0]
    for name in workbook.sheet_names:
        if name.lower() == area.sheet.lower():
            return name
    raise OperationError(f"there is no sheet {area.sheet!r}: the sheets are {', '.join(workbook.sheet_names)}")


def area_text(sheet: str, area: Area) -> str:
    start, end = cell_name(area.top, area.left), cell_name(area.bottom, area.right)
    return f"{quote_sheet(sheet)}!{start}" + (f":{end}" if end != start else "")


def run_reply(workbook: Workbook, reply: str) -> tuple[str, bool]:
    """Carry out a whole reply as the env does, and say what happened and whether it
    submitted: every action in order up to SUBMIT, each that cannot be done reported and
    skipped; a reply with a malformed line changes nothing. (The env's turns and the
    oracle's replay of the reference replies share it, so that both reach the same cells.)"""
    try:
        actions = parse_actions(reply)
    except ActionError as error:
        return f"Nothing was changed. {error}", False
    lines: list[str] = []
    for action in actions:
        if action.verb == "submit":
            return "\n".join(lines), True
        try:
            lines.append(apply(workbook, action))
        except (OperationError, ValueError) as error:
            lines.append(f"line {action.line}: not done: {error}")
    return "\n".join(lines), False


def apply(workbook: Workbook, action: Action) -> str:
    """Carry out one action (not SUBMIT) and say what happened."""
    area = action.target
    assert area is not None, "every action but SUBMIT has a target (parse_actions)"
    sheet = sheet_of(workbook, area)
    if action.verb == "set":
        target = ref(sheet, area.top, area.left)
        workbook.set(target, action.content)
        shown = format_value(workbook.value(target))
        return f"{target} = {action.content}" + (
            f" -> {shown}" if isinstance(action.content, str) and action.content.startswith("=") else ""
        )
    if action.verb == "fill":
        return _fill(workbook, sheet, action)
    if action.verb == "read":
        return render_area(workbook, sheet, area, show_formulas=True)
    if action.verb == "insert":
        workbook.insert_rows(sheet, area.top, action.count)
        return f"inserted {action.count} row{'s' if action.count > 1 else ''} before row {area.top} of {sheet}"
    if action.verb == "delete":
        workbook.delete_rows(sheet, area.top, action.count)
        rows = f"row {area.top}" if action.count == 1 else f"rows {area.top}:{area.bottom}"
        return f"deleted {rows} of {sheet}"
    if action.verb == "sort":
        return _sort(workbook, sheet, action)
    raise OperationError(f"unknown action {action.verb}")


def _fill(workbook: Workbook, sheet: str, action: Action) -> str:
    origin, area = action.source, action.target
    assert origin is not None and area is not None, "FILL has a source and a target (parse_actions)"
    source_sheet = sheet_of(workbook, origin)
    source = ref(source_sheet, origin.top, origin.left)
    content = workbook.content(source)
    for row in range(area.top, area.bottom + 1):
        for col in range(area.left, area.right + 1):
            moved: object
            if isinstance(content, str) and content.startswith("="):
                moved = shift_formula(content, row - origin.top, col - origin.left)
            else:
                moved = content
            workbook.set(ref(sheet, row, col), moved)
    first = workbook.value(ref(sheet, area.top, area.left))
    return f"filled {area_text(sheet, area)} from {source} (first: {format_value(first)})"


def _sort(workbook: Workbook, sheet: str, action: Action) -> str:
    """Sort the rows of the range by one column's values, stably: numbers before text
    before booleans, empty cells last, text case-insensitively (a spreadsheet's order).
    Formulas move with their row, their relative references moved by as many rows."""
    area = action.target
    assert area is not None, "SORT has a target (parse_actions)"
    rows = list(range(area.top, area.bottom + 1))
    contents = {
        row: [workbook.content(ref(sheet, row, col)) for col in range(area.left, area.right + 1)] for row in rows
    }
    keys = {row: workbook.value(ref(sheet, row, action.key_column)) for row in rows}
    filled = sorted(
        (row for row in rows if keys[row] not in (None, "")),
        key=lambda row: sort_key(keys[row]),
        reverse=action.descending,
    )
    order = filled + [row for row in rows if keys[row] in (None, "")]
    for new_row, old_row in zip(rows, order, strict=True):
        for offset, content in enumerate(contents[old_row]):
            if isinstance(content, str) and content.startswith("="):
                content = shift_formula(content, new_row - old_row, 0)
            workbook.set(ref(sheet, new_row, area.left + offset), content)
    direction = "descending" if action.descending else "ascending"
    return f"sorted {area_text(sheet, area)} by column {column_letters(action.key_column)}, {direction}"


def sort_key(value: object) -> tuple:
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    return (1, str(value).lower())
