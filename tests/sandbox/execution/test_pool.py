"""The sandbox's behaviour (not its attack suite): what run_python, run_shell and run_tests
report, every status, values crossing from the solution to the tests, the worker pool under
threads, faults and leaks, bad input, unsafe mode, and arbitrary text as code.
"""

from __future__ import annotations

import decimal
import glob
import importlib.util
import inspect
import itertools
import json
import math
import os
import pickle
import re
import shutil
import signal
import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlenvs.sandbox import STATUSES, Limits, Sandbox, SandboxUnavailable, launch
from rlenvs.sandbox import TestProgram as Program  # not collected as a test class
from rlenvs.sandbox.launch import UID_BASE, staged_guest_dir
from rlenvs.sandbox.worker import Worker

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
needs_guest_python = pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="no /usr/bin/python3")
pytestmark = [needs_guest_python, pytest.mark.sandbox]  # `sandbox`: skipped naming the install without it

VALUES_PATH = Path(__file__).resolve().parents[3] / "rlenvs" / "sandbox" / "guest" / "values.py"


def _load_values():
    """The guest codec, imported from its file (inside the sandbox it is a top-level module)."""
    spec = importlib.util.spec_from_file_location("rlenvs_guest_values_under_test", VALUES_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


values = _load_values()


@pytest.fixture(scope="module")
def sandbox():
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    with Sandbox(workers=2, limits=Limits(timeout_s=5)) as shared:
        yield shared


@pytest.fixture
def own_sandbox():
    """A one-worker sandbox for tests that kill workers or may break the pool."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    with Sandbox(workers=1, limits=Limits(timeout_s=5)) as private:
        yield private


@pytest.fixture
def launched(monkeypatch) -> list[tuple[int, int | None]]:
    """(pid, uid) of every worker started during the test."""
    record: list[tuple[int, int | None]] = []
    start = Worker.__init__

    def recording(self, launch):
        start(self, launch)
        record.append((self.pid, launch.uid))

    monkeypatch.setattr(Worker, "__init__", recording)
    return record


# --- helpers -------------------------------------------------------------------------------


def same(a: object, b: object) -> bool:
    """Exact equality: same types all the way down, nan equals nan, -0.0 differs from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(ka, kb) and same(a[ka], b[kb]) for ka, kb in zip(a, b))
    if isinstance(a, (set, frozenset)):
        return len(a) == len(b) and sorted(map(repr, a)) == sorted(map(repr, b))
    if isinstance(a, decimal.Decimal):
        return str(a) == str(b)
    return a == b


def wire(tree: object) -> object:
    """A tree as the test runner gets it: through JSON."""
    return json.loads(json.dumps(tree))


def process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, uid) of every process on the host."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                table[int(entry)] = (int(fields[1]), os.stat(f"/proc/{entry}").st_uid)
            except OSError:
                continue
    return table


def subtree(roots: set[int], table: dict[int, tuple[int, int]]) -> set[int]:
    children = defaultdict(list)
    for pid, (parent, _) in table.items():
        children[parent].append(pid)
    found, stack = set(roots) & set(table), list(roots)
    while stack:
        for child in children[stack.pop()]:
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def leftover_processes(launched: list[tuple[int, int | None]], live: Sandbox | None = None) -> set[int]:
    """Processes of the workers `launched` in this test, but those of `live`'s current workers.
    As root every worker runs as its own uid >= UID_BASE, so every process of such a uid
    counts, wherever it was re-parented (a zombie too, until pid 1 reaps it); counting only
    the uids launched here keeps other sandboxes on the machine out. Else: the workers'
    process trees."""
    table = process_table()
    live_pids = set(worker_pids(live)) if live is not None else set()
    if os.geteuid() == 0:
        uids = {uid for pid, uid in launched if pid not in live_pids}
        assert all(uid >= UID_BASE for uid in uids)
        return {pid for pid, (_, uid) in table.items() if uid in uids}
    return subtree({pid for pid, _ in launched if pid not in live_pids}, table)


def describe(pids: set[int]) -> str:
    lines = []
    for pid in sorted(pids):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                lines.append(stat.read()[:80])
        except OSError:
            lines.append(f"{pid} (gone)")
    return "\n".join(lines)


