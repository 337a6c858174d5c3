"""The formula syntax tree, and its canonical text.

Nodes are frozen dataclasses, so trees can be shared between cells and copies of a
workbook. References store the cells they point to (A1 coordinates as written, with the
`$` flags), not offsets from the formula's cell: moving a formula does not change what it
means, and only copying (`shift_formula`) or inserting/deleting rows rewrites them.

Chains of operators of one precedence level (`A1+A2-A3+...`) are one flat `BinOp` node, so
a long sum does not make a deep tree (every walk over the tree is recursive, and nesting
is bounded by the parser).

`to_text` writes a tree back: upper-case function names and references, no spaces,
numbers in their shortest form, and the parentheses the author wrote (kept as `Paren`
nodes, so the text stays recognisable and precedence is never re-derived).
"""

from __future__ import annotations

from dataclasses import dataclass

from rlenvs.workbook.cells import CellRef, RangeRef
from rlenvs.workbook.values import ErrorValue


class Node:
    """Base class of the syntax tree."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Number(Node):
    value: float


@dataclass(frozen=True, slots=True)
class Text(Node):
    value: str


@dataclass(frozen=True, slots=True)
class Bool(Node):
    value: bool


@dataclass(frozen=True, slots=True)
class ErrorLit(Node):
    """An error written in the formula, e.g. `#REF!` left where a deleted cell was."""

    value: ErrorValue


@dataclass(frozen=True, slots=True)
class Ref(Node):
    ref: CellRef


@dataclass(frozen=True, slots=True)
class Range(Node):
    ref: RangeRef


@dataclass(frozen=True, slots=True)
class Name(Node):
    """An identifier that is not a function call, reference or TRUE/FALSE. Defined names
    are not supported, so it evaluates to #NAME? as an unknown name does in Excel."""

    name: str


@dataclass(frozen=True, slots=True)
class Missing(Node):
    """An omitted argument, as in `IF(A1,,1)`; it evaluates as an empty cell."""


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str  # "-" or "+"
    operand: Node


@dataclass(frozen=True, slots=True)
class Percent(Node):
    operand: Node


@dataclass(frozen=True, slots=True)
class BinOp(Node):
    """`operands[0] ops[0] operands[1] ops[1] ...`, evaluated left to right; all ops have
    the same precedence."""

    ops: tuple[str, ...]
    operands: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Paren(Node):
    inner: Node


@dataclass(frozen=True, slots=True)
class Span(Node):
    """The range operator between two references that are not written as one range:
    `$B$2:INDEX($B:$B,ROW())`, `INDEX(B2:B10,2):B5`, `OFFSET(A1,1,0):A9`. What it means is
    found when the formula runs (`places`)."""

    start: Node
    end: Node


@dataclass(frozen=True, slots=True)
class Call(Node):
    name: str  # upper case, without an _xlfn. prefix
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Array(Node):
    """An array constant `{1,2;3,4}`: rows of Number/Text/Bool/ErrorLit (or Unary minus
    of a Number)."""

    rows: tuple[tuple[Node, ...], ...]


def format_number(x: float) -> str:
    """A number literal as formula text: `3`, `0.5`, `1E+20`."""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x)).upper().replace("E+0", "E+").replace("E-0", "E-")


def to_text(node: Node, xlfn: frozenset[str] = frozenset()) -> str:
    """The canonical text of a tree, starting with `=`. Function names in `xlfn` get
    the `_xlfn.` prefix that .xlsx files need for functions newer than Excel 2007."""
    return "=" + _text(node, xlfn)


def _text(node: Node, xlfn: frozenset[str]) -> str:
    if isinstance(node, Ref):
        return str(node.ref)
    if isinstance(node, Range):
        return str(node.ref)
    if isinstance(node, Number):
        return format_number(node.value)
    if isinstance(node, Text):
        return '"' + node.value.replace('"', '""') + '"'
    if isinstance(node, Bool):
        return "TRUE" if node.value else "FALSE"
    if isinstance(node, ErrorLit):
        return node.value.code
    if isinstance(node, BinOp):
        parts = [_text(node.operands[0], xlfn)]
        for op, operand in zip(node.ops, node.operands[1:]):
            parts.append(op)
            parts.append(_text(operand, xlfn))
        return "".join(parts)
    if isinstance(node, Unary):
        return node.op + _text(node.operand, xlfn)
    if isinstance(node, Percent):
        return _text(node.operand, xlfn) + "%"
    if isinstance(node, Paren):
        return "(" + _text(node.inner, xlfn) + ")"
    if isinstance(node, Span):
        return _text(node.start, xlfn) + ":" + _text(node.end, xlfn)
    if isinstance(node, Call):
        name = ("_xlfn." + node.name) if node.name in xlfn else node.name
        return name + "(" + ",".join(_text(a, xlfn) for a in node.args) + ")"
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Missing):
        return ""
    if isinstance(node, Array):
        return "{" + ";".join(",".join(_text(v, xlfn) for v in row) for row in node.rows) + "}"
    raise TypeError(f"not a formula node: {node!r}")


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-nodes of a node (for walks over the tree)."""
    if isinstance(node, BinOp):
        return node.operands
    if isinstance(node, (Unary, Percent)):
        return (node.operand,)
    if isinstance(node, Paren):
        return (node.inner,)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Span):
        return (node.start, node.end)
    return ()


def references(node: Node) -> list[Ref | Range]:
    """Every Ref and Range node in the tree, left to right (without recursion)."""
    out: list[Ref | Range] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (Ref, Range)):
            out.append(n)
        else:
            stack.extend(reversed(children(n)))
    return out
