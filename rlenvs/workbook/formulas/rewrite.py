"""Reference rewriting: copying a formula, and inserting or deleting rows.

Copy/fill (`shift_formula`): the relative parts of every reference move by the offset,
the `$` parts stay; a reference moved off the sheet becomes #REF! (a range with either
corner off the sheet becomes one #REF!).

Inserting rows before row `at` of a sheet moves every reference to rows >= at down,
absolute or not; a range grows when rows are inserted inside it (after its first row, up
to its last row included) and moves when they are inserted above it. Deleting rows
removes references to the deleted cells (#REF!), moves references below them up, and
shrinks a range that loses some of its rows (a range that loses all its rows is #REF!).
Only references to that sheet change: explicit ones (`Data!A5`) in any sheet, and
unqualified ones in formulas on that sheet. Whole-column ranges (`A:A`) never change.
"""

from __future__ import annotations

from collections.abc import Callable

from rlenvs.workbook.cells import (
    MAX_COL,
    MAX_ROW,
    CellRef,
    RangeRef,
    make_range,
)
from rlenvs.workbook.formulas.nodes import (
    BinOp,
    Call,
    ErrorLit,
    Node,
    Paren,
    Percent,
    Range,
    Ref,
    Span,
    Unary,
    to_text,
)
from rlenvs.workbook.formulas.parser import parse_formula
from rlenvs.workbook.values import REF

_REF_ERROR = ErrorLit(REF)


def map_refs(node: Node, fn: Callable[[Ref | Range], Node]) -> Node:
    """A copy of the tree with every Ref and Range node replaced by fn(node); unchanged
    subtrees are shared (so `result is node` tells whether anything changed)."""
    if isinstance(node, (Ref, Range)):
        return fn(node)
    if isinstance(node, BinOp):
        ops = tuple(map_refs(o, fn) for o in node.operands)
        return node if all(a is b for a, b in zip(ops, node.operands)) else BinOp(node.ops, ops)
    if isinstance(node, Call):
        args = tuple(map_refs(a, fn) for a in node.args)
        return node if all(a is b for a, b in zip(args, node.args)) else Call(node.name, args)
    if isinstance(node, Unary):
        o = map_refs(node.operand, fn)
        return node if o is node.operand else Unary(node.op, o)
    if isinstance(node, Percent):
        o = map_refs(node.operand, fn)
        return node if o is node.operand else Percent(o)
    if isinstance(node, Paren):
        o = map_refs(node.inner, fn)
        return node if o is node.inner else Paren(o)
    if isinstance(node, Span):
        a, b = map_refs(node.start, fn), map_refs(node.end, fn)
        return node if a is node.start and b is node.end else Span(a, b)
    return node


# --- copy / fill ---------------------------------------------------------------------


def _moved(c: CellRef, rows: int, cols: int) -> CellRef | None:
    r = c.row if c.row_abs else c.row + rows
    k = c.col if c.col_abs else c.col + cols
    if not (1 <= r <= MAX_ROW and 1 <= k <= MAX_COL):
        return None
    return CellRef(r, k, c.sheet, c.row_abs, c.col_abs)


def shift_node(node: Ref | Range, rows: int, cols: int) -> Node:
    """One reference as it reads after copying its formula rows down and cols right."""
    if isinstance(node, Ref):
        c = _moved(node.ref, rows, cols)
        return _REF_ERROR if c is None else (node if c == node.ref else Ref(c))
    r = node.ref
    dr = 0 if r.kind == "cols" else rows
    dc = 0 if r.kind == "rows" else cols
    a, b = _moved(r.start, dr, dc), _moved(r.end, dr, dc)
    if a is None or b is None:
        return _REF_ERROR
    new = make_range(a, b, r.sheet, r.kind)
    return node if new == r else Range(new)


def shift_ast(node: Node, rows: int, cols: int) -> Node:
    """The tree of a formula copied rows down and cols right (negative: up / left)."""
    return map_refs(node, lambda n: shift_node(n, rows, cols))


def shift_formula(text: str, rows: int, cols: int) -> str:
    """The text of a formula copied `rows` down and `cols` right (negative: up / left),
    in canonical form: `shift_formula("=A1+$B$1", 1, 0) == "=A2+$B$1"`. Raises
    FormulaError when the text is not a formula."""
    return to_text(shift_ast(parse_formula(text), rows, cols))


# --- inserting and deleting rows -------------------------------------------------------


def _row_insert(r: int, at: int, count: int) -> int:
    return r + count if r >= at else r


def _row_delete(r: int, at: int, n: int) -> int | None:
    if r < at:
        return r
    if r < at + n:
        return None
    return r - n


def _span_delete(r1: int, r2: int, at: int, n: int) -> tuple[int, int] | None:
    last = at + n - 1
    if at <= r1 and r2 <= last:
        return None
    new1 = r1 if r1 < at else (at if r1 <= last else r1 - n)
    new2 = r2 - n if r2 > last else (at - 1 if r2 >= at else r2)
    return new1, new2


def adjust_node(node: Ref | Range, sheet: str, at: int, count: int, formula_sheet: str) -> Node:
    """One reference after inserting (count > 0) or deleting (count < 0) rows of `sheet`
    at row `at`; `formula_sheet` is the sheet holding the formula."""
    target = node.ref.sheet if node.ref.sheet is not None else formula_sheet
    if target.lower() != sheet.lower():
        return node
    if isinstance(node, Ref):
        c = node.ref
        r = _row_insert(c.row, at, count) if count > 0 else _row_delete(c.row, at, -count)
        if r is None or r > MAX_ROW:
            return _REF_ERROR
        return node if r == c.row else Ref(CellRef(r, c.col, c.sheet, c.row_abs, c.col_abs))
    rr = node.ref
    if rr.kind == "cols":
        return node
    r1, r2 = rr.start.row, rr.end.row
    span: tuple[int, int]
    if count > 0:
        span = (_row_insert(r1, at, count), min(_row_insert(r2, at, count), MAX_ROW))
        if span[0] > MAX_ROW:
            return _REF_ERROR
    else:
        kept = _span_delete(r1, r2, at, -count)
        if kept is None:
            return _REF_ERROR
        span = kept
    if span == (r1, r2):
        return node
    s, e = rr.start, rr.end
    new = RangeRef(
        CellRef(span[0], s.col, None, s.row_abs, s.col_abs),
        CellRef(span[1], e.col, None, e.row_abs, e.col_abs),
        rr.sheet,
        rr.kind,
    )
    return Range(new)


def adjust_rows_ast(node: Node, sheet: str, at_row: int, count: int, formula_sheet: str) -> Node:
    """The tree after inserting/deleting rows (see `adjust_for_rows`); the same object
    when nothing changed."""
    if count == 0:
        return node
    return map_refs(node, lambda n: adjust_node(n, sheet, at_row, count, formula_sheet))


def adjust_for_rows(text: str, sheet: str, at_row: int, count: int, formula_sheet: str) -> str:
    """The text of a formula on `formula_sheet` after inserting `count` rows before row
    `at_row` of `sheet` (count > 0), or deleting rows at_row .. at_row-count-1
    (count < 0). Canonical form; references to deleted cells become #REF!."""
    return to_text(adjust_rows_ast(parse_formula(text), sheet, at_row, count, formula_sheet))
