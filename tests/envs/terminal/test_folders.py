"""Terminal-Bench-style task folders (rlenvs.envs.terminal.folders): both layouts read into
tasks, played end to end in the real env (real bubblewrap), and every folder that cannot run
without Docker or network refused at load time with its folder named."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.envs.terminal import folders
from rlenvs.envs.terminal.folders import TaskFolderError, load_task_folders
from rlenvs.envs.terminal.tasks import TESTS_DIR, Entry
from rlenvs.sandbox.shells.verdict import VerdictRun
from tests.support.redteam.terminal import write_task_folder

TEST_OUTPUTS = """\
from pathlib import Path


def test_hello_file():
    hello = Path("/app/hello.txt")
    assert hello.is_file(), "/app/hello.txt does not exist"
    assert hello.read_text().strip() == Path("/tests/expected.txt").read_text().strip()


if __name__ == "__main__":
    test_hello_file()
    print("all tests passed")
"""
INSTRUCTION = 'Create the file /app/hello.txt containing the line "Hello, world!".'
COMPOSE = """\
services:
  client:
    build:
      dockerfile: Dockerfile
    image: ${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}
    container_name: ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME}
    command: [ "sh", "-c", "sleep infinity" ]
    environment:
      - TEST_DIR=${T_BENCH_TEST_DIR}
    volumes:
      - ${T_BENCH_TASK_LOGS_PATH}:${T_BENCH_CONTAINER_LOGS_PATH}
"""


def write(path: Path, text: str, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)
    return path


def terminal_bench_task(root: Path, name: str = "hello-world") -> Path:
    """A Terminal-Bench 1 task folder, as the benchmark's own are laid out."""
    folder = root / name
    write(
        folder / "task.yaml",
        "# Terminal-Bench Canary String, DO NOT REMOVE:\n"
        f"instruction: |-\n  {INSTRUCTION}\nauthor_name: Test Author\ndifficulty: easy\n"
        "category: file-operations\ntags:\n  - file-operations\nparser_name: pytest\n"
        "max_agent_timeout_sec: 120.0\nmax_test_timeout_sec: 30.0\nrun_tests_in_same_shell: false\n",
    )
    write(
        folder / "Dockerfile",
        "FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624\n\nWORKDIR /app\n"
        "# the starting files\nCOPY greeting.txt /app/greeting.txt\nCOPY bin/ bin/\n",
    )
    write(folder / "docker-compose.yaml", COMPOSE)
    write(folder / "greeting.txt", "Hello, world!\n")
    write(
        folder / "bin" / "shout.sh",
        "#!/bin/bash\ntr a-z A-Z < greeting.txt\n",
        mode=0o755,
    )
    write(
        folder / "solution.sh",
        '#!/bin/bash\necho "Hello, world!" > /app/hello.txt\n',
        mode=0o755,
    )
    write(
        folder / "run-tests.sh",
        "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py\n",
        mode=0o755,
    )
    write(folder / "tests" / "test_outputs.py", TEST_OUTPUTS)
    write(folder / "tests" / "expected.txt", "Hello, world!\n")
    return folder


def harbor_task(root: Path, name: str = "hello-harbor") -> Path:
    """A Terminal-Bench 2 (Harbor) task folder, with a solution of two files."""
    folder = root / name
    write(folder / "instruction.md", f"# Hello\n\n{INSTRUCTION}\n")
    write(
        folder / "task.toml",
        'version = "1.0"\n\n[metadata]\nauthor_name = "Test Author"\ndifficulty = "easy"\n'
        'category = "file-operations"\ntags = ["trivial"]\n\n[verifier]\ntimeout_sec = 60.0\n\n'
        "[agent]\ntimeout_sec = 120.0\n\n[environment]\nbuild_timeout_sec = 600.0\ncpus = 1\nmemory_mb = 2048\n",
    )
    write(
        folder / "environment" / "Dockerfile",
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY greeting.txt ./\n",
    )
    write(folder / "environment" / "greeting.txt", "Hello, world!\n")
    write(
        folder / "solution" / "solve.sh",
        "#!/bin/bash\npython3 /solution/write_hello.py\n",
        mode=0o755,
    )
    write(
        folder / "solution" / "write_hello.py",
        'from pathlib import Path\nPath("/app/hello.txt").write_text(Path("/app/greeting.txt").read_text())\n',
    )
    write(
        folder / "tests" / "test.sh",
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "if python3 /tests/test_outputs.py; then\n  echo 1 > /logs/verifier/reward.txt\n"
        "else\n  echo 0 > /logs/verifier/reward.txt\nfi\n",
        mode=0o755,
    )
    write(folder / "tests" / "test_outputs.py", TEST_OUTPUTS)
    write(folder / "tests" / "expected.txt", "Hello, world!\n")
    return folder


