"""The generated tests of HumanEval and MBPP (`rlenvs.envs.code.strengthen`, `generated`):
inputs mutated inside what the task's own inputs promise, answers from the reference in the
real sandbox, and the committed files attached only to the tasks they were computed for."""

from __future__ import annotations

import ast
import dataclasses
import json

import pytest

from rlenvs.envs.code.env import CodeTask
from rlenvs.envs.code.generated import GENERATED_DIR, fingerprint, generated_tests, with_generated_tests, with_tests
from rlenvs.envs.code.strengthen.build import MAX_TESTS, MIN_TESTS, strengthen
from rlenvs.envs.code.strengthen.inputs import call_wrapper, invariants, literal_calls, mutated_inputs
from rlenvs.envs.code.strengthen.mutants import reference_mutants
from rlenvs.envs.code.strengthen.tests import SAME_SOURCE, close_enough
from rlenvs.sandbox import Sandbox, TestProgram

pytestmark = pytest.mark.sandbox


def _task(name: str, reference: str, tests: list[str]) -> CodeTask:
    return CodeTask(
        task_id=f"toy/{name}",
        prompt=f"Write {name}.",
        program=TestProgram(tests=tuple(tests), remote={name: name}),
        solution=f"```python\n{reference}\n```",
        entry_point=name,
    )


def test_literal_calls_reads_each_call_once_and_skips_computed_arguments() -> None:
    tests = ["assert f(1, [2]) == 3", "assert f(1, [2]) == 3 and f(x) == 1", "assert f(*a) == 2", "assert g(5) == 5"]
    assert literal_calls(tests, ["f"]) == [("f", (1, [2]))]


def test_mutations_keep_what_every_given_input_promises() -> None:
    calls = [("f", ([1, 4, 9], "(()())", 3)), ("f", ([2, 3, 5, 8], "()(())", 4)), ("f", ([0, 7], "(())", 2))]
    made = mutated_inputs(calls, "seed", 40, "Given a sorted list ...")
    assert len(made) >= 10
    for _, (items, text, count) in made:
        assert items == sorted(items) and len(set(items)) == len(items) and min(items) >= 0
        assert set(text) <= set("()") and _balanced(text)
        assert count == len(items)  # the count given is always the list's length
    unsaid = mutated_inputs(calls, "seed", 40, "Given a list ...")  # order is a habit of the examples
    assert any(items != sorted(items) for _, (items, _, _) in unsaid)


def test_a_relation_three_calls_hold_by_chance_is_not_kept() -> None:
    """`a <= b` on three calls is a coin tossed three times (Daikon's justification): keeping
    it would never test minimum(a, b) with a > b. Six calls justify it."""
    three = [("minimum", (1, 2)), ("minimum", (-5, -4)), ("minimum", (0, 0))]
    assert any(a > b for _, (a, b) in mutated_inputs(three, "seed", 30))
    six = [*three, ("minimum", (3, 9)), ("minimum", (-2, 7)), ("minimum", (4, 4))]
    assert invariants(six) and all(a <= b for _, (a, b) in mutated_inputs(six, "seed", 30))


def test_mutants_change_one_operator_or_constant_inside_the_named_functions() -> None:
    source = "def f(a, b):\n    return a + 1 if a < b else b\n\ndef g(x):\n    return x - 1\n"
    mutants = reference_mutants(source, {"f"})
    assert "def f(a, b):\n    return a - 1 if a < b else b" in [m.split("\n\ndef g")[0] for m in mutants]
    assert all("return x - 1" in m for m in mutants)  # g is not mutated
    assert len(mutants) == len(set(mutants)) >= 4


def test_the_comparison_is_equality_with_a_tolerance_for_floats_only() -> None:
    assert close_enough([1.0000000001, (2, "a")], [1.0, (2, "a")])
    assert not close_enough([1, 2], (1, 2)) and not close_enough(1.01, 1.0) and not close_enough("1", 1)
    namespace: dict = {}
    exec(SAME_SOURCE, namespace)  # the source the test runner gets is the same function
    assert namespace["_generated_same"]({"a": 0.1 + 0.2}, {"a": 0.3})


