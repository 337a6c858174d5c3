"""Wrong programs close to the reference: the reference with one small change.

They stand for the solutions a policy writes that are almost right (an off-by-one, a `<` for
`<=`, `and` for `or`, a dropped `not`), the class a weak test suite lets through. A mutant that
answers like the reference on every input is not wrong at all and is never counted; one that
answers like it on the task's own tests but not on a generated input is what the generated
tests exist to catch (`build` keeps a test that tells each such mutant from the reference).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

Change = Callable[[ast.AST], None]
"""One mutation: edits the node it is given (the copy's node at the site's position) in place."""

MAX_MUTANTS = 40
"""Mutants made per task, at most (the first ones in source order)."""

_COMPARISONS: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}
_OPERATORS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.FloorDiv: ast.Mod,
    ast.Mod: ast.FloorDiv,
}


def reference_mutants(source: str, functions: set[str]) -> list[str]:
    """The reference's one-change mutants inside the named functions (each as source)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    sites = [
        node
        for function in tree.body
        if isinstance(function, ast.FunctionDef) and function.name in functions
        for node in ast.walk(function)
    ]
    mutants: list[str] = []
    for index, node in enumerate(sites):
        for change in _changes(node):
            mutated = copy.deepcopy(tree)
            target = _nth_site(mutated, functions, index)
            change(target)
            try:
                text = ast.unparse(ast.fix_missing_locations(mutated))
            except (ValueError, TypeError, AttributeError):
                continue
            if text not in mutants:
                mutants.append(text)
            if len(mutants) >= MAX_MUTANTS:
                return mutants
    return mutants


def _nth_site(tree: ast.Module, functions: set[str], index: int) -> ast.AST:
    sites = (
        node
        for function in tree.body
        if isinstance(function, ast.FunctionDef) and function.name in functions
        for node in ast.walk(function)
    )
    for number, node in enumerate(sites):
        if number == index:
            return node
    raise IndexError(index)


def _changes(node: ast.AST) -> Iterator[Change]:
    """Functions that each apply one mutation to a copy of `node` (found by position)."""
    if isinstance(node, ast.Compare):
        for position, operator in enumerate(node.ops):
            if type(operator) in _COMPARISONS:
                yield _set_compare(position, _COMPARISONS[type(operator)])
    elif isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        yield _set_attribute("op", _OPERATORS[type(node.op)])
    elif isinstance(node, ast.BoolOp):
        yield _set_attribute("op", ast.Or if isinstance(node.op, ast.And) else ast.And)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield _drop_not
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield _shift_constant(1)
        yield _shift_constant(-1)


def _set_compare(position: int, operator: type) -> Change:
    def change(node: ast.AST) -> None:
        assert isinstance(node, ast.Compare)
        node.ops[position] = operator()

    return change


def _set_attribute(name: str, operator: type) -> Change:
    def change(node: ast.AST) -> None:
        setattr(node, name, operator())

    return change


def _drop_not(node: ast.AST) -> None:
    """`not x` becomes `not not x`: the truth of x, as if the `not` were not there."""
    assert isinstance(node, ast.UnaryOp)
    node.operand = ast.UnaryOp(ast.Not(), node.operand)


def _shift_constant(step: int) -> Change:
    def change(node: ast.AST) -> None:
        assert isinstance(node, ast.Constant)
        value = node.value
        assert type(value) is int  # `_changes` shifts only int constants
        node.value = value + step

    return change
