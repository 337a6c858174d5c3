"""Tokens -> syntax tree, by precedence climbing with Excel's operator precedence.

From loosest to tightest: comparisons `= <> < > <= >=`, `&`, `+ -`, `* /`, `^`, postfix
`%`, prefix `-`/`+`, prefix `@`, the range operator `:`. All binary operators are
left-associative (`2^3^2` is 64, as in Excel), and prefix minus binds tighter than `^`
(`-2^2` is 4, as in Excel; LibreOffice agrees).

A range written whole (`B2:B9`) is one token; the range operator joins what a token cannot,
a reference and a function that returns one (`$B$2:INDEX($B:$B,ROW())`), as a `Span`.
`@x` (Excel 365's implicit intersection, which it writes into older formulas: `=@C:C*@D:D`
is the row's C times its D) is read as `SINGLE(x)`, the function Excel stores it as in a
file (`_xlfn.SINGLE`).

Nesting (parentheses, calls, prefix operators, `%`) is bounded by `MAX_DEPTH` so that no
input can exhaust Python's stack in the parser or in any later walk over the tree; Excel
itself allows 64 levels of nested functions, which fit.
"""

from __future__ import annotations

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
)
from rlenvs.workbook.formulas.tokenizer import FormulaError, Token, tokenize

MAX_DEPTH = 200
"""Most nested parser frames (about three per level of parentheses or calls)."""

PRECEDENCE = {"=": 1, "<>": 1, "<": 1, ">": 1, "<=": 1, ">=": 1, "&": 2, "+": 3, "-": 3, "*": 4, "/": 4, "^": 5}


def _strip_prefix(name: str) -> str:
    for prefix in ("_XLFN._XLWS.", "_XLFN.", "_XLWS."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def next(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def error(self, message: str, tok: Token) -> FormulaError:
        return FormulaError(message, self.text, tok.pos)

    def enter(self, tok: Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error("formula is nested too deeply", tok)

    def parse(self) -> Node:
        if self.peek().kind == "END":
            raise self.error("empty formula: expected an expression after =", self.peek())
        node = self.expr(1)
        tok = self.peek()
        if tok.kind != "END":
            raise self.error(f"unexpected {tok.text!r}: expected an operator or the end of the formula", tok)
        return node

    def expr(self, min_prec: int) -> Node:
        self.enter(self.peek())
        left = self.prefix()
        while True:
            tok = self.peek()
            prec = PRECEDENCE.get(tok.value) if tok.kind == "OP" else None
            if prec is None or prec < min_prec:
                break
            ops: list[str] = []
            operands = [left]
            while True:
                tok = self.peek()
                if tok.kind != "OP" or PRECEDENCE.get(tok.value) != prec:
                    break
                self.next()
                ops.append(tok.value)
                operands.append(self.expr(prec + 1))
            left = BinOp(tuple(ops), tuple(operands))
        self.depth -= 1
        return left

    def prefix(self) -> Node:
        tok = self.peek()
        if tok.kind == "OP" and tok.value in ("-", "+"):
            self.next()
            self.enter(tok)
            node: Node = Unary(tok.value, self.prefix())
            self.depth -= 1
        elif tok.kind == "@":
            self.next()
            self.enter(tok)
            node = Call("SINGLE", (self.prefix(),))
            self.depth -= 1
        else:
            node = self.spans()
        entered = 0
        while self.peek().kind == "OP" and self.peek().value == "%":
            self.enter(self.next())
            entered += 1
            node = Percent(node)
        self.depth -= entered
        return node

    def spans(self) -> Node:
        """A primary, and the range operator after it (`A1:INDEX(...)`), left to right."""
        node = self.primary()
        entered = 0
        while self.peek().kind == ":":
            colon = self.next()
            self.enter(colon)
            entered += 1
            end = self.primary()
            if not all(
                isinstance(side, (Ref, Range, Call, Paren, Span, ErrorLit)) for side in (node, end)
            ):  # #REF! where a row was deleted
                raise self.error("the range operator : joins references, as in A1:B9 or $B$2:INDEX($B:$B,ROW())", colon)
            node = Span(node, end)
        self.depth -= entered
        return node

    def primary(self) -> Node:
        tok = self.next()
        kind = tok.kind
        if kind == "NUM":
            return Number(tok.value)
        if kind == "STR":
            return Text(tok.value)
        if kind == "BOOL":
            return Bool(tok.value)
        if kind == "ERR":
            return ErrorLit(tok.value)
        if kind == "REF":
            return Ref(tok.value)
        if kind == "RANGE":
            return Range(tok.value)
        if kind == "NAME":
            return Name(tok.value)
        if kind == "(":
            inner = self.expr(1)
            close = self.next()
            if close.kind != ")":
                raise self.error(f"expected ) to close the ( at position {tok.pos}", close)
            return Paren(inner)
        if kind == "FUNC":
            return self.call(tok)
        if kind == "{":
            return self.array(tok)
        if kind == "END":
            raise self.error("formula ends early: expected a value, reference or function", tok)
        raise self.error(f"unexpected {tok.text!r}: expected a value, reference or function", tok)

    def call(self, tok: Token) -> Node:
        name = _strip_prefix(tok.value)
        args: list[Node] = []
        if self.peek().kind == ")":
            self.next()
            return Call(name, ())
        while True:
            if self.peek().kind in (",", ")"):
                args.append(Missing())
            else:
                args.append(self.expr(1))
            sep = self.next()
            if sep.kind == ")":
                return Call(name, tuple(args))
            if sep.kind != ",":
                where = "the end of the formula" if sep.kind == "END" else repr(sep.text)
                raise self.error(f"expected , or ) in the arguments of {name}, found {where}", sep)

    def array(self, tok: Token) -> Node:
        rows: list[tuple[Node, ...]] = []
        row: list[Node] = []
        while True:
            t = self.next()
            sign = None
            if t.kind == "OP" and t.value in ("-", "+"):
                sign, t = t.value, self.next()
            if t.kind == "NUM":
                item: Node = Number(t.value)
                if sign == "-":
                    item = Unary("-", item)
            elif sign is None and t.kind in ("STR", "BOOL", "ERR"):
                item = {"STR": Text, "BOOL": Bool, "ERR": ErrorLit}[t.kind](t.value)
            else:
                raise self.error("an array constant holds only numbers, text, TRUE/FALSE and errors", t)
            row.append(item)
            sep = self.next()
            if sep.kind == ",":
                continue
            if sep.kind in (";", "}"):
                if rows and len(row) != len(rows[0]):
                    raise self.error("the rows of an array constant must have the same length", sep)
                rows.append(tuple(row))
                row = []
                if sep.kind == "}":
                    return Array(tuple(rows))
                continue
            raise self.error("expected , ; or } in an array constant", sep)


def parse_formula(text: str) -> Node:
    """The syntax tree of a formula (`=` optional). Raises FormulaError (a ValueError) with
    the position and what was expected; never anything else."""
    if not isinstance(text, str):
        raise FormulaError(f"a formula is text, not {type(text).__name__}")
    return _Parser(text).parse()
