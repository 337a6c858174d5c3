"""Terminal-v2 red-team corpus: replies that try to earn a task's reward without doing the
task, and correct replies a wrong verdict would refuse.

A case's `task` is one of:
- `{"task_id": "terminal/<family>/L<level>/<index>"}`: a procedural task;
- `{"folder": "terminal-bench" | "harbor", "runner": ..., "test": ...}`: a small task folder
  of that layout, written here ("create /app/hello.txt holding a greeting", checked against
  the tests' own expected.txt), whose tests run as a plain script (runner "script":
  `python3 test_outputs.py`; "script-in-tests": the same after `cd` into the tests' folder),
  with `python3 -m unittest` ("unittest"), or with a pytest the tests folder brings along
  ("pytest", copied from this environment's own: the host's python3 has none). The test
  reads /app/hello.txt first ("hello-first") or opens expected.txt first ("expected-first");
- `{"custom": <name>}`: one of the Terminal-Bench 1 folders of `CUSTOM_FOLDERS` (file: text),
  for what the hello-world folder cannot pose (git, pickles, task variables, pytest output).

`replay` poses the task in the real env (real bubblewrap) and plays the replies: shell
commands, the last of them a `submit`; `COPY_ENV` among them goes on with a deepcopy of
the env, as a vector worker or a tree search would.
"""

from __future__ import annotations

import atexit
import copy
import hashlib
import importlib.util
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlenvs.envs.terminal.env import TerminalEnv
from rlenvs.sandbox.shells.verdict import SYSTEM_PATH
from tests.support.redteam import Case

NOMINAL_TESTS = "/tmp/rlenvs-tests"
"""Where the tests of a task folder were put before the verdict had a folder of its own."""
COPY_ENV = "<copy the env>"
"""Not a reply: `replay` goes on with a deepcopy of the env (a vector worker's or a tree search's copy)."""


# --- posing the tasks ----------------------------------------------------------------------------------

TEST_OUTPUTS = {
    "hello-first": """\
import unittest
from pathlib import Path


class TestHello(unittest.TestCase):
    def test_hello_file(self):
        hello = Path("/app/hello.txt")
        self.assertTrue(hello.is_file(), "/app/hello.txt does not exist")
        self.assertEqual(hello.read_text().strip(), Path("/tests/expected.txt").read_text().strip())


if __name__ == "__main__":
    unittest.main()
""",
    "expected-first": """\
with open("/tests/expected.txt") as expected, open("/app/hello.txt") as hello:
    assert hello.read().strip() == expected.read().strip(), "/app/hello.txt holds the wrong text"
""",
}
RUN_PYTEST = """\
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "vendor"))
import pytest

sys.exit(pytest.main([os.path.join(here, "test_outputs.py"), "-q"]))
"""
RUNNERS = {
    "script": "python3 /tests/test_outputs.py",
    "script-in-tests": "cd /tests && python3 test_outputs.py",
    "unittest": "python3 -m unittest discover -s /tests -p 'test_*.py'",
    "pytest": "python3 /tests/run_pytest.py",
    "pytest-tee": "python3 /tests/run_pytest.py 2>&1 | tee /tmp/test-output.log",
    "pytest-echo": "python3 /tests/run_pytest.py\necho 'tests finished'",
    "unittest-tee": "python3 -m unittest discover -s /tests -p 'test_*.py' 2>&1 | tee /tmp/test-output.log",
}
PYTEST_MODULES = ("_pytest", "pytest", "py", "pluggy", "iniconfig", "packaging")
"""What pytest needs to import (its own code and its dependencies, pure Python)."""

VENDORED_PYTEST = "<pytest, copied from this environment>"
"""A `CUSTOM_FOLDERS` value: the folder at that path gets pytest (`_vendor_pytest`)."""
RUN_PYTEST_ARGS = """\
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))
import pytest

sys.exit(pytest.main(sys.argv[1:]))
"""
"""A tests' folder's own pytest, run with the arguments it is given."""

HELLO_TEST = """\
from pathlib import Path

assert Path("/app/hello.txt").read_text().strip() == "Hello, world!", "/app/hello.txt holds the wrong text"
"""
DOCKERFILE = "FROM ubuntu:24.04\nWORKDIR /app\n"
LOUD_LINES = 'for i in $(seq 2000); do echo "test_case_$i PASSED ......................................"; done'
"""About 120 KB of test output, as verbose tests print."""


