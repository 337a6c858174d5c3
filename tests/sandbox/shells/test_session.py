"""The persistent shell session (rlenvs.sandbox.shells.session): state between commands, limits per
command, the workspace as the host reads it, isolation between sessions. Real bubblewrap."""

from __future__ import annotations

import os
import re
import threading
import time

import pytest

from rlenvs.envs.terminal.tasks import Entry
from rlenvs.envs.terminal.workspace import read_workspace
from rlenvs.sandbox import Limits
from rlenvs.sandbox.shells.session import MAX_COMMAND_BYTES, ReadOnlyFolder, SessionError, ShellSession

pytestmark = pytest.mark.sandbox  # shell sessions run in the sandbox


@pytest.fixture(scope="module")
def session():
    with ShellSession(limits=Limits(timeout_s=5.0, output_bytes=4096)) as shell:
        yield shell


@pytest.fixture
def fresh(session):
    session.reset([])
    return session


def test_cwd_variables_functions_aliases_and_umask_carry_over(fresh):
    assert fresh.run("mkdir -p src/app && cd src/app").ok
    assert fresh.run("export GREETING=hello; COUNT=3; shout() { echo \"$1!\"; }; alias ll='ls -1'; umask 027").ok
    result = fresh.run("pwd; echo $GREETING $COUNT; shout hi; ll ..; umask")
    assert result.stdout.split("\n")[:5] == ["/workspace/src/app", "hello 3", "hi!", "app", "0027"]
    assert fresh.run("env | grep ^GREETING=").stdout == "GREETING=hello\n"  # exported, not just set


def test_arrays_multiline_values_and_quotes_survive_and_random_stays_random(fresh):
    fresh.run("""files=(a.txt "b c.txt"); declare -A ages=([ann]=31 [bo]=7); note=$'one\ntwo "q" $x'""")
    assert fresh.run('printf "<%s>" "${files[@]}"; echo " ${ages[bo]}"; echo "$note"').stdout == (
        '<a.txt><b c.txt> 7\none\ntwo "q" $x\n'
    )
    draws = {fresh.run("echo $RANDOM").stdout for _ in range(5)}
    assert len(draws) > 1  # restoring the state must not re-seed RANDOM to the same value


def test_exit_status_is_reported_and_exit_keeps_the_state(fresh):
    result = fresh.run("cd /tmp; echo oops >&2; exit 3")
    assert (result.status, result.exit_code, result.stdout) == ("error", 3, "oops\n")  # stderr joins stdout
    assert fresh.run("pwd").stdout == "/tmp\n"


def test_a_runaway_command_is_killed_and_the_shell_is_as_before_it(fresh):
    fresh.run("cd /tmp; MARK=before")
    started = time.monotonic()
    result = fresh.run("cd /; MARK=after; while :; do :; done", timeout_s=1.0)
    assert result.status == "timeout" and time.monotonic() - started < 10  # killed, not left running
    assert fresh.run("echo $MARK; pwd").stdout == "before\n/tmp\n"


def test_flooding_output_is_stopped_at_the_cap_and_the_session_goes_on(fresh):
    result = fresh.run("yes")
    assert result.status == "output_limit" and result.truncated
    assert len(result.stdout) <= 4096
    assert fresh.run("echo still here").stdout == "still here\n"


def test_one_command_may_have_a_larger_output_cap_than_the_sessions(fresh):
    """A verdict's tests print more than an agent's command may (verbose results, a build log)."""
    result = fresh.run("head -c 100000 /dev/zero | tr '\\0' a", output_bytes=200_000)
    assert result.status == "ok" and result.stdout == "a" * 100_000
    assert fresh.run("head -c 100000 /dev/zero | tr '\\0' a").status == "output_limit"
    with pytest.raises(ValueError, match="output_bytes must be a positive number"):
        fresh.run("true", output_bytes=0)


def test_background_processes_do_not_outlive_their_command(fresh):
    fresh.run("sleep 100 & sleep 100 & disown -a")
    assert fresh.run("cat /proc/[0-9]*/comm").stdout.split().count("sleep") == 0


def test_stdin_is_empty_so_a_reading_command_does_not_hang(fresh):
    result = fresh.run("cat; read line; echo done", timeout_s=2.0)
    assert result.ok and result.stdout == "done\n"


