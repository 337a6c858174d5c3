"""Compute a code data set's generated tests once, to be committed beside its task ids.

    python -m rlenvs.envs.code.strengthen humaneval    # or mbpp; reads $RLENVS_DATA_DIR

For each task:

1. new inputs mutated from those its tests call the function with (`inputs`);
2. the reference's answers to them, run in the sandbox in two pools (two string-hash seeds)
   and wrapped as the task's tests wrap the call (`tuple(...)`); an input is dropped where
   the reference raises, answers differently in the two runs, answers unlike its answers to
   the given inputs (another type or sign, an empty value where none is), or reaches a
   `return` of a constant or a `raise` that no given input reaches: a sentinel (-1,
   "Invalid", None) for an input the task did not mean is the reference's choice, not the
   task's, while a branch that computes its answer (`return b` in `minimum`) is as much the
   function as the branch the tests happen to run;
3. the reference's one-change mutants (`mutants`) and the do-nothing programs
   (`rlenvs.envs.code.do_nothing`) on the same inputs;
4. a greedy pass keeping the inputs that tell apart the most of those programs still passing
   the task's own tests, topped up with inputs whose answers are new, up to `MIN_TESTS`
   where there are that many, at most `MAX_TESTS`.

Nothing random is left for run time: the file holds the tests as source.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rlenvs.envs.code.do_nothing import DoNothing, do_nothing_programs
from rlenvs.envs.code.env import CodeTask
from rlenvs.envs.code.generated import GENERATED_DIR, fingerprint
from rlenvs.envs.code.strengthen.inputs import Call, Domain, call_wrapper, literal_calls, mutated_inputs, same_value
from rlenvs.envs.code.strengthen.mutants import reference_mutants
from rlenvs.envs.code.strengthen.runner import run_programs
from rlenvs.envs.code.strengthen.tests import close_enough, generated_test, wrapped
from rlenvs.rewards.code import python_blocks
from rlenvs.sandbox import Sandbox

CANDIDATE_INPUTS = 60
"""Mutated inputs tried per task."""
MIN_TESTS = 3
MAX_TESTS = 8


def strengthen(sandbox: Sandbox, other: Sandbox, task: CodeTask) -> dict:
    """One task's generated tests and what they were chosen to catch (a JSON-ready record).
    `other` is a second pool: its interpreters hash strings with another seed."""
    record: dict = {"task_id": task.task_id, "fingerprint": fingerprint(task), "tests": []}
    program = task.program
    given = literal_calls(program.tests, program.remote)
    blocks = python_blocks(task.solution)
    if not given or not blocks:
        record["skipped"] = "no literal calls in the tests" if not given else "no reference solution"
        return record
    reference = blocks[-1]
    new = [call for call in mutated_inputs(given, task.task_id, CANDIDATE_INPUTS, task.prompt) if _literal(call[1])]
    calls = [*given, *new]
    defined = _top_level_functions(reference)
    mutants = reference_mutants(reference, defined)
    programs = [f"{program.setup}\n\n{reference}"] + [f"{program.setup}\n\n{mutant}" for mutant in mutants]
    values, lines = run_programs(sandbox, programs, calls, dict(program.remote))
    again, _ = run_programs(other, programs[:1], calls, dict(program.remote))
    wrapper = call_wrapper(program.tests, program.remote)
    wrap = wrapped(wrapper)
    values = {key: _wrap_safely(wrap, value) for key, value in values.items()}
    values = {key: value for key, value in values.items() if value is not _MISSING and _literal(value)}
    again = {key: _wrap_safely(wrap, value) for key, value in again.items()}
    answers = _reference_answers(values, again, len(calls))
    given_answers = Domain(tuple(answers[i] for i in range(len(given)) if i in answers))
    given_lines = frozenset().union(*(lines.get(i, frozenset()) for i in range(len(given))))
    sentinels = _constant_returns(programs[0]) - given_lines
    usable = [
        i
        for i in range(len(given), len(calls))
        if i in answers and given_answers.resembles(answers[i]) and not lines.get(i, frozenset()) & sentinels
    ]
    nothing = {program.why: program for program in do_nothing_programs(task)}
    targets = _targets(values, calls, answers, len(given), len(mutants), nothing, wrap)
    chosen = _choose(usable, targets, answers, calls)
    record["tests"] = [generated_test(calls[i][0], calls[i][1], answers[i], wrapper) for i in chosen]
    killed = {name for name, kills in targets.items() if kills & set(chosen)}
    passing = sorted(name for name in targets if name in nothing)
    record["caught"] = {
        "mutants": len(mutants),
        "mutants passing the task's tests": sum(name.startswith(MUTANT) for name in targets),
        "mutants caught": sum(name.startswith(MUTANT) for name in killed),
        "do-nothing programs passing the task's tests": passing,
        "do-nothing programs caught": sorted(name for name in killed if name in nothing),
        "do-nothing programs no input tells apart": [name for name in passing if not targets[name] & set(usable)],
    }
    return record


def _literal(value: object) -> bool:
    """Whether `value`'s repr reads back as it (a test's source holds it as a literal)."""
    try:
        return same_value(ast.literal_eval(repr(value)), value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _constant_returns(source: str) -> frozenset[int]:
    """The lines of `source` that return a constant (`return -1`, `return None`, `return
    "Invalid"`, a bare `return`) or raise: where a reference answers an input its task did
    not mean."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            lines.add(node.lineno)
        elif isinstance(node, ast.Return):
            value = node.value
            if isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant):
                value = value.operand
            if value is None or isinstance(value, ast.Constant):
                lines.add(node.lineno)
    return frozenset(lines)


