"""Programs that do not compute a code task's function, written from the task itself; each must
earn the env's lowest reward.

A code task's verdict is its tests, and a policy under GRPO finds whatever the tests cannot tell
from a solution. So for every function the tests call (`task.program.remote`), and from the
task's own prompt and reference solution, this writes a program that does not do the task:

- *constant*: every value the prompt shows (a docstring example's result, a shown test's
  expected value, each argument of those calls), and None, 0, 1, True, False, "", [], {}, ();
- *echo*: the first argument returned as it came, and its first and last element;
- *lookup table*: the prompt's examples answered from a table, anything else a constant; with
  retries, an *adaptive table*: each attempt answers every call the prompt and the feedback so
  far have shown (what a policy that remembers everything it was shown can do);
- *equal-to-all*: an object whose `==` is always true (and `!=` always false);
- *early exit*: `sys.exit(0)` or `os._exit(0)` when the module loads or the function is called;
- *printing*: the reference solution printing its result instead of returning it.

A task whose tests pass any of these has tests too weak to tell, whatever the sandbox does.
The constants, echoes and the table are `rlenvs.envs.code.do_nothing`'s, left out where the
task's generated tests found no input like its own on which the reference answers otherwise
(`generated.unwitnessed`: there the program is the function, as `()` is `clear_tuple`'s).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence

from rlenvs.envs.code.do_nothing import do_nothing_programs
from rlenvs.envs.code.env import CodeTask
from rlenvs.envs.code.examples import shown_examples
from rlenvs.envs.code.generated import unwitnessed
from rlenvs.rewards.code import python_blocks
from rlenvs.testing.certify.probes import Probe, Subject

_EQUAL_TO_ALL = """
class _EqualToAll:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0

    def __bool__(self):
        return True

    def __len__(self):
        return 0
"""


def code_probes(subject: Subject) -> Iterator[Probe]:
    """Every do-nothing program for a code task (none for any other task)."""
    task = subject.task
    if not isinstance(task, CodeTask):
        return
    names = sorted(set(task.program.remote.values()))
    no_witness = unwitnessed(task)
    for program in do_nothing_programs(task):
        if program.why not in no_witness:
            yield Probe(program.kind, "attack", (_fenced(program.source(names)),), program.why)
    if subject.max_turns > 1:
        yield Probe(
            "adaptive table",
            "attack",
            (_fenced(_functions(names, "return None")), *[_table_from(names)] * (subject.max_turns - 1)),
            "returns None, then answers every call the prompt and the feedback have shown from a table",
        )
    yield Probe(
        "equal-to-all",
        "attack",
        (_fenced(_EQUAL_TO_ALL + _functions(names, "return _EqualToAll()")),),
        "returns an object equal to everything",
    )
    yield Probe(
        "early exit",
        "attack",
        (_fenced("import sys\nsys.exit(0)\n" + _functions(names, "return None")),),
        "exits with status 0 when the module loads",
    )
    yield Probe(
        "early exit",
        "attack",
        (_fenced("import os\n" + _functions(names, "os._exit(0)")),),
        "exits the process with status 0 when called",
    )
    yield Probe(
        "early exit",
        "attack",
        (_fenced(_functions(names, "import sys\nsys.exit(0)")),),
        "calls sys.exit(0) when called",
    )
    printing = _printing_reference(task)
    if printing is not None:
        yield Probe("printing", "attack", (_fenced(printing),), "the reference solution, printing instead of returning")


def _table_from(names: list[str]) -> Callable[[Sequence[str]], str]:
    """An adaptive reply: every call and result shown so far (`shown_examples` of the prompt
    and each feedback), answered from a table; anything else None."""

    def reply(observations: Sequence[str]) -> str:
        seen = "\n".join(observations)
        table = {args: result for name in names for args, result in shown_examples(seen, name)}
        body = f"import ast\nreturn ast.literal_eval({table!r}.get(repr(args), 'None'))"
        return _fenced(_functions(names, body))

    return reply


def _functions(names: list[str], body: str) -> str:
    indented = "\n".join("    " + line for line in body.splitlines())
    return "\n\n".join(f"def {name}(*args, **kwargs):\n{indented}\n" for name in names)


def _fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```"


def _printing_reference(task: CodeTask) -> str | None:
    """The reference solution with every `return X` of the tested functions turned into
    `print(X)` followed by a bare return; None where there is no reference or no such return."""
    blocks = python_blocks(task.solution)
    if not blocks:
        return None
    try:
        tree = ast.parse(blocks[-1])
    except SyntaxError:
        return None
    tested = set(task.program.remote.values())
    changed = False
    for function in ast.walk(tree):
        if not (isinstance(function, ast.FunctionDef) and function.name in tested):
            continue
        for node in ast.walk(function):
            for field_name in ("body", "orelse", "finalbody"):
                statements = getattr(node, field_name, None)
                if not isinstance(statements, list):
                    continue
                rewritten: list[ast.stmt] = []
                for statement in statements:
                    if isinstance(statement, ast.Return) and statement.value is not None:
                        call = ast.Call(ast.Name("print", ast.Load()), [statement.value], [])
                        rewritten += [ast.Expr(call), ast.Return(None)]
                        changed = True
                    else:
                        rewritten.append(statement)
                setattr(node, field_name, rewritten)
    return ast.unparse(ast.fix_missing_locations(tree)) if changed else None
