"""A task folder's test run (rlenvs.sandbox.shells.verdict.run_tests) in a real bubblewrap session:
what the verdict enforces over the task's own variables, git's hardening, and the verdict's
own folders, read-only for the run but for the tests' logs and TMPDIR."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

from rlenvs.envs.terminal.tasks import TESTS_DIR, Entry
from rlenvs.sandbox import Limits
from rlenvs.sandbox.shells.rootfs import EpisodeChanges
from rlenvs.sandbox.shells.search_paths import LATE_PYTHONPATH
from rlenvs.sandbox.shells.session import ReadOnlyFolder, ShellSession
from rlenvs.sandbox.shells.verdict import (
    LOGS_NAME,
    SITECUSTOMIZE,
    USERCUSTOMIZE,
    VERDICT_ROOT,
    VerdictRun,
    run_tests,
    toolchain_changes,
)

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


def run(session, script: str, environment=()):
    return run_tests(session, TESTS, script, timeout_s=10.0, environment=environment)


def verdict_files(session) -> dict[str, str | None]:
    """What is under the verdict's root after a run, as the host reads it (the tests' folder
    named "tests"): each path's text, None for a folder; no symlink is followed."""
    root, found = session.host_path(VERDICT_ROOT), {}
    for top, dirs, names in os.walk(root):
        rel = os.path.relpath(top, root)
        for name in dirs:
            found[os.path.normpath(os.path.join(rel, name))] = None
        for name in names:
            path = os.path.join(top, name)
            found[os.path.normpath(os.path.join(rel, name))] = "<link>" if os.path.islink(path) else _text(path)
    return {re.sub(r"^tests_[0-9a-f]+", "tests", re.sub(PYC_TAG, ".pyc", path)): text for path, text in found.items()}


PYC_TAG = r"\.[a-z]+-[0-9]+\.pyc$"
"""The interpreter's tag in a .pyc's name (`.cpython-311.pyc`), left out of `verdict_files`."""


def _text(path: str) -> str:
    """A file's text; for a .pyc, which source it is the checked bytecode of (PEP 552's
    header: flags 3, then the source's hash)."""
    data = Path(path).read_bytes()
    if not path.endswith(".pyc"):
        return data.decode()
    assert data[:4] == importlib.util.MAGIC_NUMBER and data[4:8] == (3).to_bytes(4, "little"), data[:16]
    return f"<bytecode of a source of hash {data[8:16].hex()}>"


SOURCE_HASH = importlib.util.source_hash(SITECUSTOMIZE.encode())
AS_COPIED = {
    "tests": None, "tests/test_outputs.py": "print('genuine')\n", "tests/expected.txt": "Hello\n", "tests/lib": None,
    "tests/lib/helper.py": "X = 1\n", f"tests/{LOGS_NAME}": None, f"tests/{LOGS_NAME}/verifier": None, "home": None,
    "tmp": None, "site": None, "site/sitecustomize.py": SITECUSTOMIZE, "site/usercustomize.py": USERCUSTOMIZE,
    "site/__pycache__": None,
    "site/__pycache__/sitecustomize.pyc": f"<bytecode of a source of hash {SOURCE_HASH.hex()}>",
    "git-hooks": None, "pytest.ini": "",
}  # fmt: skip
"""The verdict's root as `run_tests` makes it for `TESTS`."""


@pytest.mark.sandbox
def test_the_tests_may_write_their_logs_tmpdir_the_scratch_folders_and_the_workspace(fresh):
    script = (
        f"python3 {TESTS_DIR}/test_outputs.py && cat {TESTS_DIR}/expected.txt > /dev/null && "
        f"echo 1 > {TESTS_DIR}/{LOGS_NAME}/verifier/reward.txt && mkdir -p {TESTS_DIR}/{LOGS_NAME}/x && "
        f"echo 'import os' > {TESTS_DIR}/{LOGS_NAME}/x/y.py && echo t > \"$TMPDIR/t\" && "
        "python3 -c 'import tempfile; tempfile.mkdtemp()' && echo s > /tmp/s && echo d > /dev/shm/d && echo w > /app/w"
    )
    result = run(fresh, script)
    assert (result.status, result.stdout) == ("ok", "genuine\n"), result.stdout
    assert verdict_files(fresh).items() >= {f"tests/{LOGS_NAME}/verifier/reward.txt": "1\n", "tmp/t": "t\n"}.items()


