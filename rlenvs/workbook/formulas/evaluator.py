"""Syntax tree -> Python closure, and the context a formula reads cells through.

Each formula is compiled once into nested closures (one per node) so that recalculating
thousands of cells costs a few microseconds each, with no tree walking or type dispatch
per evaluation. Reference targets are resolved at compile time to cell keys
`(sheet name in lower case, row, col)`; a sheet that does not exist when the formula runs
gives #REF!.

The compiled function never raises for any input the parser accepts: operators return
error values, and function implementations signal errors with `EvalError`, which the
dispatcher turns into values. (The workbook still guards each evaluation, so a bug in a
function shows as #VALUE! in one cell instead of stopping a recalculation.)

Reading of arguments (Excel's rules): a reference written directly as a function argument
(`SUM(A1)`, `SUM(A1:B2)`) arrives as a `Grid` marked `is_ref`, so aggregates can skip the
text and booleans in it; the same cell in an operator (`A1+1`) arrives as its value. A
reference in a position argument (`ROW(C5)`, OFFSET's anchor, and OFFSET, INDIRECT or
INDEX of a reference there: `ROW(INDIRECT("1:"&LEN(B2)))`) arrives as a `Place`, its values
unread (`places`); `dependencies` leaves such references out of what a formula depends on.
The range operator between references that are not one written range
(`$B$2:INDEX($B:$B,ROW())`) is a `Span`, whose cells are read when the formula runs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from rlenvs.workbook.formulas.functions import FUNCTIONS
from rlenvs.workbook.formulas.grid import (
    BINARY_OPS,
    Grid,
    Value,
    as_array,
    binary,
    broadcast,
    negate,
    percent,
    top_left,
    unary,
)
from rlenvs.workbook.formulas.nodes import (
    Array,
    BinOp,
    Bool,
    Call,
    ErrorLit,
    Missing,
    Name,
    Node,
    Number,
    Paren,
    Percent,
    Range,
    Ref,
    Span,
    Text,
    Unary,
    children,
)
from rlenvs.workbook.formulas.places import (
    compile_place,
    is_reference,
    place_values,
    read,
)
from rlenvs.workbook.formulas.tokenizer import FormulaError
from rlenvs.workbook.values import NAME, VALUE, ErrorValue, Scalar

CellKey = tuple[str, int, int]
"""(sheet name in lower case, row, col)."""


class Context(Protocol):
    """What a compiled formula reads: cell values and ranges, and where it is."""

    sheet: str
    row: int
    col: int
    rng: random.Random
    """Where RAND and RANDBETWEEN draw from (a workbook seeds its own: `Workbook.seed`)."""

    def value(self, key: CellKey) -> Scalar:
        """The value of one cell (None when empty; dates as serials; #REF! when the sheet
        does not exist)."""
        ...

    def grid(self, sheet: str, r1: int, c1: int, r2: int, c2: int) -> Grid | ErrorValue:
        """The values of a rectangle as a Grid with `is_ref` and `origin` set, or #REF!."""
        ...

    def bounds(self, sheet: str, r1: int, c1: int, r2: int, c2: int) -> tuple[int, int, int, int] | None:
        """The rectangle `grid` would read (a huge one cut to the used part of its sheet),
        None when the sheet does not exist; nothing is computed."""
        ...

    def formula_calls(self, key: CellKey, names: frozenset[str]) -> bool:
        """Whether the cell holds a formula that calls one of the functions `names` (how
        SUBTOTAL leaves out the subtotals inside its ranges)."""
        ...