def test_reset_empties_workspace_tmp_and_state_and_writes_the_entries(session):
    session.reset([])
    session.run("touch left-behind /tmp/left-behind; cd /tmp; X=1")
    entries = [
        Entry("data/report.csv", "a,b\n1,2\n", mode=0o640, mtime=1_000_000.0),
        Entry("bin/run.sh", "#!/bin/sh\necho run\n", mode=0o755),
        Entry("secret", is_dir=True, mode=0o700),
        Entry("blob.bin", bytes(range(256))),
    ]
    result = session.reset(entries, setup_script="echo made > made.txt; echo setup ran")
    assert result.ok and result.stdout == "setup ran\n"
    assert session.run('pwd; echo "[$X]"; ls /tmp | wc -l').stdout == "/workspace\n[]\n0\n"
    workspace = read_workspace(session.workspace_path)
    assert sorted(workspace.nodes) == ["bin", "bin/run.sh", "blob.bin", "data", "data/report.csv", "made.txt", "secret"]
    assert workspace.get("data/report.csv").mode == 0o640 and workspace.get("data/report.csv").mtime == 1_000_000.0
    assert workspace.get("bin/run.sh").mode == 0o755 and workspace.get("secret").mode == 0o700
    assert workspace.get("blob.bin").data == bytes(range(256))
    assert session.run("./bin/run.sh").stdout == "run\n"


def test_the_host_reads_symlinks_as_symlinks(fresh):
    fresh.run("ln -s /etc/passwd report.txt; ln -s / root; echo real > real.txt")
    workspace = read_workspace(fresh.workspace_path)
    assert workspace.get("report.txt").kind == "symlink" and workspace.get("report.txt").target == "/etc/passwd"
    assert workspace.get("report.txt").data is None
    assert workspace.get("root").kind == "symlink" and "root/etc" not in workspace.nodes
    assert workspace.get("real.txt").data == b"real\n"


def test_a_fresh_run_neither_uses_nor_changes_the_shell_state(fresh):
    fresh.run("cd /tmp; X=agent")
    assert fresh.run('pwd; echo "[$X]"; cd /; Y=2', fresh=True).stdout == "/workspace\n[]\n"
    assert fresh.run('pwd; echo "[$X][$Y]"').stdout == "/tmp\n[agent][]\n"


def test_a_run_with_an_environment_starts_a_bash_of_its_own_with_exactly_it(fresh):
    """Nothing of the session's shell (its folder, variables, functions, aliases) nor
    of the sandbox's own variables; its start folder the workspace, its stderr on stdout."""
    fresh.run("cd /tmp; export X=agent; f() { echo agent; }; alias ls=false")
    script = 'pwd; echo "[$X]"; type f ls 2>&1 | grep -c agent; env | sort; echo err >&2; cd /; Y=2'
    result = fresh.run(script, environment={"A": "1", "PATH": "/usr/bin:/bin"})
    assert (result.status, result.stdout) == (
        "ok",
        "/workspace\n[]\n0\nA=1\nPATH=/usr/bin:/bin\nPWD=/workspace\nSHLVL=1\n_=/usr/bin/env\nerr\n",
    ), result.stdout
    assert fresh.run('pwd; echo "[$X][$Y]"').stdout == "/tmp\n[agent][]\n"
    long = fresh.run("true", environment={"A": "x" * MAX_COMMAND_BYTES})
    assert long.status == "error" and "over" in long.detail


def test_added_files_replace_whatever_the_agent_put_at_that_path(fresh):
    fresh.run("mkdir -p /tmp/checks && echo forged > /tmp/checks/test.sh")
    fresh.add_files([Entry("test.sh", "echo genuine\n")], "/tmp/checks")
    assert fresh.run("ls /tmp/checks; sh /tmp/checks/test.sh").stdout == "test.sh\ngenuine\n"
    with pytest.raises(SessionError, match="not below"):
        fresh.add_files([Entry("x", "")], "/usr/lib/checks")


def test_wipe_empties_the_scratch_folders_and_keeps_the_workspace_and_the_shell(fresh):
    fresh.run(
        "echo kept > kept.txt; mkdir -p /tmp/locked/deep && touch /tmp/locked/deep/f /tmp/.hidden /dev/shm/x "
        "&& chmod 000 /tmp/locked/deep /tmp/locked; cd /tmp; X=1"
    )
    fresh.wipe(["/tmp", "/dev/shm"])
    assert fresh.run('pwd; echo "[$X]"; ls -A /tmp /dev/shm; cat /workspace/kept.txt').stdout == (
        "/tmp\n[1]\n/dev/shm:\n\n/tmp:\nkept\n"
    )
    with pytest.raises(ValueError, match="holds the workspace /workspace: use reset"):
        fresh.wipe(["/workspace"])


