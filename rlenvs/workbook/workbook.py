"""`Workbook`: ordered sheets of cells holding constants or formulas, with recalculation.

A cell holds what was entered: a constant (number, text, boolean, `datetime.date`,
`ErrorValue`) or a formula, which is text starting with "=". Entering None or "" clears
the cell (Excel cannot hold an entered empty string either); text is stored as given,
never converted to a number (the caller decides what typed input means). A text constant
cannot start with "=" (that is a formula).

- `content(ref)`: what was entered (a formula's text as typed, or as rewritten after rows
  were inserted or deleted);
- `value(ref)`: the computed value: constants as entered (dates stay dates), formula
  results as numbers (dates computed by formulas are serial numbers: see
  `values.serial_to_date`), text, booleans or `ErrorValue`s; an empty cell is None.

Unqualified references in the API (`"B3"`) mean the first sheet; `sheet(name)` gives a
handle whose unqualified references mean that sheet. Sheet names are matched ignoring
case, as in Excel.

Recalculation is lazy, cached and dependency-ordered (`calc.Calculator`); every edit drops
the cache.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence

from rlenvs.workbook.calc import Calculator, Formula, SheetData
from rlenvs.workbook.cells import (
    MAX_COL,
    MAX_ROW,
    CellRef,
    RangeRef,
    parse_range,
    parse_ref,
)
from rlenvs.workbook.formulas import (
    FormulaError,
    Node,
    adjust_rows_ast,
    calls,
    compile_formula,
    dependencies,
    parse_formula,
    to_text,
    validate,
)
from rlenvs.workbook.formulas.evaluator import cell_key
from rlenvs.workbook.formulas.nodes import Range, Ref
from rlenvs.workbook.values import NAME, date_to_serial, normalize_input

_BAD_SHEET_CHARS = set("[]:*?/\\")


def _evaluation_value(content: object) -> object:
    """A constant as formulas read it: dates as serials, integers as floats."""
    if isinstance(content, dt.date):
        return date_to_serial(content)
    if type(content) is int:
        return float(content)
    return content


def make_formula(text: str, ast: Node | None, sheet: str) -> Formula:
    """Compile a formula for a cell on `sheet` (ast None: unreadable text, #NAME?). Its
    precedents are the references it reads (`formulas.dependencies`: not those written as a
    position, such as ROW's)."""
    if ast is None:
        return Formula(text, None, lambda ctx: NAME, (), ())
    s = sheet.lower()
    refs, ranges = [], []
    for n in dependencies(ast):
        if isinstance(n, Ref):
            refs.append(cell_key(n.ref.sheet, n.ref.row, n.ref.col, s))
        elif isinstance(n, Range):
            r = n.ref
            ranges.append(((r.sheet.lower() if r.sheet else s), r.start.row, r.start.col, r.end.row, r.end.col))
    return Formula(text, ast, compile_formula(ast, s), tuple(refs), tuple(ranges), calls(ast, "volatile"))


class Sheet:
    """A handle on one sheet of a workbook: its unqualified references mean this sheet."""

    def __init__(self, workbook: Workbook, name: str):
        self.workbook = workbook
        self.name = name

    def _q(self, ref: str | CellRef | RangeRef) -> CellRef | RangeRef:
        if isinstance(ref, str):
            ref = parse_range(ref) if ":" in ref else parse_ref(ref)
        return ref if ref.sheet is not None else ref.with_sheet(self.name)

    def set(self, ref: str | CellRef, content: object) -> None:
        self.workbook.set(self._q(ref), content)  # type: ignore[arg-type]

    def content(self, ref: str | CellRef) -> object:
        return self.workbook.content(self._q(ref))  # type: ignore[arg-type]

    def value(self, ref: str | CellRef) -> object:
        return self.workbook.value(self._q(ref))  # type: ignore[arg-type]

    def values(self, rng: str | RangeRef) -> list[list[object]]:
        r = self._q(parse_range(rng) if isinstance(rng, str) else rng)
        return self.workbook.values(r)  # type: ignore[arg-type]

    def used_range(self) -> tuple[int, int]:
        """(last used row, last used column) of this sheet; see `Workbook.used_range`."""
        return self.workbook.used_range(self.name)

    def __repr__(self) -> str:
        return f"Sheet({self.name!r})"


class Workbook:
    """Sheets of cells with formulas; see the module docstring."""

    def __init__(self, sheet_names: Iterable[str] = ("Sheet1",)):
        self._sheets: dict[str, SheetData] = {}
        self._consts: dict[tuple[str, int, int], object] = {}
        self._formulas: dict[tuple[str, int, int], Formula] = {}
        self._calc = Calculator(self._sheets, self._consts, self._formulas)  # type: ignore[arg-type]
        for name in sheet_names:
            self.add_sheet(name)

    # --- sheets ------------------------------------------------------------------------

    @property
    def sheet_names(self) -> list[str]:
        """The sheet names, in order."""
        return [s.name for s in self._sheets.values()]

    def add_sheet(self, name: str) -> Sheet:
        """Append a sheet. Names follow Excel's rules: 1 to 31 characters, none of
        `[ ] : * ? / \\`, not starting or ending with `'`, unique ignoring case."""
        if not isinstance(name, str) or not 1 <= len(name) <= 31:
            raise ValueError(f"bad sheet name {name!r}: expected 1 to 31 characters")
        if _BAD_SHEET_CHARS & set(name) or name.startswith("'") or name.endswith("'"):
            raise ValueError(f"bad sheet name {name!r}: it may not contain [ ] : * ? / \\ or start/end with '")
        if name.lower() in self._sheets:
            raise ValueError(f"a sheet named {name!r} already exists")
        self._sheets[name.lower()] = SheetData(name)
        self._calc.invalidate()
        return Sheet(self, name)

    def sheet(self, name: str) -> Sheet:
        """A handle on the sheet called name (any case)."""
        return Sheet(self, self._data(name).name)

    def _data(self, name: str | None) -> SheetData:
        if name is None:
            if not self._sheets:
                raise ValueError("the workbook has no sheets")
            return next(iter(self._sheets.values()))
        data = self._sheets.get(name.lower())
        if data is None:
            raise ValueError(f"no sheet named {name!r}; the sheets are {', '.join(map(repr, self.sheet_names))}")
        return data

    def _cell(self, ref: str | CellRef) -> tuple[SheetData, int, int]:
        c = parse_ref(ref) if isinstance(ref, str) else ref
        return self._data(c.sheet), c.row, c.col

    def _range(self, rng: str | RangeRef) -> tuple[SheetData, RangeRef]:
        r = parse_range(rng) if isinstance(rng, str) else rng
        data = self._data(r.sheet)
        if r.kind != "cells":
            rows, cols = data.extent()
            end = CellRef(min(r.end.row, max(rows, r.start.row)), min(r.end.col, max(cols, r.start.col)))
            r = RangeRef(r.start, end, r.sheet)
        return data, r

    # --- cells -------------------------------------------------------------------------

    def set(self, ref: str | CellRef, content: object) -> None:
        """Enter a constant or a formula ("=..."); None or "" clears the cell. Raises
        FormulaError for a formula that cannot be read (or calls a function with the
        wrong number of arguments), ValueError/TypeError for a bad reference or value."""
        data, row, col = self._cell(ref)
        if isinstance(content, str) and content.startswith("="):
            ast = parse_formula(content)
            validate(ast)
            self._store(data, row, col, make_formula(content, ast, data.name))
        else:
            self._store(data, row, col, normalize_input(content))

    def _store(self, data: SheetData, row: int, col: int, content: object) -> None:
        key = (data.name.lower(), row, col)
        pos = (row, col)
        data.cells.pop(pos, None)
        data.formulas.discard(pos)
        self._consts.pop(key, None)
        self._formulas.pop(key, None)
        if isinstance(content, Formula):
            data.cells[pos] = content
            data.formulas.add(pos)
            self._formulas[key] = content
        elif content is not None and content != "":
            data.cells[pos] = content
            self._consts[key] = _evaluation_value(content)
        data.touched()
        self._calc.invalidate()

    def _set_lenient(self, data: SheetData, row: int, col: int, text: str, canonical: bool = True) -> None:
        """Store formula text read from a file, by default in canonical form (so `_xlfn.`
        prefixes go); unreadable text is kept as it is and shows #NAME?."""
        try:
            ast: Node | None = parse_formula(text)
        except FormulaError:
            ast = None
        if ast is not None and canonical:
            text = to_text(ast)
        self._store(data, row, col, make_formula(text, ast, data.name))

    def content(self, ref: str | CellRef) -> object:
        """What was entered in the cell (a formula as its text), None when empty."""
        data, row, col = self._cell(ref)
        c = data.cells.get((row, col))
        return c.text if isinstance(c, Formula) else c

    def value(self, ref: str | CellRef) -> object:
        """The cell's value (see the module docstring)."""
        data, row, col = self._cell(ref)
        c = data.cells.get((row, col))
        if isinstance(c, Formula):
            return self._calc.result((data.name.lower(), row, col))
        return c

    def depends_on_volatile(self, ref: str | CellRef) -> bool:
        """Whether the cell's value was computed from RAND, RANDBETWEEN, NOW or TODAY,
        in its own formula or in a cell it read (see `formulas.functions.volatile`): such a
        value changes at every recalculation, so it is no function of the data."""
        data, row, col = self._cell(ref)
        if not isinstance(data.cells.get((row, col)), Formula):
            return False
        key = (data.name.lower(), row, col)
        self._calc.result(key)
        return key in self._calc.volatile

    def mark_data(self, areas: Iterable[str | RangeRef]) -> None:
        """Name the cells an answer must be computed from (a task's input data), so that
        `reads_data` can tell a formula that uses them from one that only looks like it
        does (`=IF(A1=0,"High","High")` reads a header, `=ROW(B5)` a position)."""
        keys: set[tuple[str, int, int]] = set()
        for area in areas:
            data, r = self._range(area)
            s = data.name.lower()
            keys.update((s, c.row, c.col) for row in r.rows() for c in row)
        self._calc.data = frozenset(keys)
        self._calc.invalidate()

    def reads_data(self, ref: str | CellRef) -> bool:
        """Whether the cell is a formula that read a cell of `mark_data` when it was
        computed, in its own formula or through a cell it read (a reference, OFFSET or
        INDIRECT alike; see `calc`)."""
        data, row, col = self._cell(ref)
        if not isinstance(data.cells.get((row, col)), Formula):
            return False
        key = (data.name.lower(), row, col)
        self._calc.result(key)
        return key in self._calc.read_data

    def seed(self, seed: int) -> None:
        """Seed the generator RAND and RANDBETWEEN draw from, so that a run replays the same
        draws (an env seeds its workbook from the episode's seed)."""
        self._calc.rng.seed(seed)
        self._calc.invalidate()

    def values(self, rng: str | RangeRef) -> list[list[object]]:
        """The values of a range, a list per row (whole columns/rows: their used part)."""
        data, r = self._range(rng)
        return [[self.value(CellRef(c.row, c.col, data.name)) for c in row] for row in r.rows()]

    def contents(self, rng: str | RangeRef) -> list[list[object]]:
        """What was entered in a range, a list per row."""
        data, r = self._range(rng)
        return [[self.content(CellRef(c.row, c.col, data.name)) for c in row] for row in r.rows()]

    def cells(self, sheet: str | None = None) -> Iterator[tuple[CellRef, object]]:
        """The non-empty cells of a sheet (default: the first), row by row, with content."""
        data = self._data(sheet)
        for row, col in sorted(data.cells):
            c = data.cells[(row, col)]
            yield CellRef(row, col, data.name), (c.text if isinstance(c, Formula) else c)

    def used_range(self, sheet: str | None = None) -> tuple[int, int]:
        """(last used row, last used column) of a sheet, (0, 0) when it is empty: the
        used part is A1 to that corner (as the env shows a sheet). `bounds` gives the
        tight rectangle when the data does not start at A1."""
        return self._data(sheet).extent()

    def bounds(self, sheet: str | None = None) -> RangeRef | None:
        """The smallest range holding every non-empty cell of a sheet, None when empty."""
        data = self._data(sheet)
        if not data.cells:
            return None
        rows = [r for r, _ in data.cells]
        cols = [c for _, c in data.cells]
        return RangeRef(CellRef(min(rows), min(cols)), CellRef(max(rows), max(cols)), data.name)

    def recalculate(self) -> None:
        """Drop every cached value and compute every formula cell now (reads are lazy
        anyway; this is for timing and for callers that want all values at once)."""
        self._calc.invalidate()
        self._calc.compute_all()

    # --- rows --------------------------------------------------------------------------

    def insert_rows(self, sheet: str, at: int, count: int = 1) -> None:
        """Insert count empty rows before row `at` of sheet: cells at or below move down
        and every formula in the workbook is rewritten (`formulas.adjust_for_rows`)."""
        data = self._data(sheet)
        if not (1 <= at <= MAX_ROW and count >= 1):
            raise ValueError(f"insert_rows needs 1 <= at <= {MAX_ROW} and count >= 1, not at={at}, count={count}")
        if data.extent()[0] >= at and data.extent()[0] + count > MAX_ROW:
            raise ValueError("inserting these rows would push non-empty cells off the sheet")
        self._move_rows(data, at, count)

    def delete_rows(self, sheet: str, at: int, count: int = 1) -> None:
        """Delete rows at .. at+count-1 of sheet: cells below move up, references to the
        deleted cells become #REF!, ranges shrink."""
        data = self._data(sheet)
        if not (1 <= at <= MAX_ROW and count >= 1):
            raise ValueError(f"delete_rows needs 1 <= at <= {MAX_ROW} and count >= 1, not at={at}, count={count}")
        self._move_rows(data, at, -min(count, MAX_ROW - at + 1))

    def _move_rows(self, data: SheetData, at: int, count: int) -> None:
        moved: dict[tuple[int, int], object] = {}
        for (r, c), content in data.cells.items():
            if count > 0:
                moved[(r + count if r >= at else r, c)] = content
            elif r < at:
                moved[(r, c)] = content
            elif r >= at - count:
                moved[(r + count, c)] = content
        data.cells = moved
        for other in self._sheets.values():
            for pos, content in list(other.cells.items()):
                if isinstance(content, Formula) and content.ast is not None:
                    ast = adjust_rows_ast(content.ast, data.name, at, count, other.name)
                    if ast is not content.ast:
                        other.cells[pos] = make_formula(to_text(ast), ast, other.name)
        self._reindex()

    def _reindex(self) -> None:
        self._consts.clear()
        self._formulas.clear()
        for data in self._sheets.values():
            s = data.name.lower()
            data.formulas = {pos for pos, c in data.cells.items() if isinstance(c, Formula)}
            data.touched()
            for (r, c), content in data.cells.items():
                if isinstance(content, Formula):
                    self._formulas[(s, r, c)] = content
                else:
                    self._consts[(s, r, c)] = _evaluation_value(content)
        self._calc.invalidate()

    # --- whole workbooks ---------------------------------------------------------------

    def copy(self) -> Workbook:
        """An independent copy (compiled formulas are immutable and shared), with the
        state of RAND's generator and the cells marked as data (`mark_data`): a copy draws
        what the workbook would draw next, never from an unseeded generator."""
        wb = Workbook(())
        for key, data in self._sheets.items():
            new = SheetData(data.name)
            new.cells = dict(data.cells)
            wb._sheets[key] = new
        wb._calc.rng.setstate(self._calc.rng.getstate())
        wb._calc.data = self._calc.data
        wb._reindex()
        return wb

    @classmethod
    def from_rows(cls, sheets: Mapping[str, Sequence[Sequence[object]]]) -> Workbook:
        """A workbook from {sheet name: rows}, each row a list of cell contents from
        column A; None leaves a cell empty. `Workbook.from_rows({"Sheet1": [["x", 1],
        ["y", "=B1*2"]]})`."""
        wb = cls(list(sheets))
        for name, rows in sheets.items():
            data = wb._data(name)
            for i, row in enumerate(rows, start=1):
                for j, content in enumerate(row, start=1):
                    if content is not None:
                        if j > MAX_COL or i > MAX_ROW:
                            raise ValueError(f"sheet {name!r}: rows go to {MAX_ROW}, columns to {MAX_COL}")
                        wb.set(CellRef(i, j, data.name), content)
        return wb

    def __getstate__(self) -> dict[str, object]:
        """Pickle as what was entered (compiled formulas are closures, which do not
        pickle); formulas are compiled again when unpickled."""
        sheets = []
        for data in self._sheets.values():
            cells = {pos: (c.text if isinstance(c, Formula) else c) for pos, c in data.cells.items()}
            sheets.append((data.name, cells))
        return {"sheets": sheets}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(())  # type: ignore[misc]
        for name, cells in state["sheets"]:  # type: ignore[attr-defined]
            data = self._data(self.add_sheet(name).name)
            for (row, col), content in cells.items():
                if isinstance(content, str) and content.startswith("="):
                    self._set_lenient(data, row, col, content, canonical=False)
                else:
                    data.cells[(row, col)] = content
        self._reindex()

    def __deepcopy__(self, memo: dict[int, object]) -> Workbook:
        return self.copy()

    def __repr__(self) -> str:
        n = sum(len(d.cells) for d in self._sheets.values())
        return f"Workbook(sheets={self.sheet_names!r}, cells={n})"


__all__ = ["Sheet", "Workbook", "make_formula"]
