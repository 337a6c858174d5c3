"""The function table and the helpers that implementations share.

`FUNCTIONS` maps an upper-case name to a `FunctionSpec`; `@function(...)` adds one. An
implementation is a plain Python function whose docstring says what it does (and where
it departs from Excel). It receives the evaluated arguments:

- parameters listed as scalar (`scalar="all"`, the default, or a tuple of positions)
  receive one value: a one-cell range is unwrapped, and a larger range or array makes the
  dispatcher call the implementation once per element and return a grid of results
  (Excel's lifting: `LEN(A1:A3)` inside SUMPRODUCT);
- other parameters receive a `Grid` for ranges/arrays (a single-cell reference is a 1x1
  grid with `is_ref` set) or a scalar for everything else;
- an omitted argument (`IF(A1,,1)`) is None, like an empty cell;
- parameters listed in `positions` (ROW's, OFFSET's anchor) receive a `Place` where the
  argument is a reference (written, or computed by OFFSET, INDIRECT or INDEX of one:
  `formulas.places`): where it is, never what it holds. Reading the value would make
  `=ROW(C5)`, `=OFFSET(C5,-1,0)` or `ROW(INDIRECT("1:5"))` in C5 depend on itself (a
  false #CIRCULAR!), and the workbook leaves these references out of a formula's
  precedents (`evaluator.dependencies`).

A function with `ranges=False` (Excel's Analysis ToolPak functions, EDATE, EOMONTH,
QUOTIENT) refuses a reference to several cells where it takes one value: #VALUE!, as in
Excel, where `EOMONTH(B2:B9,0)` does not lift over the range; an array (`EOMONTH(+B2:B9,0)`,
`EOMONTH(B2:B9+0,0)`) lifts as for any function.

Two flags say how a function reads the workbook: `dynamic` ones (OFFSET, INDIRECT) read
cells whose address they compute, so a formula calling one follows the data even with no
reference written in it; `volatile` ones (RAND, RANDBETWEEN, NOW, TODAY) give a new value
at every recalculation, so a value computed from one is not a function of the data (the
workbook marks such cells: `Workbook.depends_on_volatile`).

Implementations raise `EvalError(error)` (or return an ErrorValue) to produce an error;
the dispatcher turns EvalError into the value, so evaluation never raises. Helpers such
as `num`, `text` and `boolean` coerce a scalar and raise EvalError on an error value or a
failed coercion, which gives Excel's error propagation for free.

To add a function: write it in the module of its family with `@function("NAME", min, max)`
and a docstring; nothing else needs to change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rlenvs.workbook.formulas.grid import Grid, Value, broadcast
from rlenvs.workbook.values import (
    NUM,
    VALUE,
    ErrorValue,
    EvalError,
    Scalar,
    is_number,
    to_bool,
    to_number,
    to_text,
)


@dataclass(frozen=True)
class FunctionSpec:
    """A spreadsheet function: its implementation and how it takes arguments."""

    name: str
    impl: Callable[..., Any]
    min_args: int
    max_args: int | None
    scalar: frozenset[int] | bool  # True: every argument is scalar
    needs_ctx: bool  # the implementation takes the evaluation context first
    positions: frozenset[int] = frozenset()  # arguments read as places (see the module docstring)
    dynamic: bool = False
    volatile: bool = False
    ranges: bool = True  # False: a reference to several cells where one value is asked is #VALUE!

    @property
    def doc(self) -> str:
        return (self.impl.__doc__ or "").strip()

    def arity_error(self, n: int) -> str | None:
        """Why n arguments do not fit, or None."""
        if n < self.min_args or (self.max_args is not None and n > self.max_args):
            if self.max_args is None:
                want = f"at least {self.min_args}"
            elif self.min_args == self.max_args:
                want = f"exactly {self.min_args}"
            else:
                want = f"{self.min_args} to {self.max_args}"
            return f"{self.name} takes {want} argument{'s' if want != 'exactly 1' else ''}, not {n}"
        return None

    def invoke(self, ctx: Any, args: list[Value]) -> Value:
        """Call the implementation with unwrapping, lifting and EvalError handling."""
        try:
            scalar = self.scalar
            lifted = False
            if scalar:
                for i, a in enumerate(args):
                    if type(a) is Grid and (scalar is True or i in scalar):
                        if a.height == 1 and a.width == 1:
                            args[i] = a.rows[0][0]
                        elif a.is_ref and not self.ranges:
                            return VALUE
                        else:
                            lifted = True
            if lifted:
                return self._lift(ctx, args)
            if self.needs_ctx:
                return self.impl(ctx, *args)
            return self.impl(*args)
        except EvalError as e:
            return e.error
        except (OverflowError, ZeroDivisionError, ValueError):
            return NUM

    def _lift(self, ctx: Any, args: list[Value]) -> Value:
        scalar = self.scalar
        positions = [i for i, a in enumerate(args) if type(a) is Grid and (scalar is True or i in scalar)]  # type: ignore[operator]

        def one(*elems: Scalar) -> Scalar:
            call = list(args)
            for i, e in zip(positions, elems):
                call[i] = e
            try:
                r = self.impl(ctx, *call) if self.needs_ctx else self.impl(*call)
            except EvalError as e:
                return e.error
            except (OverflowError, ZeroDivisionError, ValueError):
                return NUM
            return r.rows[0][0] if isinstance(r, Grid) else r

        return broadcast(one, [args[i] for i in positions])


FUNCTIONS: dict[str, FunctionSpec] = {}
"""Every supported function by upper-case name."""


def function(
    *names: str,
    min_args: int = 0,
    max_args: int | None = None,
    scalar: str | tuple[int, ...] = "all",
    ctx: bool = False,
    positions: tuple[int, ...] = (),
    dynamic: bool = False,
    volatile: bool = False,
    ranges: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an implementation under one or more names (see the module docstring)."""

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        sc: frozenset[int] | bool = True if scalar == "all" else frozenset(scalar)  # type: ignore[arg-type]
        for name in names:
            FUNCTIONS[name] = FunctionSpec(
                name, impl, min_args, max_args, sc, ctx, frozenset(positions), dynamic, volatile, ranges
            )
        return impl

    return register