def test_added_files_may_go_into_scratch_folders_emptied_first_in_the_same_request(fresh):
    fresh.run("mkdir -p /tmp/a/b && touch /tmp/a/b/f /tmp/.hidden /dev/shm/x && chmod 000 /tmp/a; cd /tmp; X=1")
    fresh.add_files([Entry("test.sh", "echo genuine\n")], "/tmp/checks", wipe=["/tmp", "/dev/shm"])
    assert fresh.run('pwd; echo "[$X]"; ls -A /tmp /dev/shm; sh /tmp/checks/test.sh').stdout == (
        "/tmp\n[1]\n/dev/shm:\n\n/tmp:\nchecks\ngenuine\n"
    )
    with pytest.raises(ValueError, match="holds the workspace"):
        fresh.add_files([], "/tmp/checks", wipe=["/workspace"])


SEALED = ReadOnlyFolder("/tmp/sealed", ("/tmp/sealed/logs", "/tmp/sealed/deep/tmp"))
SEALED_FILES = [
    Entry("site", is_dir=True), Entry("site/mod.py", "X = 1\n"), Entry("logs", is_dir=True),
    Entry("deep/tmp", is_dir=True), Entry("deep/data.txt", "kept\n"),
]  # fmt: skip


@pytest.mark.parametrize(
    "write",
    [
        "echo 'X = 2' > /tmp/sealed/site/mod.py",
        "touch /tmp/sealed/site/new.py",
        "rm /tmp/sealed/deep/data.txt",
        "mkdir /tmp/sealed/site/__pycache__",
        "ln -s /workspace /tmp/sealed/site/pkg",
        "chmod 777 /tmp/sealed/site",
        "touch -d @0 /tmp/sealed/deep/data.txt",
        "mv /tmp/sealed/site /tmp/sealed/elsewhere",
        "mv /tmp/sealed /tmp/moved",
        "mv /tmp/sealed/logs /tmp/sealed/site/logs",
        "ln /tmp/sealed/deep/data.txt /tmp/linked",
        "umount -l /tmp/sealed",
        "(sleep 0.2; echo 'X = 3' > /tmp/sealed/site/mod.py) & wait $!",
        "python3 -c \"open('/tmp/sealed/site/mod.py', 'a').write('Y = 1')\"",
    ],
)
def test_a_read_only_folder_cannot_be_written_by_the_command_or_what_it_starts(fresh, write):
    fresh.add_files(SEALED_FILES, "/tmp/sealed")
    result = fresh.run(f"{write}; echo status=$?", fresh=True, read_only=SEALED)
    assert re.search(r"\n?status=[1-9][0-9]*\n$", result.stdout) and result.stdout.count("\n") >= 2, result.stdout
    after = fresh.run("cat /tmp/sealed/site/mod.py; find /tmp/sealed | sort; ls /tmp", fresh=True).stdout
    assert after == (
        "X = 1\n/tmp/sealed\n/tmp/sealed/deep\n/tmp/sealed/deep/data.txt\n/tmp/sealed/deep/tmp\n/tmp/sealed/logs\n"
        "/tmp/sealed/site\n/tmp/sealed/site/mod.py\nsealed\n"
    ), after


def test_the_folders_inside_it_named_writable_are_and_nothing_is_left_to_undo(fresh):
    """What the command writes in its writable folders (and /tmp, the workspace) is there for
    the host and the next command; the read-only view ends with the command's last process."""
    fresh.add_files(SEALED_FILES, "/tmp/sealed")
    write = (
        "echo 1 > /tmp/sealed/logs/reward.txt && mkdir /tmp/sealed/logs/v && echo t > /tmp/sealed/deep/tmp/t && "
        "rm /tmp/sealed/deep/tmp/t && echo s > /tmp/scratch && echo w > /workspace/w && "
        "grep -c ' /tmp/sealed' /proc/self/mountinfo"
    )
    assert fresh.run(write, fresh=True, read_only=SEALED).stdout == "3\n"
    assert read_workspace(fresh.host_path("/tmp/sealed/logs")).files() == ["reward.txt"]
    after = fresh.run(
        "grep -c ' /tmp/sealed' /proc/self/mountinfo; echo 'X = 2' > /tmp/sealed/site/mod.py && cat "
        "/tmp/sealed/site/mod.py /tmp/scratch /workspace/w",
        fresh=True,
    ).stdout
    assert after == "0\nX = 2\ns\nw\n"
    fresh.wipe(["/tmp"])  # the next episode empties /tmp as always
    assert fresh.run("ls -A /tmp").stdout == ""


