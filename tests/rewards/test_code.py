"""Reading the program out of a reply (`rlenvs.rewards.code`, `rlenvs.rewards.code_blocks`):
the ways a correct reply was scored 0 that a second red-team pass found, each as real models
write it. Every rule is in the modules' docstrings and docs/envs/code.md."""

from __future__ import annotations

import pytest

from rlenvs.rewards.code import complete_function, extract_code
from rlenvs.rewards.code_blocks import fences

STRLEN = "def strlen(string: str) -> int:\n    return len(string)"
STARTER = (
    'def strlen(string: str) -> int:\n    """ Return length of given string\n    >>> strlen(\'\')\n    0\n    """\n'
)


def _compiles(program: str) -> bool:
    compile(program, "<solution>", "exec")
    return True


# --- fences ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "```python\r\n" + STRLEN.replace("\n", "\r\n") + "\r\n```\r\nIt counts characters.\r\n",  # CRLF, prose after
        "```python\r" + STRLEN.replace("\n", "\r") + "\r```\r",  # old Mac line ends
        "1. Define it:\n   ```python\n   " + STRLEN.replace("\n", "\n   ") + "\n   ```\n2. Done.",  # in a list item
        "````python\n" + STRLEN + "\n````\nDone.",  # four backticks
        "~~~python\n" + STRLEN + "\n~~~\nDone.",  # tildes
        "~~~~ python\n" + STRLEN + "\n~~~~",
        "```python\n" + STRLEN + "```\nThat is all.",  # the closing fence on the last code line
    ],
    ids=["crlf", "cr", "list-item", "four-backticks", "tildes", "four-tildes", "fence-on-code-line"],
)
def test_markdown_fences_as_models_write_them(reply: str) -> None:
    assert extract_code(reply, calls=("strlen",)) == STRLEN


def test_a_fence_closes_only_at_a_fence_of_its_own_kind_and_length() -> None:
    assert fences("```python\nx = 1\n~~~\ny = 2\n```") == [("python", "x = 1\n~~~\ny = 2\n")]
    assert fences("````\na\n```\nb\n````") == [("", "a\n```\nb\n")]  # a ```` block may hold ``` lines
    assert fences("~~~\na\n```\n~~~") == [("", "a\n```\n")]
    assert fences("```python\n    x = 1```") == [("python", "    x = 1\n")]  # code, then the fence
    assert fences("```\n``` text") == [("", "``` text\n")]  # a fence with text after does not close


def test_a_fence_indented_4_columns_past_the_opening_one_is_code() -> None:
    docstring = 'def strlen(string: str) -> int:\n    """Length.\n\n    ```\n    strlen("ab")  # 2\n    ```\n    """\n'
    program = docstring + "    return len(string)"
    assert extract_code(f"```python\n{program}\n```", calls=("strlen",)) == program
    assert fences("- item:\n  ```\n  a\n      ```\n  b\n  ```") == [("", "a\n    ```\nb\n")]  # 4 past: code
    assert fences("- item:\n  ```\n  a\n     ```\nb") == [("", "a\n")]  # 3 past its own: closes


def test_an_indented_fence_loses_its_indentation_and_no_more() -> None:
    reply = "- step:\n    ```python\n    def f():\n        return 1\n  partly\n    ```"
    assert fences(reply) == [("python", "def f():\n    return 1\npartly\n")]


# --- reasoning ---------------------------------------------------------------------------


def test_an_unclosed_fence_in_the_reasoning_does_not_swallow_the_answer() -> None:
    reply = (
        "<think>Maybe:\n```python\ndef strlen(s):\n    return 0\nNo, that is wrong.\n</think>\n"
        f"Here is the function:\n```python\n{STRLEN}\n```"
    )
    assert extract_code(reply, calls=("strlen",)) == STRLEN


def test_the_answer_is_read_after_the_last_think_end_tag() -> None:
    drafts = "```python\ndef strlen(s):\n    return 0\n```"
    assert extract_code(f"reasoning {drafts}\n</think>\n```python\n{STRLEN}\n```", calls=("strlen",)) == STRLEN
    assert extract_code(f"<think>{drafts}</think>\n{STRLEN}\n", calls=("strlen",)) == STRLEN  # unfenced answer
    # code only in the reasoning, prose after: the reasoning's code, as with no tags at all
    reply = f"<think>\n```python\n{STRLEN}\n```\n</think>\nThe function above counts the characters."
    assert extract_code(reply, calls=("strlen",)) == STRLEN


# --- which block -------------------------------------------------------------------------


def test_an_untagged_solution_before_a_python_usage_block() -> None:
    reply = f"```\n{STRLEN}\n```\nUsage:\n```python\nprint(strlen('abc'))\n```"
    assert extract_code(reply, calls=("strlen",)) == STRLEN
    # a python block that defines it still wins over an untagged one
    reply = f"```\ndef strlen(s):\n    return 0\n```\n```python\n{STRLEN}\n```"
    assert extract_code(reply, calls=("strlen",)) == STRLEN


def test_a_helper_bound_in_a_top_level_try_of_another_block_is_carried() -> None:
    helpers = "try:\n    from functools import cache\nexcept ImportError:\n    from functools import lru_cache as cache"
    solution = "@cache\ndef strlen(string):\n    return len(string)"
    program = extract_code(f"```python\n{helpers}\n```\nThen:\n```python\n{solution}\n```", calls=("strlen",))
    assert program == f"{helpers}\n\n{solution}"


def test_future_imports_go_first_when_blocks_are_joined() -> None:
    helper = "def count(s):\n    return len(s)"
    solution = "from __future__ import annotations\n\ndef strlen(string: str) -> int:\n    return count(string)"
    program = extract_code(f"```python\n{helper}\n```\n```python\n{solution}\n```", calls=("strlen",))
    assert program.startswith("from __future__ import annotations\n") and _compiles(program)
    assert extract_code(f"```python\n{solution}\n```", calls=("strlen",)) == solution  # alone: unchanged


# --- joined to the starter code ----------------------------------------------------------


def test_future_imports_go_first_before_the_starter_code() -> None:
    reply = "from __future__ import annotations\n\n" + STRLEN
    program = complete_function(reply, STARTER, "strlen")
    assert program.startswith("from __future__ import annotations\n") and _compiles(program)
    assert STARTER.rstrip() in program


@pytest.mark.parametrize(
    "body",
    [
        "return len(string)",
        "  return len(string)",
        "        return len(string)",
        "n = 0\nfor _ in string:\n    n += 1\nreturn n",
        "  n = 0\n  for _ in string:\n    n += 1\n  return n",
    ],
    ids=["margin", "two-spaces", "eight-spaces", "margin-block", "two-space-block"],
)
def test_a_body_at_the_margin_or_another_indent_is_reindented(body: str) -> None:
    program = complete_function(body, STARTER, "strlen")
    namespace: dict = {}
    exec(compile(program, "<solution>", "exec"), namespace)
    assert namespace["strlen"]("abcd") == 4


def test_a_body_that_compiles_as_written_is_left_as_written() -> None:
    assert complete_function("    return len(string)", STARTER, "strlen") == STARTER + "    return len(string)\n"
    # a top-level program after the starter (it compiles): appended as it is, not re-indented
    assert complete_function("print(1)", STARTER, "strlen") == STARTER + "print(1)\n"
