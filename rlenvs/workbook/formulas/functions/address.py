"""ADDRESS: a cell's reference as text, for INDIRECT to read (`INDIRECT(ADDRESS(2,2)&":"&
ADDRESS(ROW(),2))`), written as Excel writes it: `$B$2`, `B$2`, `$B2`, `B2`, or in R1C1
style, with a sheet name quoted where it must be (`'Q1 Data'!$A$1`).
"""

from __future__ import annotations

import re

from rlenvs.workbook.cells import MAX_COL, MAX_ROW, column_letters
from rlenvs.workbook.formulas.functions.base import (
    boolean,
    function,
    integer,
    text,
)
from rlenvs.workbook.values import VALUE, EvalError, Scalar

_PLAIN_SHEET = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_LOOKS_LIKE_A_CELL = re.compile(r"[A-Za-z]{1,3}[0-9]+|[Rr][0-9]*[Cc][0-9]*")


def _sheet(name: str) -> str:
    """A sheet name as a reference writes it: quoted unless it is a plain name that is not
    also a cell's name."""
    if _PLAIN_SHEET.fullmatch(name) and not _LOOKS_LIKE_A_CELL.fullmatch(name):
        return name
    return "'" + name.replace("'", "''") + "'"


@function("ADDRESS", min_args=2, max_args=5)
def address(row: Scalar, column: Scalar, abs_num: Scalar = None, a1: Scalar = None, sheet_text: Scalar = None) -> str:
    """The reference of the cell at row and column as text. abs_num 1 (default) both
    absolute `$C$2`, 2 the row only `C$2`, 3 the column only `$C2`, 4 neither `C2`; a1
    FALSE writes R1C1 (`R2C3`, relative parts in brackets: `R2C[3]`); sheet_text puts a
    sheet name in front. #VALUE! for a row or column off the sheet or another abs_num."""
    r, c = integer(row), integer(column)
    kind = 1 if abs_num is None else integer(abs_num)
    if not (1 <= r <= MAX_ROW and 1 <= c <= MAX_COL and 1 <= kind <= 4):
        raise EvalError(VALUE)
    row_absolute, col_absolute = kind in (1, 2), kind in (1, 3)
    if a1 is None or boolean(a1):
        ref = f"{'$' if col_absolute else ''}{column_letters(c)}{'$' if row_absolute else ''}{r}"
    else:
        ref = f"R{r if row_absolute else f'[{r}]'}C{c if col_absolute else f'[{c}]'}"
    if sheet_text is None:
        return ref
    return f"{_sheet(text(sheet_text))}!{ref}"