class EmptyContext:
    """A context with no cells (every reference reads as empty): for evaluating formulas
    outside a workbook, e.g. in tests."""

    def __init__(self, sheet: str = "sheet1", row: int = 1, col: int = 1):
        self.sheet, self.row, self.col = sheet, row, col
        self.rng = random.Random()

    def value(self, key: CellKey) -> Scalar:
        return None

    def grid(self, sheet: str, r1: int, c1: int, r2: int, c2: int) -> Grid | ErrorValue:
        _, _, r2, c2 = self.bounds(sheet, r1, c1, r2, c2)
        return Grid([[None] * (c2 - c1 + 1) for _ in range(r2 - r1 + 1)], True, (sheet, r1, c1))

    def bounds(self, sheet: str, r1: int, c1: int, r2: int, c2: int) -> tuple[int, int, int, int]:
        return r1, c1, min(r2, r1 + 999), min(c2, c1 + 999)

    def formula_calls(self, key: CellKey, names: frozenset[str]) -> bool:
        return False


Compiled = Callable[[Context], Value]


def _const(v: Value) -> Compiled:
    return lambda ctx: v


def cell_key(ref_sheet: str | None, row: int, col: int, sheet: str) -> CellKey:
    """The key of a reference in a formula on `sheet` (lower-case name)."""
    return (ref_sheet.lower() if ref_sheet is not None else sheet, row, col)


def _unwrap(node: Node) -> Node:
    while isinstance(node, Paren):
        node = node.inner
    return node


def _compile_arg(node: Node, sheet: str, position: bool = False) -> Compiled:
    inner = _unwrap(node)
    if position and (place := compile_place(inner, sheet, compile_node, _call_parts)) is not None:
        return place  # type: ignore[return-value]
    if isinstance(inner, Ref):
        key = cell_key(inner.ref.sheet, inner.ref.row, inner.ref.col, sheet)
        return lambda ctx: Grid([[ctx.value(key)]], True, key)
    return compile_node(inner, sheet)


def _compile_binop(node: BinOp, sheet: str) -> Compiled:
    fns = [compile_node(o, sheet) for o in node.operands]
    ops = [BINARY_OPS[op] for op in node.ops]
    if len(ops) == 1:
        f0, f1, op0 = fns[0], fns[1], ops[0]

        def pair(ctx: Context) -> Value:
            a, b = f0(ctx), f1(ctx)
            if type(a) is Grid or type(b) is Grid:
                return broadcast(op0, [a, b])
            return op0(a, b)

        return pair
    first, rest = fns[0], list(zip(ops, fns[1:]))

    def chain(ctx: Context) -> Value:
        acc = first(ctx)
        for op, f in rest:
            acc = binary(op, acc, f(ctx))
        return acc

    return chain


def _call_parts(node: Call, sheet: str) -> tuple[Callable[[Context, list[Value]], Value], list[Compiled]]:
    """A call's function (with its argument handling) and its compiled arguments; an
    unknown function is #NAME?, a wrong number of arguments #VALUE!."""
    spec = FUNCTIONS.get(node.name)
    if spec is None:
        return (lambda ctx, args: NAME), []
    if spec.arity_error(len(node.args)):
        return (lambda ctx, args: VALUE), []
    return spec.invoke, [_compile_arg(a, sheet, i in spec.positions) for i, a in enumerate(node.args)]


def _compile_call(node: Call, sheet: str) -> Compiled:
    invoke, fns = _call_parts(node, sheet)
    return lambda ctx: invoke(ctx, [f(ctx) for f in fns])


def _compile_span(node: Span, sheet: str) -> Compiled:
    """A range between two references (`places`): its cells, read when the formula runs."""
    place = compile_place(node, sheet, compile_node, _call_parts)
    assert place is not None
    return lambda ctx: read(place(ctx), ctx)


