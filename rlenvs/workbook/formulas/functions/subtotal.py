"""SUBTOTAL and AGGREGATE: an aggregate chosen by its number, over ranges that may hold
other subtotals.

Both leave out the cells of their ranges that are themselves SUBTOTAL or AGGREGATE results
(a grand total over a column of amounts and their subtotals counts each amount once), as
Excel does; AGGREGATE's options choose that and whether error values are left out too:
0-3 leave out nested subtotals (the default, 0), 4-7 do not; 2, 3, 6 and 7 leave out errors.
Hidden rows, which options 1, 3, 5 and 7 and SUBTOTAL's 101-111 would leave out, do not
exist here, so those read like their plain forms.

Function numbers, as in Excel: 1 AVERAGE, 2 COUNT, 3 COUNTA, 4 MAX, 5 MIN, 6 PRODUCT, 9 SUM
(SUBTOTAL also as 101-109); AGGREGATE also 12 MEDIAN, 14 LARGE and 15 SMALL (k as its fourth
argument). The standard deviations and variances (7, 8, 10, 11), MODE and the percentiles
are not provided: #VALUE!, never a guess. Each number runs the engine's own function.
"""

from __future__ import annotations

from typing import Any

from rlenvs.workbook.formulas.functions.base import (
    FUNCTIONS,
    function,
    integer,
    single,
)
from rlenvs.workbook.formulas.grid import Grid, Value
from rlenvs.workbook.values import VALUE, ErrorValue, EvalError, Scalar

NESTED = frozenset({"SUBTOTAL", "AGGREGATE"})
BY_NUMBER = {1: "AVERAGE", 2: "COUNT", 3: "COUNTA", 4: "MAX", 5: "MIN", 6: "PRODUCT", 9: "SUM"}
AGGREGATE_ONLY = {12: "MEDIAN", 14: "LARGE", 15: "SMALL"}


def _without(ctx: Any, arg: Value, nested: bool, errors: bool) -> Value:
    """The argument with the cells that are SUBTOTAL or AGGREGATE results (`nested`) and
    the error values (`errors`) made empty."""
    if not isinstance(arg, Grid):
        return arg
    rows = [list(row) for row in arg.rows]
    origin = arg.origin if arg.is_ref else None
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if (errors and isinstance(v, ErrorValue)) or (
                nested and origin is not None and ctx.formula_calls((origin[0], origin[1] + i, origin[2] + j), NESTED)
            ):
                row[j] = None
    return Grid(rows, arg.is_ref, arg.origin)


@function("SUBTOTAL", min_args=2, scalar=(0,), ctx=True)
def subtotal(ctx: Any, function_num: Scalar, *refs: Value) -> Value:
    """The aggregate numbered function_num (module docstring) of the ranges, leaving out
    cells that are SUBTOTAL or AGGREGATE results: SUBTOTAL(9,B2:B20) is their SUM."""
    k = integer(function_num)
    name = BY_NUMBER.get(k - 100 if k > 100 else k)
    if name is None:
        raise EvalError(VALUE)
    return FUNCTIONS[name].impl(*(_without(ctx, r, True, False) for r in refs))


@function("AGGREGATE", min_args=3, scalar=(0, 1), ctx=True)
def aggregate(ctx: Any, function_num: Scalar, options: Scalar, *args: Value) -> Value:
    """The aggregate numbered function_num (module docstring) of the ranges, leaving out
    what `options` says: AGGREGATE(9,4,B2:B20) is their SUM, AGGREGATE(9,6,B2:B20) the SUM
    of the numbers among errors, AGGREGATE(14,6,B2:B20,2) the second largest."""
    k = integer(function_num)
    option = 0 if options is None else integer(options)
    if not 0 <= option <= 7:
        raise EvalError(VALUE)
    nested, errors = option <= 3, option in (2, 3, 6, 7)
    if k in BY_NUMBER:
        return FUNCTIONS[BY_NUMBER[k]].impl(*(_without(ctx, a, nested, errors) for a in args))
    if k == 12:
        return FUNCTIONS["MEDIAN"].impl(*(_without(ctx, a, nested, errors) for a in args))
    if k in (14, 15) and len(args) == 2:
        return FUNCTIONS[AGGREGATE_ONLY[k]].impl(_without(ctx, args[0], nested, errors), single(args[1]))
    raise EvalError(VALUE)
