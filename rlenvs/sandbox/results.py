"""What a sandboxed execution reports. Every way an execution can end has a status, so a
caller never has to guess from an exit code or an empty output."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

Status = Literal["ok", "error", "timeout", "memory", "output_limit", "crash", "setup_error", "sandbox_error"]
STATUSES: tuple[str, ...] = get_args(Status)
"""ok: ran to the end (exit 0; for tests: every test ran). error: exited non-zero or raised.
timeout: wall-clock or CPU limit. memory: ran out of its address space. output_limit: wrote
more than the cap and was stopped (the output kept is the first `output_bytes`). crash:
killed by a signal, or the test runner was killed before it finished. setup_error: the test
program's own set-up failed (a data problem, not the solution's). sandbox_error: the worker
died, hung past the deadline or answered nonsense; it was replaced."""


@dataclass(frozen=True)
class ExecResult:
    """The outcome of `Sandbox.run_python` / `Sandbox.run_shell`."""

    status: Status
    stdout: str
    stderr: str
    exit_code: int | None
    signal: int | None
    truncated: bool
    """Output went over the cap (status is then `output_limit`); stdout/stderr hold the start."""
    duration_s: float
    detail: str = ""
    """For `sandbox_error`: what went wrong with the worker."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_answer(cls, answer: Mapping[str, Any]) -> ExecResult:
        """The result a sandbox worker's answer to one command reports (its zygote's JSON)."""
        return cls(
            status=answer["status"],
            stdout=answer.get("stdout", ""),
            stderr=answer.get("stderr", ""),
            exit_code=answer.get("exit_code"),
            signal=answer.get("signal"),
            truncated=bool(answer.get("truncated", False)),
            duration_s=answer.get("duration_s", 0.0),
            detail=answer.get("detail", ""),
        )


@dataclass(frozen=True)
class TestOutcome:
    """One test of a `TestProgram`."""

    __test__ = False

    name: str
    passed: bool
    error: str = ""
    """The failure: exception and message, and the last call made to the solution."""
    traceback: str = ""
    """The solution's own frames, when the failure was an exception raised in it."""
    kind: str = ""
    """A failed test's kind, from a fixed vocabulary the solution cannot extend: "wrong value"
    (the test's assert failed on what the solution returned), "error" (the solution raised,
    returned something that is not plain data, or its process ended), "did not finish" (it
    was running when the run was stopped), "not run" (the run ended before it); "" if passed."""


@dataclass(frozen=True)
class TestReport:
    """The outcome of `Sandbox.run_tests`: one `TestOutcome` per test, in order. Tests that
    did not get to run (the run timed out or crashed first) are failures saying so."""

    __test__ = False

    status: Status
    tests: tuple[TestOutcome, ...]
    stdout: str
    stderr: str
    duration_s: float
    detail: str = ""

    @property
    def passed(self) -> int:
        return sum(test.passed for test in self.tests)

    @property
    def all_passed(self) -> bool:
        return self.status == "ok" and bool(self.tests) and all(test.passed for test in self.tests)

    @property
    def fraction_passed(self) -> float:
        return self.passed / len(self.tests) if self.tests else 0.0

    def first_failure(self) -> TestOutcome | None:
        return next((test for test in self.tests if not test.passed), None)