def test_generated_tests_catch_a_program_the_tasks_own_tests_let_through() -> None:
    """minimum's tests all have a <= b, so returning the first argument passes them; the
    generated tests hold an a > b call. The sentinel branch (-1 for a negative input no given
    call has) is never a test."""
    reference = "def minimum(a, b):\n    if a < 0 and b < 0:\n        return -1\n    return a if a <= b else b"
    task = _task(
        "minimum", reference, ["assert minimum(1, 2) == 1", "assert minimum(3, 3) == 3", "assert minimum(0, 5) == 0"]
    )
    with Sandbox(workers=1) as one, Sandbox(workers=1) as other:
        record = strengthen(one, other, task)
        assert MIN_TESTS <= len(record["tests"]) <= MAX_TESTS
        assert record["caught"]["do-nothing programs caught"] == ["returns its first argument"]
        calls = [ast.literal_eval(test.split("minimum", 1)[1].rsplit(",", 1)[0]) for test in record["tests"]]
        assert any(a > b for a, b in calls) and not any(a < 0 and b < 0 for a, b in calls)
        strong = with_tests(task, tuple(record["tests"]))
        echo = "def minimum(a, b):\n    return a"
        assert one.run_tests(echo, task.program).all_passed
        assert not one.run_tests(echo, strong.program).all_passed
        assert one.run_tests(reference, strong.program).all_passed


def test_the_generated_tests_wrap_the_call_as_the_tasks_own_tests_do() -> None:
    """HumanEval/33's tests compare `tuple(candidate(x))`: a correct reply returning a dict's
    values view passes them, and must pass the generated tests too."""
    assert (
        call_wrapper(["assert tuple(f([1, 2])) == tuple([1, 2])", "assert tuple(f([3])) == (3,)"], ["f"]) == "tuple({})"
    )
    assert call_wrapper(["assert round(f(2), 2) == 1.41", "assert f(1) == 1"], ["f"]) == "round({}, 2)"
    assert call_wrapper(["assert f(1) == 1", "assert f(2) == 2", "assert list(f(3)) == [3]"], ["f"]) == "{}"
    reference = "def evens(l):\n    return [x for x in l if x % 2 == 0]"
    task = _task(
        "evens", reference, ["assert tuple(evens([1, 2, 4])) == (2, 4)", "assert tuple(evens([6, 3])) == (6,)"]
    )
    view = "def evens(l):\n    return {i: x for i, x in enumerate(l) if x % 2 == 0}.values()"
    with Sandbox(workers=1) as one, Sandbox(workers=1) as other:
        record = strengthen(one, other, task)
        assert record["tests"] and all(
            test.startswith("assert _generated_same(tuple(evens(") for test in record["tests"]
        )
        assert one.run_tests(view, with_tests(task, tuple(record["tests"])).program).all_passed


def test_an_answer_that_depends_on_the_string_hash_seed_is_never_a_test() -> None:
    """A list made from a set of strings comes out in another order under another hash seed:
    the two runs of the reference (two sandbox pools) disagree, so no such test is kept.
    (Had the task's tests compared `sorted(letters(...))`, the generated ones would too, and
    then the order would not matter.)"""
    reference = "def letters(words):\n    return list(set(words))"
    words = [f"word{i}" for i in range(12)]
    task = _task("letters", reference, [f"assert len(letters({words!r})) == 12"])
    with Sandbox(workers=1) as one, Sandbox(workers=1) as other:
        record = strengthen(one, other, task)
    assert record["tests"] == []


def test_the_committed_files_cover_every_task_and_hold_only_literal_asserts() -> None:
    for dataset, count in (("humaneval", 164), ("mbpp", 974)):
        records = [json.loads(line) for line in (GENERATED_DIR / f"{dataset}.jsonl").read_text().splitlines()]
        assert len(records) == len({r["task_id"] for r in records}) == count
        with_tests = [r for r in records if r["tests"]]
        assert len(with_tests) >= 0.95 * count
        for record in with_tests:
            assert MIN_TESTS - 2 <= len(record["tests"]) <= MAX_TESTS, record["task_id"]
            for test in record["tests"]:
                (statement,) = ast.parse(test).body
                assert isinstance(statement, ast.Assert) and statement.test.func.id == "_generated_same"


def test_a_task_gets_the_generated_tests_only_under_its_own_fingerprint() -> None:
    task_id, record = next(iter(generated_tests("mbpp").items()))
    task = dataclasses.replace(_task("f", "def f(x):\n    return x", ["assert f(1) == 1"]), task_id=task_id)
    assert record.tests and record.fingerprint != fingerprint(task)
    assert with_generated_tests([task], "mbpp")[0] is task  # another prompt under the same id


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0