# --- coercion helpers (raise EvalError) ------------------------------------------------


def check(v: Any) -> Any:
    """v, or raise it if it is an error value."""
    if isinstance(v, ErrorValue):
        raise EvalError(v)
    return v


def single(v: Value) -> Scalar:
    """One value from an argument that must be a single value (a 1x1 grid is fine)."""
    if isinstance(v, Grid):
        if v.height == 1 and v.width == 1:
            return v.rows[0][0]
        raise EvalError(VALUE)
    return v


def num(v: Value) -> float:
    """A number, as arithmetic reads it ("3" -> 3, TRUE -> 1, empty -> 0)."""
    return check(to_number(single(v)))


def integer(v: Value) -> int:
    """A number truncated toward zero, as Excel reads counts and positions."""
    x = num(v)
    if abs(x) > 1e15:
        raise EvalError(NUM)
    return int(x)


def text(v: Value) -> str:
    """Text, as `&` reads it (numbers in General format, empty -> "")."""
    return check(to_text(single(v)))


def boolean(v: Value) -> bool:
    """A logical value, as IF reads its condition."""
    return check(to_bool(single(v)))


def finite(x: float) -> float:
    """x, or #NUM! when it overflowed."""
    if not math.isfinite(x):
        raise EvalError(NUM)
    return x


def flat(v: Value) -> Iterator[Scalar]:
    """The values of an argument: every cell of a grid, or the scalar itself."""
    if isinstance(v, Grid):
        yield from v.values()
    else:
        yield v


def as_grid(v: Value) -> Grid:
    """An argument as a grid (a scalar becomes 1x1)."""
    return v if isinstance(v, Grid) else Grid([[v]])


def numbers(args: Iterable[Value]) -> list[float]:
    """The numbers SUM, AVERAGE, MIN and MAX use: in ranges and arrays only real numbers
    count (text, booleans and empty cells are skipped); typed arguments are coerced
    (TRUE -> 1, "3" -> 3, omitted -> 0) and text that is not a number is #VALUE!. Any
    error met is raised."""
    out: list[float] = []
    for a in args:
        if isinstance(a, Grid):
            for v in a.values():
                if is_number(v):
                    out.append(float(v))  # type: ignore[arg-type]
                elif isinstance(v, ErrorValue):
                    raise EvalError(v)
        else:
            out.append(check(to_number(a)))
    return out
