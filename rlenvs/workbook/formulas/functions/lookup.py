"""Lookup and reference functions: VLOOKUP, HLOOKUP, MATCH, LOOKUP, INDEX, XLOOKUP, XMATCH,
ROW, COLUMN, ROWS, COLUMNS, OFFSET, INDIRECT, and SINGLE (Excel 365's `@`).

Exact matching (MATCH type 0, VLOOKUP/HLOOKUP with FALSE, XLOOKUP mode 0) ignores case,
finds the first match, never matches a number with text ("1" is not 1: Excel's "number
stored as text" trap), and, for VLOOKUP/HLOOKUP/MATCH only, reads `* ? ~` in a text
lookup value as wildcards.

Approximate matching (MATCH type 1 / -1, VLOOKUP/HLOOKUP with TRUE or omitted, LOOKUP) assumes
the data sorted ascending (descending for -1) and returns the last entry <= (>= for -1)
the lookup value among the entries of the same kind (numbers, text or booleans; empty
cells are skipped), stopping at the first entry past it. On sorted data that is exactly
Excel's binary search; on unsorted data Excel's answer depends on its probe order, which
we do not imitate.

References as places: ROW, COLUMN, ROWS, COLUMNS and OFFSET's anchor take where a written
reference points, not its values (`base.FunctionSpec.positions`), so `=ROW(C5)` and
`=OFFSET(C5,-1,0)+B5` in C5 are not circular (in Excel and LibreOffice neither). OFFSET and
INDIRECT return the cells they compute as a reference (a `Grid` with its origin), read when
the formula runs: a cycle through them is found then (`calc`), as #CIRCULAR!.

Where Excel and LibreOffice differ: an OFFSET off the sheet, or with a height or width below
1, is #REF! in Excel (followed here) and #VALUE! in LibreOffice; a reference to several cells
shown in one cell is its top-left value here (`grid.top_left`), #VALUE! in LibreOffice.
"""

from __future__ import annotations

import re
from typing import Any

from rlenvs.workbook.cells import MAX_COL, MAX_ROW, parse_range
from rlenvs.workbook.formulas.functions.base import (
    as_grid,
    boolean,
    check,
    function,
    integer,
    single,
)
from rlenvs.workbook.formulas.functions.criteria import text_matches
from rlenvs.workbook.formulas.grid import Grid, Place, Value
from rlenvs.workbook.values import (
    NA,
    REF,
    VALUE,
    ErrorValue,
    EvalError,
    Scalar,
    approx_equal,
    compare,
    is_number,
)


def _key(v: Scalar) -> Scalar:
    v = check(v)
    return 0.0 if v is None else v


def _kind(v: Scalar) -> int:
    return 2 if isinstance(v, bool) else 1 if isinstance(v, str) else 0 if is_number(v) else -1


def exact_index(x: Scalar, seq: list[Scalar], wildcards: bool = True) -> int | None:
    """Index of the first entry equal to x (see the module docstring), or None."""
    if isinstance(x, str):
        if wildcards:
            return next((i for i, v in enumerate(seq) if isinstance(v, str) and text_matches(x, v)), None)
        low = x.lower()
        return next((i for i, v in enumerate(seq) if isinstance(v, str) and v.lower() == low), None)
    if isinstance(x, bool):
        return next((i for i, v in enumerate(seq) if isinstance(v, bool) and v == x), None)
    xf = float(x)  # type: ignore[arg-type]
    return next((i for i, v in enumerate(seq) if is_number(v) and approx_equal(float(v), xf)), None)  # type: ignore[arg-type]


def approx_index(x: Scalar, seq: list[Scalar], descending: bool = False) -> int | None:
    """Index of the last entry <= x (>= x when descending) of x's kind before the first
    entry past x, or None."""
    kind, last = _kind(x), None
    for i, v in enumerate(seq):
        if _kind(v) != kind:
            continue
        c = compare(v, x)
        if (c <= 0) if not descending else (c >= 0):  # type: ignore[operator]
            last = i
        else:
            break
    return last


def _find(x: Scalar, seq: list[Scalar], approximate: bool) -> int:
    i = approx_index(x, seq) if approximate else exact_index(x, seq)
    if i is None:
        raise EvalError(NA)
    return i


@function("VLOOKUP", min_args=3, max_args=4, scalar=(0, 2, 3))
def vlookup(lookup: Scalar, table: Value, col: Scalar, approximate: Scalar = True) -> Scalar:
    """The value in column col (1-based) of table, in the row whose first cell matches
    lookup: exactly for FALSE/0, else approximately (sorted first column). #N/A when
    nothing matches, #VALUE! for col < 1, #REF! for col past the table."""
    x, g, j = _key(lookup), as_grid(table), integer(col)
    if j < 1:
        raise EvalError(VALUE)
    if j > g.width:
        raise EvalError(REF)
    i = _find(x, g.column(0), boolean(approximate))
    return g.rows[i][j - 1]


