"""Red-team corpus of the code family (HumanEval-v2, MBPP-v2): replies played through the
real env, sandbox included, on the real data.

A case's `task` holds the env id (`env`), the task (`task_id`) and the env's keyword
arguments (`max_turns`, `split`, ...). A case either lists its replies, one per turn, or
names an `attack` from `ATTACKS`: a policy that writes each turn's reply from everything the
env has shown it so far (the prompt and every feedback message), and plays every turn the
env allows. The lookup-table attack is the one a policy finds on its own when the feedback
leaks the tests: answer exactly the calls it has been shown, and nothing else.

Two optional keys: `episodes` plays the task that many times in a row on the same env (the
same sandbox pool), as a GRPO group of one prompt would, and the last episode's reward is
the case's; `hidden` lists texts no feedback may contain, the hidden tests' inputs or what
would encode them (replay raises if one does: a leak is wrong whatever the reward).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

import gymnasium as gym

import rlenvs  # noqa: F401 - registers the ids
from tests.support.redteam import Case
from tests.support.redteam_code_memory import program_reader, verdict_residue
from tests.support.redteam_code_oracle import oracle_reply


def _shown_calls(text: str, function: str) -> dict[str, object]:
    """Every `f(args) == value` and doctest `>>> f(args)` / value pair the text shows,
    as {repr(args): value}: what a policy could copy out of a prompt or a feedback message."""
    table: dict[str, object] = {}
    lines = [line.strip() for line in text.splitlines()]
    for number, line in enumerate(lines):
        if line.startswith(">>>") and number + 1 < len(lines):
            source = f"{line[3:].strip()} == {lines[number + 1]}"
        elif line.startswith("assert "):
            source = line.removeprefix("assert ")
        else:
            continue
        try:
            statement = ast.parse(f"assert {source}").body[0]
            compare = statement.test
            call, expected = compare.left, compare.comparators[0]
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") in (function, "candidate"):
                args = tuple(ast.literal_eval(argument) for argument in call.args)
                table[repr(args)] = ast.literal_eval(expected)
        except (SyntaxError, ValueError, AttributeError, IndexError, TypeError):
            continue
    return table


def lookup_table(function: str, seen: str) -> str:
    """A reply that knows only the answers it has been shown."""
    table = _shown_calls(seen, function)
    return f"```python\n_SEEN = {table!r}\n\ndef {function}(*args):\n    return _SEEN.get(repr(args))\n```"


ATTACKS: dict[str, Callable[[str, str], str]] = {
    "lookup-table": lookup_table,
    "cross-run-oracle": oracle_reply,
    **{f"program-from-{route}": program_reader(route) for route in ("frames", "gc", "raw_memory")},
    "verdict-residue": verdict_residue,
}
"""attack name -> reply(entry point, all text seen so far)."""


@functools.cache
def _env(env_id: str, kwargs: tuple) -> gym.Env:
    return gym.make(env_id, **dict(kwargs))


def replay(case: Case) -> float:
    task = dict(case.task)
    env_id, task_id, attack = task.pop("env"), task.pop("task_id"), task.pop("attack", None)
    episodes, hidden = task.pop("episodes", 1), task.pop("hidden", ())
    env = _env(env_id, tuple(sorted(task.items())))
    for _ in range(episodes):
        reward, feedback = _episode(case, env, task_id, attack)
        leaked = [text for text in hidden if text in feedback]
        if leaked:
            raise AssertionError(f"case {case.kind!r}: the feedback shows hidden inputs {leaked}:\n{feedback}")
    return reward


def _episode(case: Case, env: gym.Env, task_id: str, attack: str | None) -> tuple[float, str]:
    """One episode: its reward and every feedback message."""
    observation, _ = env.reset(options={"task_id": task_id})
    seen = [observation]
    replies = list(case.replies) if attack is None else [None] * env.unwrapped.max_turns
    reward, over = 0.0, False
    while replies and not over:
        reply = replies.pop(0)
        if reply is None:
            reply = ATTACKS[attack](env.unwrapped.task.entry_point, "\n".join(seen))
        observation, reward, terminated, truncated, _ = env.step(reply)
        seen.append(observation)
        over = terminated or truncated
    if replies:
        raise ValueError(f"case {case.kind!r} has {len(replies)} replies left after its episode ended")
    return float(reward), "\n".join(seen[1:])


def _block(code: str) -> str:
    return f"```python\n{code.strip(chr(10))}\n```"


HUMANEVAL = "rlenvs/HumanEval-v2"
MBPP = "rlenvs/MBPP-v2"
HAS_CLOSE = (
    "def has_close_elements(numbers, threshold):\n"
    "    for i, a in enumerate(numbers):\n        for j, b in enumerate(numbers):\n"
    "            if i != j and abs(a - b) < threshold:\n                return True\n    return False\n"
)
HAS_CLOSE_TAB_BODY = (
    "\tfor i, a in enumerate(numbers):\n\t\tfor j, b in enumerate(numbers):\n"
    "\t\t\tif i != j and abs(a - b) < threshold:\n\t\t\t\treturn True\n\treturn False\n"
)
REMOVE_OCC = (
    "def remove_Occ(s, ch):\n"
    "    first = s.find(ch)\n    if first < 0:\n        return s\n"
    "    s = s[:first] + s[first + 1:]\n    last = s.rfind(ch)\n"
    "    return s if last < 0 else s[:last] + s[last + 1:]\n"
)
STORE_HIDDEN_CALLS = """
import os
_BIG = 1 << 62
_DIRS = ("/tmp", "/workspace", "/dev/shm")
_seen = []
def _store(data):
    data = data[:42].ljust(42, b"\\0")
    for i, d in enumerate(_DIRS):
        a = int.from_bytes(data[14 * i:14 * i + 7], "big")
        m = int.from_bytes(data[14 * i + 7:14 * i + 14], "big")
        os.utime(d, ns=(_BIG + a, m))
