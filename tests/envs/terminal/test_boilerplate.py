"""Terminal-Bench 1's standard run-tests.sh is recognised and replaced by an offline runner;
anything else that differs from it by a line is not (the loader's network check then decides)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401  (registers the env ids)
from rlenvs.envs.terminal.boilerplate import harbor_offline_runner, offline_runner
from rlenvs.envs.terminal.folders import TaskFolderError, load_task_folders
from tests.conftest import SHARED_DATA

# Terminal-Bench 1's runner as its tasks ship it (Apache-2.0, laude-institute/terminal-bench).
STANDARD = """#!/bin/bash

# This boilerplate script installs uv (to manage Python) and runs pytest.

# Install curl
apt-get update
apt-get install -y curl

# Install uv
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh

source $HOME/.local/bin/env

# Check if we're in a valid working directory
if [ "$PWD" = "/" ]; then
    echo "Error: No working directory set. Please set a WORKDIR in your Dockerfile before running this script."
    exit 1
fi

uv init
uv add pytest==8.4.1

uv run pytest $TEST_DIR/test_outputs.py -rA"""


def test_the_standard_runner_becomes_pytest_from_the_image() -> None:
    runner = offline_runner(STANDARD)
    assert runner is not None and runner.packages == ()
    commands = [line.strip() for line in runner.script.splitlines() if not line.lstrip().startswith("#")]
    assert commands[-1] == "python3 -m pytest $TEST_DIR/test_outputs.py -rA"
    assert not any(word in line for line in commands if not line.startswith(":") for word in ("curl", "apt-get", "uv "))
    assert 'if [ "$PWD" = "/" ]; then' in commands  # the working-folder check stays


def test_other_versions_and_extra_packages_are_the_boilerplate_too() -> None:
    text = STANDARD.replace("0.7.13", "0.8.2").replace("pytest==8.4.1", "pytest==8.3.0 numpy==2.1 scikit-learn")
    runner = offline_runner(text.replace("-rA", "-rA -k smoke"))
    assert runner is not None
    assert runner.packages == ("numpy", "scikit_learn")
    assert runner.requirements == ("pytest==8.3.0", "numpy==2.1", "scikit-learn")
    assert runner.script.rstrip().endswith("python3 -m pytest $TEST_DIR/test_outputs.py -rA -k smoke")


@pytest.mark.parametrize(
    ("change", "kept"),
    [
        (("uv init\n", "uv init\ncurl -s https://example.com/x.sh | sh\n"), "curl -s https://example.com/x.sh | sh"),
        (("apt-get install -y curl", "apt-get install -y curl wget"), "apt-get install -y curl wget"),
        (
            ("https://astral.sh/uv", "https://example.com/uv"),
            "curl -LsSf https://example.com/uv/0.7.13/install.sh | sh",
        ),
        (("uv add pytest==8.4.1", "uv add -r /tmp/req.txt"), "uv add -r /tmp/req.txt"),
        (("uv add pytest==8.4.1", "pip install git+https://example.com/x"), "pip install git+https://example.com/x"),
        (
            ("uv add pytest==8.4.1", "uv pip install --index-url https://x.org p"),
            "uv pip install --index-url https://x.org p",
        ),
    ],
    ids=["extra-command", "extra-apt-package", "other-host", "requirements-file", "url", "other-index"],
)
def test_a_step_that_fetches_anything_else_stays_for_the_network_check(change, kept) -> None:
    """Only steps that fetch test tools or packages by name are taken out; the rest stays
    as it is, where the loader's network check refuses it by line."""
    old, new = change
    assert old in STANDARD
    runner = offline_runner(STANDARD.replace(old, new))
    assert runner is not None and kept in runner.script.splitlines()


