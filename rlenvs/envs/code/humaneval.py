"""rlenvs/HumanEval-v2: complete a Python function from its signature and docstring.

Data: OpenAI's HumanEval rows `{"task_id", "prompt", "entry_point", "canonical_solution",
"test"}` (164 problems, MIT), from `data_files=`, `$RLENVS_DATA_DIR/humaneval/HumanEval.jsonl.gz`
or the hub (`openai/openai_humaneval`). The reply may restate the whole function or give
only its body; see `CodeEnv` for turns and rewards.

The tests are the statements of the row's `check(candidate)` function, run one by one
(so `partial=True` can count them): each statement that asserts something about the
candidate is a test, and the statements before it (set-up: imports, a seeded RNG,
`assert True`) run with it as part of that test. An assert's message that calls the
candidate is dropped (HumanEval/77, 78, 95, 97, 117, 148 have them): it would call the
solution again only when the assert failed, telling it, while it runs, which answers passed.

After them run the task's generated tests (`generated`; 3 on most tasks, computed once the way
EvalPlus made HumanEval+ and committed beside the task ids): HumanEval's own tests let
programs through that do not compute the function. `generated_tests=False` runs only the
data set's own tests (to compare with figures published on plain HumanEval).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from rlenvs.core.checks import check_flag
from rlenvs.core.task import DatasetSource, content_task_id
from rlenvs.data import DataFiles, DataSpec, HubDataset
from rlenvs.envs.code.env import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, CodeEnv, CodeTask
from rlenvs.envs.code.examples import shown_examples, shown_first, shown_test
from rlenvs.envs.code.generated import with_generated_tests
from rlenvs.sandbox import TestProgram

DATASET = "humaneval"
FILE_STEM = "HumanEval"
HUB = HubDataset("openai/openai_humaneval")
SPLITS = ("test",)
DATA = DataSpec(
    DATASET,
    SPLITS,
    hub={"test": HUB},
    file_stem=FILE_STEM,
    release_suffix=".jsonl.gz",
    source="https://github.com/openai/human-eval (data/HumanEval.jsonl.gz, MIT)",
)
CHECK_FUNCTION = "check"
CANDIDATE = "candidate"

DEFAULT_SYSTEM_PROMPT = (
    "Complete the Python function. Reply with the complete function, including its signature, "
    "in one ```python code block. Standard library only."
)


def humaneval_task(row: Mapping[str, Any], task_id: str) -> CodeTask:
    """One HumanEval row as a task; raises ValueError naming the field that is wrong."""
    fields = {}
    for name in ("prompt", "entry_point", "test"):
        value = row.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"HumanEval row needs a non-empty string {name!r}, got {value!r}")
        fields[name] = value
    solution = row.get("canonical_solution") or ""
    if not isinstance(solution, str):
        raise ValueError(f"HumanEval row's 'canonical_solution' must be a string, got {type(solution).__name__}")
    prompt, entry_point = fields["prompt"], fields["entry_point"].strip()
    row_id = row.get("task_id")
    program = check_program(prompt, fields["test"], entry_point)
    examples = shown_examples(prompt, entry_point)
    program, shown = shown_first(program, [shown_test(t, program.remote, examples) for t in program.tests])
    return CodeTask(
        task_id=row_id if isinstance(row_id, str) and row_id else task_id,
        prompt=f"```python\n{prompt.rstrip()}\n```",
        program=program,
        solution=f"```python\n{prompt}{solution.rstrip()}\n```" if solution.strip() else "",
        entry_point=entry_point,
        starter=prompt,
        shown=shown,
    )


def check_program(prompt: str, test: str, entry_point: str) -> TestProgram:
    """HumanEval's `check(candidate)` as a `TestProgram`, one test per asserting statement."""
    try:
        tree = ast.parse(test)
    except SyntaxError as error:
        raise ValueError(f"HumanEval 'test' is not valid Python: {error}") from None
    check = next(
        (node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == CHECK_FUNCTION), None
    )
    if check is None or not check.args.args:
        raise ValueError(f"HumanEval 'test' must define {CHECK_FUNCTION}(candidate)")
    parameter = check.args.args[0].arg
    tests, pending = [], []
    for statement in check.body:
        pending.append(ast.unparse(_without_calling_messages(statement, {parameter, entry_point})))
        if _tests_the_candidate(statement, {parameter, entry_point}):
            tests.append("\n".join(pending))
            pending = []
    if not tests:
        raise ValueError(f"HumanEval {CHECK_FUNCTION}() has no assert that calls the candidate")
    if pending:
        tests[-1] += "\n" + "\n".join(pending)
    return TestProgram(
        tests=tuple(tests),
        remote={parameter: entry_point, entry_point: entry_point},
        setup=f"{prompt}\n\n{test}",
        names=tuple(_label(test) for test in tests),
    )


def _without_calling_messages(statement: ast.stmt, names: set[str]) -> ast.stmt:
    """`statement` with the message dropped from every assert in it whose message mentions
    one of `names` (the candidate)."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Assert) and node.msg is not None:
            if any(isinstance(name, ast.Name) and name.id in names for name in ast.walk(node.msg)):
                node.msg = None
    return statement


def _tests_the_candidate(statement: ast.stmt, names: set[str]) -> bool:
    nodes = list(ast.walk(statement))
    asserts = any(isinstance(node, ast.Assert) for node in nodes)
    return asserts and any(isinstance(node, ast.Name) and node.id in names for node in nodes)


def _label(test: str) -> str:
    """The asserting line(s) of a test, without the set-up lines before them."""
    lines = test.splitlines()
    for start, line in enumerate(lines):
        if line.startswith(("assert", "for", "while", "if", "with", "try")):
            return "\n".join(lines[start:])
    return test


class HumanEvalEnv(CodeEnv):
    """HumanEval: complete a function from its docstring; the tests run in the sandbox."""

    data_spec = DATA

    def __init__(
        self,
        split: str = "test",
        data_files: DataFiles | None = None,
        generated_tests: bool = True,
        max_turns: int = 1,
        partial: bool = False,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_mb: int = DEFAULT_MEMORY_MB,
        unsafe_sandbox: bool = False,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown HumanEval split {split!r}: HumanEval has only {list(SPLITS)}")
        check_flag("generated_tests", generated_tests)
        tasks = DATA.load(split, data_files=data_files, task_from_row=humaneval_task)
        if generated_tests:
            tasks = with_generated_tests(tasks, DATASET)
        super().__init__(
            DatasetSource(tasks, name=f"{DATASET}/{split}"),
            max_turns=max_turns,
            partial=partial,
            timeout_s=timeout_s,
            memory_mb=memory_mb,
            unsafe_sandbox=unsafe_sandbox,
            system_prompt=system_prompt,
            render_mode=render_mode,
        )
        self.split = split
        self.generated_tests = generated_tests

    def task_from_row(self, row: Mapping[str, Any]) -> CodeTask:
        task = humaneval_task(row, content_task_id(DATASET, row))
        return with_generated_tests((task,), DATASET)[0] if self.generated_tests else task
