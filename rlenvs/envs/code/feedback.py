"""What a failed attempt tells the model before its next one (`max_turns > 1`).

Feedback is part of the attack surface: a message that quotes a hidden test (its inputs or
its expected value) lets the next reply answer exactly that call, and after a few turns a
lookup table of the quoted asserts passes every test. So the tests are split in two:

- tests the prompt shows (MBPP's shown test, HumanEval's tests that repeat a docstring
  example; see `examples`): a failing one is shown in full, with the error, the call the
  test made and what it returned, and the solution's traceback. That is the solution's own
  message about an input the prompt shows, and it cannot carry a hidden input: the shown
  tests run before any hidden test, so within a run the solution has not been called with
  one yet; and no earlier run can have left it a note, since a pool worker gives every
  execution a fresh sandbox (`rlenvs.sandbox`'s guest `scratch`: new mounts, namespaces and
  pids, the test runner out of sight). The rule rests on both.
- hidden tests: the feedback says how many failed, counted by the test runner's kind of
  failure ("wrong value", "error", "did not finish", "not run": `TestOutcome.kind`), never
  their inputs, their expected values, the solution's messages, the type of exception it
  raised (a solution that picks one of Python's 60-odd built-in exceptions per hidden test
  spells out six bits of its input each time) or what it printed while they ran.

What the program's text alone decides is shown in full: a syntax error, read from the
program in this process (compiled, never run).
"""

from __future__ import annotations

from collections import Counter

from rlenvs.rewards.code import quietly
from rlenvs.sandbox import Limits, TestOutcome, TestReport

FEEDBACK_TRACEBACK_CHARS = 1500
FEEDBACK_OUTPUT_CHARS = 500
RETRY_REQUEST = "Fix the code and reply with the complete corrected solution in one ```python block."


def failure_feedback(report: TestReport, limits: Limits, *, shown: int, program: str) -> str:
    """The message after a failed attempt. The first `shown` tests of the report are the
    ones the prompt shows; `program` is the code that ran (for its syntax error, if any)."""
    total, hidden = len(report.tests), report.tests[shown:]
    lines = [f"{report.passed} of {total} tests passed."]
    if report.status == "timeout":
        lines.append(f"The run was stopped at its time limit ({limits.timeout_s:g} s): look for an endless loop.")
    elif report.status == "output_limit":
        lines.append(f"The run was stopped for printing more than {limits.output_bytes} bytes.")
    elif report.status == "sandbox_error":
        lines.append("The sandbox failed while running your code; try again.")
    elif report.status == "setup_error":
        lines.append("The task's own test set-up failed: a problem with the task, not with your code.")
    syntax = syntax_error(program) if report.passed == 0 else ""  # a syntax error fails every test
    failing_shown = [test for test in report.tests[:shown] if not test.passed]
    if syntax:
        lines.append(f"Your code does not compile: {syntax}")
    elif failing_shown:
        lines += _in_full(failing_shown[0], of=len(failing_shown), shown=shown)
    if hidden:
        lines.append(_hidden_summary(hidden))
    if not hidden and report.stderr.strip():  # with hidden tests, it could echo their inputs
        lines.append(f"Your program wrote to stderr:\n{report.stderr[-FEEDBACK_OUTPUT_CHARS:]}")
    lines.append(RETRY_REQUEST)
    return "\n".join(lines)


def _in_full(failure: TestOutcome, *, of: int, shown: int) -> list[str]:
    lines = [f"{of} of the {shown} tests shown in the task failed; the first:" if of > 1 else "This test failed:"]
    lines += [f"```python\n{failure.name}\n```", f"Error: {failure.error}"]
    if failure.traceback:
        lines.append(f"Traceback (from your code):\n{failure.traceback[-FEEDBACK_TRACEBACK_CHARS:]}")
    return lines


def _hidden_summary(hidden: tuple[TestOutcome, ...]) -> str:
    failed = Counter(test.kind or "error" for test in hidden if not test.passed)
    if not failed:
        return f"All {len(hidden)} hidden tests passed."
    kinds = ", ".join(f"{kind}: {count}" for kind, count in sorted(failed.items()))
    return f"{sum(failed.values())} of {len(hidden)} hidden tests failed ({kinds}); their inputs stay hidden."


def syntax_error(program: str) -> str:
    """Why the program does not compile ("" if it does): compiled here, never run, so what
    it says depends on the program's text alone."""
    try:
        quietly(compile, program, "<solution>", "exec", 0, True)
    except SyntaxError as error:
        where = f" (line {error.lineno}: {error.text.strip()})" if error.lineno and error.text else ""
        return f"{type(error).__name__}: {error.msg}{where}"
    except (ValueError, OverflowError, RecursionError, MemoryError) as error:
        return f"{type(error).__name__}: {error}"
    return ""
