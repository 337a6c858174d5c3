"""Conditional aggregates: COUNTIF(S), SUMIF(S), AVERAGEIF(S), MAXIFS, MINIFS.

Criteria follow `criteria.make_matcher`. Error cells in a criteria range simply do not
match; an error in a summed cell that matches propagates. Only numbers are summed. In
the *IFS functions every range must have the shape of the first (else #VALUE!); SUMIF and
AVERAGEIF, like Excel, read their optional sum range from its top-left cell with the
shape of the criteria range (that resizing reads cells the formula does not name, so a
cycle through them is not detected).
"""

from __future__ import annotations

import math
from typing import Any

from rlenvs.workbook.cells import MAX_COL, MAX_ROW
from rlenvs.workbook.formulas.functions.base import as_grid, finite, function
from rlenvs.workbook.formulas.functions.criteria import make_matcher
from rlenvs.workbook.formulas.grid import Grid, Value
from rlenvs.workbook.values import (
    DIV0,
    REF,
    VALUE,
    ErrorValue,
    EvalError,
    Scalar,
    is_number,
)

_ODD = tuple(range(1, 255, 2))
_EVEN_FROM_2 = tuple(range(2, 255, 2))


def _resize(ctx: Any, g: Grid, height: int, width: int) -> Grid:
    if g.height == height and g.width == width:
        return g
    if g.origin is None:
        raise EvalError(VALUE)
    sheet, top, left = g.origin
    if top + height - 1 > MAX_ROW or left + width - 1 > MAX_COL:
        raise EvalError(REF)
    out = ctx.grid(sheet, top, left, top + height - 1, left + width - 1)
    if isinstance(out, ErrorValue):
        raise EvalError(out)
    return out


def _mask(pairs: list[tuple[Value, Scalar]]) -> tuple[list[bool], int, int]:
    """Which positions meet every (range, criterion) pair; the shape of the ranges."""
    grids = [as_grid(r) for r, _ in pairs]
    h, w = grids[0].height, grids[0].width
    if any(g.height != h or g.width != w for g in grids):
        raise EvalError(VALUE)
    mask = [True] * (h * w)
    for g, (_, crit) in zip(grids, pairs):
        if isinstance(crit, Grid):
            crit = crit.rows[0][0]
        match = make_matcher(crit)
        for k, v in enumerate(g.values()):
            if mask[k] and not match(v):
                mask[k] = False
    return mask, h, w


def _selected(values: Grid, mask: list[bool]) -> list[float]:
    out = []
    for keep, v in zip(mask, values.values()):
        if keep:
            if isinstance(v, ErrorValue):
                raise EvalError(v)
            if is_number(v):
                out.append(float(v))  # type: ignore[arg-type]
    return out


def _same_shape(first: Value, pairs: list[tuple[Value, Scalar]]) -> None:
    g = as_grid(first)
    for r, _ in pairs:
        o = as_grid(r)
        if o.height != g.height or o.width != g.width:
            raise EvalError(VALUE)


def _pairs(args: tuple[Value, ...]) -> list[tuple[Value, Scalar]]:
    if len(args) % 2:
        raise EvalError(VALUE)
    return [(args[i], args[i + 1]) for i in range(0, len(args), 2)]  # type: ignore[misc]


@function("COUNTIF", min_args=2, max_args=2, scalar=(1,))
def countif(rng: Value, criterion: Scalar) -> float:
    """How many cells of rng meet the criterion."""
    mask, _, _ = _mask([(rng, criterion)])
    return float(sum(mask))


@function("COUNTIFS", min_args=2, scalar=_ODD)
def countifs(*args: Value) -> float:
    """How many positions meet every (range, criterion) pair."""
    mask, _, _ = _mask(_pairs(args))
    return float(sum(mask))


@function("SUMIF", min_args=2, max_args=3, scalar=(1,), ctx=True)
def sumif(ctx: Any, rng: Value, criterion: Scalar, sum_range: Value = None) -> float:
    """Sum of the numbers in sum_range (default: rng) where rng meets the criterion."""
    mask, h, w = _mask([(rng, criterion)])
    values = as_grid(rng) if sum_range is None else _resize(ctx, as_grid(sum_range), h, w)
    return finite(math.fsum(_selected(values, mask)))


@function("SUMIFS", min_args=3, scalar=_EVEN_FROM_2)
def sumifs(sum_range: Value, *args: Value) -> float:
    """Sum of the numbers in sum_range where every (range, criterion) pair is met."""
    pairs = _pairs(args)
    _same_shape(sum_range, pairs)
    mask, _, _ = _mask(pairs)
    return finite(math.fsum(_selected(as_grid(sum_range), mask)))


@function("AVERAGEIF", min_args=2, max_args=3, scalar=(1,), ctx=True)
def averageif(ctx: Any, rng: Value, criterion: Scalar, average_range: Value = None) -> float:
    """Mean of the numbers in average_range (default: rng) where rng meets the
    criterion; #DIV/0! when none."""
    mask, h, w = _mask([(rng, criterion)])
    values = as_grid(rng) if average_range is None else _resize(ctx, as_grid(average_range), h, w)
    return _mean(_selected(values, mask))


@function("AVERAGEIFS", min_args=3, scalar=_EVEN_FROM_2)
def averageifs(average_range: Value, *args: Value) -> float:
    """Mean of the numbers in average_range where every pair is met; #DIV/0! when none."""
    pairs = _pairs(args)
    _same_shape(average_range, pairs)
    mask, _, _ = _mask(pairs)
    return _mean(_selected(as_grid(average_range), mask))


def _mean(xs: list[float]) -> float:
    """AVERAGEIF(S)'s mean of the selected numbers; #DIV/0! when none was selected."""
    if not xs:
        raise EvalError(DIV0)
    return finite(math.fsum(xs) / len(xs))


@function("MAXIFS", min_args=3, scalar=_EVEN_FROM_2)
def maxifs(max_range: Value, *args: Value) -> float:
    """Largest number in max_range where every pair is met; 0 when none."""
    pairs = _pairs(args)
    _same_shape(max_range, pairs)
    xs = _selected(as_grid(max_range), _mask(pairs)[0])
    return max(xs) if xs else 0.0


@function("MINIFS", min_args=3, scalar=_EVEN_FROM_2)
def minifs(min_range: Value, *args: Value) -> float:
    """Smallest number in min_range where every pair is met; 0 when none."""
    pairs = _pairs(args)
    _same_shape(min_range, pairs)
    xs = _selected(as_grid(min_range), _mask(pairs)[0])
    return min(xs) if xs else 0.0