def one_task(folder: Path):
    (task,) = load_task_folders(folder)
    return task


def refused(folder: Path) -> str:
    with pytest.raises(TaskFolderError) as caught:
        load_task_folders(folder)
    assert str(folder) in str(caught.value)
    return str(caught.value)


# --- reading the layouts --------------------------------------------------------------------


def test_a_terminal_bench_folder_becomes_a_task(tmp_path):
    task = one_task(terminal_bench_task(tmp_path))
    assert (task.task_id, task.prompt, task.workdir, task.expect) == (
        "folder/hello-world",
        INSTRUCTION,
        "/app",
        (),
    )
    files = {entry.path: entry for entry in task.files}
    assert sorted(files) == ["bin", "bin/shout.sh", "greeting.txt"]
    assert files["bin/shout.sh"].mode == 0o755 and files["greeting.txt"].mode == 0o644 and files["bin"].is_dir
    assert files["greeting.txt"].data == b"Hello, world!\n"
    assert task.solution == ('#!/bin/bash\necho "Hello, world!" > /app/hello.txt\n',)
    tests = {entry.path: entry for entry in task.tests}
    assert sorted(tests) == ["expected.txt", "run-tests.sh", "test_outputs.py"]
    assert f'Path("{TESTS_DIR}/expected.txt")' in tests["test_outputs.py"].data.decode()  # /tests is not in the sandbox
    assert tests["run-tests.sh"].mode == 0o755
    assert task.test_command == f"bash {TESTS_DIR}/run-tests.sh"
    assert task.test_environment == (("TEST_DIR", TESTS_DIR),)
    assert task.timeout_s is None and task.setup_script == "" and task.environment == ()
    assert task.test_timeout_s == 30.0  # max_test_timeout_sec


def test_a_harbor_folder_becomes_a_task(tmp_path):
    task = one_task(harbor_task(tmp_path))
    assert (task.task_id, task.workdir) == ("folder/hello-harbor", "/app")
    assert task.prompt == f"# Hello\n\n{INSTRUCTION}"
    assert [entry.path for entry in task.files] == ["greeting.txt"]
    assert sorted(entry.path for entry in task.tests) == [
        ".rlenvs-logs/verifier",
        "expected.txt",
        "test.sh",
        "test_outputs.py",
    ]
    test_sh = next(entry for entry in task.tests if entry.path == "test.sh").data.decode()
    assert (
        f"python3 {TESTS_DIR}/test_outputs.py" in test_sh and f"{TESTS_DIR}/.rlenvs-logs/verifier/reward.txt" in test_sh
    )
    (solution,) = task.solution  # solve.sh and the file it runs, written to the place solve.sh reads it from
    assert "/tmp/rlenvs-solution/solve.sh" in solution and "base64 -d" in solution
    assert task.test_timeout_s == 60.0  # [verifier].timeout_sec


def test_a_folder_of_task_folders_in_name_order_skipping_what_is_no_task(tmp_path):
    harbor_task(tmp_path, "b-harbor")
    terminal_bench_task(tmp_path, "a-bench")
    write(tmp_path / "notes" / "README.md", "not a task\n")
    terminal_bench_task(tmp_path / ".hidden", "c")
    assert [task.task_id for task in load_task_folders(tmp_path)] == [
        "folder/a-bench",
        "folder/b-harbor",
    ]


