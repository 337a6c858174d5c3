"""Reading a program out of a model's reply, and scoring test reports.

Extraction rule (one program per reply):
1. The blocks (`code_blocks.fences`: Markdown's fences, with CRLF, indented, longer and
   tilde fences, and the reasoning in `<think>` left out): fenced blocks tagged python
   (```python, ```py, ```python3, any case); if there are none, untagged fenced blocks (```);
   if there are none, the whole reply (after a `</think>`). Other languages' blocks (```bash,
   ```text) are never taken for the program.
2. The program is the last block that defines (at its top level, or in a top-level `try` or
   `if`: `def`, `class` or an assignment) a function the tests call, preceded by the
   definitions it needs that other blocks have: the top-level definitions (`def`, `class`,
   assignment, import, or a `try`/`if` that binds names) of a name the program uses but does
   not define, from the latest earlier block that defines it, else from the first later one
   (a helper written after the main function). Nothing else of the other blocks runs: an
   "Example usage" block or the model's own asserts after the solution are not the solution,
   and a later definition replaces an earlier draft. An import does not make a block the
   answer (`from solution import f` heads a block of the model's own tests). Where no python
   block defines a function the tests call but an untagged block does (an untagged solution,
   then a ```python usage line), the python and untagged blocks are read together. Where no
   block defines one (HumanEval's body-only completions), the last block is the program.
   `from __future__` imports go first in a program made of several pieces (they must open
   a module, and a helper or the task's starter code now comes before them).
3. Terminal escape sequences and control characters other than tab, newline, carriage
   return and form feed are removed from the reply first: Python accepts them nowhere
   outside a string literal, and a model emits them only as stray bytes.

Scoring needs the tests to run somewhere safe, so it lives with the sandbox's `TestReport`:
`tests_reward(report, partial)` is 1.0 only when every test ran and passed (or the passed
fraction with `partial=True`).
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from rlenvs.rewards.code_blocks import answer_blocks
from rlenvs.sandbox.results import TestReport

T = TypeVar("T")

_STRAY = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b\x0e-\x1f\x7f]")
"""ANSI escape sequences (colours, cursor moves), then any other control character but tab,
newline, carriage return and form feed."""
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})


def extract_code(reply: str, calls: Iterable[str] = ()) -> str:
    """The program in a reply, by the rule in the module docstring; `calls` names the
    functions the tests call (none: the last block is the program)."""
    found, answer = _answer(reply)
    tagged = [_runnable(body) for tag, body in found if tag in PYTHON_TAGS]
    untagged = [_runnable(body) for tag, body in found if tag == ""]
    blocks = tagged or untagged or [_runnable(answer)]
    calls = tuple(calls)
    program = _program(blocks, calls) if calls else None
    if program is None and calls and tagged and untagged:
        program = _program([_runnable(body) for tag, body in found if tag in PYTHON_TAGS or tag == ""], calls)
    return (program if program is not None else blocks[-1]).strip("\n")


def python_blocks(reply: str) -> list[str]:
    """Every fenced block tagged python (```python, ```py, ...), in order."""
    return [_runnable(body) for tag, body in _answer(reply)[0] if tag in PYTHON_TAGS]


def fenced_blocks(reply: str, *, tag: str) -> list[str]:
    """Every fenced block with exactly this tag ("" for untagged), in order."""
    return [_runnable(body) for found, body in _answer(reply)[0] if found == tag]


def _runnable(code: str) -> str:
    """Code as a program file would hold it: a lone surrogate (which no UTF-8 file can
    contain, and the sandbox refuses) becomes '?'. Any reply stays a valid action."""
    return code.encode("utf-8", "replace").decode("utf-8")


def _answer(reply: str) -> tuple[list[tuple[str, str]], str]:
    """The (tag, body) blocks of the reply's answer and the answer's text (`code_blocks`)."""
    if not isinstance(reply, str):
        raise TypeError(f"reply must be a str, got {type(reply).__name__}")
    return answer_blocks(_STRAY.sub("", reply), _is_program)


def _is_program(text: str) -> bool:
    """Code, not a word of prose: it parses, and not only as bare expressions ("Done")."""
    tree = _parse(text)
    return tree is not None and any(not isinstance(statement, ast.Expr) for statement in tree.body)


# --- which block is the program ---------------------------------------------------------------


def _program(blocks: list[str], calls: tuple[str, ...]) -> str | None:
    """The last block defining one of `calls`, after the definitions it needs from the
    other blocks; None when no block defines one."""
    mentions = re.compile(r"\b(?:" + "|".join(re.escape(name) for name in calls) + r")\b")
    answer, tree = None, None
    for index in reversed(range(len(blocks))):
        tree = _parse(blocks[index]) if mentions.search(blocks[index]) else None
        if tree is not None and _bound(tree.body, imports=False) & set(calls):
            answer = index
            break
    if answer is None:
        return None
    # name -> where it is defined: the latest earlier block, else the first later one
    providers: dict[str, tuple[int, ast.stmt]] = {}
    for block in [*reversed(range(answer + 1, len(blocks))), *range(answer)]:
        for statement in _definitions(_parse(blocks[block])):
            providers.update(dict.fromkeys(_bound([statement]), (block, statement)))
    assert tree is not None  # the search above stops only at a block that parsed
    have = _bound(tree.body)
    wanted = (_free_names(tree) | set(calls)) - have
    kept: dict[tuple[int, int], str] = {}
    lines = functools.cache(lambda block: blocks[block].splitlines())
    while wanted:
        found = providers.get(wanted.pop())
        if found is not None and (found[0], found[1].lineno) not in kept:
            block, statement = found
            kept[block, statement.lineno] = _source(lines(block), statement)
            have |= _bound([statement])
            wanted |= _free_names(statement) - have
    return future_imports_first("\n\n".join([*(kept[key] for key in sorted(kept)), blocks[answer].strip("\n")]))


def _definitions(tree: ast.Module | None) -> list[ast.stmt]:
    """A block's top-level statements that bind names (none, if it did not parse)."""
    return [statement for statement in tree.body if _bound([statement])] if tree is not None else []


