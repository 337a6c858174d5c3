"""The generated tests committed beside HumanEval's and MBPP's task ids, attached to the tasks
they were computed for.

`rlenvs.envs.code.strengthen` computes them once (mutated inputs, the reference's answers in the
sandbox, chosen to catch what the data set's own tests let through) and writes one JSON Lines
file per data set into `generated_tests/`. Each record names its task id and a fingerprint of
the task's prompt and reference solution: a task whose fingerprint differs (a user's own row
under a public id, an edited release) gets none of them, since they were answered by another
reference. Nothing is random at run time: the tests are source text.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path

from rlenvs.envs.code.env import CodeTask
from rlenvs.envs.code.strengthen.tests import SAME_SOURCE
from rlenvs.sandbox import TestProgram

GENERATED_DIR = Path(__file__).resolve().parent / "generated_tests"
DATASETS = ("humaneval", "mbpp")


@dataclasses.dataclass(frozen=True)
class Generated:
    """One task's record: what it was computed from, its tests, and the do-nothing programs
    (`do_nothing`, by their `why`) that no input like the task's own told from the reference."""

    fingerprint: str
    tests: tuple[str, ...]
    unwitnessed: frozenset[str]


def fingerprint(task: CodeTask) -> str:
    """What a task's generated tests were computed from: its prompt and reference solution."""
    return hashlib.sha256(f"{task.prompt}\0{task.solution}".encode()).hexdigest()[:16]


@functools.cache
def generated_tests(dataset: str) -> dict[str, Generated]:
    """{task id: its record} from the data set's committed file."""
    path = GENERATED_DIR / f"{dataset}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(
            f"no generated tests for {dataset!r} at {path}: reinstall rlenvs, or build them with "
            f"`python -m rlenvs.envs.code.strengthen {dataset}`"
        )
    table = {}
    with path.open() as handle:
        for line in handle:
            record = json.loads(line)
            unwitnessed = frozenset(record.get("caught", {}).get("do-nothing programs no input tells apart", ()))
            table[record["task_id"]] = Generated(record["fingerprint"], tuple(record["tests"]), unwitnessed)
    return table


def record_of(task: CodeTask, dataset: str | None = None) -> Generated | None:
    """The task's record, where one was computed for this very task (its fingerprint)."""
    for name in (dataset,) if dataset else DATASETS:
        entry = generated_tests(name).get(task.task_id)
        if entry is not None and entry.fingerprint == fingerprint(task):
            return entry
    return None


def unwitnessed(task: CodeTask) -> frozenset[str]:
    """The do-nothing programs the build found no input like the task's own to tell apart
    from its reference (none known for a task without a record)."""
    entry = record_of(task)
    return entry.unwitnessed if entry is not None else frozenset()


def with_generated_tests(tasks: tuple[CodeTask, ...] | list[CodeTask], dataset: str) -> tuple[CodeTask, ...]:
    """`tasks`, each that has a record with the record's tests run after its own (hidden: they
    come after the tests the prompt shows)."""
    strengthened = []
    for task in tasks:
        entry = record_of(task, dataset)
        strengthened.append(with_tests(task, entry.tests) if entry is not None and entry.tests else task)
    return tuple(strengthened)


def with_tests(task: CodeTask, tests: tuple[str, ...]) -> CodeTask:
    """`task` with generated `tests` run after its own, and the comparison they call."""
    program = task.program
    strengthened = TestProgram(
        tests=(*program.tests, *tests),
        remote=program.remote,
        setup=f"{program.setup}\n\n{SAME_SOURCE}",
        names=(*program.names, *tests),
    )
    return dataclasses.replace(task, program=strengthened)