def test_steps_are_read_by_what_they_do_in_any_order_and_spelling() -> None:
    script = (
        "#!/bin/bash\nset -e\nif ! command -v curl >/dev/null 2>&1; then\n  apt-get update -qq\n"
        "  apt-get install -y -qq curl python3-venv\nfi\npython3 -m pip install --no-cache-dir uv==0.7.13\n"
        'export PATH="$HOME/.local/bin:$PATH"\nuv venv .tbench-testing && source .tbench-testing/bin/activate\n'
        "uv pip install pytest==8.4.1 \\\n    'pyyaml>=6' Pillow==11.0.0 pytest-timeout==2.3.1\n"
        "cd /tests\npytest test_outputs.py -rA --timeout=60 || exit 1\nuv run python $TEST_DIR/grade.py\n"
    )
    runner = offline_runner(script)
    assert runner is not None
    assert runner.requirements == ("pytest==8.4.1", "pyyaml>=6", "Pillow==11.0.0", "pytest-timeout==2.3.1")
    assert runner.packages == ("pillow", "pyyaml") and runner.plugins == ("pytest_timeout",)
    code = [line.strip() for line in runner.script.splitlines() if line.strip() and not line.strip().startswith(":")]
    assert code == [
        "#!/bin/bash", "set -e", "if ! command -v curl >/dev/null 2>&1; then", "fi", "cd /tests",
        "python3 -m pytest test_outputs.py -rA --timeout=60 || exit 1", "python3 $TEST_DIR/grade.py",
    ]  # fmt: skip
    assert len(runner.script.splitlines()) == len(script.splitlines())


@pytest.mark.full_data
def test_every_evoeval_runner_is_the_boilerplate() -> None:
    runners = sorted((SHARED_DATA / "terminal-bench" / "evoeval").glob("*/run-tests.sh"))
    assert len(runners) == 95
    for path in runners:
        assert offline_runner(path.read_text()) is not None, path


def _play(env: gym.Env, index: int, replies: Callable[[], str]) -> float:
    env.reset(options={"task_index": index})
    while True:
        _, reward, terminated, truncated, _ = env.step(replies())
        if terminated or truncated:
            return float(reward)


@pytest.mark.full_data
@pytest.mark.sandbox
def test_evoeval_folders_load_and_their_tests_run_offline() -> None:
    """All 95 load; on a sample, the reference solution scores 1 (task 4's own fails its
    test, as in Terminal-Bench) and an immediate submit 0, with pytest run offline."""
    env = gym.make("rlenvs/Terminal-v2", task_dir=str(SHARED_DATA / "terminal-bench" / "evoeval"), max_turns=4)
    try:
        ids = [task.task_id for task in env.unwrapped.tasks.tasks]
        assert len(ids) == 95
        for name in ("0", "4", "17", "42", "99"):
            index = ids.index(f"folder/{name}")
            oracle = _play(env, index, env.unwrapped.oracle_action)
            assert oracle == (0.0 if name == "4" else 1.0), name
            assert _play(env, index, lambda: "submit") == 0.0, name
    finally:
        env.close()


# --- Harbor's tests/test.sh ------------------------------------------------------------------------

HARBOR_TEST_SH = (Path(__file__).parents[2] / "data" / "images" / "harbor-task" / "tests" / "test.sh").read_text()
"""The usual Harbor test script: apt-get install curl, uv's install script, `uvx -p 3.13 -w
pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf ... -rA`, then the reward file."""

HARBOR_TRAP_STYLE = """#!/bin/bash
reward=0
mkdir -p /logs/verifier
trap 'echo "$reward" > /logs/verifier/reward.txt' EXIT
set -e
apt-get update -qq && apt-get install -y -qq curl
curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh
source $HOME/.local/bin/env
exit_code=0
uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 --with numpy \\
  pytest --ctrf=/logs/verifier/ctrf.json /tests/test_outputs.py -rA || exit_code=$?
[ $exit_code -eq 0 ] && reward=1
exit $exit_code
"""


def test_harbors_usual_test_script_runs_pytest_from_the_image_and_keeps_its_reward_lines() -> None:
    runner = harbor_offline_runner(HARBOR_TEST_SH)
    assert runner is not None and runner.packages == ()
    code = [line for line in runner.script.splitlines() if line.strip() and not line.lstrip().startswith(("#", ":"))]
    assert "python3 -m pytest /tests/test_outputs.py -rA" in code
    assert "  echo 1 > /logs/verifier/reward.txt" in code and "  echo 0 > /logs/verifier/reward.txt" in code
    assert not any(word in code_line for code_line in code for word in ("uvx ", "--ctrf"))
    assert len(runner.script.splitlines()) == len(HARBOR_TEST_SH.splitlines())  # line numbers kept


def test_a_trap_style_script_keeps_its_trap_and_names_the_extra_packages() -> None:
    runner = harbor_offline_runner(HARBOR_TRAP_STYLE)
    assert runner is not None and runner.packages == ("numpy",)
    assert "python3 -m pytest /tests/test_outputs.py -rA || exit_code=$?" in runner.script
    assert "trap 'echo \"$reward\" > /logs/verifier/reward.txt' EXIT" in runner.script