def worker_pids(pool: Sandbox) -> list[int]:
    return [worker.pid for worker in [*pool._idle, *pool._busy]]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def wait_until(predicate, timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def busy_worker(pool: Sandbox, timeout_s: float = 5.0) -> Worker:
    assert wait_until(lambda: bool(pool._busy), timeout_s), "no call started"
    return next(iter(pool._busy))


# --- run_python ----------------------------------------------------------------------------


@needs_bwrap
class TestRunPython:
    def test_stdout_stderr_and_exit_code(self, sandbox):
        result = sandbox.run_python("import sys\nprint('out')\nsys.stderr.write('err\\n')")
        assert (result.status, result.stdout, result.stderr, result.exit_code, result.signal) == (
            "ok",
            "out\n",
            "err\n",
            0,
            None,
        )
        assert result.ok and not result.truncated and result.duration_s > 0

    @pytest.mark.parametrize(
        ("code", "status", "exit_code", "stderr"),
        [
            ("import sys; sys.exit(3)", "error", 3, ""),
            ("import sys; sys.exit(0)", "ok", 0, ""),
            ("import sys; sys.exit()", "ok", 0, ""),
            ("import sys; sys.exit('bad input')", "error", 1, "bad input\n"),
            ("raise SystemExit(258)", "error", 2, ""),
        ],
    )
    def test_exit_codes(self, sandbox, code, status, exit_code, stderr):
        result = sandbox.run_python(code)
        assert (result.status, result.exit_code, result.stderr) == (status, exit_code, stderr)

    def test_exception_is_an_error_with_the_solutions_traceback(self, sandbox):
        result = sandbox.run_python("print('before')\ndef f(x):\n    return 1 / x\nf(0)\n")
        assert result.status == "error" and result.exit_code == 1 and result.stdout == "before\n"
        assert 'File "<solution>", line 4, in <module>' in result.stderr
        assert 'File "<solution>", line 3, in f' in result.stderr
        assert result.stderr.rstrip().endswith("ZeroDivisionError: division by zero")
        assert "roles" not in result.stderr and "zygote" not in result.stderr  # the harness's frames are not shown

    def test_syntax_error(self, sandbox):
        result = sandbox.run_python("def f(:\n")
        assert result.status == "error" and "SyntaxError" in result.stderr

    def test_stdin_is_passed_through(self, sandbox):
        result = sandbox.run_python("import sys\nprint(sys.stdin.read()[::-1])", stdin="abc ✓ é")
        assert result.stdout == "é ✓ cba\n"
        lines = sandbox.run_python("a = input(); b = input(); print(int(a) + int(b))", stdin="2\n40\n")
        assert lines.stdout == "42\n"

    def test_large_stdin(self, sandbox):
        result = sandbox.run_python("import sys; print(len(sys.stdin.read()))", stdin="x" * 1_000_000)
        assert result.stdout == "1000000\n"

    def test_no_stdin_is_end_of_file(self, sandbox):
        result = sandbox.run_python("input()")
        assert result.status == "error" and "EOFError" in result.stderr

    def test_runs_as_main(self, sandbox):
        result = sandbox.run_python("if __name__ == '__main__':\n    print('main', __name__)")
        assert result.stdout == "main __main__\n"

    def test_cwd_is_workspace_and_files_are_gone_next_time(self, sandbox):
        first = sandbox.run_python(
            "import os\nprint(os.getcwd())\nopen('kept.txt', 'w').write('x')\nos.mkdir('sub')\n"
            "open('/tmp/also.txt', 'w').write('y')\nprint(sorted(os.listdir('.')))"
        )
        assert first.stdout == "/workspace\n['kept.txt', 'sub']\n"
        for _ in range(3):  # whichever worker runs next
            second = sandbox.run_python("import os\nprint(os.listdir('/workspace'), os.listdir('/tmp'))")
            assert second.stdout == "[] []\n"


# --- run_shell -----------------------------------------------------------------------------


@needs_bwrap
class TestRunShell:
    def test_exit_codes(self, sandbox):
        assert sandbox.run_shell("true").status == "ok"
        failed = sandbox.run_shell("echo partial; exit 7")
        assert (failed.status, failed.exit_code, failed.stdout) == ("error", 7, "partial\n")
        missing = sandbox.run_shell("no-such-command-here")
        assert missing.status == "error" and missing.exit_code == 127 and "not found" in missing.stderr

    def test_pipes_and_stdin(self, sandbox):
        result = sandbox.run_shell("printf 'b\\na\\nc\\n' | sort | tr a-z A-Z")
        assert result.stdout == "A\nB\nC\n"
        assert sandbox.run_shell("wc -l", stdin="1\n2\n3\n").stdout.strip() == "3"
        assert sandbox.run_shell("pwd; echo err >&2").stdout == "/workspace\n"

    def test_env_and_files_do_not_persist(self, sandbox):
        first = sandbox.run_shell("export LEAK=yes; echo $LEAK; touch /workspace/f /tmp/g")
        assert first.stdout == "yes\n"
        for _ in range(3):
            again = sandbox.run_shell('echo "${LEAK-unset}"; ls -A /workspace /tmp')
            assert again.stdout.split() == ["unset", "/tmp:", "/workspace:"]

    def test_minimal_environment(self, sandbox):
        env = sandbox.run_shell("env | sort").stdout.split()
        names = {line.split("=", 1)[0] for line in env}
        assert {"PATH", "HOME", "LANG"} <= names
        assert not any(name.startswith(("PYTEST", "VIRTUAL_ENV", "RLENVS")) for name in names)


# --- every status --------------------------------------------------------------------------


@needs_bwrap
class TestStatuses:
    """Every status of results.STATUSES, produced on purpose."""

    def test_ok(self, sandbox):
        assert sandbox.run_python("pass").status == "ok"

    def test_error(self, sandbox):
        assert sandbox.run_python("raise ValueError('no')").status == "error"

    def test_timeout_wall_clock(self, sandbox):
        for code in ("while True: pass", "import time; time.sleep(30)"):
            result = sandbox.run_python(code, limits=Limits(timeout_s=0.5))
            assert result.status == "timeout", code
            assert 0.45 < result.duration_s < 3

    def test_timeout_cpu(self, sandbox):
        result = sandbox.run_python("while True: pass", limits=Limits(timeout_s=20, cpu_s=1))
        assert result.status == "timeout" and result.signal == signal.SIGXCPU
        assert result.duration_s < 10

    def test_timeout_in_shell(self, sandbox):
        assert sandbox.run_shell("sleep 30", limits=Limits(timeout_s=0.5)).status == "timeout"

    def test_memory(self, sandbox):
        for code in ("x = bytearray(2**33)", "x = 'a' * 2**33", "x = [0] * 2**31"):
            result = sandbox.run_python(code, limits=Limits(memory_mb=256))
            assert result.status == "memory", (code, result)
            assert "MemoryError" in result.stderr

    def test_output_limit(self, sandbox):
        result = sandbox.run_python("while True: print('x' * 999)", limits=Limits(output_bytes=1000))
        assert result.status == "output_limit" and result.truncated
        assert result.stdout == ("x" * 999 + "\n")[:1000]
        stderr = sandbox.run_shell("yes >&2", limits=Limits(output_bytes=5000))
        assert stderr.status == "output_limit" and stderr.truncated and len(stderr.stderr) == 5000

    def test_crash(self, sandbox):
        result = sandbox.run_python("import os, signal\nprint('x', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)")
        assert (result.status, result.signal, result.exit_code, result.stdout) == (
            "crash",
            signal.SIGSEGV,
            None,
            "x\n",
        )
        assert sandbox.run_shell("kill -ABRT $$").signal == signal.SIGABRT

    def test_setup_error(self, sandbox):
        program = Program(tests=("assert f(1) == 1",), remote={"f": "f"}, setup="raise RuntimeError('broken')")
        report = sandbox.run_tests("def f(x): return x", program)
        assert report.status == "setup_error" and "RuntimeError: broken" in report.detail
        assert report.tests[0].error == "not run: the test set-up failed" and not report.all_passed

    def test_sandbox_error_when_the_worker_is_killed_mid_run(self, own_sandbox, launched):
        """A fresh worker (its first request) killed mid-run: sandbox_error, and the next call
        runs on a new worker. (A reused one gets the request again: see the test after.)"""
        results = []
        call = threading.Thread(target=lambda: results.append(own_sandbox.run_python("import time; time.sleep(20)")))
        call.start()
        victim = busy_worker(own_sandbox, timeout_s=30)
        time.sleep(0.5)  # let the code start
        os.kill(victim.pid, signal.SIGKILL)
        call.join(15)
        [result] = results
        assert result.status == "sandbox_error" and "exited" in result.detail
        assert result.duration_s == 0.0 and result.exit_code is None
        after = own_sandbox.run_python("print('fresh')")
        assert after.status == "ok" and after.stdout == "fresh\n"
        assert worker_pids(own_sandbox) and victim.pid not in worker_pids(own_sandbox)
        assert len(launched) == 2
        assert wait_until(lambda: not leftover_processes(launched, own_sandbox), 10)  # the old sandbox died too

    def test_reused_worker_killed_mid_run_reruns_the_request(self, own_sandbox):
        own_sandbox.run_python("pass")
        results = []
        code = "import time\ntime.sleep(1)\nprint('done')"
        call = threading.Thread(target=lambda: results.append(own_sandbox.run_python(code)))
        call.start()
        victim = busy_worker(own_sandbox)
        time.sleep(0.3)
        os.kill(victim.pid, signal.SIGKILL)
        call.join(15)
        [result] = results
        assert result.status == "ok" and result.stdout == "done\n"
        assert victim.pid not in worker_pids(own_sandbox)

    def test_every_status_is_covered(self):
        covered = {"ok", "error", "timeout", "memory", "output_limit", "crash", "setup_error", "sandbox_error"}
        assert covered == set(STATUSES)


# --- run_tests -----------------------------------------------------------------------------

ADD = (
    "def add(a, b):\n    if a == 99:\n        raise ValueError('ninety-nine')\n    return a + b if a >= 0 else a - b\n"
)


@needs_bwrap
class TestRunTests:
    def test_all_pass(self, sandbox):
        program = Program(tests=("assert add(2, 3) == 5", "assert add(0, 0) == 0"), remote={"add": "add"})
        report = sandbox.run_tests(ADD, program)
        assert report.status == "ok" and report.all_passed and report.passed == 2
        assert report.fraction_passed == 1.0 and report.first_failure() is None
        assert [t.name for t in report.tests] == list(program.tests)

    def test_partial_pass_with_failure_messages(self, sandbox):
        program = Program(
            tests=("assert candidate(2, 3) == 5", "assert candidate(-1, 1) == 0", "candidate(99, 1)", "x = 1"),
            remote={"candidate": "add"},
            names=("positive", "negative", "raises", "no call"),
        )
        report = sandbox.run_tests(ADD, program)
        assert report.status == "ok" and not report.all_passed
        assert [t.passed for t in report.tests] == [True, False, False, True]
        assert report.passed == 2 and report.fraction_passed == 0.5
        assert [t.name for t in report.tests] == ["positive", "negative", "raises", "no call"]
        wrong, raised = report.tests[1], report.tests[2]
        assert report.first_failure() is wrong
        assert wrong.error == "AssertionError\nlast call: add(-1, 1) returned -2" and wrong.traceback == ""
        assert raised.error == "ValueError: ninety-nine\nlast call: add(99, 1) raised ValueError"
        assert 'File "<solution>", line 3, in add' in raised.traceback
        assert raised.traceback.rstrip().endswith("ValueError: ninety-nine")

    def test_assertion_message_and_kwargs_in_last_call(self, sandbox):
        program = Program(tests=("assert add(a=1, b=2) == 4, 'wanted four'",), remote={"add": "add"})
        [outcome] = sandbox.run_tests("def add(a, b): return a + b", program).tests
        assert outcome.error == "AssertionError: wanted four\nlast call: add(a=1, b=2) returned 3"

    def test_last_call_shows_what_crossed_even_if_the_test_mutated_it(self, sandbox):
        program = Program(
            tests=("items = [3, 1]\nresult = f(items)\nitems.clear()\nresult.sort()\nassert result == [9]",),
            remote={"f": "f"},
        )
        [outcome] = sandbox.run_tests("def f(x):\n    return x + [2]", program).tests
        assert outcome.error == "AssertionError\nlast call: f([3, 1]) returned [3, 1, 2]"

    def test_missing_function_and_broken_solution(self, sandbox):
        program = Program(tests=("assert g() == 1",), remote={"g": "g"})
        [missing] = sandbox.run_tests("def f(): return 1", program).tests
        assert "the solution does not define a function named 'g'" in missing.error
        broken = sandbox.run_tests("def g(): return 1\nraise ValueError('at import')", program)
        assert broken.status == "ok" and not broken.tests[0].passed
        assert "the solution failed before any test ran: at import" in broken.tests[0].error
        assert "<solution>" in broken.tests[0].traceback

    def test_the_solution_is_imported_not_run_as_a_script(self, sandbox):
        # A demo under the main guard that reads stdin would fail every test (EOFError) if the
        # solution ran as __main__; the reference harnesses import it. Its classes resolve by
        # their module (a dataclass with string annotations looks it up in sys.modules).
        program = Program(tests=("assert f() == ('solution', 'solution', 2)",), remote={"f": "f"})
        code = (
            "from __future__ import annotations\nimport dataclasses, sys\n"
            "@dataclasses.dataclass\nclass Pair:\n    a: int\n    b: int\n"
            "def f():\n    return __name__, Pair.__module__, len(dataclasses.fields(Pair))\n"
            "if __name__ == '__main__':\n    print(f(input()))\n"
        )
        assert sandbox.run_tests(code, program).all_passed
        assert sandbox.run_python("print(__name__)").stdout == "__main__\n"  # a script stays a script

    def test_the_solution_has_a_file_as_a_module_or_script_does(self, sandbox):
        """A solution that finds its folder by `os.path.dirname(__file__)` failed at import
        with NameError: every imported module and every script has a __file__."""
        code = "import os\nHERE = os.path.dirname(os.path.abspath(__file__))\ndef f():\n    return HERE"
        assert sandbox.run_tests(code, Program(tests=("assert f() == '/workspace'",), remote={"f": "f"})).all_passed
        assert sandbox.run_python("print(__file__)").stdout == "/workspace/solution.py\n"

    def test_solution_output_is_reported(self, sandbox):
        program = Program(tests=("assert f() == 1",), remote={"f": "f"})
        code = (
            "import sys\nprint('loading', flush=True)\n"
            "def f():\n    print('called', file=sys.stderr, flush=True)\n    return 1"
        )
        report = sandbox.run_tests(code, program)
        assert report.all_passed and report.stdout == "loading\n" and report.stderr == "called\n"

    def test_unflushed_solution_output_is_reported(self, sandbox):
        program = Program(tests=("assert f() == 1",), remote={"f": "f"})
        code = "import sys\nprint('loading')\ndef f():\n    sys.stderr.write('called')\n    return 1"
        outputs = {(r.stdout, r.stderr) for r in (sandbox.run_tests(code, program) for _ in range(30))}
        assert outputs == {("loading\n", "called")}

    def test_solution_that_exits_fails_its_test_and_the_rest(self, sandbox):
        program = Program(tests=("assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"), remote={"f": "f"})
        code = "import sys\ndef f(x):\n    if x == 2:\n        sys.exit(0)\n    return x"
        report = sandbox.run_tests(code, program)
        assert report.status == "ok" and [t.passed for t in report.tests] == [True, False, False]
        assert "SolutionEnded" in report.tests[1].error and "last call: f(2)" in report.tests[1].error
        segfault = (
            "import os, signal\ndef f(x):\n    if x == 2:\n        os.kill(os.getpid(), signal.SIGSEGV)\n    return x"
        )
        assert [t.passed for t in sandbox.run_tests(segfault, program).tests] == [True, False, False]

    def test_tests_after_a_timeout_are_not_run(self, sandbox):
        program = Program(
            tests=("assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3", "assert f(4) == 4"), remote={"f": "f"}
        )
        code = "import time\ndef f(x):\n    if x == 3:\n        time.sleep(30)\n    return x"
        report = sandbox.run_tests(code, program, limits=Limits(timeout_s=1))
        assert report.status == "timeout" and report.passed == 2
        assert [t.passed for t in report.tests] == [True, True, False, False]
        assert report.tests[3].error == "not run: the run hit its time limit first"
        assert report.tests[2].error == "did not finish: the run hit its time limit"

    def test_a_test_runs_output_past_the_cap_is_dropped_not_a_failure(self, sandbox):
        """Debug prints past the cap once ended a correct solution's run as output_limit, its
        later tests not run; the tests judge the solution, not how much it prints (HumanEval's
        and MBPP's harnesses discard its output)."""
        program = Program(tests=("assert f() == 1", "assert f() == 1"), remote={"f": "f"})
        code = "import sys\ndef f():\n    print('x' * 5000)\n    print('y' * 5000, file=sys.stderr)\n    return 1"
        report = sandbox.run_tests(code, program, limits=Limits(output_bytes=4096))
        assert report.status == "ok" and report.all_passed, report
        assert report.stdout == "x" * 4096 and report.stderr == "y" * 4096
        endless = sandbox.run_tests("def f():\n    while True: print('x' * 1000)", program, limits=Limits(timeout_s=1))
        assert endless.status == "timeout" and endless.passed == 0

    def test_setup_helpers_and_generators(self, sandbox):
        program = Program(
            setup="import itertools\ndef first(n, it): return list(itertools.islice(it, n))",
            tests=(
                "it = gen(5); assert iter(it) is it and not isinstance(it, (list, tuple))",
                "assert first(3, gen(5)) == [0, 1, 2]",
                "assert list(mapped()) == [2, 4]",
            ),
            remote={"gen": "gen", "mapped": "mapped"},
        )
        code = "def gen(n):\n    yield from range(n)\ndef mapped():\n    return map(lambda x: 2 * x, [1, 2])"
        report = sandbox.run_tests(code, program)
        assert report.all_passed, report


# --- values crossing from the solution to the tests ----------------------------------------

ROUND_TRIP = {
    "int": 42,
    "negative int": -7,
    "zero": 0,
    "big int": 2**200 + 1,
    "big negative int": -(3**300),
    "float": 0.1,
    "float big": 1.7976931348623157e308,
    "float tiny": 5e-324,
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
    "-0.0": -0.0,
    "complex": complex(1.5, -2.0),
    "complex special": complex(float("nan"), float("inf")),
    "str unicode": "héllo wörld ✓ 日本語 🎉 \x00\n\t\\\"'",
    "empty str": "",
    "bytes": bytes(range(256)),
    "empty bytes": b"",
    "tuple": (1, "a", (2.5,)),
    "empty tuple": (),
    "list": [1, [2, [3]]],
    "tuple in list vs list in tuple": [(1, 2), ([3],)],
    "set": {1, "a", (2, 3)},
    "frozenset": frozenset({1, frozenset({2})}),
    "empty set": set(),
    "dict": {"a": 1, "b": [2]},
    "dict tuple keys": {(1, 2): "a", (3,): [4], (): None},
    "dict mixed keys": {1: "int", "1": "str", 2.5: "float", None: "none", (1, "x"): "tuple"},
    "None": None,
    "True": True,
    "False": False,
    "bools and ints": [True, 1, False, 0],
    "Fraction": Fraction(-3, 7),
    "Decimal": decimal.Decimal("3.14159265358979323846264338327950288"),
    "Decimal -0.00": decimal.Decimal("-0.00"),
    "Decimal NaN": decimal.Decimal("NaN"),
    "Decimal Infinity": decimal.Decimal("-Infinity"),
    "range": range(1, 10, 3),
    "nested": {"k": [({1, 2}, frozenset({"x"}), {(0,): b"\xff"})]},
}
ROUND_TRIP_SETUP = f"""
import decimal, math, pickle
V = pickle.loads(bytes.fromhex({pickle.dumps(ROUND_TRIP).hex()!r}))
{inspect.getsource(same)}
"""


@pytest.fixture(scope="module")
def round_trip_report(sandbox):
    program = Program(
        setup=ROUND_TRIP_SETUP,
        tests=tuple(f"got = echo(V[{name!r}])\nassert same(got, V[{name!r}]), repr(got)" for name in ROUND_TRIP),
        remote={"echo": "echo"},
        names=tuple(ROUND_TRIP),
    )
    report = sandbox.run_tests("def echo(value):\n    return value\n", program)
    assert report.status == "ok", report
    return {test.name: test for test in report.tests}


@needs_bwrap
@pytest.mark.parametrize("name", list(ROUND_TRIP))
def test_values_round_trip_exactly_through_run_tests(round_trip_report, name):
    outcome = round_trip_report[name]
    assert outcome.passed, outcome.error


@needs_bwrap
def test_returned_values_are_plain_builtins(sandbox):
    """Whatever type the solution returns, the tests get exact built-in types."""
    program = Program(
        tests=(
            "assert type(f('str')) is str and f('str') == 'abc'",
            "assert type(f('int')) is int and f('int') == 3",
            "assert type(f('tuple')) is tuple and f('tuple') == (1,)",
            "assert type(f('bytearray')) is bytes",
            "assert type(f('deque')) is list and f('deque') == [1, 2]",
            "assert type(f('True')) is bool and type(f('one')) is int",
            "assert f('evil') == 1",
        ),
        remote={"f": "f"},
    )
    code = (
        "import collections\nclass S(str):\n    def __eq__(self, other): return True\n"
        "class I(int): pass\nclass T(tuple): pass\nclass Evil:\n    def __eq__(self, other): return True\n"
        "def f(kind):\n    return {'str': S('abc'), 'int': I(3), 'tuple': T((1,)), 'bytearray': bytearray(b'x'),\n"
        "            'deque': collections.deque([1, 2]), 'True': True, 'one': 1, 'evil': Evil()}[kind]\n"
    )
    report = sandbox.run_tests(code, program)
    assert [t.passed for t in report.tests] == [True] * 6 + [False], report
    assert "TypeError" in report.tests[-1].error and "cannot receive" in report.tests[-1].error


@needs_bwrap
def test_dict_views_arrive_as_dict_views(sandbox):
    """A view compares as Python's own does (keys and items as sets, values only by
    identity), so a test that wraps the call in tuple() passes, as HumanEval/33's do."""
    program = Program(
        tests=(
            "assert type(f('keys')) is type({}.keys()) and f('keys') == {1, 2} and list(f('keys')) == [1, 2]",
            "assert type(f('items')) is type({}.items()) and f('items') == {(1, 'a'), (2, 'b')}",
            "assert type(f('values')) is type({}.values()) and tuple(f('values')) == ('a', 'b')",
            "assert f('values') == ['a', 'b']",
        ),
        remote={"f": "f"},
    )
    code = "def f(kind):\n    d = {1: 'a', 2: 'b'}\n    return {'keys': d.keys(), 'items': d.items(), 'values': d.values()}[kind]\n"
    report = sandbox.run_tests(code, program)
    assert [t.passed for t in report.tests] == [True, True, True, False], report


@needs_bwrap
def test_huge_int_round_trips_and_does_not_kill_the_solution(sandbox):
    program = Program(tests=("assert f(5000) == 10**5000", "assert f(1) == 10"), remote={"f": "f"})
    report = sandbox.run_tests("def f(n): return 10**n", program)
    assert [t.passed for t in report.tests] == [True, True], report


@needs_bwrap
def test_cyclic_return_value_fails_only_its_own_test(sandbox):
    program = Program(tests=("f()", "assert g() == 1"), remote={"f": "f", "g": "g"})
    report = sandbox.run_tests("def f():\n    x = []\n    x.append(x)\n    return x\ndef g(): return 1", program)
    assert "TypeError" in report.tests[0].error and report.tests[1].passed, report


# --- values.encode / decode directly --------------------------------------------------------


class TestValuesCodec:
    @pytest.mark.parametrize("name", list(ROUND_TRIP))
    def test_round_trip(self, name):
        value = ROUND_TRIP[name]
        assert same(values.decode(wire(values.encode(value))), value)

    def test_tags(self):
        assert values.encode(None) == ["none"]
        assert values.encode(True) == ["bool", True]
        assert values.encode(1) == ["int", "0x1"]
        assert values.encode(-255) == ["int", "-0xff"]
        assert values.encode((1,)) == ["tuple", [["int", "0x1"]]]
        assert values.encode([1]) == ["list", [["int", "0x1"]]]
        assert values.encode({(1,): None}) == ["dict", [[["tuple", [["int", "0x1"]]], ["none"]]]]

    @pytest.mark.parametrize(
        "make",
        [
            lambda: (x for x in [1, 2]),
            lambda: map(int, "12"),
            lambda: filter(None, [0, 1, 2]),
            lambda: iter([1, 2]),
            lambda: iter((1, 2)),
            lambda: reversed((2, 1)),
            pytest.param(lambda: reversed([2, 1]), id="reversed-list"),
            pytest.param(lambda: iter(range(1, 3)), id="range-iterator"),
            pytest.param(lambda: itertools.chain([1], [2]), id="itertools-chain"),
            pytest.param(lambda: iter({1: "a", 2: "b"}), id="dict-key-iterator"),
        ],
    )
    def test_iterators_become_iterators(self, make):
        decoded = values.decode(wire(values.encode(make())))
        assert iter(decoded) is decoded and not isinstance(decoded, (list, tuple))
        assert list(decoded) == [1, 2]

    def test_zip_and_enumerate_iterators(self):
        for made, items in ((zip([1, 2], "ab"), [(1, "a"), (2, "b")]), (enumerate("ab"), [(0, "a"), (1, "b")])):
            decoded = values.decode(wire(values.encode(made)))
            assert iter(decoded) is decoded and list(decoded) == items

    def test_infinite_iterator_hits_the_item_budget(self, monkeypatch):
        monkeypatch.setattr(values, "MAX_ITEMS", 1000)
        with pytest.raises(values.UnsupportedValue, match="more than 1000 items"):
            values.encode(x for x in itertools.count())

    def test_subclasses_decode_to_exact_builtins(self):
        class S(str):
            def __eq__(self, other):
                return True

            __hash__ = str.__hash__

        class F(float):
            pass

        for made, kind in ((S("a"), str), (F(1.5), float), (bytearray(b"x"), bytes)):
            decoded = values.decode(wire(values.encode(made)))
            assert type(decoded) is kind

    def test_unsupported_values(self):
        class Evil:
            def __eq__(self, other):
                return True

        for value in (Evil(), object(), len, [1, Evil()], {"k": memoryview(b"x")}, type):
            with pytest.raises(values.UnsupportedValue, match="cannot receive"):
                values.encode(value)
        assert issubclass(values.UnsupportedValue, TypeError)

    def test_item_budget(self, monkeypatch):
        monkeypatch.setattr(values, "MAX_ITEMS", 10)
        assert values.decode(values.encode(list(range(9)))) == list(range(9))
        with pytest.raises(values.UnsupportedValue, match="more than 10 items"):
            values.encode(list(range(10)))
        with pytest.raises(ValueError):
            values.decode(["list", [["int", "0x1"]] * 10])

    @pytest.mark.parametrize(
        "tree",
        [
            None,
            [],
            "int",
            {"int": "1"},
            [1],
            ["nope"],
            ["none", 1],
            ["bool", 1],
            ["bool", "True"],
            ["bool"],
            ["int", 5],
            ["int", "abc"],
            ["int", "1", "2"],
            ["float", 1.5],
            ["float", "x"],
            ["complex", "1"],
            ["str", 5],
            ["str"],
            ["bytes", "\u0100"],
            ["fraction", "1"],
            ["fraction", "a", "b"],
            ["decimal", 1],
            ["range", 0, 1, 0],
            ["range", "0", "1", "1"],
            ["range", 0, 1],
            ["list", "abc"],
            ["list", [1]],
            ["list", [["int"]]],
            ["list", [], []],
            ["tuple"],
            ["dict", [[["int", "1"]]]],
            ["dict", ["x"]],
            ["dict", [[["int", "1"], ["int", "2"], ["int", "3"]]]],
            ["iterator", None],
            pytest.param(
                ["set", [["list", []]]],
                id="set-of-lists",
            ),
            pytest.param(
                ["dict", [[["list", []], ["none"]]]],
                id="dict-list-key",
            ),
            pytest.param(
                ["fraction", "1", "0"],
                id="fraction-zero-denominator",
            ),
            pytest.param(
                ["decimal", "abc"],
                id="decimal-garbage",
            ),
        ],
    )
    def test_malformed_trees_raise_value_error(self, tree):
        with pytest.raises(ValueError):
            values.decode(tree)

    def test_deep_nesting_raises_value_error(self):
        tree: list = ["none"]
        for _ in range(100_000):
            tree = ["list", [tree]]
        with pytest.raises(ValueError, match="nested too deeply"):
            values.decode(tree)

    def test_huge_int(self):
        assert values.decode(wire(values.encode(10**5000))) == 10**5000

    def test_cyclic_value_is_unsupported(self):
        cyclic: list = []
        cyclic.append(cyclic)
        with pytest.raises(values.UnsupportedValue):
            values.encode(cyclic)

    @settings(max_examples=200, deadline=None)
    @given(
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats()
            | st.complex_numbers()
            | st.text()
            | st.binary()
            | st.fractions()
            | st.decimals(),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.lists(inner, max_size=4).map(tuple)
                | st.dictionaries(st.integers() | st.text() | st.tuples(st.integers()), inner, max_size=4)
                | st.frozensets(st.integers() | st.text(), max_size=4)
                | st.sets(st.tuples(st.integers(), st.text()), max_size=4)
            ),
            max_leaves=20,
        )
    )
    def test_round_trip_property(self, value):
        assert same(values.decode(wire(values.encode(value))), value)