def test_setup_sh_dockerignore_and_copying_the_whole_context(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(folder / "Dockerfile", "FROM ubuntu:24.04\nWORKDIR /app\nCOPY --chmod=600 . .\n")
    write(
        folder / ".dockerignore",
        "tests\nsolution.sh\nrun-tests.sh\ntask.yaml\ndocker-compose.yaml\nDockerfile\n.dockerignore\n",
    )
    write(folder / "setup.sh", "mkdir -p logs && echo started > logs/app.log\n")
    task = one_task(folder)
    assert sorted(entry.path for entry in task.files) == [
        "bin",
        "bin/shout.sh",
        "greeting.txt",
        "setup.sh",
    ]
    assert {entry.mode for entry in task.files} == {0o600}
    assert task.setup_script == "mkdir -p logs && echo started > logs/app.log\n"


def test_a_solution_yaml_is_one_command_per_turn(tmp_path):
    folder = terminal_bench_task(tmp_path)
    (folder / "solution.sh").unlink()
    write(
        folder / "solution.yaml",
        "- command: cd /app\n  min_timeout_sec: 0.1\n- command: echo 'Hello, world!' > hello.txt\n",
    )
    assert one_task(folder).solution == ("cd /app", "echo 'Hello, world!' > hello.txt")


def test_dockerfile_env_both_forms_each_seeing_the_envs_before_it(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "Dockerfile",
        "FROM ubuntu:24.04\n"
        'ENV APP_HOME=/app GREETING="Hello, world!"\n'
        "ENV DATA_DIR $APP_HOME/data\n"  # the old form: the rest of the line is the value
        "ENV MOTTO='keep $HOME as is' QUOTED=\"${GREETING} again\" PRICE=\\$5 \\\n"
        "    EMPTY=\n"
        "ENV APP_HOME=/srv SEEN=$APP_HOME\n"  # as in Docker: $APP_HOME is the earlier one
        "WORKDIR $APP_HOME\nWORKDIR /app\nCOPY greeting.txt ${DATA_DIR}/\n",
    )
    write(folder / "setup.sh", "mkdir -p logs\n")
    task = one_task(folder)
    assert task.environment == (
        ("APP_HOME", "/srv"),
        ("GREETING", "Hello, world!"),
        ("DATA_DIR", "/app/data"),
        ("MOTTO", "keep $HOME as is"),
        ("QUOTED", "Hello, world! again"),
        ("PRICE", "$5"),
        ("EMPTY", ""),
        ("SEEN", "/app"),
    )
    assert [entry.path for entry in task.files] == ["data/greeting.txt"]
    # the set-up runs in a fresh shell: it gets the variables as exports; the tests as their variables
    exports = (
        "export APP_HOME=/srv\nexport GREETING='Hello, world!'\nexport DATA_DIR=/app/data\n"
        "export MOTTO='keep $HOME as is'\nexport QUOTED='Hello, world! again'\nexport PRICE='$5'\n"
        "export EMPTY=''\nexport SEEN=/app\n"
    )
    assert task.setup_script == exports + "mkdir -p logs\n"
    assert task.test_command == f"bash {TESTS_DIR}/run-tests.sh"
    assert task.test_environment == (*task.environment, ("TEST_DIR", TESTS_DIR))


def test_compose_and_harbor_environments_set_variables_over_the_dockerfiles(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(folder / "Dockerfile", "FROM ubuntu\nENV MODE=dockerfile KEEP=1\n")
    listed = "      - TEST_DIR=${T_BENCH_TEST_DIR}\n"
    write(
        folder / "docker-compose.yaml",
        COMPOSE.replace(listed, listed + "      - MODE=compose\n      - COST=$$5\n"),
    )
    assert one_task(folder).environment == (
        ("MODE", "compose"),
        ("KEEP", "1"),
        ("COST", "$5"),
    )
    write(
        folder / "docker-compose.yaml",
        COMPOSE.replace(
            "    environment:\n" + listed,
            "    environment:\n      MODE: compose\n      DEBUG: true\n      PORT: 8080\n",
        ),
    )
    assert one_task(folder).environment == (
        ("MODE", "compose"),
        ("KEEP", "1"),
        ("DEBUG", "true"),
        ("PORT", "8080"),
    )
    folder = harbor_task(tmp_path)
    write(folder / "environment" / "Dockerfile", "FROM python:3.12-slim\nENV MODE=dockerfile\n")
    toml = (folder / "task.toml").read_text()
    write(folder / "task.toml", toml + 'env = { MODE = "harbor", LEVEL = "3" }\n')
    task = one_task(folder)
    assert task.environment == (("MODE", "harbor"), ("LEVEL", "3"))
    assert task.test_environment == (("MODE", "harbor"), ("LEVEL", "3"), ("TEST_DIR", TESTS_DIR))
    assert task.test_command.startswith(f"bash {TESTS_DIR}/test.sh\n")


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ("      - API_KEY=${OPENAI_API_KEY}\n", "takes API_KEY from the host's environment"),
        ("      - HOME_DIR=$HOME\n", "takes HOME_DIR from the host's environment ('$HOME')"),
        ("      - API_KEY\n", "takes API_KEY from the host's environment (no value)"),
        ("      - 2FA=on\n", "sets '2FA', which is not a shell variable name"),
    ],
)
def test_compose_variables_from_the_host_are_refused(tmp_path, environment, expected):
    folder = terminal_bench_task(tmp_path)
    listed = "      - TEST_DIR=${T_BENCH_TEST_DIR}\n"
    write(folder / "docker-compose.yaml", COMPOSE.replace(listed, listed + environment))
    message = refused(folder)
    assert "docker-compose.yaml's environment" in message and expected in message


