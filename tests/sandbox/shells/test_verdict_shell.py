"""`run_tests_in_same_shell` (rlenvs.sandbox.shells.verdict_shell): the tests see the shell the agent
left (its folder, the variables they name, its PATH after the system's), read by the host from
the saved state, and nothing of it that changes how the tests run. The red-team cases of such
a task are in tests/data/redteam/terminal.jsonl."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlenvs.envs.terminal.env import TerminalEnv
from rlenvs.envs.terminal.folders import load_task_folders
from rlenvs.sandbox.shells.session import ShellSession
from rlenvs.sandbox.shells.verdict import SYSTEM_PATH, VerdictRun, run_tests
from rlenvs.sandbox.shells.verdict_shell import (
    SameShell,
    ShellState,
    denied,
    parse_shell_state,
    real_folder_inside,
    same_shell,
)

FIXTURE = Path(__file__).parents[2] / "data" / "terminal" / "same-shell"
"""A Terminal-Bench folder with run_tests_in_same_shell: true whose tests need the agent's
exported BUILD_MODE (the image says "debug"), its folder /app/build and /app/tools on its PATH."""


# --- reading the saved state, on the host ---------------------------------------------------------


def test_a_state_no_command_saved_carries_nothing() -> None:
    assert parse_shell_state("") is None
    assert parse_shell_state("builtin declare -x BUILD_MODE='release'\n") is None  # the reset's lines


def test_declare_p_values_and_percent_q_folders_parse_as_bash_prints_them() -> None:
    state = (
        "builtin cd -- /app/sub\\ dir\numask 0022\n"
        'declare -x A="x\\"y\\$z\\`w\\\\v"\n'
        "declare -x B=$'a\\nb\\t\\001\\377'\n"
        "declare -x C\n"  # exported, no value: not in the environment
        'declare -- D="unexported"\n'
        'declare -ax E=([0]="1")\n'
        'declare -rx F="read-only"\n'
        "f () \n{ \n    cat <<EOF\n"
        'declare -x PLANTED="from a function body"\nEOF\n}\n'
    )
    parsed = parse_shell_state(state)
    assert parsed is not None and parsed.cwd == "/app/sub dir"
    assert dict(parsed.exported) == {"A": 'x"y$z`w\\v', "B": "a\nb\t\x01\ufffd", "F": "read-only"}


def test_a_value_not_quoted_as_bash_quotes_is_left_out() -> None:
    parsed = parse_shell_state('builtin cd -- /app\ndeclare -x A="$(id)"\ndeclare -x B="ok"\n')
    assert parsed is not None and dict(parsed.exported) == {"B": "ok"}


# --- what is carried ------------------------------------------------------------------------------

KNOBS = (
    "PATH", "HOME", "TMPDIR", "TEST_DIR", "LD_PRELOAD", "LD_LIBRARY_PATH", "GCONV_PATH", "BASH_ENV", "ENV",
    "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "BASH_FUNC_python3%%", "CDPATH", "GLOBIGNORE", "IFS",
    "PYTHONPATH", "PYTHONHOME", "PYTHONOPTIMIZE", "PYTHONPYCACHEPREFIX", "PYTHONWARNINGS", "PYTHONSTARTUP",
    "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "GIT_DIR", "GIT_EXEC_PATH",
    "GIT_CONFIG_COUNT", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "PERL5OPT", "RUBYOPT", "OPENSSL_CONF", "LC_ALL", "LANG",
    "TZ", "CC", "MAKEFILES", "VIRTUAL_ENV", "RLENVS_VERDICT_PACKAGES", "COV_CORE_SOURCE", "UV_PYTHON",
)  # fmt: skip


@pytest.mark.parametrize("name", KNOBS)
def test_no_knob_of_how_the_tests_run_is_carried_even_where_the_tests_name_it(name: str) -> None:
    assert denied(name)
    state = ShellState("/app", ((name, "/app/evil"), ("GREETING", "hi")))
    shell = same_shell(state, workdir="/app", cwd_ok=True, named={name, "GREETING"})
    assert dict(shell.variables) == {"GREETING": "hi"}


def test_only_variables_the_task_or_its_tests_name_are_carried_and_never_the_harness() -> None:
    state = ShellState("/app/build", (("BUILD_MODE", "release"), ("UNRELATED", "x"), ("TEST_DIR", "/app/t")))
    shell = same_shell(state, workdir="/app", cwd_ok=True, named={"BUILD_MODE", "TEST_DIR"}, protected={"TEST_DIR"})
    assert shell == SameShell("/app/build", (("BUILD_MODE", "release"),), ())


def test_a_folder_the_host_did_not_vouch_for_is_the_workdir() -> None:
    state = ShellState("/opt/elsewhere", (("PATH", "/app/venv/bin:.:/usr/bin:/usr/bin"),))
    shell = same_shell(state, workdir="/app", cwd_ok=False, named=())
    assert shell.cwd == "/app" and shell.path == ("/app/venv/bin", "/usr/bin")  # relative entries dropped


def test_the_start_folder_is_a_real_folder_of_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "build" / "deep").mkdir(parents=True)
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to("/usr")
    assert real_folder_inside(str(tmp_path), "/app", "/app")
    assert real_folder_inside(str(tmp_path), "/app", "/app/build/deep")
    assert not real_folder_inside(str(tmp_path), "/app", "/app/link")  # a cd through it lands in /usr
    assert not real_folder_inside(str(tmp_path), "/app", "/app/link/lib")
    assert not real_folder_inside(str(tmp_path), "/app", "/app/file")
    assert not real_folder_inside(str(tmp_path), "/app", "/app/gone")
    assert not real_folder_inside(str(tmp_path), "/app", "/tmp")
    assert not real_folder_inside(str(tmp_path), "/app", "/application")


def test_the_agents_path_comes_after_the_systems_behind_the_guard() -> None:
    shell = SameShell("/app", (), ("/app/venv/bin", "/usr/bin", "/tmp/x", "/tmp/rlenvs-verdict/tmp", "/opt/tool"))
    run = VerdictRun("0" * 16, "/app", shell=shell)
    path = run.environment()["PATH"].split(":")
    assert path == [*SYSTEM_PATH.split(":"), run.guard, "/app/venv/bin", "/opt/tool"]
    assert VerdictRun("0" * 16, "/app").environment()["PATH"] == SYSTEM_PATH
    assert run.script_text("bash x") == "bash x"
    moved = VerdictRun("0" * 16, "/app", shell=SameShell("/app/build dir"))
    assert moved.script_text("bash x") == "builtin cd -- '/app/build dir' || exit 1\nbash x"


# --- in the real sandbox ---------------------------------------------------------------------------


@pytest.mark.sandbox
def test_a_program_the_system_lacks_is_never_the_agents_interpreter() -> None:
    """The host has no `python`: a fake one on the agent's PATH is not what the tests run,
    while a tool of its own there is."""
    with ShellSession(workdir="/app") as session:
        session.reset([])
        session.run(
            "mkdir -p bin && printf '#!/bin/sh\\necho PASSED\\n' > bin/python && printf '#!/bin/sh\\necho tool\\n' "
            "> bin/mytool && chmod +x bin/* && export PATH=/app/bin:$PATH"
        )
        state = parse_shell_state(session.shell_state)
        shell = same_shell(state, workdir="/app", cwd_ok=True, named=())
        run = run_tests(session, [], "mytool; python -c 'print(1)'; echo status=$?", timeout_s=10, shell=shell)
    assert run.stdout.splitlines()[0] == "tool"
    assert "PASSED" not in run.stdout and "status=127" in run.stdout, run.stdout


def test_the_folder_loads_as_a_same_shell_task() -> None:
    (task,) = load_task_folders(FIXTURE)
    assert task.same_shell and dict(task.environment)["BUILD_MODE"] == "debug"
    assert "BUILD_MODE" in task.test_words


@pytest.fixture(scope="module")
def env():
    made = TerminalEnv(task_dir=str(FIXTURE), max_turns=5)
    yield made
    made.close()


@pytest.mark.sandbox
def test_the_reference_scores_one_and_an_empty_submit_zero(env: TerminalEnv) -> None:
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(env.oracle_action())
    while not terminated:
        _, reward, terminated, _, _ = env.step(env.oracle_action())
    assert reward == 1.0
    env.reset(seed=0)
    _, reward, _, _, info = env.step("submit")
    assert reward == 0.0 and "greet is not on PATH" in info["failed_checks"][0]


@pytest.mark.sandbox
@pytest.mark.parametrize("before", ["cd /tmp && export BUILD_MODE=x", "touch /app/x && export PATH=/nowhere"])
def test_the_oracle_leaves_the_shell_as_the_reference_does_from_any_state(env: TerminalEnv, before: str) -> None:
    """Its re-planning reply runs the reference in a bash of its own; the agent's shell then
    takes on the state that bash left, which the tests read."""
    env.reset(seed=0)
    env.step(before)
    terminated = truncated = False
    while not (terminated or truncated):
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
    assert reward == 1.0, info["failed_checks"]


@pytest.mark.sandbox
def test_the_tests_need_the_shell_not_only_the_files(env: TerminalEnv) -> None:
    """The workspace done right, the shell left elsewhere: what a fresh shell would not see."""
    files = (
        "mkdir -p /app/tools /app/build && printf '#!/bin/sh\\necho \"Hello, world!\"\\n' > /app/tools/greet && "
        "chmod +x /app/tools/greet"
    )
    for shell, passes in (
        ("export PATH=/app/tools:$PATH BUILD_MODE=release && cd /app/build", True),
        ("export PATH=/app/tools:$PATH BUILD_MODE=release", False),  # left in /app
        ("export PATH=/app/tools:$PATH && cd /app/build", False),  # BUILD_MODE still the image's
        ("export -n BUILD_MODE; BUILD_MODE=release; export PATH=/app/tools:$PATH; cd /app/build", False),  # unexported
        ("export BUILD_MODE=release && cd /app/build", False),  # greet not on PATH
    ):
        env.reset(seed=0)
        env.step(f"{files} && {shell}")
        _, reward, _, _, info = env.step("submit")
        assert reward == (1.0 if passes else 0.0), (shell, info["failed_checks"])


GREET = (
    "mkdir -p /app/tools /app/build && printf '#!/bin/sh\\necho \"Hello, world!\"\\n' > /app/tools/greet && "
    "chmod +x /app/tools/greet && export PATH=/app/tools:$PATH && cd /app/build"
)


@pytest.mark.images
def test_on_an_image_the_agents_path_outside_the_workspace_is_checked_like_the_toolchain(image_store) -> None:
    """The agent is root on an image: a python3 of its own in /opt/v/bin, first on its PATH,
    keeps the tests from running (as one in /usr/local/bin would), and the task done scores 1."""
    made = TerminalEnv(task_dir=str(FIXTURE), backend="bwrap", max_turns=5)
    fake = "mkdir -p /opt/v/bin && printf '#!/bin/sh\\nexit 0\\n' > /opt/v/bin/python3 && chmod +x /opt/v/bin/python3"
    try:
        for replies, expected in (
            ((f"{GREET} && export BUILD_MODE=release",), 1.0),
            ((f"{fake} && export PATH=/opt/v/bin:$PATH", GREET), 0.0),
        ):
            made.reset(seed=0)
            for reply in replies:
                made.step(reply)
            _, reward, _, _, info = made.step("submit")
            assert reward == expected, info["failed_checks"]
        assert "changed what the tests run on (/opt/v" in info["failed_checks"][0]
    finally:
        made.close()
