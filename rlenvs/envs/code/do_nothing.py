"""Programs that answer a code task without computing its function, written from the task's
own prompt: the values it shows, the empty values, the input echoed, an element of it, and a
table of the prompt's examples.

Two places use the same list: `rlenvs certify` plays each as an attack (it must score 0), and
the generated tests' build (`strengthen`) runs each beside the reference, so it can keep a
test that tells it apart and record, per task, the ones that no input like the task's own
tells apart (the reference gives their answer there: `clear_tuple` always returns `()`, a
list copy is its input). certify calls a program an attack only where the build saw it
answer differently from the reference: an attack needs a witness.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from dataclasses import dataclass

from rlenvs.envs.code.env import CodeTask
from rlenvs.envs.code.examples import shown_examples

EMPTY_VALUES: tuple[object, ...] = (None, 0, 1, True, False, "", [], {}, ())
MAX_SHOWN_CONSTANTS = 12
"""The prompt's values tried as constants, at most (in the order the prompt shows them)."""


@dataclass(frozen=True)
class DoNothing:
    kind: str
    """"constant", "echo" or "lookup table"."""
    why: str
    """One line saying what it returns; also its key in the build's records."""
    body: str
    """The body of a function `(*args, **kwargs)` that does it."""

    def source(self, names: list[str]) -> str:
        """A module defining every function in `names` as this program."""
        indented = "\n".join("    " + line for line in self.body.splitlines())
        return "\n\n".join(f"def {name}(*args, **kwargs):\n{indented}\n" for name in names)

    def answer(self, args: tuple) -> object:
        """What it returns for `args` (run on the host: the bodies are this module's own)."""
        return self._function(*args)

    @functools.cached_property
    def _function(self) -> Callable[..., object]:
        namespace: dict = {}
        exec(self.source(["_program"]), namespace)
        return namespace["_program"]


def do_nothing_programs(task: CodeTask) -> list[DoNothing]:
    """The task's do-nothing programs, in a fixed order."""
    shown = shown_calls(task)
    constants = _shown_constants(shown)
    programs = [
        DoNothing("constant", f"returns {_short(value)}, a value the prompt shows", f"return {value!r}")
        for value in constants
    ]
    programs += [
        DoNothing("constant", f"returns {value!r}", f"return {value!r}")
        for value in EMPTY_VALUES
        if not any(type(value) is type(shown_value) and value == shown_value for shown_value in constants)
    ]
    programs.append(DoNothing("echo", "returns its first argument", "return args[0] if args else None"))
    for position, index in (("first", "0"), ("last", "-1")):
        body = f"try:\n    return args[0][{index}]\nexcept Exception:\n    return None"
        programs.append(DoNothing("echo", f"returns its first argument's {position} element", body))
    if shown:
        fallback = constants[0] if constants else None
        table = {repr(args): repr(result) for args, result in shown}
        body = f"import ast\nreturn ast.literal_eval({table!r}.get(repr(args), {repr(fallback)!r}))"
        why = f"answers the prompt's {len(table)} example(s) from a table, else {_short(fallback)}"
        programs.append(DoNothing("lookup table", why, body))
    return programs


def shown_calls(task: CodeTask) -> list[tuple[tuple, object]]:
    """(arguments, result) of every call of a tested function that the prompt shows."""
    calls = []
    for name in sorted(set(task.program.remote.values())):
        for args_repr, result_repr in sorted(shown_examples(task.prompt, name)):
            try:
                calls.append((ast.literal_eval(args_repr), ast.literal_eval(result_repr)))
            except (ValueError, SyntaxError):
                continue
    return calls


def _shown_constants(shown: list[tuple[tuple, object]]) -> list[object]:
    """The results and arguments the prompt shows, each once, results first."""
    values: list[object] = []
    for candidate in [result for _, result in shown] + [arg for args, _ in shown for arg in args]:
        if not any(type(candidate) is type(value) and candidate == value for value in values):
            values.append(candidate)
    return values[:MAX_SHOWN_CONSTANTS]


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