# --- concurrency ---------------------------------------------------------------------------


@needs_bwrap
def test_threads_get_their_own_results(sandbox):
    def job(i: int) -> tuple[str, object]:
        kind = i % 3
        if kind == 0:
            result = sandbox.run_python(f"import sys\nprint({i}, sys.stdin.read()[::-1])", stdin=f"job-{i}")
            return result.stdout, f"{i} {f'job-{i}'[::-1]}\n"
        if kind == 1:
            result = sandbox.run_shell(f"echo {i}; cat; exit {i % 5}", stdin=f"in-{i}")
            return (result.stdout, result.exit_code), (f"{i}\nin-{i}", i % 5)
        tests = (f"assert f(2) == {2 * i}", f"assert f(1) == {i if i % 2 else i + 1}")
        program = Program(tests=tests, remote={"f": "f"})
        report = sandbox.run_tests(f"def f(x): return x * {i}", program)
        return [t.passed for t in report.tests], [True, i % 2 == 1]

    with ThreadPoolExecutor(8) as pool:
        pairs = list(pool.map(job, range(96)))
    assert all(got == wanted for got, wanted in pairs), [p for p in pairs if p[0] != p[1]]
    assert len(worker_pids(sandbox)) <= 2


# --- faults and leaks ----------------------------------------------------------------------


