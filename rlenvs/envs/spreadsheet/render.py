"""Sheets as text an LLM can read: a grid with column letters and row numbers.

    Sales (A1:D21, 21 rows x 4 columns)
       | A       | B     | C     | D
     1 | Region  | Rep   | Units | Price
     2 | North   | Ann   | 12    | 9.5
     ...
    [rows 16-21 not shown: READ Sales!A16:D21]

Numbers are shown as the shortest exact-enough text (up to 10 significant digits), text as
it is, booleans as TRUE/FALSE, errors by their code, empty cells as nothing. READ also
shows each formula beside its value, so the agent sees what it wrote.
"""

from __future__ import annotations

import datetime as dt

from rlenvs.envs.spreadsheet.actions import Area, cell_name
from rlenvs.workbook.cells import column_letters, quote_sheet
from rlenvs.workbook.workbook import Workbook

MAX_CELL_CHARS = 40
SHOWN_ROWS = 25
SHOWN_COLUMNS = 12


def format_value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    text = str(value).replace("\n", "\\n")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 3] + "..."


def _grid(header: list[str], rows: list[tuple[int, list[str]]]) -> str:
    widths = [
        max(len(header[i]), *(len(cells[i]) for _, cells in rows)) if rows else len(header[i])
        for i in range(len(header))
    ]
    number_width = max((len(str(number)) for number, _ in rows), default=1)
    lines = [" " * number_width + " | " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    for number, cells in rows:
        lines.append(
            str(number).rjust(number_width) + " | " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))
        )
    return "\n".join(line.rstrip() for line in lines)


def render_area(workbook: Workbook, sheet: str, area: Area, *, show_formulas: bool = False) -> str:
    """The cells of `area` (at most SHOWN_ROWS x SHOWN_COLUMNS; the rest is said)."""
    bottom = min(area.bottom, area.top + SHOWN_ROWS - 1)
    right = min(area.right, area.left + SHOWN_COLUMNS - 1)
    header = [column_letters(col) for col in range(area.left, right + 1)]
    rows = []
    for row in range(area.top, bottom + 1):
        cells = []
        for col in range(area.left, right + 1):
            where = f"{quote_sheet(sheet)}!{cell_name(row, col)}"
            shown = format_value(workbook.value(where))
            content = workbook.content(where)
            if show_formulas and isinstance(content, str) and content.startswith("="):
                shown = f"{content} -> {shown}"
            cells.append(shown)
        rows.append((row, cells))
    text = _grid(header, rows)
    notes = []
    if bottom < area.bottom:
        notes.append(f"rows {bottom + 1}-{area.bottom} not shown")
    if right < area.right:
        notes.append(f"columns {column_letters(right + 1)}-{column_letters(area.right)} not shown")
    if notes:
        text += f"\n[{'; '.join(notes)}: READ a smaller range to see them]"
    return text


def render_sheet(workbook: Workbook, sheet: str) -> str:
    """A sheet's used range, with its size first, for the task's first observation."""
    rows, cols = workbook.used_range(sheet)
    if rows == 0:
        return f"{sheet} (empty)"
    title = f"{sheet} (A1:{cell_name(rows, cols)}, {rows} rows x {cols} columns)"
    return f"{title}\n{render_area(workbook, sheet, Area(sheet, 1, 1, rows, cols))}"


def render_workbook(workbook: Workbook) -> str:
    return "\n\n".join(render_sheet(workbook, name) for name in workbook.sheet_names)
