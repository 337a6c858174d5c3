"""A task folder's test run (rlenvs.sandbox.verdict.run_tests) in a real bubblewrap session:
what the verdict enforces over the task's own variables, git's hardening, and the check from
the host that the tests' own files are as they were copied once the run is over."""

from __future__ import annotations

import pytest

from rlenvs.envs.terminal.tasks import TESTS_DIR, Entry
from rlenvs.sandbox import Limits
from rlenvs.sandbox.session import ShellSession
from rlenvs.sandbox.verdict import LOGS_NAME, VERDICT_ROOT, VerdictRun, run_tests

TESTS = (
    Entry("test_outputs.py", "print('genuine')\n"),
    Entry("expected.txt", "Hello\n"),
    Entry("lib", is_dir=True),
    Entry("lib/helper.py", "X = 1\n"),
    Entry(f"{LOGS_NAME}/verifier", is_dir=True),
)


@pytest.fixture(scope="module")
def session():
    with ShellSession(limits=Limits(timeout_s=10.0), workdir="/app") as shell:
        yield shell


@pytest.fixture
def fresh(session):
    session.reset([])
    return session


def tampered(session, script: str) -> tuple[str, ...]:
    outcome = run_tests(session, TESTS, script, timeout_s=10.0)
    assert outcome.result.status == "ok", outcome.result.stdout
    return outcome.tampered


def test_a_run_that_leaves_the_tests_as_copied_is_not_tampered(fresh):
    script = (
        f"python3 {TESTS_DIR}/test_outputs.py && cat {TESTS_DIR}/expected.txt > /dev/null && "
        f"echo 1 > {TESTS_DIR}/{LOGS_NAME}/verifier/reward.txt && rm -rf {TESTS_DIR}/{LOGS_NAME}/verifier && "
        f"mkdir -p {TESTS_DIR}/{LOGS_NAME}/x && echo 'import os' > {TESTS_DIR}/{LOGS_NAME}/x/y.py && "
        f"gcc -x c -o {TESTS_DIR}/helper - <<< 'int main(void) {{ return 0; }}' && echo out > {TESTS_DIR}/lib/out.txt "
        f"&& chmod +x {TESTS_DIR}/test_outputs.py {TESTS_DIR}/lib/helper.py"  # the tests may chmod their own files
    )
    assert tampered(fresh, script) == ()


@pytest.mark.parametrize(
    ("script", "found"),
    [
        (f"echo 'print(1)' > {TESTS_DIR}/test_outputs.py", ("test_outputs.py",)),
        (f"rm {TESTS_DIR}/expected.txt", ("expected.txt",)),
        (f"rm -r {TESTS_DIR}/lib", ("lib", "lib/helper.py")),
        (f"mv {TESTS_DIR}/expected.txt /tmp/x && cp -p /tmp/x {TESTS_DIR}/expected.txt", ("expected.txt",)),
        (f"ln -sf /tmp/forged {TESTS_DIR}/test_outputs.py", ("test_outputs.py",)),
        # the same text written back, its time set back too: the ctime no process can set says so
        (
            f"cp -p {TESTS_DIR}/test_outputs.py /tmp/saved && echo x > {TESTS_DIR}/test_outputs.py && "
            f"cat /tmp/saved > {TESTS_DIR}/test_outputs.py && touch -r /tmp/saved {TESTS_DIR}/test_outputs.py",
            ("test_outputs.py",),
        ),
        # the same length written over it, its time set back and a chmod to explain the new ctime
        (
            f"cp -p {TESTS_DIR}/expected.txt /tmp/saved && echo Forge > {TESTS_DIR}/expected.txt && "
            f"touch -r /tmp/saved {TESTS_DIR}/expected.txt && chmod 600 {TESTS_DIR}/expected.txt",
            ("expected.txt",),
        ),
        (f"echo 'import os; os._exit(0)' > {TESTS_DIR}/json.py", ("json.py",)),
        (f"mkdir {TESTS_DIR}/pathlib && touch {TESTS_DIR}/pathlib/__init__.py", ("pathlib/__init__.py",)),
        (f"touch {TESTS_DIR}/lib/_speedups.so", ("lib/_speedups.so",)),
    ],
)
def test_the_tests_own_files_changed_during_the_run_are_named(fresh, script, found):
    assert tampered(fresh, script) == found


@pytest.mark.parametrize(
    "script",
    [
        f"mv {TESTS_DIR} /tmp/moved && ln -s / {TESTS_DIR}",
        f"mv {VERDICT_ROOT} /tmp/moved && ln -s / {VERDICT_ROOT}",
        f"rm -r {TESTS_DIR}/lib && ln -s / {TESTS_DIR}/lib",
        f"cp -a {TESTS_DIR} /tmp/copy && rm -r {TESTS_DIR} && mv /tmp/copy {TESTS_DIR}",
    ],
)
def test_a_tests_folder_turned_into_a_link_is_caught_without_the_host_following_it(fresh, script):
    """An absolute link read by the host resolves against the host's root: the check reaches
    the tests' folder from the sandbox's /tmp one name at a time, never through a link, and
    reads nothing below a folder that changed (the host's / would take minutes to walk)."""
    found = tampered(fresh, script)
    assert found and len(found) <= 3 and all("tests' folder itself" in path or path.startswith("lib") for path in found)