@needs_bwrap
def test_worker_killed_between_calls_is_replaced(own_sandbox, launched):
    own_sandbox.run_python("pass")
    [victim] = worker_pids(own_sandbox)
    os.kill(victim, signal.SIGKILL)
    assert wait_until(lambda: not own_sandbox._idle[0].alive)
    result = own_sandbox.run_python("print('fresh')")
    assert result.status == "ok" and result.stdout == "fresh\n"
    assert victim not in worker_pids(own_sandbox) and len(worker_pids(own_sandbox)) == 1
    assert len(launched) == 2 and wait_until(lambda: not leftover_processes(launched, own_sandbox), 10)


@needs_bwrap
def test_worker_dying_unseen_between_calls_is_replaced(own_sandbox):
    """Killed so soon before the call that the pool still sees it alive: the request is
    sent to a dead worker, and rerun on a fresh one."""
    own_sandbox.run_python("pass")
    [worker] = own_sandbox._idle
    os.kill(worker.pid, signal.SIGKILL)
    result = own_sandbox.run_python("print('fresh')")
    assert result.status == "ok" and result.stdout == "fresh\n"
    assert worker.pid not in worker_pids(own_sandbox)


@needs_bwrap
def test_max_uses_recycles_workers(monkeypatch, launched):
    used: list[int] = []
    request = Worker.request

    def recording(self, message, timeout_s):
        used.append(self.pid)
        return request(self, message, timeout_s)

    monkeypatch.setattr(Worker, "request", recording)
    with Sandbox(workers=1, max_uses=3) as pool:
        for i in range(9):
            assert pool.run_python(f"print({i})").stdout == f"{i}\n"
        first, second, third = used[0], used[3], used[6]
        assert used == [first] * 3 + [second] * 3 + [third] * 3 and len({first, second, third}) == 3
        assert worker_pids(pool) == []  # the third reached max_uses too
        assert not os.path.exists(f"/proc/{first}") and not os.path.exists(f"/proc/{second}")
    assert [pid for pid, _ in launched] == [first, second, third]
    assert wait_until(lambda: not leftover_processes(launched), 10)


