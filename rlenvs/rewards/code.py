"""Reading a program out of a model's reply, and scoring test reports.

Extraction rule (one program per reply):
1. the last fenced block tagged python (```python, ```py, ```python3, any case);
2. else the last untagged fenced block (```);
3. else the whole reply.
A fence left open at the end of the reply (the model ran out of tokens) runs to the end.
Other languages' blocks (```bash, ```text) are never taken for the program.

Scoring needs the tests to run somewhere safe, so it lives with the sandbox's `TestReport`:
`tests_reward(report, partial)` is 1.0 only when every test ran and passed (or the passed
fraction with `partial=True`).
"""

from __future__ import annotations

import ast
import re

from rlenvs.sandbox.results import TestReport

_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})


def extract_code(reply: str) -> str:
    """The program in a reply, by the rule in the module docstring."""
    tagged, untagged = python_blocks(reply), fenced_blocks(reply, tag="")
    code = tagged[-1] if tagged else untagged[-1] if untagged else _runnable(reply)
    return code.strip("\n")


def python_blocks(reply: str) -> list[str]:
    """Every fenced block tagged python (```python, ```py, ...), in order."""
    return [_runnable(body) for tag, body in _fences(reply) if tag in PYTHON_TAGS]


def _runnable(code: str) -> str:
    """Code as a program file would hold it: a lone surrogate (which no UTF-8 file can
    contain, and the sandbox refuses) becomes '?'. Any reply stays a valid action."""
    return code.encode("utf-8", "replace").decode("utf-8")


def fenced_blocks(reply: str, *, tag: str) -> list[str]:
    """Every fenced block with exactly this tag ("" for untagged), in order."""
    return [_runnable(body) for found, body in _fences(reply) if found == tag]


def _fences(reply: str) -> list[tuple[str, str]]:
    if not isinstance(reply, str):
        raise TypeError(f"reply must be a str, got {type(reply).__name__}")
    return [(match.group(1).lower(), match.group(2)) for match in _FENCE.finditer(reply)]


def complete_function(code: str, starter: str, entry_point: str) -> str:
    """The program to test when the task gave starter code (HumanEval's prompt: the
    signature and docstring).

    A reply that defines `entry_point` itself runs after the starter code (so its imports
    and helper functions exist and the reply's definition wins); a reply that is only the
    body (indented lines, as HumanEval's canonical solutions are) is appended to it.
    """
    if _defines(code, entry_point):
        return f"{starter.rstrip()}\n\n\n{code}\n"
    starter = starter.rstrip(" ")
    if not starter.endswith("\n"):
        starter += "\n"
    return starter + code + "\n"


def _defines(code: str, name: str) -> bool:
    if not re.search(rf"\bdef\s+{re.escape(name)}\b", code):
        return False  # cannot define it: no parse (a body-only reply, as HumanEval's solutions)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in tree.body)


def tests_reward(report: TestReport, *, partial: bool = False) -> float:
    """1.0 iff every test ran and passed; with `partial`, the fraction that passed."""
    if partial:
        return report.fraction_passed
    return 1.0 if report.all_passed else 0.0