def test_a_bad_test_timeout_is_refused(tmp_path):
    folder = terminal_bench_task(tmp_path)
    meta = (folder / "task.yaml").read_text()
    write(folder / "task.yaml", meta.replace("max_test_timeout_sec: 30.0", "max_test_timeout_sec: -1"))
    assert "max_test_timeout_sec must be a positive number of seconds, got -1" in refused(folder)


# --- in the env ---------------------------------------------------------------------------------------


@pytest.fixture(params=["terminal-bench", "harbor"])
def task_folder(request, tmp_path):
    return (terminal_bench_task if request.param == "terminal-bench" else harbor_task)(tmp_path)


@pytest.fixture
def env(task_folder):
    made = gym.make("rlenvs/Terminal-v2", task_dir=str(task_folder), max_turns=5)
    yield made.unwrapped
    made.close()


@pytest.mark.sandbox
def test_the_reference_solution_scores_one(env):
    env.reset(seed=0)
    for _ in range(env.max_turns):
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            break
    assert (reward, info["stop_reason"], info["correct"]) == (1.0, "submitted", True), info["failed_checks"]
    assert info["reward_breakdown"] == {"the task's tests pass": True}
    env.reset(seed=0)  # the tests of the last episode are gone with it
    obs, *_ = env.step(f"ls {TESTS_DIR} /tmp/rlenvs-solution; ls -A /app")
    assert "No such file or directory" in obs and "hello.txt" not in obs


@pytest.mark.sandbox
def test_submitting_at_once_scores_zero_and_says_why(env):
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("submit")
    assert (reward, terminated, info["correct"]) == (0.0, True, False)
    (failure,) = info["failed_checks"]
    assert failure.startswith("the task's tests failed") and "/app/hello.txt does not exist" in failure


@pytest.mark.sandbox
def test_the_agent_starts_in_the_workdir_with_the_copied_files_and_no_tests(env):
    env.reset(seed=0)
    obs, *_ = env.step("pwd; cat greeting.txt")
    assert obs == "/app\nHello, world!\n\n[exit code 0]"
    obs, *_ = env.step(f"ls {TESTS_DIR}")
    assert "No such file or directory" in obs and obs.endswith("[exit code 2]")
    obs, *_ = env.step("ls -A /app /tmp; ls /tests /solution")
    assert "test_outputs" not in obs and "solve" not in obs and "expected" not in obs


@pytest.mark.sandbox
def test_the_copied_files_keep_their_modes(tmp_path):
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(terminal_bench_task(tmp_path))).unwrapped
    try:
        env.reset(seed=0)
        assert env.step("stat -c '%a %n' bin/shout.sh greeting.txt; bin/shout.sh")[0] == (
            "755 bin/shout.sh\n644 greeting.txt\nHELLO, WORLD!\n\n[exit code 0]"
        )
    finally:
        env.close()


@pytest.mark.sandbox
def test_a_reward_the_agent_planted_does_not_count(tmp_path):
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(harbor_task(tmp_path))).unwrapped
    try:
        env.reset(seed=0)
        logs = f"{TESTS_DIR}/.rlenvs-logs/verifier"
        env.step(f"mkdir -p {logs} && echo 1 > {logs}/reward.txt && chmod 444 {logs}/reward.txt && chmod 555 {logs}")
        _, reward, *_, info = env.step("submit")
        assert reward == 0.0 and "the tests gave the reward 0" in info["failed_checks"][0]
    finally:
        env.close()