@needs_bwrap
def test_close_kills_all_workers(launched):
    pool = Sandbox(workers=2)
    barrier = threading.Barrier(2)

    def both_at_once(_):
        barrier.wait()
        return pool.run_python("import time; time.sleep(0.3)").status

    with ThreadPoolExecutor(2) as threads:
        assert list(threads.map(both_at_once, range(2))) == ["ok", "ok"]
    workers = [*pool._idle]
    assert len(workers) == 2 and len(launched) == 2 and leftover_processes(launched)  # two live worker trees
    pool.close()
    assert not any(worker.alive for worker in workers)
    assert wait_until(lambda: not leftover_processes(launched), 10)
    pool.close()  # a second close is harmless


@needs_bwrap
def test_close_during_a_call_reports_sandbox_error():
    pool = Sandbox(workers=1)
    outcome: list[object] = []

    def call():
        try:
            outcome.append(pool.run_python("import time; time.sleep(20)").status)
        except Exception as error:
            outcome.append(error)

    thread = threading.Thread(target=call)
    thread.start()
    busy_worker(pool)
    time.sleep(0.3)
    pool.close()
    thread.join(15)
    assert outcome == ["sandbox_error"]


@needs_bwrap
def test_interrupted_call_does_not_desynchronise_the_worker(own_sandbox, monkeypatch):
    own_sandbox.run_python("pass")

    def interrupted(self, deadline):
        raise KeyboardInterrupt

    monkeypatch.setattr(Worker, "_read_line", interrupted)
    with pytest.raises(KeyboardInterrupt):
        own_sandbox.run_python("print('first')")
    monkeypatch.undo()
    assert own_sandbox.run_python("print('second')").stdout == "second\n"