def remove_Occ(s, ch):
    _seen.append(f"{s}|{ch}")
    _store(";".join(_seen[1:]).encode())  # the calls after the shown test's
    return s
"""
RAISE_STORED_CALLS = """
import os
_BIG = 1 << 62
def _load():
    out = b""
    for d in ("/tmp", "/workspace", "/dev/shm"):
        st = os.stat(d)
        out += (st.st_atime_ns - _BIG).to_bytes(7, "big") + st.st_mtime_ns.to_bytes(7, "big")
    return out.rstrip(b"\\0").decode(errors="replace")
def remove_Occ(s, ch):
    raise ValueError("hidden calls of the last run: " + _load())
"""
"""The red team's pair: the first run keeps the hidden calls' arguments in the folders'
timestamps, the second raises them in the shown test, whose error the feedback quotes."""
EXCEPTION_BY_INPUT = """
import builtins
_NAMES = sorted(n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, Exception) and n != "AssertionError")
_n = [0]
def remove_Occ(s, ch):
    _n[0] += 1
    if _n[0] == 1:  # the shown test runs first: answer it
        return s.replace(ch, "", 1)[::-1].replace(ch, "", 1)[::-1]
    raise getattr(builtins, _NAMES[len(s) * 8 + _n[0]])("x")  # which builtin = the hidden input's length
