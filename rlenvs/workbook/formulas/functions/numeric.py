"""Numeric functions: ROUND, ROUNDUP, ROUNDDOWN, TRUNC, INT, MOD, ABS, SIGN, SQRT, POWER,
EXP, LN, LOG, LOG10, PI, CEILING, FLOOR, MROUND, SEQUENCE, QUOTIENT.

Rounding works on the decimal digits a spreadsheet shows (the number's 15 significant
digits), not on the binary float: ROUND(2.675, 2) is 2.68 in Excel although the float
2.675 is slightly below it, and half goes away from zero (ROUND(-2.5, 0) is -3), unlike
Python's `round`.
"""

from __future__ import annotations

import math
from decimal import (
    ROUND_DOWN,
    ROUND_HALF_UP,
    ROUND_UP,
    Context,
    Decimal,
    InvalidOperation,
)

from rlenvs.workbook.formulas.functions.base import (
    finite,
    function,
    integer,
    num,
)
from rlenvs.workbook.formulas.grid import Grid, power
from rlenvs.workbook.values import DIV0, NUM, VALUE, EvalError, Scalar

_CONTEXT = Context(prec=60)


def round_decimal(x: float, digits: int, rounding: str = ROUND_HALF_UP) -> float:
    """x rounded to `digits` decimals (negative: to tens, hundreds...) on its 15-digit
    decimal form."""
    if digits > 300:
        return x
    d = Decimal(f"{x:.15g}")
    try:
        r = d.quantize(Decimal(1).scaleb(-digits), rounding=rounding, context=_CONTEXT)
    except InvalidOperation:
        return x
    return float(r) + 0.0


@function("ROUND", min_args=2, max_args=2)
def round_(number: Scalar, digits: Scalar) -> float:
    """number rounded to digits decimals, half away from zero (ROUND(2.5,0)=3,
    ROUND(-2.5,0)=-3, ROUND(1234.5,-2)=1200)."""
    return round_decimal(num(number), integer(digits), ROUND_HALF_UP)


@function("ROUNDUP", min_args=2, max_args=2)
def roundup(number: Scalar, digits: Scalar) -> float:
    """number rounded away from zero (ROUNDUP(-1.21,1) = -1.3)."""
    return round_decimal(num(number), integer(digits), ROUND_UP)


@function("ROUNDDOWN", min_args=2, max_args=2)
def rounddown(number: Scalar, digits: Scalar) -> float:
    """number rounded toward zero (ROUNDDOWN(-1.29,1) = -1.2)."""
    return round_decimal(num(number), integer(digits), ROUND_DOWN)


@function("TRUNC", min_args=1, max_args=2)
def trunc(number: Scalar, digits: Scalar = None) -> float:
    """number cut toward zero to digits decimals (default 0)."""
    return round_decimal(num(number), integer(digits), ROUND_DOWN)


@function("INT", min_args=1, max_args=1)
def int_(number: Scalar) -> float:
    """number rounded down to an integer (INT(-1.5) = -2)."""
    return float(math.floor(num(number)))


@function("MOD", min_args=2, max_args=2)
def mod(number: Scalar, divisor: Scalar) -> float:
    """Remainder with the sign of the divisor (MOD(-3,2)=1, MOD(3,-2)=-1); #DIV/0! for 0."""
    n, d = num(number), num(divisor)
    if d == 0:
        raise EvalError(DIV0)
    r = n - d * math.floor(n / d)
    return 0.0 if abs(r) < abs(d) * 1e-15 else finite(r)


@function("ABS", min_args=1, max_args=1)
def abs_(number: Scalar) -> float:
    """Absolute value."""
    return abs(num(number))


@function("SIGN", min_args=1, max_args=1)
def sign(number: Scalar) -> float:
    """1, 0 or -1."""
    x = num(number)
    return float((x > 0) - (x < 0))


@function("SQRT", min_args=1, max_args=1)
def sqrt(number: Scalar) -> float:
    """Square root; #NUM! for a negative number."""
    x = num(number)
    if x < 0:
        raise EvalError(NUM)
    return math.sqrt(x)


@function("POWER", min_args=2, max_args=2)
def power_(number: Scalar, exponent: Scalar) -> Scalar:
    """number^exponent, with the same errors as the ^ operator."""
    return power(num(number), num(exponent))


@function("EXP", min_args=1, max_args=1)
def exp(number: Scalar) -> float:
    """e^number; #NUM! on overflow."""
    return finite(math.exp(num(number)))