def _parse(code: str) -> ast.Module | None:
    try:
        return quietly(ast.parse, code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_WARNINGS_LOCK = threading.Lock()


def quietly(function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` with warnings silenced: the code parsed or compiled is the model's,
    and its warnings (an invalid escape in a regex, `is` with a literal) are not the host's
    to print. Under one lock, since `warnings.catch_warnings` swaps process-wide state and
    two overlapping ones in different threads could leave the filters changed."""
    with _WARNINGS_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args)


def _bound(statements: list[ast.stmt], *, imports: bool = True) -> set[str]:
    """The names top-level statements bind by definition: def, class, assignment, import,
    and those of a `try` or `if` around them (`try: from functools import cache`)."""
    names: set[str] = set()
    for statement in statements:
        if isinstance(statement, ast.Try):
            branches = [statement.body, *(h.body for h in statement.handlers), statement.orelse, statement.finalbody]
            names |= set().union(*(_bound(branch, imports=imports) for branch in branches))
        elif isinstance(statement, ast.If):
            names |= _bound(statement.body, imports=imports) | _bound(statement.orelse, imports=imports)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif imports and isinstance(statement, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in statement.names if alias.name != "*"}
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names |= {
                n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
    return names


def _free_names(tree: ast.AST | None) -> set[str]:
    """The names the code reads and never binds (no assignment, parameter, def, class or
    import of that name anywhere in it): what it needs from elsewhere."""
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            bound |= _bound([node])
    return read - bound


def _source(lines: list[str], statement: ast.stmt) -> str:
    """A statement's text as written (decorators included)."""
    first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
    return "\n".join(lines[first - 1 : statement.end_lineno])


# --- joining a completion to the task's starter code ----------------------------------------


def complete_function(code: str, starter: str, entry_point: str) -> str:
    """The program to test when the task gave starter code (HumanEval's prompt: the
    signature and docstring).

    A reply that defines `entry_point` itself runs after the starter code (so its imports
    and helper functions exist and the reply's definition wins; its `from __future__`
    imports go first). A reply that is only the body (indented lines, as HumanEval's
    canonical solutions are) is appended to it, its leading tabs turned into the starter's
    indentation (a body indented with tabs under a docstring indented with spaces is a
    TabError, not a different program); a body that does not compile so (written at the
    margin, or indented by 2 or 8 spaces) is re-indented by the starter's unit instead, when
    that compiles.
    """
    if _defines(code, entry_point):
        return future_imports_first(f"{starter.rstrip()}\n\n\n{code}\n")
    starter = starter.rstrip(" ")
    if not starter.endswith("\n"):
        starter += "\n"
    program = starter + _indented_like(code, starter) + "\n"
    if _compiles(program):
        return program
    unit = _indent_unit(starter)
    reindented = starter + textwrap.indent(textwrap.dedent(_indented_like(code, starter)), unit or "    ") + "\n"
    return reindented if _compiles(reindented) else program


def _indent_unit(starter: str) -> str:
    """The starter's indentation: the leading spaces of its first indented line."""
    return next((m.group(1) for m in re.finditer(r"^( +)\S", starter, re.MULTILINE)), "")


def _compiles(program: str) -> bool:
    try:
        quietly(compile, program, "<solution>", "exec", 0, True)
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
        return False
    return True


def _last_line(statement: ast.stmt) -> int:
    assert statement.end_lineno is not None  # `ast.parse` sets it on every statement
    return statement.end_lineno


def future_imports_first(program: str) -> str:
    """`program` with its top-level `from __future__` imports moved to the top, where Python
    requires them (each on lines of its own; a program that does not parse is unchanged)."""
    tree = _parse(program)
    if tree is None:
        return program
    futures = [s for s in tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__"]
    lines = program.splitlines()
    shared = {s.lineno for s in tree.body if s not in futures} | {s.end_lineno for s in tree.body if s not in futures}
    moved = [s for s in futures if not shared & set(range(s.lineno, _last_line(s) + 1))]
    if not moved or all(s is tree.body[i] for i, s in enumerate(moved)):
        return program  # none, or already first
    taken = {n for s in moved for n in range(s.lineno, _last_line(s) + 1)}
    head = [line for s in moved for line in lines[s.lineno - 1 : s.end_lineno]]
    rest = [line for n, line in enumerate(lines, 1) if n not in taken]
    return "\n".join(head + rest) + ("\n" if program.endswith("\n") else "")


def _indented_like(body: str, starter: str) -> str:
    """`body` with each leading tab replaced by the starter's indentation unit, where the
    starter indents with spaces."""
    unit = _indent_unit(starter)
    if not unit or "\t" not in body:
        return body
    return re.sub(r"^[ \t]+", lambda m: m.group(0).replace("\t", unit), body, flags=re.MULTILINE)


def _defines(code: str, name: str) -> bool:
    if not re.search(rf"\bdef\s+{re.escape(name)}\b", code):
        return False  # cannot define it: no parse (a body-only reply, as HumanEval's solutions)
    tree = _parse(code)
    return tree is not None and any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in tree.body
    )


def tests_reward(report: TestReport, *, partial: bool = False) -> float:
    """1.0 iff every test ran and passed; with `partial`, the fraction that passed."""
    if partial:
        return report.fraction_passed
    return 1.0 if report.all_passed else 0.0
