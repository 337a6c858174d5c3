"""What the sandbox charges to itself rather than to the host (issue 38, item 3): the seccomp
filter on every sandboxed process, the inode cap of every writable tmpfs, and a session that
starts its next episode on a fresh sandbox when the last one broke it. Real bubblewrap."""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import signal
import time
from pathlib import Path

import pytest

from rlenvs.envs.terminal.tasks import Entry
from rlenvs.sandbox import Limits, Sandbox
from rlenvs.sandbox.cgroups import MemoryHierarchy, locate_memory_hierarchy, memory_cgroup_absence, memory_hierarchy
from rlenvs.sandbox.guest import seccomp
from rlenvs.sandbox.launch import staged_guest_dir
from rlenvs.sandbox.requests import BYTES_PER_INODE, MIN_INODES
from rlenvs.sandbox.shells.session import SessionError, ShellSession

MACHINE = os.uname().machine
NUMBERS = seccomp.SYSCALLS.get(MACHINE, {})
CLONE_NEWUSER_AND_SIGCHLD = seccomp.CLONE_NEWUSER | signal.SIGCHLD
ASLR_OFF = 0x0040000
"""personality(ADDR_NO_RANDOMIZE): not one of the values the filter lets through."""

PROBES = {
    # Arguments an unfiltered kernel answers with something else than the filter's EPERM where
    # it can (EBADF, EFAULT, EINVAL, success), so the control below tells the two apart.
    **{name: (-1, 0, 0, 0, 0, 0) for name in seccomp.DENIED if name in NUMBERS},
    "unshare": (0,),
    "personality": (ASLR_OFF,),
    "clone3": (0, 0),
    "clone": (CLONE_NEWUSER_AND_SIGCHLD, 0, 0, 0, 0),
}
PROBE_CODE = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
def call(number, args):
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    if result == 0 and number == {clone}:  # an unfiltered clone made a child: it ends here
        os._exit(0)
    if result > 0 and number == {clone}:
        os.waitpid(result, 0)
    return -ctypes.get_errno() if result == -1 else 0
answers = {{name: call(number, args) for name, (number, args) in {probes}.items()}}
answers["query personality"] = libc.syscall(ctypes.c_long({personality}), ctypes.c_long(0xFFFFFFFF))
if {other_abi} is not None:  # getpid as an x32 call
    answers["other ABI"] = call({other_abi} + 39, ())