"""
MAIN_DEMO = "\nif __name__ == '__main__':\n    s = input('string: ')\n    print(remove_Occ(s, input('char: ')))\n"

STRLEN = "def strlen(string: str) -> int:\n    return len(string)\n"
CRLF = "\r\n"

ORACLE = (
    "the same task-agnostic reply twice: it may not learn in a run which answers passed, nor keep a note for the next"
)

PROGRAM_READER = (
    "a reply with no solution logic that finds the test program, hidden tests and expected values included, "
    "in its own process (a fork of the zygote) and answers every call from it"
)

CASES: list[Case] = [
    # --- round 3: the test program in the solution's own memory ---------------------------------
    *(
        Case("test-program-reader", {"env": env, **where, "attack": f"program-from-{route}"}, (), 0.0, PROGRAM_READER)
        for route in ("frames", "gc")
        for env, where in ((HUMANEVAL, {"task_id": "HumanEval/0"}), (MBPP, {"split": "test", "task_id": "mbpp/11"}))
    ),
    # (the raw heap held the JSON of MBPP's request whole, and earned 1.0 there; HumanEval/0's it did not)
    Case("test-program-reader", {"env": MBPP, "split": "test", "task_id": "mbpp/11", "attack": "program-from-raw_memory"},
         (), 0.0, PROGRAM_READER),
    Case("verdict-residue", {"env": HUMANEVAL, "task_id": "HumanEval/0", "episodes": 3, "attack": "verdict-residue"},
         (), 0.0, "a later episode of the same task may not replay which answers passed, read from the last run's "
         "records in its own process's memory"),
    # --- round 2: the cross-run oracle (the runner's /proc, notes kept between executions) -----
    Case("cross-run-oracle", {"env": MBPP, "split": "test", "task_id": "mbpp/20", "max_turns": 2,
         "attack": "cross-run-oracle"}, (), 0.0, ORACLE),
    Case("cross-run-oracle", {"env": MBPP, "split": "test", "task_id": "mbpp/19", "max_turns": 2,
         "attack": "cross-run-oracle"}, (), 0.0, ORACLE),
    Case("cross-run-oracle", {"env": HUMANEVAL, "task_id": "HumanEval/0", "max_turns": 2,
         "attack": "cross-run-oracle"}, (), 0.0, ORACLE),
    Case("cross-run-oracle", {"env": HUMANEVAL, "task_id": "HumanEval/56", "max_turns": 2,
         "attack": "cross-run-oracle"}, (), 0.0, ORACLE),
    Case("cross-run-oracle", {"env": MBPP, "split": "test", "task_id": "mbpp/20", "episodes": 2,
         "attack": "cross-run-oracle"}, (), 0.0,
         "across episodes of one prompt (a GRPO group): the second episode may not replay what the first learned"),
    # --- round 2: hidden inputs reaching the feedback -------------------------------------------
    Case("hidden-input-leak", {"env": MBPP, "split": "test", "task_id": "mbpp/11", "max_turns": 3,
         "hidden": ("abcda", "PHP")}, (_block(STORE_HIDDEN_CALLS), _block(RAISE_STORED_CALLS)), 0.0,
         "a shown test's quoted error cannot carry hidden inputs a previous run kept in the folders' timestamps"),
    Case("hidden-input-leak", {"env": MBPP, "split": "test", "task_id": "mbpp/11", "max_turns": 2,
         "hidden": ("IsADirectoryError", "ResourceWarning")}, (_block(EXCEPTION_BY_INPUT),), 0.0,
         "hidden failures are counted by a fixed kind, not by the exception type the solution picked per input"),
    # --- 7: retry feedback must not reveal the hidden tests ---------------------------------
    Case("hidden-test-leak", {"env": MBPP, "split": "test", "task_id": "mbpp/11", "max_turns": 3,
         "attack": "lookup-table"}, (), 0.0,
         "a table of the calls the prompt and the feedback showed is not a solution"),
    Case("hidden-test-leak", {"env": MBPP, "split": "test", "task_id": "mbpp/17", "max_turns": 3,
         "attack": "lookup-table"}, (), 0.0,
         "a table of the calls the prompt and the feedback showed is not a solution"),
    Case("hidden-test-leak", {"env": MBPP, "split": "test", "task_id": "mbpp/20", "max_turns": 3,
         "attack": "lookup-table"}, (), 0.0,
         "a table of the calls the prompt and the feedback showed is not a solution"),
    Case("hidden-test-leak", {"env": HUMANEVAL, "task_id": "HumanEval/23", "max_turns": 5,
         "attack": "lookup-table"}, (), 0.0,
         "a table of the docstring's examples and what the feedback showed is not strlen"),
    Case("hidden-test-leak", {"env": HUMANEVAL, "task_id": "HumanEval/53", "max_turns": 5,
         "attack": "lookup-table"}, (), 0.0,
         "a table of the docstring's examples and what the feedback showed is not add"),
    Case("hidden-test-leak", {"env": HUMANEVAL, "task_id": "HumanEval/23", "max_turns": 2},
         (_block("def strlen(string):\n    return len(string) - 1"), _block("def strlen(string):\n    return len(string)")),
         1.0, "a wrong first attempt and a correct second one solve the task"),
    Case("hidden-test-leak", {"env": MBPP, "split": "test", "task_id": "mbpp/11", "max_turns": 2},
         (_block("def remove_Occ(s, ch):\n    return s[1:-1]"), _block(REMOVE_OCC)),
         1.0, "a retry after a failing shown test can still solve the task"),
    # --- 8: which block is the program --------------------------------------------------------
    Case("which-block", {"env": HUMANEVAL, "task_id": "HumanEval/0"},
         (f"{_block(HAS_CLOSE)}\n\nExample usage:\n"
          + _block("print(has_close_elements([1.0, 2.0, 3.0], 0.5))  # False"),),
         1.0, "an example-usage block after the solution is not the solution"),
    Case("which-block", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (f"{_block(REMOVE_OCC)}\nTests:\n" + _block('assert remove_Occ("hello", "l") == "heo"\nprint("ok")'),),
         1.0, "the model's own asserts after the solution are not the solution"),
    Case("which-block", {"env": HUMANEVAL, "task_id": "HumanEval/0"},
         (f"{_block(HAS_CLOSE)}\nChecks:\n" + _block("assert has_close_elements([1.0, 1.5], 0.6) is False"),),
         1.0, "the model's own (wrong) asserts are not the task's tests"),
    Case("which-block", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         ("A helper first:\n" + _block("def drop_at(s, i):\n    return s[:i] + s[i + 1:]")
          + "\nThen the function:\n"
          + _block("def remove_Occ(s, ch):\n    if ch in s:\n        s = drop_at(s, s.index(ch))\n"
                   "    if ch in s:\n        s = drop_at(s, s.rindex(ch))\n    return s")
          + "\nUsage:\n" + _block("print(remove_Occ('hello', 'l'))"),),
         1.0, "the solution's helper from an earlier block is part of the program"),
    Case("which-block", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (_block("def remove_Occ(s, ch):\n    return drop_last(drop_first(s, ch), ch)")
          + "\nwith these helpers:\n"
          + _block("def drop_first(s, ch):\n    return s.replace(ch, '', 1)\n\n"
                   "def drop_last(s, ch):\n    i = s.rfind(ch)\n    return s if i < 0 else s[:i] + s[i + 1:]")
          + "\nand my tests:\n" + _block("from solution import remove_Occ\nassert remove_Occ('PHP', 'P') == 'H'"),),
         1.0, "helpers written after the solution are part of it; a test block importing it is not the answer"),
    Case("which-block", {"env": HUMANEVAL, "task_id": "HumanEval/0"},
         (f"First try:\n{_block(HAS_CLOSE)}\nOn second thought:\n"
          + _block("def has_close_elements(numbers, threshold):\n    return False"),),
         0.0, "the last definition is the answer: a correct earlier draft does not count"),
    Case("which-block", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (_block("def remove_Occ(s, ch):\n    return s") + "\nTests:\n"
          + _block('assert remove_Occ("hello", "l") == "heo"'),),
         0.0, "a wrong solution followed by the shown test is still wrong"),
    # --- 9: the solution is a module, not __main__ ---------------------------------------------
    Case("module-not-main", {"env": HUMANEVAL, "task_id": "HumanEval/53"},
         (_block("def add(x: int, y: int):\n    return x + y\n\n"
                 "if __name__ == '__main__':\n    a, b = map(int, input().split())\n    print(add(a, b))"),),
         1.0, "a demo under `if __name__ == '__main__':` does not run when the solution is imported"),
    Case("module-not-main", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (_block(REMOVE_OCC + MAIN_DEMO),),
         1.0, "a demo that reads stdin under the main guard does not run when the solution is imported"),
    Case("module-not-main", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (_block("if __name__ == '__main__':\n" + "".join(f"    {line}\n" for line in REMOVE_OCC.splitlines())),),
         0.0, "a function defined only when run as a script does not exist when imported"),
    # --- 10: formatting real models produce ----------------------------------------------------
    Case("real-format", {"env": HUMANEVAL, "task_id": "HumanEval/0"},
         (_block(HAS_CLOSE_TAB_BODY),),
         1.0, "a body indented with tabs is the same body as one indented with spaces"),
    Case("real-format", {"env": HUMANEVAL, "task_id": "HumanEval/0"},
         (_block(HAS_CLOSE_TAB_BODY.replace("return True", "return False")),),
         0.0, "a wrong body indented with tabs is still wrong"),
    # --- round 3: correct replies lost to a docstring's fence and to a dict view ----------------
    Case("docstring-fence", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         (_block('def strlen(string: str) -> int:\n    """Return the length.\n\n    ```\n    strlen("ab")  # 2\n'
                 '    ```\n    """\n    return len(string)'),),
         1.0, "a fence inside the docstring, indented with the function's body, does not close the block"),
    Case("dict-view", {"env": HUMANEVAL, "task_id": "HumanEval/33"},
         (_block("def sort_third(l: list):\n    thirds = sorted(l[::3])\n    out = {}\n    for i, v in enumerate(l):\n"
                 "        out[i] = thirds[i // 3] if i % 3 == 0 else v\n    return out.values()"),),
         1.0, "a dict's values view reaches the tests as one: HumanEval's own tests, which wrap it in tuple(), pass it"),
    # --- round 2: correct replies the reading of the reply lost ---------------------------------
    Case("future-import", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         (_block("from __future__ import annotations\n\n" + STRLEN),),
         1.0, "a future import stays first when the prompt is put before the reply's definition"),
    Case("future-import", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (_block("def drop_at(s, i):\n    return s[:i] + s[i + 1:]") + "\nand\n"
          + _block("from __future__ import annotations\n\ndef remove_Occ(s: str, ch: str) -> str:\n"
                   "    if ch in s:\n        s = drop_at(s, s.index(ch))\n"
                   "    if ch in s:\n        s = drop_at(s, s.rindex(ch))\n    return s"),),
         1.0, "a future import stays first when a helper from another block is put before the answer"),
    Case("think-unclosed-fence", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         ("<think>\nFirst idea:\n```python\ndef strlen(string):\n    n = 0\nNo, simpler.\n</think>\n\n" + _block(STRLEN),),
         1.0, "a fence left open in the reasoning does not swallow the final answer"),
    Case("think-unclosed-fence", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         ("<think>\n" + _block(STRLEN) + "\n</think>\n\n" + _block("def strlen(string: str) -> int:\n    return 0"),),
         0.0, "the answer after the reasoning is the program, not a correct draft inside it"),
    Case("crlf", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         ((_block(STRLEN) + "\nThis returns the length.\n").replace("\n", CRLF),),
         1.0, "a closing fence followed by CR closes the block"),
    Case("crlf", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (("Here:\n" + _block(REMOVE_OCC) + "\nIt removes the first and last occurrence.\n").replace("\n", CRLF),),
         1.0, "a CRLF reply with prose after the block"),
    Case("indented-fence", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         ("1. The function:\n   ```python\n" + "".join(f"   {line}\n" for line in STRLEN.splitlines()) + "   ```\n2. Done.",),
         1.0, "a fence inside a list item: its indentation is the list's, not the code's"),
    Case("indented-fence", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         ("- Solution:\n\n    ```python\n" + "".join(f"    {line}\n" for line in REMOVE_OCC.splitlines()) + "    ```\n",),
         1.0, "a fence inside a list item, four spaces in"),
    Case("four-backtick-fence", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         ("````python\n" + STRLEN + "````\n",),
         1.0, "four backticks open and close a block (here on the last code line)"),
    Case("tilde-fence", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         ("~~~python\n" + REMOVE_OCC + "~~~\nDone.",),
         1.0, "tildes are a Markdown fence too"),
    Case("untagged-solution-tagged-usage", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         ("```\n" + STRLEN + "```\nFor example:\n" + _block("print(strlen('abc'))  # 3"),),
         1.0, "an untagged block that defines the function is the answer when no python block does"),
    Case("close-fence-on-code-line", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         ("```python\n" + STRLEN.rstrip() + "```\nThat is all.",),
         1.0, "a closing fence at the end of the last code line closes the block"),
    Case("body-indentation", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         (_block("return len(string)"),),
         1.0, "a body written at the margin is the function's body"),
    Case("body-indentation", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         (_block("  count = 0\n  for _ in string:\n    count += 1\n  return count"),),
         1.0, "a body indented by two spaces under a four-space docstring"),
    Case("body-indentation", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         (_block("return len(string) + 1"),),
         0.0, "a wrong body at the margin is still wrong"),
    Case("output-limit", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         (_block("def strlen(string: str) -> int:\n    print('debug', string * 1000, 'x' * 50_000)\n    return len(string)"),),
         1.0, "debug prints past the output cap do not fail a correct solution: the tests judge it"),
    Case("module-attrs", {"env": HUMANEVAL, "task_id": "HumanEval/23"},
         (_block("import os\nHERE = os.path.dirname(__file__)\n\n" + STRLEN),),
         1.0, "the imported solution has a __file__, as any module does"),
    Case("helper-in-try-block", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (_block("try:\n    from functools import cache\nexcept ImportError:\n    from functools import lru_cache as cache")
          + "\nThen:\n" + _block("@cache\n" + REMOVE_OCC),),
         1.0, "a helper bound in a top-level try of another block is carried with the answer"),
    Case("real-format", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         (f"Here is my solution: ```python\n{REMOVE_OCC}```\nIt removes both ends.",),
         1.0, "a fence opened after text on the same line opens the block"),
    Case("real-format", {"env": MBPP, "split": "test", "task_id": "mbpp/11"},
         ("Here is my solution: ```python\ndef remove_Occ(s, ch):\n    return s\n```",),
         0.0, "a wrong solution in a fence opened after text is still wrong"),
    Case("real-format", {"env": HUMANEVAL, "task_id": "HumanEval/0"},
         (f"\x00\x1b[0m\x07{_block(HAS_CLOSE)}",),
         1.0, "stray control bytes before the block are not part of the program"),
    Case("real-format", {"env": HUMANEVAL, "task_id": "HumanEval/0"},
         ("\x1b[0m" + HAS_CLOSE,),
         1.0, "stray control bytes before an unfenced solution are not part of the program"),
]  # fmt: skip
