"""Reading a Terminal-Bench 1 test run's results (rlenvs.envs.terminal.results) from what real
pytest and unittest runs print, in their usual output modes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlenvs.envs.terminal.folders import TaskFolderError, load_task_folders
from rlenvs.envs.terminal.results import results_problem
from tests.support.redteam.terminal import write_task_folder

pytestmark = pytest.mark.slow  # its tests run real pytest and unittest in subprocesses

TESTS = {
    "test_mixed.py": (
        "import pytest\n\ndef test_ok(): pass\ndef test_bad(): assert 0\n"
        "@pytest.mark.skip\ndef test_skipped(): pass\n@pytest.mark.xfail\ndef test_xfail(): assert 0\n"
    ),
    "test_good.py": "import pytest\n\ndef test_ok(): pass\n@pytest.mark.skip\ndef test_skipped(): pass\n",
    "test_xpass.py": "import pytest\n\ndef test_ok(): pass\n@pytest.mark.xfail\ndef test_xpass(): pass\n",
    "test_error.py": "import pytest\n\n@pytest.fixture\ndef broken(): raise RuntimeError\ndef test_e(broken): pass\n",
    "test_exit.py": "import os\n\ndef test_ok(): pass\ndef test_exit(): os._exit(0)\n",
    "test_skipped_only.py": "import pytest\n\n@pytest.mark.skip\ndef test_skipped(): pass\n",
    "test_import_error.py": "from no_such_module_of_the_agents import add\n\ndef test_add(): assert add(2, 3) == 5\n",
    "test_shows_a_failing_suite.py": (
        "def test_the_suite_fails():\n    print('F\\n' + '=' * 70 + '\\nFAIL: test_add (test_add.T)\\n' + '-' * 70 + "
        "'\\nRan 1 test in 0.001s\\n\\nFAILED (failures=1)')\n"
    ),
    "test_unit_bad.py": "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self): self.assertEqual(1, 2)\n",
    "test_unit_good.py": (
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self): pass\n"
        "    @unittest.skip('no')\n    def test_b(self): pass\n"
    ),
}


@pytest.fixture(scope="module")
def tests_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    for name, text in TESTS.items():
        (folder / name).write_text(text)
    (folder / "empty").mkdir()
    return folder


def pytest_output(folder, name: str, *options: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *options, name],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    return run.stdout + run.stderr


def unittest_output(folder, *arguments: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "unittest", *arguments], cwd=folder, capture_output=True, text=True, check=False
    )
    return run.stdout + run.stderr


@pytest.mark.parametrize("options", [(), ("-rA",), ("-q",), ("-qq",), ("--color=yes",)])
def test_failing_and_passing_pytest_runs_in_every_output_mode(tests_folder, options):
    assert "report failures" in results_problem(pytest_output(tests_folder, "test_mixed.py", *options))
    assert "report failures" in results_problem(pytest_output(tests_folder, "test_error.py", *options))
    assert results_problem(pytest_output(tests_folder, "test_good.py", *options)) == ""


@pytest.mark.parametrize("options", [(), ("-rA",), ("-q",), ("-qq",), ("-qq", "-rN")])
def test_a_module_that_fails_to_collect_fails_in_every_output_mode(tests_folder, options):
    """`-qq` prints a collection error only as `ERROR test_x.py` and `Interrupted: 1 error
    during collection` (with `-rN`, only the latter): Terminal-Bench fails the run for it,
    whatever the exit status of a `pytest ... | tee log` says."""
    output = pytest_output(tests_folder, "test_import_error.py", *options)
    assert "report failures" in results_problem(output), output


@pytest.mark.parametrize("options", [("-rA",), ("-rA", "-s"), ("-q", "-rA"), ("-rP",), ("-rA", "--color=yes")])
def test_what_a_passing_test_printed_is_not_read_as_results(tests_folder, options):
    """With `-rA` (or `-rP`, `-s`) pytest shows a passing test's output, here a unittest
    suite's `FAILED (failures=1)` that the test asserts (the agent's suite catches the bug):
    only the results outside what the tests printed decide, as Terminal-Bench reads only
    what follows `short test summary info`."""
    output = pytest_output(tests_folder, "test_shows_a_failing_suite.py", *options)
    assert "FAILED (failures=1)" in output and results_problem(output) == "", output
    assert "report failures" in results_problem(output + pytest_output(tests_folder, "test_mixed.py", *options))


def test_an_xpass_fails_as_terminal_bench_counts_it(tests_folder):
    assert "report failures" in results_problem(pytest_output(tests_folder, "test_xpass.py", "-rA"))


def test_a_run_with_no_passed_test_fails(tests_folder):
    assert "no test that passed" in results_problem(pytest_output(tests_folder, "test_skipped_only.py"))
    assert "no test that passed" in results_problem(pytest_output(tests_folder, "empty"))  # "no tests ran"


def test_a_session_that_ended_before_its_summary_fails(tests_folder):
    assert "ended before its results" in results_problem(pytest_output(tests_folder, "test_exit.py", "-rA"))


def test_unittest_results_are_read_too(tests_folder):
    assert "report failures" in results_problem(unittest_output(tests_folder, "test_unit_bad"))
    assert results_problem(unittest_output(tests_folder, "test_unit_good")) == ""
    assert "no test that passed" in results_problem(unittest_output(tests_folder, "discover", "-s", "empty"))


def test_two_runs_must_both_pass_and_an_inner_run_inside_passing_output_too(tests_folder):
    good, bad = pytest_output(tests_folder, "test_good.py"), pytest_output(tests_folder, "test_mixed.py")
    assert "report failures" in results_problem(bad + "\n" + good)
    assert results_problem(good + "\n" + good) == ""


def test_output_without_results_is_left_to_the_exit_status():
    for output in ("", "all tests passed\n", "Compiled 12 files in 3.2s\n", "=== build ===\n3 warnings\n"):
        assert results_problem(output) == "", output


def test_terminal_bench_folders_read_pytests_results_and_refuse_other_parsers(tmp_path):
    folder = write_task_folder(tmp_path, "terminal-bench", "script")
    (task,) = load_task_folders(folder)
    assert task.test_parser == "pytest"
    (tmp_path / "harbor").mkdir()
    (harbor,) = load_task_folders(write_task_folder(tmp_path / "harbor", "harbor", "script"))
    assert harbor.test_parser == ""  # Harbor's reward file decides
    text = (folder / "task.yaml").read_text()
    (folder / "task.yaml").write_text(text.replace("parser_name: pytest", "parser_name: swebench"))
    with pytest.raises(TaskFolderError, match="parser_name is 'swebench': rlenvs reads pytest's results only"):
        load_task_folders(folder)
    (folder / "task.yaml").write_text(text.replace("parser_name: pytest\n", ""))
    assert load_task_folders(folder)[0].test_parser == "pytest"  # Terminal-Bench's default


def test_the_color_codes_pytest_prints_when_forced_do_not_hide_the_summary(tests_folder):
    output = pytest_output(tests_folder, "test_mixed.py", "--color=yes")
    assert "\x1b[" in output and "report failures" in results_problem(output)
