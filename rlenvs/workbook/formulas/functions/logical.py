"""Logical and information functions: IF, IFS, IFERROR, IFNA, AND, OR, XOR, NOT, TRUE,
FALSE, SWITCH, CHOOSE, NA, ISBLANK, ISNUMBER, ISTEXT, ISNONTEXT, ISLOGICAL, ISERROR, ISERR,
ISNA, N.

Arguments are evaluated before the function runs (no short-circuit); that changes
nothing visible, because an error in a branch that is not chosen is not returned.
"""

from __future__ import annotations

from rlenvs.workbook.formulas.functions.base import (
    boolean,
    check,
    function,
    integer,
    single,
)
from rlenvs.workbook.formulas.grid import Grid, Value, broadcast
from rlenvs.workbook.values import (
    NA,
    VALUE,
    ErrorValue,
    EvalError,
    Scalar,
    compare,
    is_number,
    to_bool,
)


def _if(cond: Scalar, then: Scalar, otherwise: Scalar) -> Scalar:
    c = to_bool(cond)
    if isinstance(c, ErrorValue):
        return c
    return then if c else otherwise


@function("IF", min_args=2, max_args=3, scalar=())
def if_(cond: Value, then: Value, otherwise: Value = False) -> Value:
    """then when cond is TRUE (a non-zero number, or the text "TRUE"), else otherwise
    (default FALSE). An array condition chooses element by element."""
    if isinstance(cond, Grid):
        if cond.height == 1 and cond.width == 1:
            cond = cond.rows[0][0]
        else:
            return broadcast(_if, [cond, then, otherwise])
    return then if boolean(cond) else otherwise


def _unless_error(only_na: bool, value: Scalar, fallback: Scalar) -> Scalar:
    if isinstance(value, ErrorValue) and (not only_na or value == NA):
        return fallback
    return value


@function("IFERROR", min_args=2, max_args=2, scalar=())
def iferror(value: Value, value_if_error: Value) -> Value:
    """value, or value_if_error when value is any error (element by element for arrays)."""
    if isinstance(value, Grid):
        return broadcast(lambda v, f: _unless_error(False, v, f), [value, value_if_error])
    return _unless_error(False, value, single(value_if_error))


@function("IFNA", min_args=2, max_args=2, scalar=())
def ifna(value: Value, value_if_na: Value) -> Value:
    """value, or value_if_na when value is #N/A."""
    if isinstance(value, Grid):
        return broadcast(lambda v, f: _unless_error(True, v, f), [value, value_if_na])
    return _unless_error(True, value, single(value_if_na))


def _logicals(args: tuple[Value, ...]) -> list[bool]:
    out: list[bool] = []
    for a in args:
        if isinstance(a, Grid):
            for v in a.values():
                if isinstance(v, ErrorValue):
                    raise EvalError(v)
                if isinstance(v, bool) or is_number(v):
                    out.append(bool(v))
        elif a is not None:
            out.append(boolean(a))
    if not out:
        raise EvalError(VALUE)
    return out


@function("AND", min_args=1, scalar=())
def and_(*args: Value) -> bool:
    """TRUE when every logical value is TRUE; text and empty cells in ranges are skipped;
    #VALUE! when there are no logical values at all."""
    return all(_logicals(args))


@function("OR", min_args=1, scalar=())
def or_(*args: Value) -> bool:
    """TRUE when any logical value is TRUE (same reading of arguments as AND)."""
    return any(_logicals(args))


@function("XOR", min_args=1, scalar=())
def xor(*args: Value) -> bool:
    """TRUE when an odd number of the logical values are TRUE."""
    return sum(_logicals(args)) % 2 == 1


@function("NOT", min_args=1, max_args=1)
def not_(value: Scalar) -> bool:
    """The opposite logical value."""
    return not boolean(value)


@function("TRUE", max_args=0)
def true() -> bool:
    """TRUE."""
    return True


@function("FALSE", max_args=0)
def false() -> bool:
    """FALSE."""
    return False