@pytest.mark.sandbox
@pytest.mark.parametrize(
    "write",
    [
        f"echo 'print(1)' > {TESTS_DIR}/test_outputs.py",
        f"rm {TESTS_DIR}/expected.txt",
        f"rm -r {TESTS_DIR}/lib",
        f"ln -sf /tmp/forged {TESTS_DIR}/test_outputs.py",
        f"chmod +x {TESTS_DIR}/test_outputs.py",
        f"echo 'import os; os._exit(0)' > {TESTS_DIR}/json.py",
        # created and deleted again before any check after the run could see it
        f"echo 'import os; os.remove(__file__); os._exit(0)' > {TESTS_DIR}/pathlib.py",
        f'python3 -c \'import py_compile; py_compile.compile("/app/m.py", cfile="{TESTS_DIR}/pathlib.pyc")\'',
        f"mkdir {TESTS_DIR}/lib/__pycache__",
        f"ln -s /app/pl {TESTS_DIR}/pathlib",
        f"mv {TESTS_DIR} {VERDICT_ROOT}/moved",  # to /tmp, mv copies and deletes: only the logs go
        f"mv {VERDICT_ROOT} /dev/shm/moved",
        f"echo 'import os; os._exit(0)' > {VERDICT_ROOT}/site/sitecustomize.py",
        f"echo 'import os; os._exit(0)' > {VERDICT_ROOT}/site/encodings.py",
        f"python3 -c 'import py_compile; py_compile.compile(\"/app/m.py\", cfile=\"'{VERDICT_ROOT}/site/__pycache__/sitecustomize.*.pyc'\")'",
        f"rm -r {VERDICT_ROOT}/site/__pycache__",
        f"printf '[pytest]\\naddopts = --co\\n' > {VERDICT_ROOT}/pytest.ini",
        f"touch {VERDICT_ROOT}/git-hooks/pre-commit",
        f"mkdir -p {VERDICT_ROOT}/home/.config/git",
        f"(sleep 0.2; echo 'print(1)' > {TESTS_DIR}/test_outputs.py) & wait $!",
    ],
)
def test_nothing_the_tests_run_can_rewrite_their_own_files_or_the_verdicts(fresh, write):
    """Code of the agent's that the tests run (a program, a pickle, a git filter) runs as
    their uid: the whole verdict root but the logs and TMPDIR is read-only for the run."""
    fresh.run("printf 'import os\\nos._exit(0)\\n' > /app/m.py && mkdir -p /app/pl && cp /app/m.py /app/pl/__init__.py")
    result = run(fresh, f"{write}; echo status=$?")
    assert re.search(r"(Read-only file system|Device or resource busy).*\n(.*\n)*status=[1-9]", result.stdout), (
        result.stdout
    )
    assert verdict_files(fresh) == AS_COPIED


@pytest.mark.sandbox
def test_the_tests_python3_starts_from_the_bytecode_of_the_verdicts_sitecustomize(fresh):
    """Written beside it by the sandbox's own interpreter: the tests' python3 loads it, and
    compiles nothing of the verdict's at its start (0.7-1 ms of every python3)."""
    output = run(fresh, "python3 -v -c pass 2>&1 | grep 'code object from .*sitecustomize'").stdout
    assert re.fullmatch(
        rf"# code object from '?{VERDICT_ROOT}/site/__pycache__/sitecustomize\.[a-z]+-[0-9]+\.pyc'?\n", output
    ), output


@pytest.mark.sandbox
def test_a_run_whose_folders_cannot_be_made_read_only_does_not_pass(fresh, monkeypatch):
    """Should the read-only view fail, the tests do not run: a failure that says why."""
    monkeypatch.setattr(VerdictRun, "read_only", property(lambda run: ReadOnlyFolder(f"{run.root}/none")))
    result = run(fresh, "exit 0")
    assert result.exit_code == 87 and "could not be made read-only" in result.stdout


@pytest.mark.sandbox
def test_git_runs_no_hook_or_fsmonitor_of_the_repository_and_reads_no_system_config(fresh):
    fresh.run(
        "mkdir -p /app/repo/.git/hooks && cd /app/repo && git init -q && git config core.fsmonitor /app/fsm.sh && "
        "git config core.hooksPath /app/hooks && git config core.pager /app/pager.sh && git config user.name agent"
    )
    script = (
        'cd /app/repo && git config core.fsmonitor && git config core.hooksPath && ls -A "$(git config core.hooksPath)" '
        "&& git config core.pager && git config --show-scope user.name && git config --show-origin --get core.fsmonitor"
    )
    outcome = run(fresh, script)
    assert outcome.stdout == (f"false\n{VERDICT_ROOT}/git-hooks\ncat\nlocal\tagent\ncommand line:\tfalse\n"), (
        outcome.stdout
    )