@function("HLOOKUP", min_args=3, max_args=4, scalar=(0, 2, 3))
def hlookup(lookup: Scalar, table: Value, row: Scalar, approximate: Scalar = True) -> Scalar:
    """VLOOKUP across: the value in row `row` of table, in the column whose first cell
    matches lookup."""
    x, g, i = _key(lookup), as_grid(table), integer(row)
    if i < 1:
        raise EvalError(VALUE)
    if i > g.height:
        raise EvalError(REF)
    j = _find(x, g.rows[0], boolean(approximate))
    return g.rows[i - 1][j]


def _vector(v: Value) -> list[Scalar] | None:
    g = as_grid(v)
    if g.width == 1:
        return g.column(0)
    if g.height == 1:
        return list(g.rows[0])
    return None


@function("MATCH", min_args=2, max_args=3, scalar=(0, 2))
def match(lookup: Scalar, array: Value, match_type: Scalar = 1.0) -> float:
    """1-based position of lookup in a one-row or one-column array: type 0 exact (first
    match, wildcards), 1 (default) largest entry <= lookup in ascending data, -1 smallest
    entry >= lookup in descending data. #N/A when none (or for a 2-D array)."""
    x = _key(lookup)
    seq = _vector(array)
    if seq is None:
        raise EvalError(NA)
    t = integer(match_type) if match_type is not None else 0
    if t == 0:
        i = exact_index(x, seq)
    else:
        i = approx_index(x, seq, descending=t < 0)
    if i is None:
        raise EvalError(NA)
    return float(i + 1)


@function("LOOKUP", min_args=2, max_args=3, scalar=(0,))
def lookup(value: Scalar, lookup_vector: Value, result_vector: Value = None) -> Scalar:
    """The entry of result_vector at the position of the last entry <= value in
    lookup_vector (approximate matching, see the module docstring: errors are skipped, so
    `LOOKUP(2,1/(A2:A9=B2),C2:C9)` finds the last row where A equals B2). Without
    result_vector, the array form: the first column of a tall array (or row of a wide one)
    is searched and its last column (row) returned. #N/A when nothing matches or the
    result vector is shorter."""
    x = _key(value)
    if result_vector is None:
        g = as_grid(lookup_vector)
        tall = g.height >= g.width
        seq, out = (g.column(0), g.column(g.width - 1)) if tall else (list(g.rows[0]), list(g.rows[-1]))
    else:
        keys, results = _vector(lookup_vector), _vector(result_vector)
        if keys is None or results is None:
            raise EvalError(NA)
        seq, out = keys, results
    i = approx_index(x, seq)
    if i is None or i >= len(out):
        raise EvalError(NA)
    return out[i]


def _slice(g: Grid, rows: range, cols: range) -> Grid:
    origin = None
    if g.origin is not None:
        origin = (g.origin[0], g.origin[1] + rows.start, g.origin[2] + cols.start)
    return Grid([[g.rows[i][j] for j in cols] for i in rows], g.is_ref, origin)


@function("INDEX", min_args=2, max_args=3, scalar=(1, 2))
def index(array: Value, row: Scalar, col: Scalar = None) -> Value:
    """The entry at (row, col), 1-based. In a one-row or one-column array a single number
    picks along it. Row 0 (or col 0) gives the whole column (or row). #REF! outside the
    array, #VALUE! for a negative index."""
    g = as_grid(array)
    i = integer(row)
    j = None if col is None else integer(col)
    if j is None:
        if g.height == 1:
            i, j = 1, i
        elif g.width == 1:
            j = 1
        else:
            j = 0
    if i < 0 or j < 0:
        raise EvalError(VALUE)
    if i > g.height or j > g.width:
        raise EvalError(REF)
    rows = range(g.height) if i == 0 else range(i - 1, i)
    cols = range(g.width) if j == 0 else range(j - 1, j)
    if len(rows) == 1 and len(cols) == 1:
        return g.rows[rows.start][cols.start]
    return _slice(g, rows, cols)


