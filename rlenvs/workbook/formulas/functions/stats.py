"""Aggregates: SUM, AVERAGE, MIN, MAX, COUNT, COUNTA, COUNTBLANK, PRODUCT, MEDIAN,
LARGE, SMALL, SUMPRODUCT, RANK/RANK.EQ, RANK.AVG.

Excel's rule for what counts (see `base.numbers`): inside ranges and arrays only numbers;
typed arguments are coerced. COUNT and COUNTA never propagate errors (they count).
"""

from __future__ import annotations

import math

from rlenvs.workbook.formulas.functions.base import (
    as_grid,
    finite,
    function,
    num,
    numbers,
)
from rlenvs.workbook.formulas.grid import Grid, Value
from rlenvs.workbook.values import (
    DIV0,
    NA,
    NUM,
    VALUE,
    ErrorValue,
    EvalError,
    is_number,
    text_to_number,
)


@function("SUM", min_args=1, scalar=())
def sum_(*args: Value) -> float:
    """Sum of the numbers (text and booleans in ranges are skipped)."""
    return finite(math.fsum(numbers(args)))


@function("PRODUCT", min_args=1, scalar=())
def product(*args: Value) -> float:
    """Product of the numbers; 0 when there are none (as Excel)."""
    xs = numbers(args)
    return finite(math.prod(xs)) if xs else 0.0


@function("AVERAGE", min_args=1, scalar=())
def average(*args: Value) -> float:
    """Mean of the numbers; #DIV/0! when there are none."""
    xs = numbers(args)
    if not xs:
        raise EvalError(DIV0)
    return finite(math.fsum(xs) / len(xs))


@function("MIN", min_args=1, scalar=())
def min_(*args: Value) -> float:
    """Smallest number; 0 when there are none (as Excel)."""
    xs = numbers(args)
    return min(xs) if xs else 0.0


@function("MAX", min_args=1, scalar=())
def max_(*args: Value) -> float:
    """Largest number; 0 when there are none (as Excel)."""
    xs = numbers(args)
    return max(xs) if xs else 0.0


@function("MEDIAN", min_args=1, scalar=())
def median(*args: Value) -> float:
    """Median of the numbers; #NUM! when there are none."""
    xs = sorted(numbers(args))
    if not xs:
        raise EvalError(NUM)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _kth(array: Value, k: Value, largest: bool) -> float:
    xs = sorted(numbers([as_grid(array)]), reverse=largest)
    i = math.ceil(num(k))
    if not 1 <= i <= len(xs):
        raise EvalError(NUM)
    return xs[i - 1]


@function("LARGE", min_args=2, max_args=2, scalar=(1,))
def large(array: Value, k: Value) -> float:
    """The k-th largest number; #NUM! when k is out of 1..count."""
    return _kth(array, k, True)


@function("SMALL", min_args=2, max_args=2, scalar=(1,))
def small(array: Value, k: Value) -> float:
    """The k-th smallest number; #NUM! when k is out of 1..count."""
    return _kth(array, k, False)


@function("COUNT", min_args=1, scalar=())
def count(*args: Value) -> float:
    """How many numbers: in ranges only numbers; typed arguments count when they are
    numbers, booleans or text that reads as a number. Errors are not counted and do not
    propagate."""
    n = 0
    for a in args:
        if isinstance(a, Grid):
            n += sum(1 for v in a.values() if is_number(v))
        elif is_number(a) or isinstance(a, bool) or (isinstance(a, str) and text_to_number(a) is not None):
            n += 1
    return float(n)


@function("COUNTA", min_args=1, scalar=())
def counta(*args: Value) -> float:
    """How many values are not empty (errors and "" from formulas count)."""
    n = 0
    for a in args:
        if isinstance(a, Grid):
            n += sum(1 for v in a.values() if v is not None)
        else:
            n += 1
    return float(n)


@function("COUNTBLANK", min_args=1, max_args=1, scalar=())
def countblank(rng: Value) -> float:
    """How many cells are empty or hold "" (the argument must be a range)."""
    if not isinstance(rng, Grid):
        raise EvalError(VALUE)
    return float(sum(1 for v in rng.values() if v is None or v == ""))


@function("SUMPRODUCT", min_args=1, scalar=())
def sumproduct(*arrays: Value) -> float:
    """Sum of the products of corresponding entries; arrays of different sizes are
    #VALUE!, entries that are not numbers count as 0, errors propagate."""
    grids = [as_grid(a) for a in arrays]
    h, w = grids[0].height, grids[0].width
    if any(g.height != h or g.width != w for g in grids):
        raise EvalError(VALUE)
    total = []
    columns = [list(g.values()) for g in grids]
    for entries in zip(*columns):
        p = 1.0
        for v in entries:
            if isinstance(v, ErrorValue):
                raise EvalError(v)
            p *= float(v) if is_number(v) else 0.0
        total.append(p)
    return finite(math.fsum(total))


def _standing(number: Value, ref: Value, order: Value) -> tuple[int, int]:
    """(how many numbers of ref rank before number, how many equal it); #N/A when none
    does. The order is descending for 0 or omitted, ascending otherwise."""
    x = num(number)
    xs = numbers([as_grid(ref)])
    ties = sum(1 for v in xs if v == x)
    if not ties:
        raise EvalError(NA)
    ascending = order is not None and num(order) != 0
    return sum(1 for v in xs if (v < x if ascending else v > x)), ties


@function("RANK", "RANK.EQ", min_args=2, max_args=3, scalar=(0, 2))
def rank(number: Value, ref: Value, order: Value = None) -> float:
    """Rank of number among the numbers of ref: 1 is the largest (order 0 or omitted) or
    the smallest (order non-zero); ties share the best rank; #N/A when number is not in
    ref."""
    better, _ = _standing(number, ref, order)
    return float(better + 1)


@function("RANK.AVG", min_args=2, max_args=3, scalar=(0, 2))
def rank_avg(number: Value, ref: Value, order: Value = None) -> float:
    """RANK, but ties share the average of the ranks they take (two tied for 2nd: 2.5);
    on distinct numbers the same as RANK."""
    better, ties = _standing(number, ref, order)
    return better + (ties + 1) / 2