@pytest.mark.sandbox
def test_the_tests_start_from_nothing_the_agent_wrote(tmp_path):
    """The WORKDIR to start in (as Terminal-Bench starts them), a fresh HOME, of the agent's /tmp
    only what the instruction names (here nothing) and /dev/shm emptied, exactly
    the verdict's variables, a shell with no function or alias of the agent's (the attacks
    each vector allows are in tests/data/redteam/terminal.jsonl)."""
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "run-tests.sh",
        '#!/bin/bash\necho "cwd=$PWD"; ls -A; echo "home=$HOME"; ls -A "$HOME" /dev/shm; ls -A /tmp; ls $TEST_DIR\n'
        "env | sort | grep -v '^GIT_CONFIG_[KV]'; alias; declare -F; exit 1\n",  # git's: tests/sandbox/shells/test_verdict.py
    )
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(folder)).unwrapped
    try:
        env.reset(seed=0)
        env.step("touch /tmp/junk /dev/shm/junk ~/.bashrc; export FOO=1; f() { :; }; alias ll=ls; cd /tmp")
        _, reward, *_, info = env.step("submit")
    finally:
        env.close()
    report = info["failed_checks"][0].removeprefix("the task's tests failed (error): ")
    (tests,) = set(re.findall(r"/dev/shm/rlenvs-verdict/tests_[0-9a-f]{16}", report))
    assert reward == 0.0 and report.replace(tests, "TESTS") == (
        "cwd=/app\nbin\ngreeting.txt\nhome=/dev/shm/rlenvs-verdict/home\n/dev/shm:\nrlenvs-verdict\n\n"
        "/dev/shm/rlenvs-verdict/home:\nexpected.txt\nrun-tests.sh\ntest_outputs.py\n"
        "GIT_ATTR_NOSYSTEM=1\nGIT_CONFIG_COUNT=11\nGIT_CONFIG_GLOBAL=/dev/null\nGIT_CONFIG_NOSYSTEM=1\n"
        "HOME=/dev/shm/rlenvs-verdict/home\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=/app\n"
        "PYTEST_ADDOPTS=-p no:cacheprovider --rootdir=TESTS -c /dev/shm/rlenvs-verdict/pytest.ini\n"
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\nPYTHONDONTWRITEBYTECODE=1\nPYTHONNOUSERSITE=1\n"
        "PYTHONPATH=/dev/shm/rlenvs-verdict/site\nPYTHONSAFEPATH=1\nRLENVS_AGENT_FOLDERS=/app:/tmp:/dev/shm\n"
        "RLENVS_LATE_PYTHONPATH=\nRLENVS_TEST_IMPORTS=importlib,os,pathlib,sys\n"
        "RLENVS_VERDICT_FOLDERS=/dev/shm/rlenvs-verdict:TESTS/.rlenvs-logs:/dev/shm/rlenvs-verdict/tmp\nSHLVL=1\n"
        "TEST_DIR=TESTS\nTMPDIR=/dev/shm/rlenvs-verdict/tmp\n_=/usr/bin/env\n"
    )


@pytest.mark.sandbox
def test_pytest_runs_with_the_tests_own_config(tmp_path):
    """The task's pytest.ini is the config (`-c`): it names the test functions, so without it
    pytest would collect nothing and fail."""
    folder = write_task_folder(tmp_path, "terminal-bench", "pytest")
    write(folder / "tests" / "pytest.ini", "[pytest]\npython_functions = check_*\n")
    write(
        folder / "tests" / "test_outputs.py",
        'from pathlib import Path\n\n\ndef check_hello():\n    assert Path("/app/hello.txt").read_text() == '
        'Path("/tests/expected.txt").read_text()\n',
    )
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(folder)).unwrapped
    try:
        env.reset(seed=0)
        assert env.step("submit")[1] == 0.0
        env.reset(seed=0)
        env.step("echo 'Hello, world!' > /app/hello.txt")
        _, reward, *_, info = env.step("submit")
        assert reward == 1.0, info["failed_checks"]
    finally:
        env.close()


def test_the_pytest_config_is_the_first_of_pytests_own_order_that_configures_pytest():
    run = VerdictRun("0")

    def config(files: dict[str, str]) -> str:
        return run.pytest_config(run.files(Entry(path, text) for path, text in files.items()))

    assert config({"test_a.py": ""}) == "/dev/shm/rlenvs-verdict/pytest.ini"
    assert (
        config({"pyproject.toml": "[project]\n", "tox.ini": "[pytest]\n"}) == "/dev/shm/rlenvs-verdict/tests_0/tox.ini"
    )
    assert config({"setup.cfg": "[tool:pytest]\n", "pyproject.toml": "[tool.pytest.ini_options]\n"}) == (
        "/dev/shm/rlenvs-verdict/tests_0/pyproject.toml"
    )
    assert config({"pytest.ini": "", "tox.ini": "[pytest]\n", "sub/pytest.ini": ""}) == (
        "/dev/shm/rlenvs-verdict/tests_0/pytest.ini"
    )