@pytest.mark.sandbox
def test_git_runs_no_signing_program_or_editor_the_repository_names(fresh):
    """gpg.program (with commit.gpgSign or tag.gpgSign, in any signing format), core.editor,
    sequence.editor and an attributes file, all set in the repository's own config: the
    tests' commits, tags and rebases run none of them, and commits and tags are unsigned."""
    fresh.run(
        "mkdir -p /app/repo && cd /app/repo && git init -q && echo a > a && git add a && "
        "git -c user.name=a -c user.email=a@b commit -qm one && printf '#!/bin/sh\\ntouch /app/ran-$$\\n' > /app/p.sh "
        "&& chmod +x /app/p.sh && echo '* filter=x' > /app/attributes && git config filter.x.clean /app/p.sh && "
        "for key in gpg.program gpg.x509.program gpg.ssh.program core.editor sequence.editor; do "
        "git config $key /app/p.sh; done && git config commit.gpgSign true && git config tag.gpgSign true && "
        "git config gpg.format x509 && git config core.attributesFile /app/attributes"
    )
    script = (
        "cd /app/repo && export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t && "
        "echo b > b && git add b && git commit -qm two && git tag -a v1 -m v1 && { git tag -s v2 -m v2; "
        "git commit --allow-empty -q; } 2> /dev/null; git rebase -qi HEAD~1 && git log --format=%s%G? && "
        "git cat-file -p v1 | grep -c PGP; git status --porcelain; ls /app | grep -c ran; "
        "git config --show-origin gpg.program"
    )
    output = run(fresh, script).stdout
    assert output == "twoN\noneN\n0\n0\ncommand line:\t\n", output


def test_the_task_pythonpath_comes_after_the_verdicts_own_site_folder_and_writable_entries_after_python():
    run = VerdictRun("0", "/app")
    task = [("PYTHONPATH", f"/app:src:{TESTS_DIR}/vendor:/usr/lib/extra:/tmp/x:/dev/shm/y"), ("PYTEST_ADDOPTS", "-x")]
    environment = run.environment(task_environment=task)
    assert environment["PYTHONPATH"] == f"{VERDICT_ROOT}/site:{run.tests_dir}/vendor:/usr/lib/extra"
    assert environment[LATE_PYTHONPATH] == "/app:src:/tmp/x:/dev/shm/y"
    assert environment["PYTEST_ADDOPTS"].endswith(" -x") and "--rootdir=" in environment["PYTEST_ADDOPTS"]
    assert run.environment()["PYTHONPATH"] == f"{VERDICT_ROOT}/site" and run.environment()[LATE_PYTHONPATH] == ""
    assert run.environment(task_environment=[("TEST_DIR", TESTS_DIR)])["TEST_DIR"] == run.tests_dir
    with pytest.raises(ValueError, match="not a shell variable name"):
        run.environment(task_environment=[("A B", "1")])
    with pytest.raises(ValueError, match="not a shell variable name"):
        run.environment(task_environment=[("GIT_CONFIG_COUNT=0 X", "1")])


@pytest.mark.parametrize(
    ("task_path", "path"),
    [
        (None, "/usr/local/bin:/usr/bin:/bin"),
        ("/app/node_modules/.bin:/usr/local/bin:/usr/bin:/bin", "/usr/local/bin:/usr/bin:/bin:/app/node_modules/.bin"),
        ("/opt/tool/bin:/app/bin:/usr/bin", "/opt/tool/bin:/usr/bin:/usr/local/bin:/bin:/app/bin"),
        (f"{TESTS_DIR}/bin::bin:/usr/../app/x", "{tests}/bin:/usr/local/bin:/usr/bin:/bin::bin:/usr/../app/x"),
        (f"{VERDICT_ROOT}/tmp/bin:/tmp/bin:/bin", "/bin:/usr/local/bin:/usr/bin:{root}/tmp/bin:/tmp/bin"),
    ],
)
def test_the_task_path_keeps_its_order_with_writable_folders_after_the_systems(task_path, path):
    """A task's PATH naming the workspace (its tools) keeps them found, after the system's
    folders, which it may not leave out: the agent's python3 there is not the tests'."""
    run = VerdictRun("0", "/app")
    environment = run.environment(task_environment=[] if task_path is None else [("PATH", task_path)])
    assert environment["PATH"] == path.format(tests=run.tests_dir, root=VERDICT_ROOT)


