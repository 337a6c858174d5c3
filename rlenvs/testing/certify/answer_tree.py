"""The gold answer as a tree the math generators rewrite: read with the verifier's own reader
(`read_form`, on the gold normalised as written), walked leaf by leaf, and written back as
LaTeX in a chosen notation.

A `Style` is a notation: how brackets, separators and matrices are written and how each leaf
is spelt. Every style writes the same answer, so each rendering must earn the gold's reward;
a rewrite of one leaf (`replace`) writes a different answer inside the same structure, at any
depth.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from dataclasses import replace as copy_with

from rlenvs.rewards.math.equivalence import Form, read_form
from rlenvs.rewards.math.normalize import normalize_answer

Path = tuple[int, ...]
LATEX_RELATIONS = {"<": "<", "<=": "\\le", "!=": "\\ne"}


def read_tree(gold: str) -> Form:
    """The gold's structure, leaves as written (mixed numbers kept, decorations dropped)."""
    return read_form(normalize_answer(gold, as_written=True))


@dataclass(frozen=True)
class Style:
    """One notation for a whole answer."""

    name: str
    separator: str = ", "
    left: str = ""
    """Written before an opening bracket (`\\left`)."""
    right: str = ""
    union: str = " \\cup "
    matrix: str = "pmatrix"
    reverse_sets: bool = False
    """Items of lists and sets, and parts of unions, in reverse order (their order says nothing)."""
    set_braces: bool = False
    """A list written as a set, `\\{1, 2\\}`."""
    swap_equation: bool = False
    """An equation's sides swapped (the same equation)."""
    leaf: Callable[[str], str] = lambda text: text


def render(form: Form, style: Style = Style("plain")) -> str:
    """The answer `form` as LaTeX in `style`."""
    kind, parts = form.kind, form.parts
    if kind == "leaf":
        return style.leaf(parts[0])
    if kind in ("tuple", "interval"):
        inner = style.separator.join(render(part, style) for part in parts)
        return f"{style.left}{form.detail[0]}{inner}{style.right}{form.detail[1]}"
    if kind == "union":
        # A lone value in a union is a one-point set: `\\{-1\\} \\cup [0, 7)`.
        as_set = copy_with(style, set_braces=True)
        pieces = [
            f"\\{{{render(part, style)}\\}}"
            if part.kind == "leaf"
            else render(part, as_set if part.kind == "list" else style)
            for part in parts
        ]
        return style.union.join(reversed(pieces) if style.reverse_sets else pieces)
    if kind == "list":
        items = [render(part, style) for part in parts]
        if style.reverse_sets:
            items.reverse()
        joined = style.separator.join(items)
        return f"\\{{{joined}\\}}" if style.set_braces else joined
    if kind == "matrix":
        rows = " \\\\ ".join(" & ".join(render(cell, style) for cell in row) for row in parts)
        return f"\\begin{{{style.matrix}}} {rows} \\end{{{style.matrix}}}"
    if kind == "equation":
        left, right = (parts[1], parts[0]) if style.swap_equation else parts
        return f"{style.leaf(left)} = {style.leaf(right)}"
    if kind == "assignment":
        return f"{parts[0]} = {render(parts[2], style)}"
    if kind == "relation":
        right, left = parts
        return f"{style.leaf(left)} {LATEX_RELATIONS.get(form.detail, form.detail)} {style.leaf(right)}"
    if kind == "approx":
        return f"{parts[0]} \\approx {parts[1]}"
    return str(parts[0])  # a chain, as written


def children(form: Form) -> list[tuple[Path, Form]]:
    """The parts of a structure with their paths (a matrix cell's path is row, column)."""
    if form.kind in ("tuple", "interval", "union", "list"):
        return [((index,), part) for index, part in enumerate(form.parts)]
    if form.kind == "matrix":
        return [((row, column), cell) for row, cells in enumerate(form.parts) for column, cell in enumerate(cells)]
    if form.kind == "assignment":
        return [((2,), form.parts[2])]
    return []


def leaves(form: Form, path: Path = ()) -> Iterator[tuple[Path, Form]]:
    """Every leaf of the tree, depth first, with its path."""
    inner = children(form)
    if not inner:
        yield path, form
        return
    for step, child in inner:
        yield from leaves(child, path + step)


def node_at(form: Form, path: Path) -> Form | None:
    """The node at `path`, or None where no node is (a path that stops inside a matrix row)."""
    if not path:
        return form
    for step, child in children(form):
        if path[: len(step)] == step:
            return node_at(child, path[len(step) :])
    return None


