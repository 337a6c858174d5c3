"""Cells, sheets and replies of the table families (sort-rows, dedupe-rows, fill-missing,
rank, date-diff, clean-text): cell references and areas, the reference reply, and reading
the rows `truth` receives.

Each table family makes one realistic table (staff, orders, invoices, race results,
contacts) starting at A1 with its header in row 1, and asks for one well-defined change:
rows sorted or deduplicated, blanks filled, or a new column of formulas. The instruction
names the exact cells or range and the exact rule, and every judged value is computed in
plain Python, never by the formula engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlenvs.workbook.cells import column_letters

Sheets = Mapping[str, Sequence[Sequence[Any]]]


SUBMIT = "Reply SUBMIT when done."


FORMULAS = "Write formulas, not typed values: the column must still be right when the data in the table changes."


def _letter(col: int) -> str:
    """The letters of a 0-based column index: 0 -> A."""
    return column_letters(col + 1)


def _ref(sheet: str, col: int, row: int) -> str:
    """A judged cell, "Staff!D2" (0-based column, 1-based row)."""
    return f"{sheet}!{_letter(col)}{row}"


def _span(sheet: str | None, col1: int, row1: int, col2: int, row2: int) -> str:
    where = f"{_letter(col1)}{row1}:{_letter(col2)}{row2}"
    return f"{sheet}!{where}" if sheet else where


def _reply(*lines: str) -> str:
    return "```\n" + "\n".join(lines) + "\n```"


def _rows(header: Sequence[Any], table: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    return (tuple(header), *(tuple(row) for row in table))


def _area(sheet: str, rows: Sequence[Sequence[Any]], width: int, height: int) -> dict[str, Any]:
    """Every cell of A1 to (width x height) with the content `rows` gives it (None beyond)."""
    expected: dict[str, Any] = {}
    for r in range(height):
        row = rows[r] if r < len(rows) else ()
        for c in range(width):
            expected[_ref(sheet, c, r + 1)] = row[c] if c < len(row) else None
    return expected


def _cell(sheets: Sheets, sheet: str, row: int, col: int) -> Any:
    """The value at a 1-based row and 0-based column of the rows `truth` receives (None off
    the edge: the env may hand over rows trimmed to their last non-empty cell)."""
    rows = sheets.get(sheet, ())
    if row - 1 >= len(rows):
        return None
    values = rows[row - 1]
    return values[col] if col < len(values) else None


def _column(sheets: Sheets, sheet: str, col: int, n: int) -> list[Any]:
    """Data rows 2 to n+1 of one column."""
    return [_cell(sheets, sheet, row, col) for row in range(2, n + 2)]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_blank(value: Any) -> bool:
    return value is None or value == ""