@function("LN", min_args=1, max_args=1)
def ln(number: Scalar) -> float:
    """Natural logarithm; #NUM! for numbers <= 0."""
    x = num(number)
    if x <= 0:
        raise EvalError(NUM)
    return math.log(x)


@function("LOG10", min_args=1, max_args=1)
def log10(number: Scalar) -> float:
    """Base-10 logarithm; #NUM! for numbers <= 0."""
    x = num(number)
    if x <= 0:
        raise EvalError(NUM)
    return math.log10(x)


@function("LOG", min_args=1, max_args=2)
def log(number: Scalar, base: Scalar = None) -> float:
    """Logarithm in base (default 10); #NUM! for numbers or bases <= 0, #DIV/0! for base 1."""
    x = num(number)
    b = 10.0 if base is None else num(base)
    if x <= 0 or b <= 0:
        raise EvalError(NUM)
    if b == 1:
        raise EvalError(DIV0)
    return math.log(x) / math.log(b)


@function("PI", max_args=0)
def pi() -> float:
    """3.14159265358979."""
    return math.pi


def _quotient(x: float, s: float) -> float:
    return float(f"{x / s:.15g}")


@function("CEILING", min_args=2, max_args=2)
def ceiling(number: Scalar, significance: Scalar) -> float:
    """number rounded up (away from zero for a negative significance) to a multiple of
    significance; 0 for significance 0; #NUM! for a positive number and a negative
    significance."""
    x, s = num(number), num(significance)
    if s == 0 or x == 0:
        return 0.0
    if x > 0 and s < 0:
        raise EvalError(NUM)
    return finite(math.ceil(_quotient(x, s)) * s) + 0.0


@function("FLOOR", min_args=2, max_args=2)
def floor(number: Scalar, significance: Scalar) -> float:
    """number rounded down (toward zero for a negative significance) to a multiple of
    significance; #DIV/0! for significance 0; #NUM! for a positive number and a negative
    significance."""
    x, s = num(number), num(significance)
    if s == 0:
        raise EvalError(DIV0)
    if x > 0 and s < 0:
        raise EvalError(NUM)
    return finite(math.floor(_quotient(x, s)) * s) + 0.0


@function("MROUND", min_args=2, max_args=2, ranges=False)
def mround(number: Scalar, multiple: Scalar) -> float:
    """number rounded to the nearest multiple of `multiple`, half away from zero, on the
    15-digit decimal forms (MROUND(2.675,0.01) is 2.68, as ROUND(2.675,2)); 0 for a
    multiple of 0; #NUM! where number and multiple have opposite signs. A range of several
    cells is #VALUE! (an Analysis ToolPak function)."""
    x, m = num(number), num(multiple)
    if m == 0 or x == 0:
        return 0.0
    if (x > 0) != (m > 0):
        raise EvalError(NUM)
    times = Decimal(f"{finite(x / m):.15g}").quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_CONTEXT)
    return finite(float(times * Decimal(f"{m:.15g}"))) + 0.0


@function("SEQUENCE", min_args=1, max_args=4)
def sequence(rows: Scalar, columns: Scalar = None, start: Scalar = None, step: Scalar = None) -> Grid:
    """An array of `rows` x `columns` (default 1) numbers from `start` (default 1) by `step`
    (default 1), row by row: `MID(B2,SEQUENCE(LEN(B2)),1)` is every character of B2,
    which an aggregate, CONCAT or TEXTJOIN around it takes in. The engine has no spilled
    arrays: in a cell of its own, `=SEQUENCE(5)` shows its first number (Excel 365 spills
    the rest into the cells below). #VALUE! for fewer than 1 row or column, or more than
    `MAX_SEQUENCE` numbers."""
    height = integer(rows)
    width = 1 if columns is None else integer(columns)
    first = 1.0 if start is None else num(start)
    by = 1.0 if step is None else num(step)
    if height < 1 or width < 1 or height * width > MAX_SEQUENCE:
        raise EvalError(VALUE)
    return Grid([[first + (i * width + j) * by for j in range(width)] for i in range(height)])


MAX_SEQUENCE = 100_000
"""The most numbers SEQUENCE makes (a bound on one formula's work)."""


@function("QUOTIENT", min_args=2, max_args=2, ranges=False)
def quotient(numerator: Scalar, denominator: Scalar) -> float:
    """The integer part of numerator / denominator, toward zero (QUOTIENT(-7,2) is -3);
    #DIV/0! for 0. A range of several cells is #VALUE! (an Analysis ToolPak function)."""
    a, b = num(numerator), num(denominator)
    if b == 0:
        raise EvalError(DIV0)
    return float(math.trunc(finite(a / b)))