def test_a_background_process_that_restores_the_tests_is_still_caught(fresh):
    """What rewrote a test and put it back before the run ended left a new ctime."""
    script = (
        f"cp -p {TESTS_DIR}/test_outputs.py /tmp/saved && echo 'print(1)' > {TESTS_DIR}/test_outputs.py && "
        f"(sleep 0.3; cp -p /tmp/saved {TESTS_DIR}/test_outputs.py) & python3 {TESTS_DIR}/test_outputs.py; wait"
    )
    assert tampered(fresh, script) == ("test_outputs.py",)


def test_git_runs_no_hook_or_fsmonitor_of_the_repository_and_reads_no_system_config(fresh):
    fresh.run(
        "mkdir -p /app/repo/.git/hooks && cd /app/repo && git init -q && git config core.fsmonitor /app/fsm.sh && "
        "git config core.hooksPath /app/hooks && git config core.pager /app/pager.sh && git config user.name agent"
    )
    script = (
        "cd /app/repo && git config core.fsmonitor && git config core.hooksPath && ls -A \"$(git config core.hooksPath)\" "
        "&& git config core.pager && git config --show-scope user.name && git config --show-origin --get core.fsmonitor"
    )
    outcome = run_tests(fresh, TESTS, script, timeout_s=10.0)
    assert outcome.result.stdout == (
        f"false\n{VERDICT_ROOT}/git-hooks\ncat\nlocal\tagent\ncommand line:\tfalse\n"
    ), outcome.result.stdout


def test_the_task_pythonpath_comes_after_the_verdicts_own_site_folder():
    run = VerdictRun("0")
    environment = run.environment(task_environment=[("PYTHONPATH", "/app:/app/src"), ("PYTEST_ADDOPTS", "-x")])
    assert environment["PYTHONPATH"] == f"{VERDICT_ROOT}/site:/app:/app/src"
    assert environment["PYTEST_ADDOPTS"].endswith(" -x") and "--rootdir=" in environment["PYTEST_ADDOPTS"]
    assert run.environment()["PYTHONPATH"] == f"{VERDICT_ROOT}/site"
    assert run.environment(task_environment=[("TEST_DIR", TESTS_DIR)])["TEST_DIR"] == run.tests_dir
    with pytest.raises(ValueError, match="not a shell variable name"):
        run.environment(task_environment=[("A B", "1")])
    with pytest.raises(ValueError, match="not a shell variable name"):
        run.environment(task_environment=[("GIT_CONFIG_COUNT=0 X", "1")])


def test_a_task_that_sets_the_verdicts_own_variables_does_not_undo_them(fresh):
    environment = [("PYTHONNOUSERSITE", ""), ("GIT_CONFIG_COUNT", "0"), ("PYTHONPATH", "/app")]
    fresh.run("echo 'print(\"agent\")' > /app/sitecustomize.py")
    script = 'python3 -c "import sys; print(sys.flags.no_user_site)"; git config core.fsmonitor'
    outcome = run_tests(fresh, TESTS, script, timeout_s=10.0, environment=environment)
    assert outcome.result.stdout == "1\nfalse\n"


def test_python_started_in_the_workdir_finds_the_workspaces_modules_after_pythons_own(fresh):
    """PYTHONSAFEPATH=1 and the verdict's sitecustomize: -m, -c and stdin get the start folder
    at the end of sys.path, a script its own folder at the front, as Python puts it."""
    fresh.run(
        "echo 'raise SystemExit(3)' > /app/json.py && cp /app/json.py /app/unittest.py && echo 'X = 5' > /app/mine.py "
        "&& mkdir -p /app/tool && printf 'import mine\\nprint(mine.X)\\n' > /app/tool/main.py && cp /app/mine.py /app/tool/"
    )
    script = (
        "pwd && python3 -c 'import json, mine, sys; print(mine.X, sys.path[-1])' && echo 'import mine' | python3 - && "
        "python3 -m unittest -h > /dev/null && python3 tool/main.py && "
        f"python3 -c 'import sys; sys.path.remove(\"{VERDICT_ROOT}/site\"); import json' && "
        "python3 -I -c 'import json' ; echo \"isolated: $?\""
    )
    outcome = run_tests(fresh, TESTS, script, timeout_s=10.0)
    assert outcome.result.stdout == "/app\n5 /app\n5\nisolated: 0\n", outcome.result.stdout