print(json.dumps(answers))
print(open("/proc/self/status").read().split("Seccomp:")[1].split()[0])
"""


def probe_code() -> str:
    probes = {name: (NUMBERS[name], args) for name, args in PROBES.items()}
    other_abi = seccomp.MACHINES[MACHINE][1]
    return PROBE_CODE.format(
        clone=NUMBERS["clone"], probes=probes, personality=NUMBERS["personality"], other_abi=other_abi
    )


def run_probe(pool: Sandbox) -> tuple[dict[str, int], str]:
    result = pool.run_python(probe_code())
    assert result.status == "ok", result
    answers, mode = result.stdout.splitlines()
    return json.loads(answers), mode


needs_filter_machine = pytest.mark.skipif(MACHINE not in seccomp.MACHINES, reason=f"no seccomp filter for {MACHINE}")


# --- the seccomp filter ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("machine", "header", "pattern"),
    [
        ("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", r"#define __NR_(\w+)\s+(\d+)"),
        ("aarch64", "/usr/include/asm-generic/unistd.h", r"#define __NR(?:3264)?_(\w+)\s+(\d+)"),
    ],
)
def test_the_filters_system_call_numbers_are_the_kernels(machine, header, pattern):
    if not os.path.exists(header):
        pytest.skip(f"{header} is not installed (Debian: apt-get install linux-libc-dev)")
    kernel = {name: int(number) for name, number in re.findall(pattern, Path(header).read_text())}
    ours = seccomp.SYSCALLS[machine]
    assert {name: kernel.get(name) for name in ours} == ours


@pytest.mark.parametrize("policy", [seccomp.UNTRUSTED, seccomp.NO_USER_NAMESPACES])
@pytest.mark.parametrize("machine", sorted(seccomp.MACHINES))
def test_every_jump_lands_inside_the_program_and_every_path_returns(policy, machine):
    code = seccomp.assemble(policy, machine)
    for at, (op, jt, jf, _) in enumerate(code):
        if op in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            assert at + 1 + max(jt, jf) < len(code)
    assert code[-1][0] == seccomp.RET_K


@pytest.mark.sandbox
@needs_filter_machine
def test_denied_system_calls_fail_with_eperm_inside_and_otherwise_outside_the_filter():
    with Sandbox(workers=1, limits=Limits(timeout_s=10)) as pool:
        inside, mode = run_probe(pool)
    assert mode == "2"  # /proc/self/status: a seccomp filter
    expected = dict.fromkeys(PROBES, -errno.EPERM) | {"clone3": -errno.ENOSYS}
    assert {name: inside[name] for name in PROBES} == expected
    assert inside["query personality"] >= 0  # the values Docker allows still work
    if seccomp.MACHINES[MACHINE][1] is not None:
        assert inside["other ABI"] == -errno.EPERM
    # The control: without the filter (unsafe mode, the host's kernel as an unprivileged uid)
    # the same calls answer otherwise, so the EPERMs above are the filter's.
    with pytest.warns(RuntimeWarning, match="UNSAFE"):
        control = Sandbox(workers=1, unsafe=True, limits=Limits(timeout_s=10))
    with control:
        outside, outside_mode = run_probe(control)
    assert outside_mode == "0"
    for name in ("unshare", "setns", "keyctl", "clock_settime", "personality", "clone3", "io_uring_enter"):
        assert outside[name] != inside[name], name


@pytest.mark.sandbox
def test_ordinary_python_threads_processes_and_pytest_work_under_the_filter():
    with ShellSession(limits=Limits(timeout_s=20)) as session:
        session.reset([Entry("test_one.py", "def test_one():\n    assert 1 + 1 == 2\n")])
        threads = "import threading; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()"
        result = session.run(
            f'grep Seccomp: /proc/self/status; python3 -c "{threads}"; echo piped | cat; '
            'python3 -c \'import subprocess; print(subprocess.run(["echo", "child"], capture_output=True).stdout)\'; '
            "python3 -m pytest -q -p no:cacheprovider test_one.py | tail -1"
        )
    assert result.status == "ok", result
    lines = result.stdout.splitlines()
    assert lines[:4] == ["Seccomp:\t2", "thread", "piped", "b'child\\n'"]
    assert "1 passed" in lines[-1]


# --- inode caps ------------------------------------------------------------------------------

FILL = """
import errno, os
for folder in ({folders}):
    made = 0
    try:
        while True:
            open(os.path.join(folder, f"f{{made}}"), "w").close()
            made += 1
    except OSError as error:
        print(folder, made, errno.errorcode[error.errno])