def replace(form: Form, path: Path, new: Form) -> Form:
    """The tree with the node at `path` replaced by `new`."""
    if not path:
        return new
    if form.kind == "matrix":
        row, column, rest = path[0], path[1], path[2:]
        rows = [list(cells) for cells in form.parts]
        rows[row][column] = replace(rows[row][column], rest, new)
        return copy_with(form, parts=tuple(tuple(cells) for cells in rows))
    parts = list(form.parts)
    parts[path[0]] = replace(parts[path[0]], path[1:], new)
    return copy_with(form, parts=tuple(parts))


def leaf(text: str) -> Form:
    return Form("leaf", (text,))


# --- leaf notations: the same value and the same form, spelt another way ----------------------

_BINARY = re.compile(r"(?<=[\w})])\s*([+-])\s*(?=[\w\\({])")
_SPACE = re.compile(r"(?<![A-Za-z])\s+|\s+(?![A-Za-z])")
_BRACED_ONE = re.compile(r"(\\sqrt|\^|_)\{(\w)\}")
_BARE_ONE = re.compile(r"(\\sqrt|\^)(?![{\s])(\w)")
_NEGATIVE_FRACTION = re.compile(r"(^|[(\[{,=]\s*)-\s*\\frac\{(\d+)\}")
"""A minus sign before a fraction of numbers that negates it (at the start, not `a - \\frac..`)."""
_RELATION = re.compile(r"[=<>]|\\(?:pm|mp|equiv|pmod|bmod|mod|approx|sim|cong|in|le|ge|ne)(?![A-Za-z])")
"""What makes a text more than a sum whose terms may be reordered."""
_COEFFICIENT = re.compile(r"(?<![\w^_{.\\])(\d+)([a-z])(?![A-Za-z])")


def spaced(text: str) -> str:
    """Spaces around `+` and `-` between terms."""
    return _BINARY.sub(r" \1 ", text)


def tight(text: str) -> str:
    """No spaces, but between two letters (`\\pi r`) or two digits (a mixed number's `3 1/2`)."""
    return re.sub(r"(?<=\d)\s+(?=\d)", "\x00", _SPACE.sub("", re.sub(r"(?<=\d)\s+(?=\d)", "\x00", text))).replace(
        "\x00", " "
    )


def braced(text: str) -> str:
    """One-token arguments braced: `\\sqrt2` as `\\sqrt{2}`, `x^2` as `x^{2}`."""
    return _BARE_ONE.sub(r"\1{\2}", text)


def unbraced(text: str) -> str:
    """Braced one-token arguments bare: `\\sqrt{2}` as `\\sqrt2`, `x^{2}` as `x^2`."""
    return _BRACED_ONE.sub(lambda m: f"{m[1]} {m[2]}" if m[1] == "\\sqrt" else f"{m[1]}{m[2]}", text)


def display_fractions(text: str) -> str:
    return re.sub(r"\\frac(?![A-Za-z])", r"\\dfrac", text)


def signed_numerators(text: str) -> str:
    """`-\\frac{3}{4}` as `\\frac{-3}{4}`."""
    return _NEGATIVE_FRACTION.sub(r"\1\\frac{-\2}", text)


def explicit_products(text: str) -> str:
    """`2x` as `2 \\cdot x`."""
    return _COEFFICIENT.sub(r"\1 \\cdot \2", text)


def top_terms(text: str) -> list[str] | None:
    """The terms of a sum at the top level, each with its sign (`["3x^2", "-18x", "-24"]`);
    None where the text is no sum of two or more terms."""
    terms: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char in "+-" and depth == 0 and index > 0:
            before = text[:index].rstrip()
            if before and before[-1] not in "^_=(,{[" and not before.endswith(("\\cdot", "\\times", "\\div")):
                terms.append(text[start:index].strip())
                start = index
    terms.append(text[start:].strip())
    terms = [term for term in terms if term]
    if len(terms) < 2 or _RELATION.search(text):
        return None
    return terms


def commuted(text: str) -> str:
    """A sum's first term moved to the end: `3x^2 - 18x - 24` as `-18x - 24 + 3x^2`."""
    terms = top_terms(text)
    if terms is None:
        return text
    signed = [(term[0], term[1:].strip()) if term[0] in "+-" else ("+", term) for term in terms]
    signed = signed[1:] + signed[:1]
    head_sign, head = signed[0]
    written = ("-" if head_sign == "-" else "") + head
    return " ".join([written, *(f"{sign} {body}" for sign, body in signed[1:])])