def compile_node(node: Node, sheet: str) -> Compiled:
    """The closure computing `node` in a formula on `sheet` (lower-case name)."""
    if isinstance(node, Ref):
        key = cell_key(node.ref.sheet, node.ref.row, node.ref.col, sheet)
        return lambda ctx: ctx.value(key)
    if isinstance(node, Number | Text | Bool):
        return _const(node.value)
    if isinstance(node, BinOp):
        return _compile_binop(node, sheet)
    if isinstance(node, Call):
        return _compile_call(node, sheet)
    if isinstance(node, Range):
        r = node.ref
        s = r.sheet.lower() if r.sheet is not None else sheet
        bounds = (s, r.start.row, r.start.col, r.end.row, r.end.col)
        return lambda ctx: ctx.grid(*bounds)
    if isinstance(node, Paren):
        return compile_node(node.inner, sheet)
    if isinstance(node, Span):
        return _compile_span(node, sheet)
    if isinstance(node, Unary):
        f = compile_node(node.operand, sheet)
        if node.op == "+":  # a reference's values as an array, as Excel reads +B2:B9
            return lambda ctx: as_array(f(ctx))
        return lambda ctx: unary(negate, f(ctx))
    if isinstance(node, Percent):
        f = compile_node(node.operand, sheet)
        return lambda ctx: unary(percent, f(ctx))
    if isinstance(node, ErrorLit):
        return _const(node.value)
    if isinstance(node, Missing):
        return _const(None)
    if isinstance(node, Name):
        return _const(NAME)
    if isinstance(node, Array):
        rows = [[_array_item(v) for v in row] for row in node.rows]
        return lambda ctx: Grid([list(r) for r in rows])
    raise TypeError(f"not a formula node: {node!r}")


def _array_item(node: Node) -> Scalar:
    if isinstance(node, Unary):
        return -node.operand.value  # type: ignore[attr-defined]
    return node.value  # type: ignore[attr-defined]


def compile_formula(node: Node, sheet: str) -> Callable[[Context], Scalar]:
    """The closure computing a cell's value: the formula's result reduced to one value as
    a cell shows it (`grid.top_left`)."""
    f = compile_node(node, sheet.lower())
    return lambda ctx: top_left(f(ctx))


def evaluate(node: Node, ctx: Context | None = None) -> Scalar:
    """Evaluate a tree once (compiling it on the way); the context defaults to no cells."""
    ctx = ctx or EmptyContext()
    return compile_formula(node, ctx.sheet)(ctx)


def dependencies(node: Node) -> list[Ref | Range]:
    """The references whose values a formula reads: every Ref and Range of the tree except
    those that name a place, not data: a position argument (`ROW(C5)`, OFFSET's anchor,
    `ROW(INDIRECT(...))`) and the ends of a range operator (`$B$2:INDEX($B:$B,ROW())`), whose
    INDEX row and column still count (`places.place_values`). These are a formula cell's
    precedents (and what `=42` dressed as a formula lacks); OFFSET, INDIRECT and a range
    operator read further cells that only evaluation finds."""
    out: list[Ref | Range] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (Ref, Range)):
            out.append(n)
            continue
        if isinstance(n, Span):
            stack.extend(reversed(place_values(n)))
            continue
        if isinstance(n, Call):
            spec = FUNCTIONS.get(n.name)
            positions = spec.positions if spec else frozenset()
            for i, a in reversed(list(enumerate(n.args))):
                stack.extend(reversed(place_values(a)) if i in positions and is_reference(a) else [a])
            continue
        stack.extend(reversed(children(n)))
    return out


def calls(node: Node, flag: str) -> bool:
    """Whether the tree calls a function whose spec has `flag` set ("volatile": RAND, NOW,
    ...; "dynamic": OFFSET, INDIRECT, SINGLE, and the range operator, which read the cells
    they compute)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Call) and (spec := FUNCTIONS.get(n.name)) is not None and getattr(spec, flag):
            return True
        if isinstance(n, Span) and flag == "dynamic":
            return True
        stack.extend(children(n))
    return False


def validate(node: Node) -> None:
    """Raise FormulaError for calls of known functions with a wrong number of arguments
    (Excel refuses such a formula when it is typed). Unknown functions are allowed and
    evaluate to #NAME?, as in Excel."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Call):
            spec = FUNCTIONS.get(n.name)
            why = spec.arity_error(len(n.args)) if spec else None
            if why:
                raise FormulaError(why)
        stack.extend(children(n))
