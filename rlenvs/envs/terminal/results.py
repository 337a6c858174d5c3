"""What a Terminal-Bench 1 test run's output says about its tests: pytest's own results.

Terminal-Bench 1 does not decide a task by the exit status of its `run-tests.sh`: it parses
pytest's results in the run's output (the task's `parser_name`, pytest by default) and needs
every test to have passed. An exit status alone hides failures a script did not mean to
hide: in `pytest ... | tee log` the status is tee's, in `pytest ...; echo done` echo's. So a
Terminal-Bench 1 verdict here needs both (`results_problem`):

- exit status 0, as before;
- where the output holds pytest's results, its summary line (`2 passed, 1 failed in 0.12s`,
  with or without the `===` around it, the `-q` form too), the lines of its short test
  summary (`FAILED test_x.py::test_y - ...`, `PASSED ...` with `-rA`, and there a collection
  error's `ERROR test_x.py`, with no `::`) or its `Interrupted: 1 error during collection`
  (all that `-qq` prints of a module that failed to import), every one of them reporting no
  failed, errored or xpassed test (Terminal-Bench counts an xpass as a failure) and at least
  one passed test among them; a pytest session whose header (`== test session starts ==`)
  is not followed by its summary ended before its results (killed, or `os._exit` in a test)
  and fails too. unittest's results (`Ran 3 tests in 0.01s` then `OK` or `FAILED (...)`)
  are read the same way, as task folders here may run tests without pytest.
- what pytest shows of the tests' own output is not read as results (`_not_results`): its
  report sections (`== FAILURES ==`, `== ERRORS ==`, `== PASSES ==` with `-rA`, the warnings
  summary) up to the short summary or the summary line, and in a session with a header and
  a short summary everything before that summary, as Terminal-Bench reads only what follows
  `short test summary info`. A passing test that runs a unittest suite and shows its
  `FAILED (failures=1)` (the agent's suite failing, as asked) is a passing test.

Output with neither is left to the exit status. This reads what the run printed, so it
guards against a script that hides its tests' failures, not against code the tests run that
prints a summary of its own: tests that run the agent's code trust it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PYTEST_HEADER = re.compile(r"=+ test session starts =+")
_PYTEST_SUMMARY = re.compile(
    r"(?:=+ )?(?P<counts>\d+ [a-z]+(?: [a-z]+)?(?:, \d+ [a-z]+(?: [a-z]+)?)*|no tests ran)"
    r" in \d+(?:\.\d+)? ?(?:s|seconds)(?: \(\d+:\d\d:\d\d\))?(?: =+)?"
)
_PYTEST_RESULT = re.compile(r"(?P<word>PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED) \S+::\S+(?: - .*)?")
"""A line of pytest's short test summary (`-rA` lists every test; `-q -q` prints only these)."""
_PYTEST_SHORT_SUMMARY = re.compile(r"=+ ?short test summary info ?=+", re.IGNORECASE)
_PYTEST_COLLECTION_ERROR = re.compile(r"ERROR \S+(?: - .*)?")
"""A short summary's line for a module or folder that failed to collect (no `::`); read only
inside the short summary, where Terminal-Bench's parser fails the run for it."""
_PYTEST_INTERRUPTED = re.compile(r"!+ ?Interrupted: (?P<errors>\d+) errors? during collection ?!+")
_PYTEST_REPORT = re.compile(r"=+ (?:ERRORS|FAILURES|PASSES|warnings summary(?: \(final\))?) =+")
"""Where pytest starts showing the tests' tracebacks and captured output."""
_UNITTEST_RAN = re.compile(r"Ran (?P<ran>\d+) tests? in \d+(?:\.\d+)?s")
_UNITTEST_END = re.compile(r"(?P<word>OK|FAILED|NO TESTS RAN)(?: \((?P<counts>[a-z ]+=\d+(?:, [a-z ]+=\d+)*)\))?")
PYTEST_FAILURES = ("failed", "error", "errors", "xpassed")
PYTEST_WORDS = frozenset(
    (*PYTEST_FAILURES, "passed", "skipped", "deselected", "xfailed", "warning", "warnings", "rerun")
)
UNITTEST_FAILURES = ("failures", "errors", "unexpected successes")


@dataclass(frozen=True)
class Summary:
    """One test runner's summary found in the output."""

    line: str
    passed: int
    failed: int
    """Failed, errored (and for pytest xpassed) tests."""