def _top_level_functions(source: str) -> set[str]:
    try:
        return {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}
    except SyntaxError:
        return set()


def _reference_answers(
    values: dict[tuple[int, int], object], again: dict[tuple[int, int], object], calls: int
) -> dict[int, object]:
    """The reference's answer to each call where its two runs, in two sandbox pools (two string
    hash seeds: a list made from a set may come out in another order), gave the same one."""
    answers = {}
    for index in range(calls):
        first, second = values.get((0, index), _MISSING), again.get((0, index), _MISSING)
        if first is not _MISSING and second is not _MISSING and same_value(first, second):
            answers[index] = first
    return answers


_MISSING = object()


MUTANT = "mutant "


def _targets(
    values: dict[tuple[int, int], object],
    calls: Sequence[Call],
    answers: dict[int, object],
    given: int,
    mutants: int,
    nothing: dict[str, DoNothing],
    wrap: Callable[[object], object],
) -> dict[str, set[int]]:
    """{wrong program: the new inputs that tell it from the reference}, for each wrong program
    that answers like the reference on every given input (the task's tests cannot tell it)."""
    programs: dict[str, Callable[[int], object]] = {
        why: functools.partial(_answer_of_program, program, calls, wrap) for why, program in nothing.items()
    }
    for number in range(mutants):
        programs[f"{MUTANT}{number}"] = functools.partial(_answer_of_mutant, values, number + 1)
    targets = {}
    for name, answer_of in programs.items():
        if all(i in answers and _agrees(answer_of(i), answers[i]) for i in range(given)) and any(
            i in answers for i in range(given)
        ):
            kills = {i for i in range(given, len(calls)) if i in answers and not _agrees(answer_of(i), answers[i])}
            targets[name] = kills
    return targets


def _answer_of_program(
    program: DoNothing, calls: Sequence[Call], wrap: Callable[[object], object], index: int
) -> object:
    try:
        return wrap(program.answer(calls[index][1]))
    except Exception:
        return _MISSING


def _wrap_safely(wrap: Callable[[object], object], value: object) -> object:
    try:
        return wrap(value)
    except Exception:
        return _MISSING


def _answer_of_mutant(values: dict[tuple[int, int], object], program: int, index: int) -> object:
    return values.get((program, index), _MISSING)


def _agrees(got: object, expected: object) -> bool:
    return got is not _MISSING and close_enough(got, expected)


def _choose(
    usable: list[int], targets: dict[str, set[int]], answers: dict[int, object], calls: Sequence[Call]
) -> list[int]:
    """Greedy: the input that catches the most programs still uncaught (the smaller on a tie),
        until none catches more; then, up to `MIN_TESTS`, inputs with answers not yet tested, then
    any, smallest first."""
    size = {i: len(repr(calls[i][1])) + len(repr(answers[i])) for i in usable}
    remaining = {name: kills & set(usable) for name, kills in targets.items()}
    chosen: list[int] = []
    while len(chosen) < MAX_TESTS:
        best = max(usable, key=lambda i: (sum(i in kills for kills in remaining.values()), -size[i], -i), default=None)
        if best is None or not any(best in kills for kills in remaining.values()):
            break
        chosen.append(best)
        remaining = {name: kills for name, kills in remaining.items() if best not in kills}
    seen = [answers[i] for i in chosen] + [answers[i] for i in range(len(calls)) if i in answers and i not in usable]
    by_size = sorted(usable, key=lambda i: (size[i], i))
    for index in by_size:  # new answers first, then any
        if len(chosen) < MIN_TESTS and not any(same_value(answers[index], answer) for answer in seen):
            chosen.append(index)
            seen.append(answers[index])
    chosen += [index for index in by_size if index not in chosen][: max(0, MIN_TESTS - len(chosen))]
    return sorted(chosen)


def build(dataset: str, tasks: Sequence[CodeTask], out: Path, workers: int = 2) -> list[dict]:
    """Strengthen every task and write the records, in task order, to `out`."""
    with Sandbox(workers=workers) as sandbox, Sandbox(workers=workers) as other, ThreadPoolExecutor(workers) as pool:
        records = list(pool.map(lambda task: strengthen(sandbox, other, task), tasks))
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".tmp")
    with temporary.open("w") as handle:
        for record in records:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
    temporary.replace(out)
    return records


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", choices=("humaneval", "mbpp"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks (a trial run)")
    options = parser.parse_args(argv)
    if options.dataset == "humaneval":
        from rlenvs.envs.code.humaneval import DATA, humaneval_task

        tasks = list(DATA.load("test", data_files=None, task_from_row=humaneval_task))
    else:
        from rlenvs.envs.code.mbpp import DATA, mbpp_task

        tasks = list(DATA.load("all", data_files=None, task_from_row=mbpp_task))
    tasks = tasks[: options.limit]
    out = options.out or GENERATED_DIR / f"{options.dataset}.jsonl"
    records = build(options.dataset, tasks, out)
    with_tests = sum(bool(r["tests"]) for r in records)
    print(f"{options.dataset}: {with_tests} of {len(records)} tasks got generated tests -> {out}", file=sys.stderr)
    return 0