def test_worker_uids_are_leased_so_colliding_candidates_are_skipped(monkeypatch, tmp_path):
    # Two processes whose candidate uids collide (4096 * 244 + 576 = 10**6, so worker 0 of one
    # process and worker 576 of a process 244 pids later get the same candidate) still get
    # different uids: the first holds the uid's lock, the second moves on to its next candidate.
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(launch, "UID_LOCK_DIR", str(tmp_path))

    def lease_as(pid: int, worker_number: int) -> launch.UidLease:
        monkeypatch.setattr(os, "getpid", lambda: pid)
        monkeypatch.setattr(launch, "_worker_numbers", itertools.count(worker_number))
        return launch.lease_worker_uid()

    first = lease_as(1000, 0)
    second = lease_as(1244, 576)
    assert (1000 * 4096) % launch.UID_SPAN == (1244 * 4096 + 576) % launch.UID_SPAN
    assert first.uid != second.uid
    monkeypatch.setattr(os, "getpid", lambda: 1000)
    first.release()  # the owner removes its lock file; the uid is free again
    third = lease_as(1244, 576)
    assert third.uid == first.uid and os.listdir(tmp_path) != []
    for lease in (second, third):
        lease.release()


# SLOW ON PURPOSE: LEAK_EXECUTIONS trivial executions in a row (a worker recycled every 300)
# so that a leak of an fd, a process or a folder per call shows. 2000 took over 30 s on the
# 2-core reference machine (about 15 ms each with the test runs mixed in), hence 1000.
LEAK_EXECUTIONS = 1000