def results_problem(output: str) -> str:
    """Why the test results in `output` do not pass ("" when they do, or when it holds no
    pytest or unittest results): see the module's rule."""
    summaries, problem = _summaries(output)
    if problem:
        return problem
    if not summaries:
        return ""
    failing = [summary.line for summary in summaries if summary.failed]
    if failing:
        return f"the tests' results report failures: {'; '.join(failing[:3])}"
    if not any(summary.passed for summary in summaries):
        return f"the tests' results report no test that passed: {summaries[-1].line}"
    return ""


def _summaries(output: str) -> tuple[list[Summary], str]:
    """The summaries in `output`, in order, and why the output is not whole ("" when it is)."""
    every = [_ANSI.sub("", line).strip() for line in output.splitlines()]
    lines = [line for line, skipped in zip(every, _not_results(every), strict=True) if not skipped]
    found: list[Summary] = []
    open_header, in_short_summary = False, False
    for index, line in enumerate(lines):
        if _PYTEST_HEADER.fullmatch(line):
            if open_header:
                return found, "a pytest session ended before its results (killed, or its process exited in a test)"
            open_header, in_short_summary = True, False
        elif _PYTEST_SHORT_SUMMARY.fullmatch(line):
            in_short_summary = True
        elif (match := _PYTEST_SUMMARY.fullmatch(line)) and _is_pytests(match.group("counts")):
            found.append(_pytest_summary(line, match.group("counts")))
            open_header = in_short_summary = False
        elif match := _PYTEST_RESULT.fullmatch(line):
            word = match.group("word")
            found.append(Summary(line, int(word == "PASSED"), int(word in ("FAILED", "ERROR", "XPASS"))))
        elif in_short_summary and _PYTEST_COLLECTION_ERROR.fullmatch(line):
            found.append(Summary(line, 0, 1))
        elif match := _PYTEST_INTERRUPTED.fullmatch(line):
            found.append(Summary(line, 0, int(match.group("errors"))))
            open_header = False  # pytest prints no summary line after it with -qq
        elif match := _UNITTEST_RAN.fullmatch(line):
            end = next((_UNITTEST_END.fullmatch(later) for later in lines[index + 1 :] if later), None)
            if end is None:
                return found, f"unittest's run ended without saying how its tests went ({line})"
            found.append(_unittest_summary(line, int(match.group("ran")), end))
    if open_header:
        return found, "a pytest session ended before its results (killed, or its process exited in a test)"
    return found, ""


def _not_results(lines: list[str]) -> list[bool]:
    """For each line, whether it is pytest's showing of the tests' own output rather than
    results: inside a report section (`_PYTEST_REPORT`) until the short summary, a summary
    line or a new session, and in a session that has a header and a short summary, every
    line between the two (its progress, and what `-s` let the tests print)."""
    skipped, section, header = [False] * len(lines), False, None
    for index, line in enumerate(lines):
        starts, short = bool(_PYTEST_HEADER.fullmatch(line)), bool(_PYTEST_SHORT_SUMMARY.fullmatch(line))
        summary = _PYTEST_SUMMARY.fullmatch(line)
        if starts or short or _PYTEST_INTERRUPTED.fullmatch(line) or (summary and _is_pytests(summary.group("counts"))):
            section = False
            if short and header is not None:
                skipped[header + 1 : index] = [True] * (index - header - 1)
            header = index if starts else None
        elif _PYTEST_REPORT.fullmatch(line):
            section = True
        skipped[index] = skipped[index] or section
    return skipped


def _is_pytests(counts: str) -> bool:
    """Whether the counts of a line shaped like pytest's summary are pytest's words (not a
    build log's "12 files in 3.2s")."""
    return counts == "no tests ran" or any(item.split(" ", 1)[1] in PYTEST_WORDS for item in counts.split(", "))


def _pytest_summary(line: str, counts: str) -> Summary:
    numbers: dict[str, int] = {}
    if counts != "no tests ran":
        for item in counts.split(", "):
            number, word = item.split(" ", 1)
            numbers[word] = numbers.get(word, 0) + int(number)
    failed = sum(numbers.get(word, 0) for word in PYTEST_FAILURES)
    return Summary(line, numbers.get("passed", 0), failed)


def _unittest_summary(line: str, ran: int, end: re.Match[str]) -> Summary:
    numbers = {}
    for item in (end.group("counts") or "").split(", "):
        if item:
            word, number = item.split("=")
            numbers[word] = int(number)
    failed = sum(numbers.get(word, 0) for word in UNITTEST_FAILURES) + (end.group("word") == "FAILED" and not numbers)
    skipped = numbers.get("skipped", 0) + numbers.get("expected failures", 0)
    return Summary(f"{line}: {end.group(0)}", max(0, ran - skipped - failed), failed)