def _xfind(x: Scalar, seq: list[Scalar], mode: int, search: int) -> int | None:
    """XLOOKUP's and XMATCH's search: the index of the match of x in seq, or None. Modes 0
    exact, 2 wildcards, -1 exact or next smaller, 1 exact or next larger; search 1 first to
    last, -1 last to first (±2, binary search, read as ±1); #VALUE! for another mode."""
    order = list(range(len(seq)))
    if search < 0:
        order.reverse()
    if mode == 2 or mode == 0:
        return next((i for i in order if exact_index(x, [seq[i]], wildcards=mode == 2) is not None), None)
    if mode not in (-1, 1):
        raise EvalError(VALUE)
    best = None
    for i in order:
        v = seq[i]
        if _kind(v) != _kind(x):
            continue
        c = compare(v, x)
        # x is a lookup key (`_key`: never an error) and v is of its kind, so no error comes back
        assert not isinstance(c, ErrorValue)
        if c == 0:
            return i
        if (c < 0 if mode == -1 else c > 0) and (best is None or compare(v, seq[best]) == (1 if mode == -1 else -1)):
            best = i
    return best


@function("XMATCH", min_args=2, max_args=4, scalar=(0, 2, 3))
def xmatch(lookup: Scalar, lookup_array: Value, match_mode: Scalar = 0.0, search_mode: Scalar = 1.0) -> float:
    """The 1-based position of lookup in a one-row or one-column array, as XLOOKUP finds it
    (exact by default, unsorted data fine; modes as XLOOKUP's); #N/A when nothing
    matches, #VALUE! for a 2-D array."""
    seq = _vector(lookup_array)
    if seq is None:
        raise EvalError(VALUE)
    found = _xfind(_key(lookup), seq, integer(match_mode), integer(search_mode))
    if found is None:
        raise EvalError(NA)
    return float(found + 1)


@function("XLOOKUP", min_args=3, max_args=6, scalar=(0, 3, 4, 5))
def xlookup(
    lookup: Scalar,
    lookup_array: Value,
    return_array: Value,
    if_not_found: Scalar = NA,
    match_mode: Scalar = 0.0,
    search_mode: Scalar = 1.0,
) -> Value:
    """The entry of return_array beside the match of lookup in lookup_array. match_mode 0
    exact (default), -1 exact or next smaller, 1 exact or next larger, 2 wildcards;
    search_mode 1 first to last, -1 last to first (±2, binary search, are read as ±1).
    Unsorted data is fine. if_not_found (default #N/A) when nothing matches."""
    x = _key(lookup)
    seq = _vector(lookup_array)
    ret = as_grid(return_array)
    if seq is None:
        raise EvalError(VALUE)
    vertical = as_grid(lookup_array).width == 1
    if (ret.height if vertical else ret.width) != len(seq):
        raise EvalError(VALUE)
    found = _xfind(x, seq, integer(match_mode), integer(search_mode))
    if found is None:
        return single(if_not_found)
    if vertical:
        return _slice(ret, range(found, found + 1), range(ret.width)) if ret.width > 1 else ret.rows[found][0]
    return _slice(ret, range(ret.height), range(found, found + 1)) if ret.height > 1 else ret.rows[0][found]


def _place(ref: Value) -> Place:
    """Where a reference argument points: a written reference arrives as a Place, a computed
    one (OFFSET, INDIRECT, INDEX of a range) as a Grid with its origin; anything else is not
    a reference (#VALUE!)."""
    if isinstance(ref, Place):
        return ref
    if isinstance(ref, Grid) and ref.origin is not None:
        sheet, top, left = ref.origin
        return Place(sheet, top, left, ref.height, ref.width)
    raise EvalError(VALUE)


@function("ROW", max_args=1, scalar=(), ctx=True, positions=(0,))
def row(ctx: Any, ref: Value = None) -> Value:
    """Row number of a reference (of the formula's cell when omitted); a column of row
    numbers for a taller range."""
    if ref is None:
        return float(ctx.row)
    p = _place(ref)
    if p.height == 1:
        return float(p.row)
    return Grid([[float(p.row + i)] for i in range(p.height)])


@function("COLUMN", max_args=1, scalar=(), ctx=True, positions=(0,))
def column(ctx: Any, ref: Value = None) -> Value:
    """Column number of a reference (of the formula's cell when omitted); a row of
    column numbers for a wider range."""
    if ref is None:
        return float(ctx.col)
    p = _place(ref)
    if p.width == 1:
        return float(p.col)
    return Grid([[float(p.col + j) for j in range(p.width)]])