"""


def test_the_default_inode_cap_follows_the_byte_size_with_a_floor_and_bad_caps_are_refused():
    assert Limits(disk_mb=64).tmpfs_inodes == (64 << 20) // BYTES_PER_INODE
    assert Limits(disk_mb=1).tmpfs_inodes == MIN_INODES
    assert Limits(disk_inodes=300).tmpfs_inodes == 300
    for bad in (0, -5, 2.5, True, "100"):
        with pytest.raises(ValueError, match="Limits.disk_inodes"):
            Limits(disk_inodes=bad)


@pytest.mark.sandbox
def test_a_pool_execution_creating_files_past_the_cap_gets_enospc_and_the_next_one_a_fresh_tmpfs():
    limits = Limits(timeout_s=20, disk_mb=8, disk_inodes=400)
    with Sandbox(workers=1, limits=limits) as pool:
        filled = pool.run_python(FILL.format(folders='"/workspace", "/tmp", "/dev/shm"'))
        after = pool.run_shell("touch /workspace/a /tmp/b && ls -A /workspace /tmp /dev/shm")
    assert filled.status == "ok", filled
    # the folder's own inode is one of the 400
    assert filled.stdout.split("\n")[:3] == [f"{f} 399 ENOSPC" for f in ("/workspace", "/tmp", "/dev/shm")]
    assert (after.status, after.stdout.split()) == ("ok", ["/dev/shm:", "/tmp:", "b", "/workspace:", "a"])


@pytest.mark.sandbox
def test_a_session_creating_files_past_the_cap_gets_enospc_and_its_next_episode_starts_clean():
    with ShellSession(limits=Limits(timeout_s=20, disk_mb=8, disk_inodes=300)) as session:
        session.reset([])
        assert os.statvfs(session.workspace_path).f_files == 300  # as the host sees it
        filled = session.run("python3 -c " + shlex.quote(FILL.format(folders='".", "/tmp", "/dev/shm"')))
        assert filled.stdout.split("\n")[:3] == [f"{f} 299 ENOSPC" for f in (".", "/tmp", "/dev/shm")]
        session.reset([Entry("kept.txt", "ok")])
        assert session.run("ls -A . /tmp /dev/shm && cat kept.txt").stdout.split() == [
            ".:", "kept.txt", "/dev/shm:", "/tmp:", "ok"
        ]  # fmt: skip


# --- a broken session's next episode ---------------------------------------------------------


@pytest.mark.sandbox
def test_a_reset_after_the_last_episode_hung_the_sandbox_starts_the_episode_on_a_fresh_one():
    with ShellSession(limits=Limits(timeout_s=0.5)) as session:
        session.reset([Entry("first.txt", "1")])
        broken = session._worker
        assert broken is not None and broken.child_pid is not None
        os.kill(broken.child_pid, signal.SIGSTOP)  # its zygote: the wipe will never be answered
        started = time.monotonic()
        session.reset([Entry("second.txt", "2")])
        assert time.monotonic() - started < 15
        assert not broken.alive and session._worker is not broken
        assert session.run("ls && cat second.txt").stdout == "second.txt\n2"


@pytest.mark.sandbox
def test_a_reset_whose_fresh_sandbox_fails_too_raises_one_error_with_both_reasons():
    """Once: a sandbox that cannot start at all (here its guest code unreadable, as a host out
    of processes or memory would do) is the machinery's failure, named as such, not a loop."""
    guest = Path(staged_guest_dir())
    with ShellSession(limits=Limits(timeout_s=0.5)) as session:
        session.reset([Entry("first.txt", "1")])
        os.kill(session._worker.child_pid, signal.SIGSTOP)
        mode = guest.stat().st_mode
        guest.chmod(0o700)  # the sandbox's uid can no longer read the zygote
        try:
            with pytest.raises(
                SessionError, match=r"could not start an episode \(.*\), nor could a fresh one \(.*did not start"
            ):
                session.reset([Entry("second.txt", "2")])
        finally:
            guest.chmod(mode)
        session.reset([Entry("third.txt", "3")])  # the host is fine again: so is the session
        assert session.run("cat third.txt").stdout == "3"


# --- the memory cgroup -----------------------------------------------------------------------

V2_LINE = "35 25 0:30 / {point} rw,nosuid - cgroup2 cgroup2 rw\n"
V1_LINE = "36 25 0:31 {root} {point} rw - cgroup cgroup rw,memory\n"


def _cgroup_files(tmp_path: Path, mounts: str, membership: str) -> dict[str, str]:
    (tmp_path / "mountinfo").write_text(mounts)
    (tmp_path / "cgroup").write_text(membership)
    return {"mountinfo": str(tmp_path / "mountinfo"), "membership": str(tmp_path / "cgroup")}


