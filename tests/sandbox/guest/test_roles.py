"""What a solution can learn, while it runs, about whether its answers passed.

The test runner decodes each reply and compares it; describing a failure (decoding the
reply again, printing the call and the value) waits until the solution is gone, and a reply
is refused unread past `roles.MAX_REPLY` bytes. A red-team reply padded every reply with
34 MB of JSON whitespace, which the runner parsed once for a pass and twice for a failure
(the second time to describe it), and read the difference in the runner's page faults.
"""

from __future__ import annotations

import json
import statistics

import pytest

from rlenvs.sandbox import Sandbox
from rlenvs.sandbox import TestProgram as Program  # (not collected as a test class)

pytestmark = pytest.mark.sandbox  # every test runs code in the sandbox

SIZE = 200_000
BIG_FIRST = Program(tests=(f"assert f(0) == list(range({SIZE}))", "assert f(1) == 1"), remote={"f": "f"})
TIMED = """
import json, time
last = [0.0]
def f(x):
    if x == 1:
        print(json.dumps(time.perf_counter() - last[0]), flush=True)
        return 1
    value = list(range({first}, {first} + {size}))
    last[0] = time.perf_counter()
    return value
"""
"""A solution that times the gap between returning its answer to the first test and being
called for the second: what the runner did in between."""


@pytest.fixture(scope="module")
def box():
    with Sandbox(workers=1) as sandbox:
        yield sandbox


def _gap(box: Sandbox, first: int) -> float:
    report = box.run_tests(TIMED.format(first=first, size=SIZE), BIG_FIRST)
    assert report.tests[0].passed == (first == 0) and report.tests[1].passed, report
    return json.loads(report.stdout)


def test_a_failing_answer_costs_the_runner_no_more_than_a_passing_one_while_the_solution_lives(box: Sandbox) -> None:
    """A wrong list of 200,000 ints once took the runner a second decoding and printing
    before it called the solution again (about twice the gap of a right one). The failure
    is still described in full once the run is over."""
    passing = statistics.median(_gap(box, 0) for _ in range(3))
    failing = statistics.median(_gap(box, 1) for _ in range(3))
    assert failing < passing * 1.3 + 0.005, (passing, failing)
    report = box.run_tests(
        TIMED.format(first=1, size=3), Program(tests=("assert f(0) == [0, 1, 2]",), remote={"f": "f"})
    )
    assert report.tests[0].error == "AssertionError\nlast call: f(0) returned [1, 2, 3]", report


def test_a_reply_over_the_cap_fails_unread(box: Sandbox) -> None:
    """The red team's padding: the solution patches the json.dumps its own serving loop uses."""
    padded = """
import json
_dumps = json.dumps
json.dumps = lambda value, *args, **kwargs: _dumps(value, *args, **kwargs) + " " * (17 << 20)
def f(x):
    return x
"""
    report = box.run_tests(padded, Program(tests=("assert f(0) == 0", "assert f(1) == 1"), remote={"f": "f"}))
    assert report.status == "ok" and report.passed == 0, report
    assert [test.kind for test in report.tests] == ["error", "error"]
    assert "more than 16777216 bytes of data" in report.tests[0].error, report.tests[0]
    plain = box.run_tests(
        padded.replace("17 << 20", "1 << 20"), Program(tests=("assert f(0) == 0",), remote={"f": "f"})
    )
    assert plain.all_passed, plain  # a reply under the cap is read as it came