@needs_bwrap
def test_no_leaks_after_many_executions(launched):
    fds_before = open_fds()
    dirs_before = set(glob.glob("/tmp/rlenvs-*"))
    pool = Sandbox(workers=2, max_uses=300, limits=Limits(timeout_s=5))
    program = Program(tests=("assert f() == 1",), remote={"f": "f"})
    statuses: dict[str, int] = defaultdict(int)
    fds_warm = None
    try:
        for i in range(LEAK_EXECUTIONS):
            if i == 100:
                fds_warm = open_fds()
            if i % 10 == 3:
                statuses["tests " + pool.run_tests("def f(): return 1", program).status] += 1
            elif i % 10 == 6:
                statuses["shell " + pool.run_shell("echo hi | cat >/dev/null; exit 1").status] += 1
            elif i % 10 == 9:
                statuses["python " + pool.run_python("raise ValueError").status] += 1
            else:
                statuses["python " + pool.run_python("pass").status] += 1
        assert set(statuses) == {"tests ok", "shell error", "python error", "python ok"}, statuses
        assert len(worker_pids(pool)) == 1  # sequential calls use one worker at a time
        assert open_fds() == fds_warm
        # the last recycled worker's zygote may still be a zombie until pid 1 reaps it
        assert len(launched) == -(-LEAK_EXECUTIONS // 300)  # recycled every 300 uses
        assert wait_until(lambda: not leftover_processes(launched, pool), 10), describe(
            leftover_processes(launched, pool)
        )
    finally:
        pool.close()
    assert wait_until(lambda: not leftover_processes(launched), 10), describe(leftover_processes(launched))
    assert open_fds() == fds_before
    new_dirs = set(glob.glob("/tmp/rlenvs-*")) - dirs_before - {staged_guest_dir()}
    # another pytest process on the machine may stage its own guest copy meanwhile
    assert not [d for d in new_dirs if not os.path.basename(d).startswith("rlenvs-guest-")]
    assert os.path.isdir(staged_guest_dir())


def _zygote_and_children(pool: Sandbox) -> tuple[int, list[int]]:
    """The host pids of the pool's one zygote and of its children. bwrap's only child is the
    pid 1 of the sandbox, which in a pool worker only waits for its only child, the zygote
    (pid 1 of a pid namespace of its own: guest `scratch`)."""

    def children(pid: int) -> list[int]:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]

    [bwrap] = worker_pids(pool)
    [outer] = children(bwrap)
    [zygote] = children(outer)
    return zygote, children(zygote)


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="reading a zygote's fds (it is not dumpable) takes root")
def test_zygote_and_kept_runner_leak_no_fds_over_many_test_runs():
    """The zygote makes a socket pair, a memfd and pipes per test run and keeps its test
    runner between runs; neither may keep an fd of a finished run, whether the runner was
    kept (clean runs), replaced (a timeout) or retired (a python run)."""
    program = Program(tests=("assert f() == 1", "assert f() == 2"), remote={"f": "f"})
    with Sandbox(workers=1, max_uses=10_000, limits=Limits(timeout_s=1)) as pool:

        def fds() -> dict[str, list[str]]:
            """The kinds of fd each holds: "pipe", "socket", "/memfd:verdict (deleted)", ..."""
            assert wait_until(lambda: len(_zygote_and_children(pool)[1]) == 1)
            zygote, [runner] = _zygote_and_children(pool)
            return {name: _fd_kinds(pid) for name, pid in (("zygote", zygote), ("runner", runner))}

        def idle_fds() -> dict[str, list[str]]:
            """What both hold once idle. Right after it answers, the zygote still empties
            folders and makes the next execution's namespaces (`scratch.renew`), holding more
            fds or fewer for a moment (on a busy machine, for longer than a few looks): idle is
            three looks in a row, 50 ms apart, that agree. A leaked fd is one that stays."""
            looks = [fds()]
            while len(looks) < 200 and not (len(looks) >= 3 and looks[-1] == looks[-2] == looks[-3]):
                time.sleep(0.05)
                looks.append(fds())
            assert looks[-1] == looks[-2] == looks[-3], f"the fds never settled: {looks[-3:]}"
            return looks[-1]

        for _ in range(20):
            pool.run_tests("def f(): return 1", program)
        warm = idle_fds()
        for i in range(300):
            code = "def f():\n    while True: pass" if i % 100 == 50 else f"def f(): return {i % 3}"
            pool.run_tests(code, program)
            if i % 100 == 75:
                pool.run_python("print(1)")
        pool.run_tests("def f(): return 1", program)
        assert idle_fds() == warm


def _fd_kinds(pid: int) -> list[str]:
    kinds = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            kinds.append(re.sub(r":\[\d+\]$", "", os.readlink(f"/proc/{pid}/fd/{fd}")))
        except FileNotFoundError:  # closed since the listing
            pass
    return sorted(kinds)


# --- bad input -----------------------------------------------------------------------------


@needs_bwrap
class TestBadInput:
    @pytest.mark.parametrize("code", [None, b"print(1)", 1, ["print(1)"]])
    def test_code_must_be_str(self, sandbox, code):
        with pytest.raises(TypeError, match="code must be a str"):
            sandbox.run_python(code)
        with pytest.raises(TypeError, match="command must be a str"):
            sandbox.run_shell(code)
        with pytest.raises(TypeError, match="code must be a str"):
            sandbox.run_tests(code, Program(tests=("f()",), remote={"f": "f"}))

    @pytest.mark.parametrize("stdin", [None, b"x", 1])
    def test_stdin_must_be_str(self, sandbox, stdin):
        with pytest.raises(TypeError, match="stdin must be a str"):
            sandbox.run_python("pass", stdin=stdin)
        with pytest.raises(TypeError, match="stdin must be a str"):
            sandbox.run_shell("true", stdin=stdin)

    def test_stdin_with_lone_surrogate(self, own_sandbox):
        with pytest.raises((TypeError, ValueError), match="stdin"):
            own_sandbox.run_python("print(1)", stdin="a\ud800b")

    def test_program_and_limits_types(self, sandbox):
        with pytest.raises(TypeError, match="program must be a rlenvs.sandbox.TestProgram"):
            sandbox.run_tests("pass", {"tests": ["f()"], "remote": {"f": "f"}})
        with pytest.raises(TypeError, match="limits must be a rlenvs.sandbox.Limits"):
            sandbox.run_python("pass", limits={"timeout_s": 1})
        with pytest.raises(TypeError, match="limits must be a rlenvs.sandbox.Limits"):
            Sandbox(limits={"timeout_s": 1})

    @pytest.mark.parametrize(
        ("name", "value"), [("workers", 0), ("workers", True), ("workers", 1.5), ("max_uses", 0), ("max_uses", "3")]
    )
    def test_bad_sandbox_arguments(self, name, value):
        with pytest.raises(ValueError, match=name):
            Sandbox(**{name: value})

    def test_calls_after_close(self):
        pool = Sandbox(workers=1)
        pool.run_python("pass")
        pool.close()
        program = Program(tests=("f()",), remote={"f": "f"})
        for call in (
            lambda: pool.run_python("pass"),
            lambda: pool.run_shell("true"),
            lambda: pool.run_tests("def f(): pass", program),
        ):
            with pytest.raises(RuntimeError, match="this Sandbox is closed"):
                call()
        with Sandbox(workers=1) as other:
            pass
        with pytest.raises(RuntimeError, match="closed"):
            other.run_python("pass")