@function("SINGLE", min_args=1, max_args=1, scalar=(), ctx=True, positions=(0,), dynamic=True)
def implicit_intersection(ctx: Any, ref: Value) -> Scalar:
    """Excel 365's `@` (the parser reads `@C:C` as `SINGLE(C:C)`, as Excel stores it): of a
    reference, its cell in the formula's row (a column of cells), column (a row of cells)
    or both, read when the formula runs; #VALUE! where the formula's row or column is
    outside it. Of an array or a value, its first value."""
    if isinstance(ref, Place):
        row = ref.row if ref.height == 1 else ctx.row if ref.row <= ctx.row < ref.row + ref.height else None
        col = ref.col if ref.width == 1 else ctx.col if ref.col <= ctx.col < ref.col + ref.width else None
        if row is None or col is None:
            raise EvalError(VALUE)
        return ctx.value((ref.sheet, row, col))
    return ref.rows[0][0] if isinstance(ref, Grid) else ref


def _extent(array: Value, ctx: Any) -> tuple[int, int]:
    """(height, width) of a range or array; a written whole column or row counts its used
    part, as the range's values would (`Context.bounds`), without reading them."""
    if isinstance(array, Place):
        bounds = ctx.bounds(
            array.sheet, array.row, array.col, array.row + array.height - 1, array.col + array.width - 1
        )
        if bounds is None:
            raise EvalError(REF)
        r1, c1, r2, c2 = bounds
        return r2 - r1 + 1, c2 - c1 + 1
    g = as_grid(array)
    return g.height, g.width


@function("ROWS", min_args=1, max_args=1, scalar=(), ctx=True, positions=(0,))
def rows(ctx: Any, array: Value) -> float:
    """Number of rows of a range or array (whole columns count only their used rows)."""
    return float(_extent(array, ctx)[0])


@function("COLUMNS", min_args=1, max_args=1, scalar=(), ctx=True, positions=(0,))
def columns(ctx: Any, array: Value) -> float:
    """Number of columns of a range or array."""
    return float(_extent(array, ctx)[1])


def _cells(ctx: Any, sheet: str, top: int, left: int, height: int, width: int) -> Value:
    """The cells of a rectangle as a reference, or #REF! where it leaves the sheet."""
    bottom, right = top + height - 1, left + width - 1
    if height < 1 or width < 1 or top < 1 or left < 1 or bottom > MAX_ROW or right > MAX_COL:
        raise EvalError(REF)
    return ctx.grid(sheet, top, left, bottom, right)


@function("OFFSET", min_args=3, max_args=5, scalar=(1, 2, 3, 4), ctx=True, positions=(0,), dynamic=True)
def offset(
    ctx: Any, reference: Value, rows: Scalar, cols: Scalar, height: Scalar = None, width: Scalar = None
) -> Value:
    """The reference `rows` down and `cols` right of `reference` (negative: up, left), as
    tall and wide as it unless `height`/`width` are given. The anchor is a place: OFFSET of
    the formula's own cell is not circular. #REF! off the sheet or for a height or width
    below 1."""
    p = _place(reference)
    h = p.height if height is None else integer(height)
    w = p.width if width is None else integer(width)
    return _cells(ctx, p.sheet, p.row + integer(rows), p.col + integer(cols), h, w)


_R1C1 = re.compile(r"(?:(?:'((?:[^']|'')+)'|([^'!]+))!)?R(\[-?\d+\]|\d+)?C(\[-?\d+\]|\d+)?", re.IGNORECASE)


def _r1c1_part(text: str | None, here: int) -> int:
    if not text:
        return here
    return here + int(text[1:-1]) if text.startswith("[") else int(text)


@function("INDIRECT", min_args=1, max_args=2, ctx=True, dynamic=True)
def indirect(ctx: Any, ref_text: Scalar, a1: Scalar = True) -> Value:
    """The reference a text names: A1 style by default ("B2", "Data!$A$1:C9", "'Q1 Data'!B2",
    "A:A"), R1C1 style when a1 is FALSE ("R2C3", "R[-1]C" relative to the formula's cell).
    The cells are read when the formula runs. #REF! for text that names no reference, or a
    sheet that does not exist."""
    text = check(ref_text)
    if not isinstance(text, str) or not text or text != text.strip():
        raise EvalError(REF)
    if a1 is None or boolean(a1):
        try:
            r = parse_range(text)
        except ValueError:
            raise EvalError(REF) from None
        sheet = r.sheet.lower() if r.sheet else ctx.sheet
        return _cells(ctx, sheet, r.start.row, r.start.col, r.height, r.width)
    m = _R1C1.fullmatch(text)
    if m is None:
        raise EvalError(REF)
    name = m.group(1).replace("''", "'") if m.group(1) else m.group(2)
    sheet = name.lower() if name else ctx.sheet
    return _cells(ctx, sheet, _r1c1_part(m.group(3), ctx.row), _r1c1_part(m.group(4), ctx.col), 1, 1)