@pytest.mark.sandbox
def test_a_harbor_test_script_that_writes_no_reward_fails(tmp_path):
    folder = harbor_task(tmp_path)
    write(folder / "tests" / "test.sh", "#!/bin/bash\npython3 /tests/test_outputs.py\n")
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(folder)).unwrapped
    try:
        env.reset(seed=0)
        env.step("echo 'Hello, world!' > hello.txt")
        _, reward, *_, info = env.step("submit")
        assert reward == 0.0 and "the tests wrote no reward" in info["failed_checks"][0]
    finally:
        env.close()


@pytest.mark.sandbox
def test_the_agent_the_set_up_and_the_tests_see_the_dockerfile_env(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "Dockerfile",
        'FROM ubuntu\nWORKDIR /app\nENV OUT_FILE=/app/hello.txt MESSAGE="Hello, world!"\n',
    )
    write(folder / "setup.sh", 'echo "$MESSAGE" > from-setup.txt\n')
    # the tests rely on the variables: without them they fail
    write(
        folder / "run-tests.sh",
        '#!/bin/bash\ntest -n "$MESSAGE" && test "$(cat "$OUT_FILE")" = "$MESSAGE"\n',
    )
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(folder)).unwrapped
    try:
        env.reset(seed=0)
        obs, *_ = env.step("echo $OUT_FILE; cat from-setup.txt")
        assert obs == "/app/hello.txt\nHello, world!\n\n[exit code 0]"
        env.step('echo "$MESSAGE" > "$OUT_FILE"')
        _, reward, *_, info = env.step("submit")
        assert reward == 1.0, info["failed_checks"]
        env.reset(seed=0)
        env.step('echo "Goodbye" > "$OUT_FILE"')
        assert env.step("submit")[1] == 0.0
    finally:
        env.close()


@pytest.mark.sandbox
def test_the_tests_run_under_the_folders_test_timeout(tmp_path):
    folder = terminal_bench_task(tmp_path)  # max_test_timeout_sec: 30.0
    write(
        folder / "run-tests.sh",
        "#!/bin/bash\nsleep 1.5\npython3 $TEST_DIR/test_outputs.py\n",
    )
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(folder), timeout_s=1.0).unwrapped
    try:
        env.reset(seed=0)
        env.step("echo 'Hello, world!' > hello.txt")
        _, reward, *_, info = env.step("submit")  # 1.5 s: over the commands' 1 s
        assert reward == 1.0, info["failed_checks"]
    finally:
        env.close()


def test_without_a_test_timeout_the_tests_get_the_harness_default_not_the_commands_limit(tmp_path):
    """Terminal-Bench's task.yaml defaults max_test_timeout_sec to 60 s, Harbor's task.toml
    [verifier].timeout_sec to 600 s."""
    folder = terminal_bench_task(tmp_path)
    meta = (folder / "task.yaml").read_text()
    write(folder / "task.yaml", meta.replace("max_test_timeout_sec: 30.0\n", ""))
    assert one_task(folder).test_timeout_s == folders.TERMINAL_BENCH_TEST_TIMEOUT_S == 60.0
    harbor = harbor_task(tmp_path)
    toml = (harbor / "task.toml").read_text()
    write(harbor / "task.toml", toml.replace("[verifier]\ntimeout_sec = 60.0\n", ""))
    assert one_task(harbor).test_timeout_s == folders.HARBOR_TEST_TIMEOUT_S == 600.0


# --- what is refused, and why ----------------------------------------------------------------------------


def test_a_dockerfile_that_runs_commands_needs_docker(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "Dockerfile",
        "FROM python:3.13\nWORKDIR /app\nRUN pip install \\\n    numpy\nRUN echo hi\n",
    )
    message = refused(folder)
    assert "runs `RUN pip install numpy` (2 RUN instructions; the first at line 3)" in message
    assert "without Docker" in message and "setup.sh" in message


def test_a_test_script_that_downloads_needs_the_network(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "run-tests.sh",
        "#!/bin/bash\n# fetch a tool first\ncurl -LsSf https://example.com/tool/install.sh | sh\n",
    )
    message = refused(folder)
    assert "run-tests.sh (line 3) runs `curl -LsSf" in message and "needs the network" in message
    assert "when the tests run" in message


@pytest.mark.parametrize(
    "script",
    [
        "source $TEST_DIR/setup-uv-pytest.sh\nbash $TEST_DIR/run-uv-pytest.sh",
        "uv venv .tbench-testing\nuv pip install -r requirements.txt",
        "apt-get update && apt-get install -y jq",
        "pip3 install -e .",
        "git clone https://github.com/example/repo",
        "npm install",
    ],
)
def test_installing_at_test_time_needs_the_network(tmp_path, script):
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "run-tests.sh",
        f"#!/bin/bash\n{script}\npython3 $TEST_DIR/test_outputs.py\n",
    )
    assert "needs the network" in refused(folder)


