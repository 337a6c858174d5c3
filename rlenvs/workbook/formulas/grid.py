"""Two-dimensional values (ranges and arrays) and the operators over values.

A `Grid` is what a range reference, an array constant or an array computation evaluates
to. `is_ref` remembers whether it came from cells: Excel's aggregate functions skip text
and booleans found in references and arrays but count them when typed as arguments, and
`origin` (sheet, top row, left column) lets ROW/COLUMN and SUMIF's resizing find the
cells again.

Operators work element by element when an operand is a grid, broadcasting a single row,
column or value over the other operand; positions that exist in only one operand give
#N/A, as in Excel (`{1,2,3}+{1,2}` is `{2,4,#N/A}`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import final

from rlenvs.workbook.values import (
    DIV0,
    NA,
    NUM,
    VALUE,
    ErrorValue,
    Scalar,
    approx_add,
    approx_equal,
    compare,
    to_number,
    to_text,
)

MAX_TEXT = 32767
"""Excel's limit on the length of text in a cell; longer results are #VALUE!."""


@final  # no subclasses: `type(v) is Grid` then tells a grid from a scalar, for the checker too
class Grid:
    """A rectangle of scalar values, `rows[i][j]`, at least 1x1."""

    __slots__ = ("is_ref", "origin", "rows")

    def __init__(self, rows: list[list[Scalar]], is_ref: bool = False, origin: tuple[str, int, int] | None = None):
        self.rows = rows
        self.is_ref = is_ref
        self.origin = origin

    @property
    def height(self) -> int:
        return len(self.rows)

    @property
    def width(self) -> int:
        return len(self.rows[0])

    def values(self) -> Iterator[Scalar]:
        """Every value, row by row."""
        for row in self.rows:
            yield from row

    def column(self, j: int) -> list[Scalar]:
        return [row[j] for row in self.rows]

    def __repr__(self) -> str:
        return f"Grid({self.rows!r}, is_ref={self.is_ref})"


class Place:
    """Where a reference written as a position argument points (ROW's, OFFSET's anchor):
    `sheet` (lower case), top row, left column, height and width, without its values. Only
    the functions that take positions ever see one."""

    __slots__ = ("col", "height", "row", "sheet", "width")

    def __init__(self, sheet: str, row: int, col: int, height: int = 1, width: int = 1):
        self.sheet, self.row, self.col, self.height, self.width = sheet, row, col, height, width

    def __repr__(self) -> str:
        return f"Place({self.sheet!r}, {self.row}, {self.col}, {self.height}, {self.width})"


Value = Scalar | Grid


def broadcast(fn: Callable[..., Scalar], args: list[Value]) -> Value:
    """fn applied element by element over the grids among args (scalars repeat)."""
    grids = [a for a in args if isinstance(a, Grid)]
    height = max(g.height for g in grids)
    width = max(g.width for g in grids)
    out: list[list[Scalar]] = []
    for i in range(height):
        row: list[Scalar] = []
        for j in range(width):
            elems: list[Scalar] = []
            missing = False
            for a in args:
                if isinstance(a, Grid):
                    ii = 0 if a.height == 1 else i
                    jj = 0 if a.width == 1 else j
                    if ii >= a.height or jj >= a.width:
                        missing = True
                        break
                    elems.append(a.rows[ii][jj])
                else:
                    elems.append(a)
            row.append(NA if missing else fn(*elems))
        out.append(row)
    return Grid(out)


def _finite(x: float) -> float | ErrorValue:
    return x if x - x == 0.0 else NUM  # False for inf and nan


def _numbers(a: Scalar, b: Scalar) -> tuple[float, float] | ErrorValue:
    x = to_number(a)
    if isinstance(x, ErrorValue):
        return x
    y = to_number(b)
    if isinstance(y, ErrorValue):
        return y
    return x, y


def op_add(a: Scalar, b: Scalar) -> Scalar:
    if type(a) is float and type(b) is float:
        return _finite(approx_add(a, b))
    p = _numbers(a, b)
    return p if isinstance(p, ErrorValue) else _finite(approx_add(p[0], p[1]))