def test_the_memory_hierarchy_is_an_own_v2_cgroup_giving_children_memory_else_an_own_v1_one(tmp_path, monkeypatch):
    monkeypatch.delenv("RLENVS_SANDBOX_CGROUP", raising=False)
    v2, v1 = tmp_path / "unified", tmp_path / "memory"
    (v2 / "sandboxes").mkdir(parents=True)
    (v1 / "job").mkdir(parents=True)
    own_v2 = v2 / "sandboxes"
    hybrid = _cgroup_files(
        tmp_path, V2_LINE.format(point=v2) + V1_LINE.format(root="/", point=v1), "4:memory:/job\n0::/sandboxes\n"
    )
    (own_v2 / "cgroup.controllers").write_text("cpu pids\n")  # the hybrid layout: v1 holds memory
    assert locate_memory_hierarchy(**hybrid) == MemoryHierarchy(str(v1 / "job"), 1)
    (own_v2 / "cgroup.controllers").write_text("cpu memory pids\n")
    (own_v2 / "cgroup.subtree_control").write_text("")  # offered, but not given to children
    assert locate_memory_hierarchy(**hybrid) == MemoryHierarchy(str(v1 / "job"), 1)
    (own_v2 / "cgroup.subtree_control").write_text("memory\n")
    assert locate_memory_hierarchy(**hybrid) == MemoryHierarchy(str(own_v2), 2)
    only_v2 = _cgroup_files(tmp_path, V2_LINE.format(point=v2), "0::/sandboxes\n")
    (own_v2 / "cgroup.subtree_control").write_text("")
    reason = memory_cgroup_absence(**only_v2)
    assert "RLENVS_SANDBOX_CGROUP" in reason and "no cgroups v1 memory hierarchy" in reason, reason
    assert "no cgroup v2" in memory_cgroup_absence(**_cgroup_files(tmp_path, "", "0::/\n"))


def test_rlenvs_sandbox_cgroup_names_the_folder_or_is_refused_with_the_reason(tmp_path, monkeypatch):
    v2 = tmp_path / "unified"
    (v2 / "delegated").mkdir(parents=True)
    files = _cgroup_files(tmp_path, V2_LINE.format(point=v2), "0::/elsewhere\n")
    monkeypatch.setenv("RLENVS_SANDBOX_CGROUP", str(v2 / "delegated"))
    assert "does not enable memory" in locate_memory_hierarchy(**files)
    (v2 / "delegated" / "cgroup.subtree_control").write_text("cpu memory\n")
    assert locate_memory_hierarchy(**files) == MemoryHierarchy(str(v2 / "delegated"), 2)
    monkeypatch.setenv("RLENVS_SANDBOX_CGROUP", str(tmp_path / "nowhere"))
    assert "is not a folder of a mounted cgroup hierarchy" in locate_memory_hierarchy(**files)


@pytest.mark.sandbox
def test_a_sandbox_is_capped_as_a_whole_where_the_host_gives_a_memory_cgroup():
    """Where this host has a memory hierarchy (this project's machines: the cgroups v1 one), a
    pool worker's processes share a cgroup capped at `sandbox_memory_mb`: one going over is
    killed and reported as `memory`, the worker serves on, and the cgroup goes with it. Where
    it has none, the reason is given and the sandbox runs on rlimits alone."""
    hog = "b = bytearray(300 << 20)\nprint(len(b))"
    with Sandbox(limits=Limits(memory_mb=512, sandbox_memory_mb=200)) as sandbox:
        first = sandbox.run_python(hog)
        cgroup = sandbox._idle[0]._cgroup
        if memory_hierarchy() is None:
            assert memory_cgroup_absence() and cgroup is None and first.status == "ok"
            return
        assert first.status == "memory" and "memory cap of 200 MiB" in first.detail, first
        assert sandbox.run_python("print(1)").stdout == "1\n"  # the same worker, still serving
        assert cgroup is not None and sandbox._idle[0]._cgroup is cgroup
        assert sandbox.run_python(hog, limits=Limits(memory_mb=512)).status == "ok"  # a call's own, larger cap
    assert not os.path.exists(cgroup.path)