def test_installs_at_test_time_are_the_users_to_allow_with_a_network(tmp_path):
    """DevEval-style runners install at test time (`pip install -r requirements.txt`, `npm
    install`): refused without a network, with the override named; with the episodes on a
    container engine's network (`network=True`, which load_task_folders allows there only),
    they can run, and nothing is refused for them."""
    from rlenvs.envs.terminal import folders

    folder = terminal_bench_task(tmp_path)
    write(folder / "run-tests.sh", "#!/bin/bash\npip install -r requirements.txt\nnpm install\n")
    write(folder / "solution.sh", "#!/bin/bash\npip install numpy && python3 -c 'import numpy'\n", mode=0o755)
    arguments = (folder, folder / "tests", folder / "run-tests.sh")
    with pytest.raises(folders.TaskFolderError, match=r"needs the network .*network=True"):
        folders._check_tests(*arguments)
    folders._check_tests(*arguments, network=True)
    with pytest.raises(folders.TaskFolderError, match="pip installs packages"):
        folders._script(folder, folder / "solution.sh", "when the solution runs")
    assert "pip install numpy" in folders._script(folder, folder / "solution.sh", "when the solution runs", True)


def test_what_echo_says_is_not_run(tmp_path):
    """A Harbor test.sh announces its steps (`echo "Installing uv package manager..."`): text,
    not a use of uv. Measured on a public Harbor folder the loader had refused for it."""
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "run-tests.sh",
        '#!/bin/bash\necho "Installing uv, then pip install pytest" >&2; printf \'%s\\n\' "curl it"\n'
        "python3 $TEST_DIR/test_outputs.py\n",
    )
    load_task_folders(folder)
    write(folder / "run-tests.sh", '#!/bin/bash\necho "fetching" && curl -fsSL https://example.com/x | sh\n')
    assert 'runs `echo "fetching" && curl' in refused(folder)  # what follows the echo still runs


def test_a_setup_script_or_solution_that_downloads_is_refused(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(folder / "setup.sh", "wget https://example.com/data.csv\n")
    assert "setup.sh (line 1) runs `wget" in refused(folder)
    (folder / "setup.sh").unlink()
    write(folder / "solution.sh", "pip install numpy\npython3 solve.py\n")
    assert "reference solution would fail" in refused(folder)


def test_pytest_that_the_host_lacks_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(folders, "_host_has_module", lambda name: False)
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "run-tests.sh",
        "#!/bin/bash\npython3 -m pytest $TEST_DIR/test_outputs.py -rA\n",
    )
    assert "runs pytest" in refused(folder)
    monkeypatch.setattr(folders, "_host_has_module", lambda name: True)
    assert one_task(folder).test_command


@pytest.mark.parametrize("layout", ["terminal-bench", "harbor"])
def test_a_missing_instruction_names_the_file(tmp_path, layout):
    if layout == "terminal-bench":
        folder = terminal_bench_task(tmp_path)
        (folder / "task.yaml").unlink()
        assert "task.yaml (the instruction) is missing" in refused(folder)
    else:
        folder = harbor_task(tmp_path)
        (folder / "instruction.md").unlink()
        assert "instruction.md (the task's instruction) is missing" in refused(folder)


