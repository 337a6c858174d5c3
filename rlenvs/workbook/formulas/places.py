"""References computed as places: where a reference points, found without reading its cells.

Why: a function that takes a position (ROW, ROWS, COLUMN, COLUMNS, OFFSET's anchor) needs
only where its reference is, and the range operator `:` only where its two ends are. Read as
values, `ROW(INDIRECT("1:"&LEN(B2)))` in C2 read rows 1 to n, C2 among them, and was
#CIRCULAR!; Excel and LibreOffice compute it (the pre-365 idiom for every character of a
text). So a reference-valued expression in such a place is computed as a `Place`:

- a written reference (`C5`, `B2:B9`, `A:A`) is its place;
- OFFSET and INDIRECT are run with their arguments computed as usual, but the rectangle
  they name comes back as a place instead of being read (`_Positions`);
- INDEX of a reference is the place of the row, column or cell it picks
  (`$B$2:INDEX($B:$B,ROW())`, a running total's range);
- a range between two of these (`Span`) is the smallest rectangle holding both.

Anything else is no reference here; the caller computes it as a value. A `Span` used as a
value reads its rectangle when the formula runs, as OFFSET does (`calc` finds a cycle
through it then), so the references it is built from are positions, not precedents
(`place_values`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlenvs.workbook.cells import MAX_COL, MAX_ROW
from rlenvs.workbook.formulas.grid import Grid, Place, Value
from rlenvs.workbook.formulas.nodes import (
    Call,
    ErrorLit,
    Node,
    Paren,
    Range,
    Ref,
    Span,
)
from rlenvs.workbook.values import REF, VALUE, ErrorValue, EvalError

PlaceOf = Callable[[Any], "Place | ErrorValue"]
DYNAMIC_REFERENCES = frozenset({"OFFSET", "INDIRECT"})


class _Positions:
    """A context that hands out places instead of cells: what OFFSET and INDIRECT compute
    comes back unread (everything else is the real context's)."""

    def __init__(self, ctx: Any):
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def grid(self, sheet: str, r1: int, c1: int, r2: int, c2: int) -> Place:
        return Place(sheet, r1, c1, r2 - r1 + 1, c2 - c1 + 1)


def _unwrap(node: Node) -> Node:
    while isinstance(node, Paren):
        node = node.inner
    return node


def is_reference(node: Node) -> bool:
    """Whether a node is computed as a place where a position is taken."""
    node = _unwrap(node)
    if isinstance(node, (Ref, Range, Span)):
        return True
    return isinstance(node, Call) and (
        node.name in DYNAMIC_REFERENCES or (node.name == "INDEX" and bool(node.args) and is_reference(node.args[0]))
    )


def place_values(node: Node) -> list[Node]:
    """The parts of a reference computed as a place whose values are read (INDEX's row and
    column, OFFSET's and INDIRECT's arguments): what a formula depends on through it."""
    node = _unwrap(node)
    if isinstance(node, (Ref, Range)):
        return []
    if isinstance(node, Span):
        return place_values(node.start) + place_values(node.end)
    if isinstance(node, Call) and node.name == "INDEX" and node.args and is_reference(node.args[0]):
        return place_values(node.args[0]) + list(node.args[1:])
    return [node]


Compiled = Callable[[Any], Value]
CallParts = Callable[[Call, str], tuple[Callable[[Any, list[Value]], Value], list[Compiled]]]


def compile_place(
    node: Node, sheet: str, compile_node: Callable[[Node, str], Compiled], call_parts: CallParts
) -> PlaceOf | None:
    """The closure computing where a reference-valued node points (see the module
    docstring), None where the node is no reference. `compile_node` and `call_parts` (a
    call's function and its compiled arguments) are the evaluator's, for the parts
    computed as values: those read the real context; only the rectangle OFFSET or INDIRECT
    names comes back unread."""
    node = _unwrap(node)
    if isinstance(node, ErrorLit):  # an end deleted with its row: `#REF!:B5`
        error = node.value
        return lambda ctx: error
    if isinstance(node, Ref):
        place = Place(node.ref.sheet.lower() if node.ref.sheet else sheet, node.ref.row, node.ref.col)
        return lambda ctx: place
    if isinstance(node, Range):
        r = node.ref
        whole = Place(r.sheet.lower() if r.sheet else sheet, r.start.row, r.start.col, r.height, r.width)
        return lambda ctx: whole
    if isinstance(node, Span):
        first = compile_place(node.start, sheet, compile_node, call_parts)
        second = compile_place(node.end, sheet, compile_node, call_parts)
        if first is None or second is None:
            return lambda ctx: VALUE  # a range operator between values: #VALUE!, as in Excel
        return lambda ctx: _union(first(ctx), second(ctx))
    if isinstance(node, Call) and node.name in DYNAMIC_REFERENCES:
        invoke, args = call_parts(node, sheet)
        return lambda ctx: _as_place(invoke(_Positions(ctx), [arg(ctx) for arg in args]))
    if (
        isinstance(node, Call)
        and node.name == "INDEX"
        and node.args
        and len(node.args) <= 3
        and is_reference(node.args[0])
    ):
        array = compile_place(node.args[0], sheet, compile_node, call_parts)
        picks = [compile_node(arg, sheet) for arg in node.args[1:]]
        return lambda ctx: _index(array(ctx), *(pick(ctx) for pick in picks))  # type: ignore[misc]
    return None


def _as_place(value: Any) -> Place | ErrorValue:
    if isinstance(value, (Place, ErrorValue)):
        return value
    if isinstance(value, Grid) and value.origin is not None:
        return Place(value.origin[0], value.origin[1], value.origin[2], value.height, value.width)
    return VALUE


def _union(a: Place | ErrorValue, b: Place | ErrorValue) -> Place | ErrorValue:
    """The smallest rectangle holding both places (on one sheet; #REF! across sheets)."""
    if isinstance(a, ErrorValue):
        return a
    if isinstance(b, ErrorValue):
        return b
    if a.sheet != b.sheet:
        return REF
    top, left = min(a.row, b.row), min(a.col, b.col)
    bottom, right = max(a.row + a.height, b.row + b.height) - 1, max(a.col + a.width, b.col + b.width) - 1
    return Place(a.sheet, top, left, bottom - top + 1, right - left + 1)


def _index(array: Place | ErrorValue, row: Value, col: Value = None) -> Place | ErrorValue:
    """The place INDEX picks in a reference: as `functions.lookup.index` picks a value (one
    number along a one-row or one-column range; 0 for a whole row or column)."""
    from rlenvs.workbook.formulas.functions.base import integer

    if isinstance(array, ErrorValue):
        return array
    try:
        i = integer(row)
        j = None if col is None else integer(col)
    except EvalError as error:
        return error.error
    if j is None:
        if array.height == 1:
            i, j = 1, i
        elif array.width == 1:
            j = 1
        else:
            j = 0
    if i < 0 or j < 0:
        return VALUE
    if i > array.height or j > array.width:
        return REF
    top, height = (array.row, array.height) if i == 0 else (array.row + i - 1, 1)
    left, width = (array.col, array.width) if j == 0 else (array.col + j - 1, 1)
    if top + height - 1 > MAX_ROW or left + width - 1 > MAX_COL:
        return REF
    return Place(array.sheet, top, left, height, width)


def read(place: Place | ErrorValue, ctx: Any) -> Value:
    """A place's cells as a reference (a `Grid` with its origin), read now."""
    if isinstance(place, ErrorValue):
        return place
    return ctx.grid(place.sheet, place.row, place.col, place.row + place.height - 1, place.col + place.width - 1)
