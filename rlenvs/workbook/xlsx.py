"""Reading and writing .xlsx files with openpyxl (MIT).

Writing: formulas are written as formulas in canonical form, with the `_xlfn.` prefix
that the file format requires for functions newer than Excel 2007 (CONCAT, DAYS, IFS,
XLOOKUP...; without it Excel shows #NAME?). openpyxl cannot compute, so no cached values
are written: a program opening the file must recalculate (Excel does on load;
LibreOffice needs its "recalculate on load" setting, or a headless conversion). Dates are
written as dates with a `yyyy-mm-dd` number format; text is always written as text (an
entered "#N/A" stays text); error constants as errors.

Reading: formulas are read as their text, in canonical form (`_xlfn.` prefixes dropped,
upper case, no spaces), and cached values are ignored, so what you get is what our engine computes. A
formula our parser cannot read is kept as text and shows #NAME?. Dates (and date-times
at midnight) become `datetime.date`, other date-times stay `datetime.datetime`, times
become fractions of a day. Sheet order and names are kept; formatting is not.
"""

from __future__ import annotations

import datetime as dt
import os

from rlenvs.workbook.calc import Formula
from rlenvs.workbook.cells import CellRef
from rlenvs.workbook.formulas import FUNCTIONS, to_text
from rlenvs.workbook.values import ERRORS, ErrorValue
from rlenvs.workbook.workbook import Workbook

_EXCEL_ERRORS = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A"}


def _xlfn_names() -> frozenset[str]:
    from openpyxl.utils.formulas import FORMULAE  # type: ignore[import-untyped]  # openpyxl ships no types

    return frozenset(name for name in FUNCTIONS if name not in FORMULAE)


def write_xlsx(wb: Workbook, path: str | os.PathLike[str]) -> None:
    """Write wb to path (see the module docstring)."""
    from openpyxl import Workbook as XWorkbook  # type: ignore[import-untyped]  # openpyxl ships no types

    xlfn = _xlfn_names()
    out = XWorkbook()
    out.remove(out.active)
    for name in wb.sheet_names:
        ws = out.create_sheet(title=name)
        for ref, _ in wb.cells(name):
            content = wb._data(name).cells[(ref.row, ref.col)]
            cell = ws.cell(row=ref.row, column=ref.col)
            if isinstance(content, Formula):
                cell.value = to_text(content.ast, xlfn) if content.ast is not None else content.text
            elif isinstance(content, ErrorValue):
                cell.value = content.code
                cell.data_type = "e" if content.code in _EXCEL_ERRORS else "s"
            elif isinstance(content, str):
                cell.value = content
                cell.data_type = "s"
            elif isinstance(content, dt.datetime):
                cell.value = content
                cell.number_format = "yyyy-mm-dd hh:mm:ss"
            elif isinstance(content, dt.date):
                cell.value = content
                cell.number_format = "yyyy-mm-dd"
            else:
                cell.value = content
    if not wb.sheet_names:
        out.create_sheet("Sheet1")
    out.save(os.fspath(path))


def _constant(value: object, data_type: str) -> object:
    if data_type == "e" and isinstance(value, str):
        return ERRORS.get(value.upper(), ErrorValue(value))
    if isinstance(value, dt.datetime):
        return value.date() if value.time() == dt.time(0) and value.tzinfo is None else value
    if isinstance(value, dt.time):
        return (value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6) / 86400
    if isinstance(value, dt.timedelta):
        return value.total_seconds() / 86400
    return value


def read_xlsx(path: str | os.PathLike[str]) -> Workbook:
    """Read path into a new Workbook (see the module docstring)."""
    from openpyxl import load_workbook
    from openpyxl.worksheet.formula import ArrayFormula  # type: ignore[import-untyped]  # openpyxl ships no types

    src = load_workbook(os.fspath(path), data_only=False)
    wb = Workbook([ws.title for ws in src.worksheets])
    for ws in src.worksheets:
        data = wb._data(ws.title)
        for row in ws.iter_rows():
            for cell in row:
                v = cell.value
                if v is None:
                    continue
                if isinstance(v, ArrayFormula):
                    v = v.text
                if cell.data_type == "f" or (isinstance(v, str) and v.startswith("=") and len(v) > 1):
                    if isinstance(v, str):
                        wb._set_lenient(data, cell.row, cell.column, v if v.startswith("=") else "=" + v)
                    continue
                wb.set(CellRef(cell.row, cell.column, data.name), _constant(v, cell.data_type))
    return wb