LIMIT_FIELDS = [
    "timeout_s",
    "memory_mb",
    "cpu_s",
    "processes",
    "file_size_mb",
    "open_files",
    "output_bytes",
    "disk_mb",
]


@pytest.mark.parametrize("field", LIMIT_FIELDS)
@pytest.mark.parametrize("bad", [0, -1, True, False, "10", float("nan"), -0.5, [1]])
def test_bad_limits_name_the_field(field, bad):
    with pytest.raises(ValueError, match=rf"Limits\.{field} must be"):
        Limits(**{field: bad})


@pytest.mark.parametrize("field", [f for f in LIMIT_FIELDS if f != "timeout_s"])
def test_int_limits_reject_floats(field):
    with pytest.raises(ValueError, match=rf"Limits\.{field} must be an int"):
        Limits(**{field: 16.5})


def test_limits_defaults_and_valid_values():
    assert Limits().cpu_s is None and Limits(cpu_s=None).cpu_s is None
    assert Limits(timeout_s=0.25).for_guest()["cpu_s"] == 2  # a backstop past the timeout
    assert Limits(memory_mb=2).for_guest()["memory_bytes"] == 2 << 20
    with pytest.raises(ValueError, match=r"Limits\.processes=7 is too low"):
        Limits(processes=7)
    with pytest.raises(ValueError, match=r"Limits\.timeout_s must be a positive number, got None"):
        Limits(timeout_s=None)


@pytest.mark.parametrize(
    "limits",
    [
        {"timeout_s": float("inf")},
        {"timeout_s": 1e12},
        {"memory_mb": 10**15},
        {"processes": 10**12},
        {"file_size_mb": 10**15},
    ],
    ids=lambda d: f"{next(iter(d))}={next(iter(d.values()))}",
)
def test_absurd_limits_are_rejected(limits):
    with pytest.raises(ValueError, match=rf"Limits\.{next(iter(limits))}"):
        Limits(**limits)


def test_test_program_validation():
    with pytest.raises(ValueError, match="at least one test"):
        Program(tests=(), remote={"f": "f"})
    with pytest.raises(ValueError, match="at least one remote name"):
        Program(tests=("f()",), remote={})
    with pytest.raises(ValueError, match="TestProgram.names has 1 labels for 2 tests"):
        Program(tests=("f()", "f()"), remote={"f": "f"}, names=("one",))
    program = Program(tests=["f()"], remote={"f": "f"})
    assert program.tests == ("f()",) and program.names == ("f()",)
    assert program.for_guest() == {"setup": "", "tests": ["f()"], "remote": {"f": "f"}}


def test_test_program_rejects_a_bare_string():
    with pytest.raises(TypeError, match="tests"):
        Program(tests="assert f() == 1", remote={"f": "f"})


# --- unsafe mode and missing bubblewrap ----------------------------------------------------


def test_unsafe_mode():
    with pytest.warns(RuntimeWarning, match="UNSAFE mode"):
        pool = Sandbox(workers=1, unsafe=True, limits=Limits(timeout_s=5))
    try:
        first = pool.run_python("import os\nprint(os.getcwd())\nopen('left.txt', 'w').write('x')")
        assert first.status == "ok"
        workdir = first.stdout.strip()
        assert os.path.basename(workdir).startswith("rlenvs-unsafe-") and os.path.isdir(workdir)
        assert pool.run_python("import os; print(os.listdir('.'))").stdout == "[]\n"
        assert pool.run_shell("echo $((6 * 7))").stdout == "42\n"
        timeout = pool.run_python("while True: pass", limits=Limits(timeout_s=0.5))
        assert timeout.status == "timeout" and timeout.duration_s < 3
        loud = pool.run_python("while True: print('x' * 100)", limits=Limits(output_bytes=1000))
        assert loud.status == "output_limit" and loud.truncated and len(loud.stdout) == 1000
        report = pool.run_tests("def f(): return 1", Program(tests=("assert f() == 1",), remote={"f": "f"}))
        assert report.all_passed
    finally:
        pool.close()
    assert not os.path.exists(workdir)


def test_missing_bubblewrap_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("bwrap") is None
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap") as raised:
        Sandbox(workers=1)
    assert "unsafe=True" in str(raised.value)


def test_missing_guest_python_says_how_to_fix_it(tmp_path):
    with pytest.raises(SandboxUnavailable, match="python3"):
        Sandbox(workers=1, unsafe=True, python=str(tmp_path / "no-python"))


# --- arbitrary text as code ----------------------------------------------------------------


@needs_bwrap
@settings(max_examples=50, deadline=None)
@given(code=st.text(), stdin=st.text(max_size=20))
def test_arbitrary_text_through_run_python(sandbox, code, stdin):
    result = sandbox.run_python(code, stdin=stdin)
    assert result.status in STATUSES and result.status != "sandbox_error", result
    assert isinstance(result.stdout, str) and isinstance(result.stderr, str)


@needs_bwrap
@settings(max_examples=50, deadline=None)
@given(code=st.text())
def test_arbitrary_text_through_run_tests(sandbox, code):
    program = Program(tests=("f()", "assert g(1) is not None"), remote={"f": "f", "g": "g"})
    report = sandbox.run_tests(code, program)
    assert report.status in STATUSES and report.status != "sandbox_error", report
    assert len(report.tests) == 2


@needs_bwrap
@settings(max_examples=25, deadline=None)
@given(command=st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40))
def test_arbitrary_text_through_run_shell(sandbox, command):
    result = sandbox.run_shell(command, limits=Limits(timeout_s=2))
    assert result.status in STATUSES and result.status != "sandbox_error", result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