def op_sub(a: Scalar, b: Scalar) -> Scalar:
    if type(a) is float and type(b) is float:
        return _finite(approx_add(a, -b))
    p = _numbers(a, b)
    return p if isinstance(p, ErrorValue) else _finite(approx_add(p[0], -p[1]))


def op_mul(a: Scalar, b: Scalar) -> Scalar:
    if type(a) is float and type(b) is float:
        return _finite(a * b)
    p = _numbers(a, b)
    return p if isinstance(p, ErrorValue) else _finite(p[0] * p[1])


def op_div(a: Scalar, b: Scalar) -> Scalar:
    if type(a) is float and type(b) is float and b != 0:
        return _finite(a / b)
    p = _numbers(a, b)
    if isinstance(p, ErrorValue):
        return p
    if p[1] == 0:
        return DIV0
    return _finite(p[0] / p[1])


def power(x: float, y: float) -> Scalar:
    """x^y as Excel computes it: 0^0 and roots of negative numbers are #NUM!, 0 to a
    negative power is #DIV/0!, overflow is #NUM!."""
    if x == 0:
        if y == 0:
            return NUM
        if y < 0:
            return DIV0
        return 0.0
    try:
        return _finite(math.pow(x, y))
    except (ValueError, OverflowError):
        return NUM


def op_pow(a: Scalar, b: Scalar) -> Scalar:
    p = _numbers(a, b)
    return p if isinstance(p, ErrorValue) else power(p[0], p[1])


def op_concat(a: Scalar, b: Scalar) -> Scalar:
    x = to_text(a)
    if isinstance(x, ErrorValue):
        return x
    y = to_text(b)
    if isinstance(y, ErrorValue):
        return y
    if len(x) + len(y) > MAX_TEXT:
        return VALUE
    return x + y


def _comparison(test: Callable[[int], bool]) -> Callable[[Scalar, Scalar], Scalar]:
    def op(a: Scalar, b: Scalar) -> Scalar:
        if type(a) is float and type(b) is float:
            return test(0 if approx_equal(a, b) else (-1 if a < b else 1))
        c = compare(a, b)
        return c if isinstance(c, ErrorValue) else test(c)

    return op


BINARY_OPS: dict[str, Callable[[Scalar, Scalar], Scalar]] = {
    "+": op_add,
    "-": op_sub,
    "*": op_mul,
    "/": op_div,
    "^": op_pow,
    "&": op_concat,
    "=": _comparison(lambda c: c == 0),
    "<>": _comparison(lambda c: c != 0),
    "<": _comparison(lambda c: c < 0),
    ">": _comparison(lambda c: c > 0),
    "<=": _comparison(lambda c: c <= 0),
    ">=": _comparison(lambda c: c >= 0),
}


def binary(op: Callable[[Scalar, Scalar], Scalar], a: Value, b: Value) -> Value:
    """A binary operator over scalars or grids."""
    if type(a) is Grid or type(b) is Grid:
        return broadcast(op, [a, b])
    return op(a, b)


def negate(a: Scalar) -> Scalar:
    x = to_number(a)
    return x if isinstance(x, ErrorValue) else -x


def percent(a: Scalar) -> Scalar:
    x = to_number(a)
    return x if isinstance(x, ErrorValue) else x / 100


def as_array(a: Value) -> Value:
    """A reference's values as an array (unary plus: `+B2:B9`); anything else unchanged.
    Functions that refuse a range of several cells (EOMONTH) take the array."""
    return Grid(a.rows) if isinstance(a, Grid) and a.is_ref else a


def unary(op: Callable[[Scalar], Scalar], a: Value) -> Value:
    if type(a) is Grid:
        return broadcast(op, [a])
    return op(a)


def top_left(v: Value) -> Scalar:
    """What a cell shows for a formula's result: a grid shows its top-left value (Excel
    365 would spill the rest into the neighbours; we do not), an empty reference shows 0
    (as `=A1` of an empty A1 does), a non-finite number is #NUM!."""
    if type(v) is float:
        return v if v - v == 0.0 else NUM
    if type(v) is Grid:
        v = v.rows[0][0]
    if v is None:
        return 0.0
    if type(v) is float and not math.isfinite(v):
        return NUM
    return v
