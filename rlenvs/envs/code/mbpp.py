"""rlenvs/MBPP-v2: write a short Python function from a one-line description.

Data: Google's MBPP rows `{"task_id", "text", "code", "test_list", "test_setup_code",
"challenge_test_list"}` (974 problems, CC BY 4.0), from `data_files=`,
`$RLENVS_DATA_DIR/mbpp/mbpp.jsonl` (the full release) or the hub
(`google-research-datasets/mbpp`, config "full"). Splits follow the release's task ids:
prompt 1-10, test 11-510, validation 511-600, train 601-974; `split="all"` takes every row
(use it for a file of your own tasks).

The prompt shows the description and the first test (it fixes the function's name and
signature); every test is checked, so hard-coding the shown case does not pass. Retry
feedback quotes only that shown test; the others stay hidden (`feedback`). With
`challenge_tests=True` the release's harder tests, where a row has them, are checked too.
The reference code's classes (MBPP's tree tasks build `Node` objects in `test_setup_code`)
are defined in the test runner as well, and the solution must define its own.

After the release's tests run the task's generated tests (`generated`; computed once the way
EvalPlus made MBPP+, committed beside the task ids): three asserts let through programs that
do not compute the function. `generated_tests=False` runs only the release's own.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from rlenvs.core.checks import check_flag
from rlenvs.core.task import DatasetSource, content_task_id
from rlenvs.data import DataFiles, DataSpec, HubDataset
from rlenvs.envs.code.env import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, CodeEnv, CodeTask
from rlenvs.envs.code.examples import shown_first
from rlenvs.envs.code.generated import with_generated_tests
from rlenvs.sandbox import TestProgram

DATASET = "mbpp"
FILE_STEM = "mbpp"
HUB = HubDataset("google-research-datasets/mbpp", "full")
SPLIT_IDS = {"prompt": range(1, 11), "test": range(11, 511), "validation": range(511, 601), "train": range(601, 975)}
SPLITS = (*SPLIT_IDS, "all")
# The release is one file of every split; the hub serves the splits apart, so "all" (a file
# of the user's own tasks, or the whole release) needs a file.
DATA = DataSpec(
    DATASET,
    SPLITS,
    hub=dict.fromkeys(SPLIT_IDS, HUB),
    file_stem=FILE_STEM,
    source="https://github.com/google-research/google-research/tree/master/mbpp (mbpp.jsonl, CC BY 4.0)",
)

DEFAULT_SYSTEM_PROMPT = (
    "Write the Python function the task asks for. Reply with the complete code, including any "
    "imports, in one ```python code block. Standard library only."
)


def mbpp_task(row: Mapping[str, Any], task_id: str, challenge_tests: bool = False) -> CodeTask:
    """One MBPP row as a task; raises ValueError naming the field that is wrong."""
    text, code = _nonempty_string(row, "text"), _nonempty_string(row, "code")
    tests = _string_list(row, "test_list", required=True)
    if challenge_tests:
        tests += _string_list(row, "challenge_test_list", required=False)
    setup = row.get("test_setup_code") or ""
    if not isinstance(setup, str):
        raise ValueError(f"MBPP row's 'test_setup_code' must be a string, got {type(setup).__name__}")
    try:
        reference = _parse(code)
    except SyntaxError as error:
        raise ValueError(f"MBPP row's 'code' is not valid Python: {error}") from None
    functions = [node.name for node in reference.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    called = {node.id for test in tests for node in ast.walk(_parse(test)) if isinstance(node, ast.Name)}
    remote = {name: name for name in functions if name in called}
    if not remote:
        raise ValueError(f"MBPP row's tests call none of the functions its 'code' defines ({functions})")
    classes = "\n\n".join(ast.unparse(node) for node in reference.body if isinstance(node, ast.ClassDef))
    row_id = row.get("task_id")
    shown = tests[0]
    program, count = shown_first(
        TestProgram(tests=tuple(tests), remote=remote, setup=f"{classes}\n\n{setup}".strip()),
        [test == shown for test in tests],
    )
    return CodeTask(
        task_id=f"mbpp/{row_id}" if isinstance(row_id, int) else task_id,
        prompt=f"{text.strip()}\nYour code should pass this test:\n```python\n{shown}\n```",
        program=program,
        solution=f"```python\n{code.strip()}\n```",
        entry_point=next(iter(remote)),
        shown=count,
    )


def _nonempty_string(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"MBPP row needs a non-empty string {name!r}, got {value!r}")
    return value


def _string_list(row: Mapping[str, Any], name: str, *, required: bool) -> list[str]:
    value = row.get(name) or []
    if not isinstance(value, Sequence) or isinstance(value, str) or not all(isinstance(t, str) for t in value):
        raise ValueError(f"MBPP row's {name!r} must be a list of assert statements, got {value!r}")
    if required and not value:
        raise ValueError(f"MBPP row needs at least one test in {name!r}")
    for test in value:
        try:
            _parse(test)
        except SyntaxError as error:
            raise ValueError(f"MBPP row's {name!r} holds invalid Python {test!r}: {error}") from None
    return [test.strip() for test in value]


def _parse(source: str) -> ast.Module:
    # The release's code has a few regexes in plain strings ("\d"): a warning, not an error.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source)


def mbpp_challenge_task(row: Mapping[str, Any], task_id: str) -> CodeTask:
    """`mbpp_task` with the challenge tests (a module-level function: it is a cache key)."""
    return mbpp_task(row, task_id, challenge_tests=True)


class MBPPEnv(CodeEnv):
    """MBPP: write a function from its description; the tests run in the sandbox."""

    data_spec = DATA

    def __init__(
        self,
        split: str = "train",
        data_files: DataFiles | None = None,
        challenge_tests: bool = False,
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
            raise ValueError(f"unknown MBPP split {split!r}: choose one of {list(SPLITS)}")
        check_flag("challenge_tests", challenge_tests)
        check_flag("generated_tests", generated_tests)
        convert = mbpp_challenge_task if challenge_tests else mbpp_task
        tasks = DATA.load(split, data_files=data_files, task_from_row=convert)
        if split != "all":
            ids = SPLIT_IDS[split]
            tasks = tuple(t for t in tasks if _release_id(t) in ids)
            if not tasks:
                raise ValueError(
                    f"no MBPP task in split {split!r} (task ids {ids.start}-{ids.stop - 1}) in the data: "
                    "pass split='all' to use every row of a file of your own tasks"
                )
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
        self.challenge_tests = challenge_tests
        self.generated_tests = generated_tests

    def task_from_row(self, row: Mapping[str, Any]) -> CodeTask:
        task = mbpp_task(row, content_task_id(DATASET, row), challenge_tests=self.challenge_tests)
        return with_generated_tests((task,), DATASET)[0] if self.generated_tests else task


def _release_id(task: CodeTask) -> int | None:
    prefix, _, number = task.task_id.partition("/")
    return int(number) if prefix == DATASET and number.isdigit() else None