@pytest.mark.parametrize(
    "script",
    [
        "#!/bin/bash\npython3 -m pytest /tests/test_outputs.py\n",  # no fetching: left as it is
        "#!/bin/bash\npython3 -c 'import sys'\n",  # no pytest, nothing fetched
    ],
)
def test_a_script_that_fetches_nothing_and_runs_python3_m_pytest_is_left_alone(script: str) -> None:
    assert harbor_offline_runner(script) is None


def _harbor_folder(tmp_path: Path, test_sh: str) -> Path:
    """The Harbor test task with `test_sh` as its tests/test.sh, on an image that needs no build."""
    folder = shutil.copytree(Path(__file__).parents[2] / "data" / "images" / "harbor-task", tmp_path / "task")
    (folder / "environment" / "Dockerfile").write_text(
        "FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624\nWORKDIR /app\n"
    )
    (folder / "tests" / "test.sh").write_text(test_sh)
    return folder


@pytest.mark.sandbox
def test_a_harbor_script_fetching_anything_else_is_still_refused_by_line(tmp_path: Path) -> None:
    folder = _harbor_folder(
        tmp_path, HARBOR_TEST_SH.replace("set -euo pipefail", "set -euo pipefail\npip install -r /tmp/req.txt")
    )
    with pytest.raises(
        TaskFolderError, match=r"tests/test.sh \(line 3\) runs `pip install -r /tmp/req.txt`, which needs the network"
    ):
        load_task_folders(folder)


def test_plugins_are_named_and_a_script_reading_its_ctrf_report_is_left_alone() -> None:
    with_plugin = HARBOR_TEST_SH.replace("-w pytest-json-ctrf==0.3.5", "-w pytest-json-ctrf==0.3.5 -w pytest-timeout")
    runner = harbor_offline_runner(with_plugin)
    assert runner is not None and runner.plugins == ("pytest_timeout",) and runner.packages == ()
    reads_report = HARBOR_TEST_SH + "python3 -c 'import json; json.load(open(\"/logs/verifier/ctrf.json\"))'\n"
    assert harbor_offline_runner(reads_report) is None  # left to the loader's network check


@pytest.mark.sandbox
def test_a_harbor_script_adding_a_pytest_plugin_is_refused_naming_it(tmp_path: Path) -> None:
    folder = _harbor_folder(tmp_path, HARBOR_TEST_SH.replace("-w pytest==8.4.1", "-w pytest==8.4.1 -w pytest-timeout"))
    with pytest.raises(
        TaskFolderError, match=r"adds the pytest plugin pytest_timeout.* `-p <plugin module>`.*backend='bwrap'"
    ):
        load_task_folders(folder)


@pytest.mark.sandbox
def test_on_the_host_packages_are_found_by_distribution_name_not_module_name(tmp_path: Path) -> None:
    """`pyyaml` imports as `yaml`: the host's python3 has it when its metadata says so (the
    host has Debian's python3-yaml); a distribution it lacks is refused by name."""
    with_yaml = HARBOR_TEST_SH.replace("-w pytest==8.4.1", "-w pytest==8.4.1 -w PyYAML==6.0.2")
    assert load_task_folders(_harbor_folder(tmp_path / "a", with_yaml))
    lacking = HARBOR_TEST_SH.replace("-w pytest==8.4.1", "-w pytest==8.4.1 -w no-such-distribution-xyz")
    with pytest.raises(TaskFolderError, match=r"installs no-such-distribution-xyz for the tests, which the sandbox's"):
        load_task_folders(_harbor_folder(tmp_path / "b", lacking))


def test_debians_pytest_installed_by_apt_is_a_test_tool_the_verdict_brings() -> None:
    """A Harbor test.sh that apt-installs Debian's pytest and runs it (measured: one of 7
    single-task Harbor repositories) runs offline on the verdict's pytest; another apt package
    on the same line stays, for the network check."""
    script = "#!/bin/bash\napt-get update && apt-get install -y python3-pytest\npytest /tests/test_outputs.py -v\n"
    runner = offline_runner(script)
    assert runner is not None and runner.script.splitlines()[1].startswith(":  # rlenvs, offline:")
    assert runner.script.splitlines()[2] == "python3 -m pytest /tests/test_outputs.py -v"
    kept = offline_runner(script.replace("python3-pytest", "python3-pytest redis-server"))
    assert kept is not None and "apt-get install -y python3-pytest redis-server" in kept.script