@function("IFS", min_args=2, scalar=())
def ifs(*args: Value) -> Value:
    """The value after the first TRUE condition; #N/A when none is TRUE."""
    if len(args) % 2:
        raise EvalError(VALUE)
    for i in range(0, len(args), 2):
        if boolean(single(args[i])):
            return args[i + 1]
    raise EvalError(NA)


@function("SWITCH", min_args=3, scalar=())
def switch(expr: Value, *args: Value) -> Value:
    """The result paired with the first value equal to expr, else the default (a last
    unpaired argument), else #N/A."""
    x = single(expr)
    if isinstance(x, ErrorValue):
        raise EvalError(x)
    for i in range(0, len(args) - 1, 2):
        if compare(x, single(args[i])) == 0:
            return args[i + 1]
    if len(args) % 2:
        return args[-1]
    raise EvalError(NA)


@function("CHOOSE", min_args=2, scalar=())
def choose(index: Value, *values: Value) -> Value:
    """The index-th value (1-based); #VALUE! when index is out of range. An array of
    indexes picks element by element, each chosen value broadcast as operators broadcast:
    `CHOOSE({1,2},Catalog!D2:D12,Catalog!C2:C12)` is the two columns side by side, the
    table of the left lookup `VLOOKUP(B2,CHOOSE({1,2},keys,prices),2,FALSE)` (as in Excel
    and LibreOffice; taking each element's value alone gave a row of two top-left cells)."""
    if not isinstance(index, Grid) or (index.height == 1 and index.width == 1):
        i = integer(index)
        if not 1 <= i <= len(values):
            raise EvalError(VALUE)
        return values[i - 1]
    picked: list[int] = []
    for v in index.values():
        i = integer(v) if not isinstance(v, ErrorValue) else 0
        if 1 <= i <= len(values) and i not in picked:
            picked.append(i)

    def pick(k: Scalar, *chosen: Scalar) -> Scalar:
        if isinstance(k, ErrorValue):
            return k
        try:
            i = integer(k)
        except EvalError as error:
            return error.error
        return chosen[picked.index(i)] if i in picked else VALUE

    return broadcast(pick, [index, *(values[i - 1] for i in picked)])


@function("NA", max_args=0)
def na() -> ErrorValue:
    """The #N/A error."""
    return NA


@function("ISBLANK", min_args=1, max_args=1)
def isblank(value: Scalar) -> bool:
    """TRUE for an empty cell (not for "")."""
    return value is None


@function("ISNUMBER", min_args=1, max_args=1)
def isnumber(value: Scalar) -> bool:
    """TRUE for a number (dates are numbers)."""
    return is_number(value)


@function("ISTEXT", min_args=1, max_args=1)
def istext(value: Scalar) -> bool:
    """TRUE for text."""
    return isinstance(value, str)


@function("ISNONTEXT", min_args=1, max_args=1)
def isnontext(value: Scalar) -> bool:
    """TRUE for anything but text."""
    return not isinstance(value, str)


@function("ISLOGICAL", min_args=1, max_args=1)
def islogical(value: Scalar) -> bool:
    """TRUE for TRUE or FALSE."""
    return isinstance(value, bool)


@function("ISERROR", min_args=1, max_args=1)
def iserror(value: Scalar) -> bool:
    """TRUE for any error value."""
    return isinstance(value, ErrorValue)


@function("ISERR", min_args=1, max_args=1)
def iserr(value: Scalar) -> bool:
    """TRUE for any error value except #N/A."""
    return isinstance(value, ErrorValue) and value != NA


@function("ISNA", min_args=1, max_args=1)
def isna(value: Scalar) -> bool:
    """TRUE for #N/A."""
    return value == NA


@function("N", min_args=1, max_args=1)
def n(value: Scalar) -> float:
    """A value as a number: numbers (and dates) as they are, TRUE 1, FALSE 0, text and an
    empty cell 0; an error stays an error. `=N(C1)+B2` starts a running total under a text
    header."""
    check(value)
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return float(value) if is_number(value) else 0.0  # type: ignore[arg-type]