def _task_yaml(instruction: str, timeout: str = "max_test_timeout_sec: 60\n") -> str:
    return f"instruction: |-\n  {instruction}\nparser_name: pytest\n{timeout}"


HELLO_TASK = _task_yaml("Create the file /app/hello.txt holding the line 'Hello, world!'.")
DATA = "".join(f"{i:07d}\n" for i in range(1 << 18))
"""2 MiB of text: a file over the host reader's 1 MiB cap."""


SAME_SHELL_FIXTURE = Path(__file__).resolve().parents[2] / "data" / "terminal" / "same-shell"
_SAME_SHELL_FILES = {
    str(path.relative_to(SAME_SHELL_FIXTURE)): path.read_text()
    for path in sorted(SAME_SHELL_FIXTURE.rglob("*"))
    if path.is_file() and path.name != "README.md"
}
_KNOBS = (
    "# logs what the tests ran with: PYTHONPATH PYTHONOPTIMIZE PYTEST_ADDOPTS PYTEST_PLUGINS BASH_ENV ENV "
    "PROMPT_COMMAND PS4 SHELLOPTS LD_PRELOAD VIRTUAL_ENV TEST_DIR python3\n"
)
SHELL_TEST = """\
import os


def test_build_mode():
    assert os.environ.get("BUILD_MODE") == "release", os.environ.get("BUILD_MODE")


def test_folder():
    assert os.getcwd() == "/app/build", os.getcwd()


if __name__ == "__main__":
    test_build_mode()
    test_folder()
"""
_WORDS = {
    "task.yaml": _task_yaml(
        "Write the words of /app/input.txt, one per line, sorted, without duplicates, to /app/output.txt."
    ),
    "Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\nCOPY input.txt /app/input.txt\n",
    "input.txt": "pear apple fig\napple kiwi\n",
    "tests/reference.py": "import sys\nprint('\\n'.join(sorted(set(open(sys.argv[1]).read().split()))))\n",
}
"""A task whose tests make their expected output with a reference program, often in /tmp
(its instruction names no /tmp path, so nothing the agent leaves there is an answer)."""
CUSTOM_FOLDERS: dict[str, dict[str, str]] = {
    "same-shell": _SAME_SHELL_FILES,
    "same-shell-named": {
        **_SAME_SHELL_FILES,
        "run-tests.sh": "#!/bin/bash\n" + _KNOBS + "[ \"$(greet)\" = 'Hello, world!' ] || exit 1\n"
        'echo "BUILD_MODE=$BUILD_MODE PYTHONPATH=$PYTHONPATH"\npython3 $TEST_DIR/test_outputs.py\n',
        "tests/test_outputs.py": SHELL_TEST,
    },
    "same-shell-named-pytest": {
        **_SAME_SHELL_FILES,
        "Dockerfile": _SAME_SHELL_FILES["Dockerfile"] + f"ENV PYTHONPATH={NOMINAL_TESTS}/vendor\n",
        "run-tests.sh": "#!/bin/bash\n" + _KNOBS + "[ \"$(greet)\" = 'Hello, world!' ] || exit 1\n"
        'python3 -m "py""test" $TEST_DIR/test_outputs.py -rA\n',
        "tests/vendor": VENDORED_PYTEST,
        "tests/test_outputs.py": SHELL_TEST,
    },
    "git-repo": {
        "task.yaml": _task_yaml("In the git repository /app/repo, commit with the message 'Add the release notes'."),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": '#!/bin/bash\ncd /app/repo || exit 1\n[ -z "$(git status --porcelain)" ] || exit 1\n'
        "git switch -q -c verdict-check || exit 1\npython3 $TEST_DIR/test_outputs.py\n",
        "tests/test_outputs.py": "import subprocess\n\nlog = subprocess.run(['git', '-C', '/app/repo', 'log', '-1', "
        "'--format=%s'], capture_output=True, text=True)\nassert log.stdout.strip() == open('/tests/expected.txt')"
        ".read().strip(), log.stdout\n",
        "tests/expected.txt": "Add the release notes\n",
    },
    "model-pickle": {
        "task.yaml": _task_yaml(
            "Pickle the model {'weights': [0.5, 0.25]} to /app/model.pkl and create /app/hello.txt holding "
            "'Hello, world!'."
        ),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_model.py && python3 $TEST_DIR/test_outputs.py\n",
        "tests/test_model.py": "import pickle\n\nassert pickle.load(open('/app/model.pkl', 'rb')) == "
        "{'weights': [0.5, 0.25]}\n",
        "tests/test_outputs.py": HELLO_TEST,
    },
    "loud": {
        "task.yaml": HELLO_TASK,
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": f"#!/bin/bash\n{LOUD_LINES}\ngrep -qx 'Hello, world!' /app/hello.txt\n",
        "tests/expected.txt": "Hello, world!\n",
    },
    "loud-harbor": {
        "instruction.md": "Create the file /app/hello.txt holding the line 'Hello, world!'.\n",
        "task.toml": 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n',
        "environment/Dockerfile": DOCKERFILE,
        "tests/test.sh": f"#!/bin/bash\nmkdir -p /logs/verifier\n{LOUD_LINES}\nif grep -qx 'Hello, world!' "
        "/app/hello.txt; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
    },
    "copy-big": {
        "task.yaml": _task_yaml("Write 'done' to /app/status.txt, leaving /app/data.bin as it is."),
        "Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\nCOPY data.bin /app/data.bin\n",
        "data.bin": DATA,
        "run-tests.sh": '#!/bin/bash\n[ "$(sha256sum < /app/data.bin | cut -d\' \' -f1)" = "$(cat $TEST_DIR/sum.txt)" ] '
        "&& grep -qx done /app/status.txt\n",
        "tests/sum.txt": hashlib.sha256(DATA.encode()).hexdigest() + "\n",
    },
    "copy-link": {
        "task.yaml": HELLO_TASK,
        "Dockerfile": DOCKERFILE,
        "setup.sh": "ln -s hello.txt current\n",
        "run-tests.sh": "#!/bin/bash\n[ -L /app/current ] && grep -qx 'Hello, world!' /app/current\n",
    },
    "many": {
        "task.yaml": _task_yaml("Create 20001 empty files in /app/parts."),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": '#!/bin/bash\n[ "$(ls /app/parts | wc -l)" = 20001 ]\n',
    },
    "deep": {
        "task.yaml": _task_yaml("Create the folder /app/d/d/.../d, 70 levels deep."),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": "#!/bin/bash\n[ -d /app/$(printf 'd/%.0s' $(seq 70)) ]\n",
    },
    "slow": {
        "task.yaml": _task_yaml("Create the file /app/hello.txt holding the line 'Hello, world!'.", timeout=""),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": "#!/bin/bash\nsleep 3\ngrep -qx 'Hello, world!' /app/hello.txt\n",
    },
    "relative-path": {
        "task.yaml": HELLO_TASK,
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py && grep -qx 'Hello, world!' \"$PWD/hello.txt\"\n",
        "tests/test_outputs.py": "from pathlib import Path\n\nassert Path('hello.txt').read_text().strip() == "
        "'Hello, world!'\n",
    },
    "program": {
        "task.yaml": _task_yaml(
            "Write /app/main.py, a program that prints 'Hello, world!' (helper modules of your own are fine)."
        ),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py\n"
        "python3 -c 'import main' | grep -qx 'Hello, world!'\n",
        "tests/test_outputs.py": "import subprocess\n\nfrom check import expected\n\nrun = subprocess.run("
        "['python3', '/app/main.py'], capture_output=True, text=True)\nassert run.stdout == expected(), run\n",
        "tests/check.py": "def expected():\n    return 'Hello, world!\\n'\n",
    },
    "python-c": {
        "task.yaml": HELLO_TASK,
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": '#!/bin/bash\npython3 -c "import json, pathlib; assert json.loads(json.dumps('
        "pathlib.Path('/app/hello.txt').read_text())).strip() == 'Hello, world!'\"\n",
        "tests/expected.txt": "Hello, world!\n",
    },
    "pythonpath-app": {
        "task.yaml": HELLO_TASK,
        "Dockerfile": "FROM python:3.11\nWORKDIR /app\nENV PYTHONPATH=/app\n",
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py\n",
        "tests/test_outputs.py": "import sys\n\nassert '/app' in sys.path, sys.path\n" + HELLO_TEST,
    },
    "model-pickle-helper": {
        "task.yaml": _task_yaml(
            "Pickle the model {'weights': [0.5, 0.25]} to /app/model.pkl and create /app/hello.txt holding "
            "'Hello, world!'."
        ),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_model.py && python3 $TEST_DIR/test_outputs.py\n",
        "tests/test_model.py": "import pickle\n\nassert pickle.load(open('/app/model.pkl', 'rb')) == "
        "{'weights': [0.5, 0.25]}\n",
        "tests/test_outputs.py": "from pathlib import Path\n\nfrom check import expected\n\n"
        "assert Path('/app/hello.txt').read_text().strip() == expected(), 'wrong text'\n",
        "tests/check.py": "def expected():\n    return 'Hello, world!'\n",
    },
    "git-ops": {
        "task.yaml": _task_yaml(
            "In the git repository /app/repo, change greeting.txt to say 'Hello, world!' and "
            "commit that with the message 'Fix the greeting'."
        ),
        "Dockerfile": DOCKERFILE,
        "setup.sh": "mkdir -p repo && cd repo && git init -q && echo Hello > greeting.txt && git add . && "
        "git -c user.name=a -c user.email=a@b commit -qm init\n",
        "run-tests.sh": "#!/bin/bash\ncd /app/repo || exit 1\ngit diff HEAD~1 HEAD -- greeting.txt > /tmp/change.diff\n"
        "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m 'verdict probe'\n"
        "python3 $TEST_DIR/test_outputs.py\n",
        "tests/test_outputs.py": "import subprocess\n\nlog = subprocess.run(['git', '-C', '/app/repo', 'log', '-1', "
        "'--skip=1', '--format=%s'], capture_output=True, text=True).stdout.strip()\nassert log == 'Fix the greeting', "
        "log\nassert open('/app/repo/greeting.txt').read().strip() == 'Hello, world!'\n",
    },
    "pytest-m": {
        "task.yaml": _task_yaml("Write /app/mylib.py defining add(a, b), which returns a + b."),
        "Dockerfile": f"{DOCKERFILE}ENV PYTHONPATH={NOMINAL_TESTS}/vendor\n",
        # `python3 -m pytest` run in the WORKDIR (quoted only to get past the load check: the host has no pytest)
        "run-tests.sh": '#!/bin/bash\npython3 -m "py""test" -p greeting_plugin $TEST_DIR/test_outputs.py -rA\n',
        "tests/vendor": VENDORED_PYTEST,
        "tests/vendor/greeting_plugin.py": "import pytest\n\n\n@pytest.fixture\ndef operands():\n    return 2, 3\n",
        "tests/test_outputs.py": "import sys\n\nsys.path.insert(0, '/app')\n\n\ndef test_add(operands):\n"
        "    from mylib import add\n\n    assert add(*operands) == 5\n",
    },
    "package-tests": {
        "task.yaml": _task_yaml("Create /app/hello.txt holding the line 'Hello, world!'."),
        "Dockerfile": f"{DOCKERFILE}ENV PYTHONPATH={NOMINAL_TESTS}/vendor\n",
        "run-tests.sh": '#!/bin/bash\npython3 -m "py""test" $TEST_DIR/test_outputs.py -rA\n',
        "tests/vendor": VENDORED_PYTEST,
        "tests/__init__.py": "",
        "tests/expected.py": "GREETING = 'Hello, world!'\n",
        "tests/test_outputs.py": "from pathlib import Path\n\nfrom .expected import GREETING\n\n\n"
        "def test_hello():\n    assert Path('/app/hello.txt').read_text().strip() == GREETING\n",
    },
    "path-app": {
        "task.yaml": _task_yaml(
            "Create /app/hello.txt holding 'Hello, world!' and the program "
            "/app/node_modules/.bin/greet, which prints that line."
        ),
        "Dockerfile": f"FROM node:20\nWORKDIR /app\nENV PATH=/app/node_modules/.bin:{SYSTEM_PATH}\n",
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py && [ \"$(greet)\" = 'Hello, world!' ]\n",
        "tests/test_outputs.py": HELLO_TEST,
    },
    "ref-in-tmp": {
        **_WORDS,
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/reference.py /app/input.txt > /tmp/expected_output.txt\n"
        "mkdir -p /dev/shm/grader && cp /tmp/expected_output.txt /dev/shm/grader/expected.txt\n"
        "cmp -s /app/output.txt /tmp/expected_output.txt\n",
    },
    "ref-diff-in-tmp": {  # a folder at the reference's name would make `diff` compare with a file inside it
        **_WORDS,
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/reference.py /app/input.txt > /tmp/expected_output.txt\n"
        "diff /app/output.txt /tmp/expected_output.txt\n",
    },
    "tests-copied-to-tmp": {  # a /tmp/grader already there would make `cp -r` copy into it, not be it
        **_WORDS,
        "run-tests.sh": "#!/bin/bash\ncp -r $TEST_DIR /tmp/grader\ncd /tmp/grader && python3 check.py\n",
        "tests/check.py": "import subprocess\nimport sys\n\nreference = subprocess.run([sys.executable, 'reference.py', "
        "'/app/input.txt'], capture_output=True, text=True, check=True).stdout\n"
        "assert open('/app/output.txt').read() == reference, 'wrong words'\n",
    },
    "pytest-copied-to-tmp": {  # pytest loads a conftest.py beside the test file it runs
        "task.yaml": HELLO_TASK,
        "Dockerfile": f"{DOCKERFILE}ENV PYTHONPATH={NOMINAL_TESTS}/vendor\n",
        "run-tests.sh": "#!/bin/bash\ncp $TEST_DIR/test_outputs.py /tmp/test_outputs.py\n"
        'python3 -m "py""test" /tmp/test_outputs.py -rA\n',
        "tests/vendor": VENDORED_PYTEST,
        "tests/test_outputs.py": "from pathlib import Path\n\n\ndef test_hello():\n"
        "    assert Path('/app/hello.txt').read_text().strip() == 'Hello, world!'\n",
    },
    "hardlink": {
        "task.yaml": _task_yaml("Make /app/current.log a hard link to /app/logs/app.log (the same file, not a copy)."),
        "Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\nCOPY logs /app/logs\n",
        "logs/app.log": "started\n",
        "run-tests.sh": "#!/bin/bash\n[ /app/current.log -ef /app/logs/app.log ] && [ ! -L /app/current.log ]\n",
    },
    "qq-tee": {
        "task.yaml": _task_yaml("Write /app/mylib.py defining add(a, b), which returns a + b."),
        "Dockerfile": DOCKERFILE,
        "run-tests.sh": "#!/bin/bash\ncd $TEST_DIR && python3 run_pytest.py -qq test_outputs.py 2>&1 | "
        "tee /tmp/log.txt\n",
        "tests/run_pytest.py": RUN_PYTEST_ARGS,
        "tests/vendor": VENDORED_PYTEST,
        "tests/test_outputs.py": "import sys\n\nsys.path.insert(0, '/app')\nfrom mylib import add\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n",
    },
    "rA-captured": {
        "task.yaml": _task_yaml("Write a unittest suite in /app/tests that fails on the buggy /app/mylib.py."),
        "Dockerfile": DOCKERFILE,
        "setup.sh": "printf 'def add(a, b):\\n    return a - b\\n' > mylib.py\n",
        "run-tests.sh": "#!/bin/bash\npython3 $TEST_DIR/run_pytest.py $TEST_DIR/test_outputs.py -rA\n",
        "tests/run_pytest.py": RUN_PYTEST_ARGS,
        "tests/vendor": VENDORED_PYTEST,
        "tests/test_outputs.py": "import subprocess\nimport sys\n\n\ndef test_the_agents_suite_catches_the_bug():\n"
        "    run = subprocess.run([sys.executable, '-m', 'unittest', 'discover', '-s', '/app/tests'], "
        "capture_output=True, text=True)\n    print(run.stderr)\n"
        "    assert run.returncode != 0 and 'FAILED' in run.stderr\n",
    },
}
"""Terminal-Bench 1 folders (path: text; run-tests.sh executable) posed by `{"custom": name}`."""

_root = Path(tempfile.mkdtemp(prefix="rlenvs-redteam-terminal-"))
_envs: dict[tuple, TerminalEnv] = {}


@atexit.register
def _close() -> None:
    for env in _envs.values():
        env.close()
    shutil.rmtree(_root, ignore_errors=True)


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def write_task_folder(root: Path, layout: str, runner: str, test: str = "hello-first") -> Path:
    """A hello-world task folder of `layout` whose tests run with `runner`."""
    if layout not in ("terminal-bench", "harbor") or runner not in RUNNERS or test not in TEST_OUTPUTS:
        raise ValueError(f"no such task folder: layout {layout!r}, runner {runner!r}, test {test!r}")
    folder = root / f"{layout}-{runner}-{test}"
    instruction = 'Create the file /app/hello.txt holding the line "Hello, world!".'
    command = RUNNERS[runner]
    if layout == "terminal-bench":
        tests = folder / "tests"
        _write(
            folder / "task.yaml", f"instruction: |-\n  {instruction}\nparser_name: pytest\nmax_test_timeout_sec: 60\n"
        )
        _write(folder / "Dockerfile", "FROM ubuntu:24.04\nWORKDIR /app\n")
        _write(folder / "run-tests.sh", "#!/bin/bash\n" + command.replace("/tests", "$TEST_DIR") + "\n", 0o755)
    else:
        tests = folder / "tests"
        _write(folder / "instruction.md", instruction + "\n")
        _write(folder / "task.toml", 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n')
        _write(folder / "environment" / "Dockerfile", "FROM ubuntu:24.04\nWORKDIR /app\n")
        _write(
            tests / "test.sh",
            f"#!/bin/bash\nmkdir -p /logs/verifier\nif {command}; then\n  echo 1 > /logs/verifier/reward.txt\n"
            "else\n  echo 0 > /logs/verifier/reward.txt\nfi\n",
            0o755,
        )
    _write(tests / "test_outputs.py", TEST_OUTPUTS[test])
    _write(tests / "expected.txt", "Hello, world!\n")
    if runner.startswith("pytest"):
        _write(tests / "run_pytest.py", RUN_PYTEST)
        _vendor_pytest(tests / "vendor")
    return folder


def _vendor_pytest(vendor: Path) -> None:
    """pytest and what it imports, copied from this environment into `vendor` (the host's
    python3 has no pytest), with their metadata (pytest's session header reads the versions)."""
    for name in PYTEST_MODULES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise RuntimeError(f"the pytest runner copies the module {name}, which is not installed here")
        if spec.submodule_search_locations:  # a package: its folder
            shutil.copytree(spec.submodule_search_locations[0], vendor / name)
        else:
            vendor.mkdir(parents=True, exist_ok=True)
            shutil.copy2(spec.origin, vendor / Path(spec.origin).name)
    site = Path(importlib.util.find_spec("pytest").origin).parent.parent
    for metadata in site.glob("*.dist-info"):
        if metadata.name.split("-")[0].lower() in PYTEST_MODULES:
            shutil.copytree(metadata, vendor / metadata.name)


def _env_for(task: Mapping[str, Any]) -> tuple[TerminalEnv, dict[str, Any]]:
    """The env that poses `task` (made once per kind of task, then reused), and reset's options."""
    if "folder" in task:
        key: tuple = ("folder", task["folder"], task.get("runner", "script"), task.get("test", "hello-first"))
        if key not in _envs:
            folder = write_task_folder(_root, *key[1:])
            _envs[key] = TerminalEnv(task_dir=str(folder), max_turns=10)
        return _envs[key], {}
    if "custom" in task:
        key = ("custom", task["custom"], task.get("timeout_s", 10.0))
        if key not in _envs:
            folder = _root / "custom" / task["custom"]
            for path, text in CUSTOM_FOLDERS[task["custom"]].items():
                if text is VENDORED_PYTEST:
                    _vendor_pytest(folder / path)
                else:
                    _write(folder / path, text, 0o755 if path.endswith(".sh") else 0o644)
            _envs[key] = TerminalEnv(task_dir=str(folder), max_turns=10, timeout_s=key[2])
        return _envs[key], {}
    if "task_id" in task:
        level = int(task["task_id"].split("/")[2].removeprefix("L"))
        key = ("procedural", level)
        if key not in _envs:
            _envs[key] = TerminalEnv(level=level, max_turns=10)
        return _envs[key], {"task_id": task["task_id"]}
    raise ValueError(f"a terminal red-team task needs 'folder', 'custom' or 'task_id', got {dict(task)!r}")


def replay(case: Case) -> float:
    env, options = _env_for(case.task)
    env.reset(seed=0, options=options)
    copies = []
    try:
        for reply in case.replies:
            if reply == COPY_ENV:
                env = copy.deepcopy(env)
                copies.append(env)
                continue
            _, reward, terminated, truncated, _ = env.step(reply)
            if terminated or truncated:
                return float(reward)
    finally:
        for made in copies:
            made.close()
    raise ValueError(f"case {case.kind!r}: its replies did not end the episode; end them with `submit`")