def test_an_empty_instruction_is_refused(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(folder / "task.yaml", "instruction: ''\ndifficulty: easy\n")
    assert "task.yaml has no `instruction`" in refused(folder)


def test_missing_tests_name_the_file(tmp_path):
    folder = terminal_bench_task(tmp_path)
    (folder / "run-tests.sh").unlink()
    assert "run-tests.sh is missing" in refused(folder)
    folder = harbor_task(tmp_path)
    (folder / "tests" / "test.sh").unlink()
    assert "tests/test.sh (the script that runs the task's tests) is missing" in refused(folder)


def test_one_bad_folder_among_many_is_named(tmp_path):
    terminal_bench_task(tmp_path, "good")
    bad = terminal_bench_task(tmp_path, "bad")
    write(bad / "Dockerfile", "FROM ubuntu\nRUN apt-get install -y jq\n")
    with pytest.raises(
        TaskFolderError,
        match=f"task folder {bad}: its Dockerfile runs `RUN apt-get install -y jq`",
    ):
        load_task_folders(tmp_path)


@pytest.mark.parametrize(
    ("dockerfile", "expected"),
    [
        (
            "FROM ubuntu\nENV PATH=/app/bin:$PATH\n",
            "(line 2: `ENV PATH=/app/bin:$PATH`) refers to $PATH, which no earlier ENV sets",
        ),
        (
            "FROM ubuntu\nENV A=1\nENV B=${A:-2}\n",
            "uses `${A:-2}`, which rlenvs does not expand",
        ),
        ("FROM ubuntu\nENV UID=1000\n", "sets UID, which bash keeps read-only"),
        ("FROM ubuntu\nENV my-name=x\n", "sets 'my-name', which is not a shell variable name"),
        ("FROM ubuntu\nENV A='open\n", "has an unmatched '"),
        (
            "FROM ubuntu\nWORKDIR /app\nCOPY greeting.txt /etc/greeting.txt\n",
            "outside the workspace /app",
        ),
        ("FROM golang AS build\nFROM ubuntu\n", "several build stages"),
        ('FROM ubuntu\nENTRYPOINT ["/start.sh"]\n', "keeps no process running"),
        ("FROM ubuntu\nUSER nobody\n", "the sandbox has one user"),
        (
            "FROM ubuntu\nADD https://example.com/x.tar.gz /app/\n",
            "the sandbox has no network",
        ),
        (
            "FROM ubuntu\nCOPY missing.txt /app/\n",
            "copies missing.txt, which is not in its build context",
        ),
        ("FROM ubuntu\nWORKDIR /tmp/work\n", "WORKDIR cannot be the workspace"),
    ],
)
def test_dockerfiles_that_need_docker_are_refused(tmp_path, dockerfile, expected):
    folder = terminal_bench_task(tmp_path)
    write(folder / "Dockerfile", dockerfile)
    assert expected in refused(folder)


def test_a_compose_file_with_more_than_one_service_is_refused(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(folder / "docker-compose.yaml", COMPOSE + "  db:\n    image: postgres:16\n")
    assert "runs 2 services (client, db)" in refused(folder)


def test_harbor_settings_that_need_docker_are_refused(tmp_path):
    folder = harbor_task(tmp_path)
    toml = (folder / "task.toml").read_text()
    write(folder / "task.toml", toml + 'docker_image = "ghcr.io/example/task:1"\n')
    one_task(folder)  # built from environment/Dockerfile instead, as Terminal-Bench 2 ships it
    (folder / "environment" / "Dockerfile").unlink()
    assert "runs the prebuilt image 'ghcr.io/example/task:1', and environment/ holds no Dockerfile" in refused(folder)
    harbor_task(tmp_path)
    write(
        folder / "task.toml",
        toml.replace("[verifier]\n", '[verifier]\nenvironment_mode = "separate"\n'),
    )
    assert "separate verifier container" in refused(folder)
    write(
        folder / "task.toml",
        toml.replace("[verifier]\n", '[verifier]\nenv = { API_KEY = "${OPENAI_API_KEY}" }\n'),
    )
    assert "from the host's environment" in refused(folder)
    write(
        folder / "task.toml",
        toml + 'env = { DB_URL = "${DATABASE_URL:-sqlite://}" }\n',
    )
    assert "[environment].env takes DB_URL from the host's environment" in refused(folder)


def test_a_path_that_is_not_a_task_folder(tmp_path):
    with pytest.raises(TaskFolderError, match="holds no task folders"):
        load_task_folders(tmp_path)
    with pytest.raises(TaskFolderError, match="does not exist"):
        load_task_folders(tmp_path / "nowhere")
    write(tmp_path / "file.txt", "x")
    with pytest.raises(TaskFolderError, match="is not a folder"):
        load_task_folders(tmp_path / "file.txt")
    assert issubclass(TaskFolderError, ValueError)


def test_a_symlink_in_the_copied_files_is_refused(tmp_path):
    folder = terminal_bench_task(tmp_path)
    os.symlink("shout.sh", folder / "bin" / "yell.sh")
    assert "bin/yell.sh is a symbolic link" in refused(folder)


def test_without_pyyaml_a_terminal_bench_folder_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now raises ImportError
    assert "needs PyYAML, which is not installed: pip install pyyaml" in refused(terminal_bench_task(tmp_path))
    assert one_task(harbor_task(tmp_path)).task_id == "folder/hello-harbor"  # TOML is in the standard library