def test_what_the_agent_can_write_is_read_as_text_with_dots_applied():
    run = VerdictRun("0", "/srv/app")
    assert [run.writable(entry) for entry in ("/srv/app/lib", "/srv/application", "lib", "", "/usr/../srv/app")] == [
        True,
        False,
        True,
        True,
        True,
    ]
    inside = ("site", "tests_0", "tests_0/.rlenvs-logs/x", "tmp")
    assert [run.writable(f"{VERDICT_ROOT}/{name}") for name in inside] == [False, False, True, True]


@pytest.mark.sandbox
def test_a_task_pythonpath_or_path_naming_the_workspace_shadows_nothing_of_the_system(fresh):
    """With the task's PYTHONPATH=/app and PATH=/app/bin first, the tests import the agent's
    modules and run its tools, but Python's own modules (encodings, at start-up) and the
    system's programs stay the system's."""
    fresh.run(
        "mkdir -p /app/encodings /app/bin && printf 'import os\\nos._exit(0)\\n' > /app/pathlib.py && "
        "cp /app/pathlib.py /app/encodings/__init__.py && echo 'X = 5' > /app/mine.py && "
        "printf '#!/bin/sh\\nexit 0\\n' > /app/bin/python3 && printf '#!/bin/sh\\necho tool\\n' > /app/bin/tool && "
        "chmod +x /app/bin/python3 /app/bin/tool && cd /tmp"
    )
    environment = [("PYTHONPATH", "/app"), ("PATH", "/app/bin:/usr/local/bin:/usr/bin:/bin")]
    script = (
        "cd /tmp && python3 -c 'import pathlib, mine, sys; print(pathlib.__file__, mine.X, sys.path[-2:])' && tool && "
        f"python3 {TESTS_DIR}/test_outputs.py && command -v python3 && /usr/bin/python3 -I -c 'import pathlib; "
        "print(pathlib.__file__)'"
    )
    first, *rest, system = run(fresh, script, environment).stdout.splitlines()
    assert first == f"{system} 5 ['/app', '/tmp']" and rest == ["tool", "genuine", "/usr/bin/python3"]


@pytest.mark.sandbox
def test_a_task_that_sets_the_verdicts_own_variables_does_not_undo_them(fresh):
    environment = [("PYTHONNOUSERSITE", ""), ("GIT_CONFIG_COUNT", "0"), ("PYTHONPATH", "/app"),
                   ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "")]  # fmt: skip
    fresh.run("echo 'print(\"agent\")' > /app/sitecustomize.py")
    script = (
        'python3 -c "import sys; print(sys.flags.no_user_site)"; git config core.fsmonitor; '
        "echo $PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    )
    outcome = run(fresh, script, environment)
    assert outcome.stdout == "1\nfalse\n1\n"


@pytest.mark.sandbox
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
    outcome = run(fresh, script)
    assert outcome.stdout == "/app\n5 /app\n5\nisolated: 0\n", outcome.stdout


# --- on an image, what the tests run on is the image's (rlenvs.sandbox.shells.verdict.toolchain_changes) -----


@pytest.mark.parametrize(
    ("changed", "flagged"),
    [
        ("/usr/lib/python3/dist-packages/pytest/__init__.py", True),
        ("/etc/ld.so.preload", True),
        ("/root/.local/lib/python3.13/site-packages/x.pth", True),
        ("/opt/tools/python3", True),  # a file in a folder of the tests' PATH
        ("/opt/tools", True),  # that folder replaced (by a link to the agent's own)
        ("/opt", True),  # a folder above it
        ("/opt/pylib/pkg/pathlib.py", True),  # anything below a folder of their PYTHONPATH
        ("/opt/other/notes.txt", False),
        ("/app/bin/python3", False),  # the workspace is the agent's
        ("/root/notes.txt", False),
        ("/etc/motd", False),
    ],
)
def test_toolchain_changes_name_what_the_tests_would_run(changed: str, flagged: bool) -> None:
    changes = EpisodeChanges((changed,), complete=True)
    found = toolchain_changes(changes, "/app", "/opt/tools:/app/bin:/usr/bin", "/opt/pylib:/app")
    assert found == ([changed] if flagged else [])


def test_changes_too_many_to_read_are_all_suspect() -> None:
    assert toolchain_changes(EpisodeChanges((), complete=False), "/app")[0].endswith("too many to check")