def test_a_folder_that_cannot_be_made_read_only_runs_nothing_and_says_why(fresh):
    result = fresh.run("echo ran", fresh=True, read_only=ReadOnlyFolder("/tmp/none"))
    assert (result.status, result.exit_code) == ("error", 87) and "ran" not in result.stdout
    assert result.stdout.startswith("rlenvs: /tmp/none could not be made read-only for this command:"), result.stdout
    assert fresh.run("echo ran").stdout == "ran\n"
    with pytest.raises(ValueError, match="inside it"):
        ReadOnlyFolder("/tmp/sealed", ("/tmp/other",))
    with pytest.raises(ValueError, match="absolute"):
        ReadOnlyFolder("/tmp/sealed/../x")


def test_commands_hold_no_capability_though_the_zygote_keeps_one_for_read_only_folders(fresh):
    fresh.add_files(SEALED_FILES, "/tmp/sealed")
    for options in ({}, {"read_only": SEALED}):
        status = fresh.run("grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status", fresh=True, **options).stdout
        assert status.split() == ["CapInh:", "0" * 16, "CapPrm:", "0" * 16, "CapEff:", "0" * 16, "CapAmb:", "0" * 16]


def test_an_overlong_command_is_refused_with_the_reason(fresh):
    result = fresh.run("echo " + "x" * MAX_COMMAND_BYTES)
    assert result.status == "error" and "over 100000 bytes" in result.detail


def test_two_sessions_have_separate_workspaces_even_when_running_at_once():
    barrier = threading.Barrier(2)
    seen: dict[int, list[str]] = {}

    def episode(number: int) -> None:
        with ShellSession() as shell:
            shell.reset([Entry(f"mine-{number}.txt", str(number))])
            barrier.wait()
            for step in range(20):
                shell.run(f"echo {step} >> log-{number}.txt")
            seen[number] = sorted(read_workspace(shell.workspace_path).nodes)

    threads = [threading.Thread(target=episode, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {1: ["log-1.txt", "mine-1.txt"], 2: ["log-2.txt", "mine-2.txt"]}


def test_a_session_whose_sandbox_died_says_so_and_the_next_reset_starts_a_new_one():
    with ShellSession() as shell:
        shell.reset([Entry("a.txt", "a")])
        os.kill(shell._worker.pid, 9)  # the bwrap process, from outside
        shell._worker._process.wait()
        result = shell.run("ls")
        assert result.status == "sandbox_error" and "workspace with it" in result.detail
        with pytest.raises(SessionError, match="died"):
            _ = shell.workspace_path
        shell.reset([Entry("b.txt", "b")])
        assert shell.run("ls").stdout == "b.txt\n"


def test_closing_a_session_removes_its_sandbox():
    shell = ShellSession()
    shell.reset([])
    path = shell.workspace_path
    pid = shell._worker.pid
    shell.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    deadline = time.monotonic() + 5
    while os.path.exists(path) and time.monotonic() < deadline:  # the kernel tears the sandbox down
        time.sleep(0.01)
    assert not os.path.exists(path)


def test_a_workspace_at_app_for_task_folders():
    with ShellSession(workdir="/app") as shell:
        shell.reset([Entry("in.txt", "x")])
        assert shell.run("pwd; ls").stdout == "/app\nin.txt\n"
        assert shell.workspace_path.endswith("/root/app")
    for bad in ("app", "/usr/app", "/proc", "/", "/a/../usr"):
        with pytest.raises(ValueError, match="workspace"):
            ShellSession(workdir=bad)


def test_bash_reports_errors_at_the_commands_own_lines_and_no_wrapper_leaks(fresh):
    result = fresh.run("echo one\nif then fi")
    assert result.exit_code == 2 and result.stdout.startswith("one\nbash: eval: line 2: syntax error")
    assert "rlenvs" not in result.stdout and "set --" not in result.stdout
    assert fresh.run('echo "[$1][$#]"').stdout == "[][0]\n"  # no positional arguments, as in a terminal
