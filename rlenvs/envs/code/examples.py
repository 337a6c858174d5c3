"""Which of a task's tests its prompt already shows.

Retry feedback may show a failing test in full only when the prompt already shows it: a test
the feedback quotes (its inputs, its expected value) is one the next reply can hard-code. A
HumanEval prompt shows calls and their results in its docstring, in several styles:

    >>> strlen('abc')            add(2, 3) == 5          solve("ab") = "AB"
    3                            encrypt('hi') returns 'lm'    next_smallest([]) ==> None

Rule: a test is shown when it is a single `assert candidate(args) == value` (either side
first; `assert True` lines beside it are allowed) and the prompt shows a call with the same
arguments and the same result, compared as Python literals by their `repr` (so `1`, `1.0`
and `True` differ). Anything else is hidden: a test with set-up lines, a loop, a tolerance,
or a call the prompt does not show with that exact result. A mistake in reading the prompt
can only hide a test, never show one the prompt does not show.

MBPP's prompt shows its first test verbatim: there a test is shown when its text is that
test's (`mbpp`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from rlenvs.sandbox import TestProgram

Example = tuple[str, str]
"""(repr of the argument tuple, repr of the result)."""

_SEPARATOR = re.compile(r"[ \t]*(?:#[ \t]*)?(?:==>|==|=>|->|➞|→|=|returns|should return)[ \t]*")
_MAX_CALL_CHARS = 2000
_MAX_RESULT_CHARS = 500
"""Longest call and result read out of a prompt: examples are short, and any prompt (a
user's own task) is bounded work."""


def shown_examples(prompt: str, function: str) -> set[Example]:
    """The calls of `function` the prompt shows together with their results."""
    examples = set()
    for match in re.finditer(rf"(?<![\w.]){re.escape(function)}[ \t]*\(", prompt):
        end = _closing_paren(prompt, match.end() - 1)
        if end is None:
            continue
        args = literal_args(f"{function}{prompt[match.end() - 1 : end + 1]}")
        if args is None:
            continue
        line_end = prompt.find("\n", end)
        line_end = len(prompt) if line_end < 0 else line_end
        value = _inline_result(prompt[end + 1 : line_end])
        line_start = prompt.rfind("\n", 0, match.start()) + 1
        if value is None and prompt[line_start : match.start()].strip() == ">>>":
            value = _next_line_result(prompt[line_end + 1 :])
        if value is not None:
            examples.add((repr(args), repr(value[0])))
    return examples


def shown_test(test: str, names: Iterable[str], examples: set[Example]) -> bool:
    """Whether `test` (a test snippet calling the solution under one of `names`) is one of
    the `examples` the prompt shows."""
    try:
        statements = ast.parse(test).body
    except SyntaxError:
        return False
    checks = [s for s in statements if not (isinstance(s, ast.Assert) and isinstance(s.test, ast.Constant))]
    if len(checks) != 1 or not isinstance(checks[0], ast.Assert):
        return False
    compare = checks[0].test
    if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Eq)):
        return False
    names = set(names)
    for call, expected in ((compare.left, compare.comparators[0]), (compare.comparators[0], compare.left)):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in names:
            args, value = literal_args(call), literal(expected)
            return args is not None and value is not None and (repr(args), repr(value[0])) in examples
    return False


def shown_first(program: TestProgram, shown: Sequence[bool]) -> tuple[TestProgram, int]:
    """`program` with its shown tests moved to the front (each group in its order), and how
    many there are. Running them first means that when the solution answers a shown test
    it has not yet been called with a hidden test's inputs, so what the feedback quotes of
    it cannot carry them. A shown test is one self-contained assert, so it needs no set-up
    line of another test."""
    order = sorted(range(len(program.tests)), key=lambda index: not shown[index])
    reordered = TestProgram(
        tests=tuple(program.tests[i] for i in order),
        remote=program.remote,
        setup=program.setup,
        names=tuple(program.names[i] for i in order),
    )
    return reordered, sum(map(bool, shown))


def _closing_paren(text: str, start: int) -> int | None:
    """Index of the bracket closing the one at `start`, skipping quoted strings."""
    depth, quote, index = 0, "", start
    stop = min(len(text), start + _MAX_CALL_CHARS)
    while index < stop:
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def literal_args(call: str | ast.expr) -> tuple | None:
    """The positional arguments of a call as Python values; None unless all are literals."""
    if isinstance(call, str):
        try:
            call = ast.parse(call.strip(), mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    values = []
    for argument in call.args:
        value = literal(argument)
        if value is None:
            return None
        values.append(value[0])
    return tuple(values)


def literal(node: ast.expr | str) -> tuple[object] | None:
    """(value,) for a Python literal, else None (a 1-tuple, since the value may be None)."""
    try:
        return (ast.literal_eval(node),)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _inline_result(rest: str) -> tuple[object] | None:
    """The result stated after a call on its line: `== 5`, `➞ True`, `returns 'lm'.`, ..."""
    separator = _SEPARATOR.match(rest)
    if separator is None:
        return None
    text = rest[separator.end() : separator.end() + _MAX_RESULT_CHARS]
    # the longest prefix that is a literal: the line may go on ("# the odd numbers are ...")
    cuts = [match.start() for match in re.finditer(r"[ \t#]", text)] + [len(text)]
    for cut in reversed(cuts):
        value = literal(text[:cut].strip().rstrip(".,;"))
        if value is not None:
            return value
    return None


def _next_line_result(following: str) -> tuple[object] | None:
    """A doctest's expected output: the lines after the `>>>` line, up to a blank line or
    the next prompt."""
    lines = []
    for line in following[:_MAX_RESULT_CHARS].splitlines():
        if not line.strip() or line.strip().startswith((">>>", '"""', "'''")):
            break
        lines.append(line.strip())
    return literal(" ".join(lines)) if lines else None
