"""Terminal-v2 on task folders whose image is built (rlenvs.images): a Harbor-format folder
with apt and pip RUN lines on every backend that builds (bubblewrap; Docker's or Podman's build
and a container per episode), and Terminal-Bench 1 folders of EvoEval; the verdict's tests run
on the image's own tools, which an episode must not have rewritten."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rlenvs.envs.terminal.env import TerminalEnv
from rlenvs.envs.terminal.folders import TaskFolderError, load_task_folders
from tests.conftest import SHARED_DATA

HARBOR_TASK = Path(__file__).parents[2] / "data" / "images" / "harbor-task"

pytestmark = pytest.mark.images


@pytest.fixture(
    scope="module",
    params=[
        "bwrap",
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("podman", marks=pytest.mark.podman),
    ],
)
def harbor_env(image_store, request):
    env = TerminalEnv(task_dir=str(HARBOR_TASK), backend=request.param, max_turns=4, timeout_s=30)
    yield env
    env.close()


def _play(env: TerminalEnv, replies) -> tuple[float, dict]:
    env.reset(options={"task_index": 0})
    while True:
        _, reward, terminated, truncated, info = env.step(next(replies))
        if terminated or truncated:
            return float(reward), info


def test_a_harbor_folder_with_run_lines_loads_only_with_an_image(harbor_env) -> None:
    with pytest.raises(TaskFolderError, match=r"the first at line 7\): the host backend .* backend=\"bwrap\""):
        load_task_folders(HARBOR_TASK)  # the host backend reads Dockerfiles without building them
    task = harbor_env.tasks.tasks[0]
    assert task.image is not None and task.workdir == "/app" and task.files == ()
    assert dict(task.environment)["PATH"].startswith("/opt/tools:")


def test_the_reference_solution_scores_one_and_an_immediate_submit_zero(harbor_env) -> None:
    _, info = harbor_env.reset(options={"task_index": 0})
    image = harbor_env.tasks.tasks[0].image
    assert info["backend"] == image.backend and type(image).__name__ == (
        "RootImage" if info["backend"] == "bwrap" else "ContainerImage"
    )
    assert info["stood_in"].startswith("ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624 (stood in for by ")
    reward, info = _play(harbor_env, iter([harbor_env.oracle_action(), "submit"] * 2))
    assert reward == 1.0, info
    reward, info = _play(harbor_env, iter(["```bash\nsubmit\n```"]))
    assert reward == 0.0 and not info["reward_breakdown"]["the task's tests pass"]


def test_a_prebuilt_docker_image_is_built_from_the_dockerfile_shipped_beside_it(image_store, tmp_path) -> None:
    """Terminal-Bench 2's task.toml names a prebuilt image (`docker_image`) that only a registry
    holds, and ships environment/Dockerfile, its source: that is built instead, as Harbor's
    force_build does, and info says so. Without the Dockerfile the folder is refused."""
    folder = tmp_path / "harbor-task"
    shutil.copytree(HARBOR_TASK, folder)
    with (folder / "task.toml").open("a") as toml:
        toml.write('\n[environment]\ndocker_image = "example/task:1"\n')
    env = TerminalEnv(task_dir=str(folder), backend="bwrap", max_turns=4, timeout_s=30)
    try:
        _, info = env.reset(options={"task_index": 0})
        assert info["stood_in"].startswith("example/task:1 (built from environment/Dockerfile); ghcr.io/laude-inst")
        reward, info = _play(env, iter([env.oracle_action(), "submit"] * 2))
        assert reward == 1.0, info
    finally:
        env.close()
    (folder / "environment" / "Dockerfile").unlink()
    with pytest.raises(TaskFolderError, match="prebuilt image 'example/task:1', and environment/ holds no Dockerfile"):
        load_task_folders(folder, backend="bwrap")


SOLVE = "sort -n /app/numbers.txt > /app/sorted.txt && greet > /app/greeting.txt"


@pytest.mark.parametrize(
    "tamper",
    [
        # a pytest that passes whatever it runs, where the image's python3 would find one
        "mkdir -p /usr/lib/python3/dist-packages/pytest && "
        "echo 'import sys; sys.exit(0)' > /usr/lib/python3/dist-packages/pytest/__init__.py",
        # a python3 ahead of the image's on the tests' PATH
        "printf '#!/bin/sh\\necho 1 > \"$(ls -d /tmp/rlenvs-verdict/*/logs)/verifier/reward.txt\"\\n' "
        "> /opt/tools/python3 && chmod +x /opt/tools/python3",
        # what every python3 runs at start
        "echo 'import os; os._exit(0)' > /usr/local/lib/python3.13/dist-packages/zz.pth 2>/dev/null || "
        "mkdir -p /usr/local/lib/python3.13/dist-packages && echo 'import os' > /usr/local/lib/python3.13/dist-packages/zz.pth",
        # the dynamic loader told to preload a library of the agent's
        "echo /app/evil.so > /etc/ld.so.preload",
        # a folder of the tests' PATH replaced by a link to the agent's own (red team, 2026-12-02)
        "mkdir -p /srv/evil && printf '#!/bin/sh\\nexit 0\\n' > /srv/evil/python3 && chmod +x /srv/evil/python3 "
        "&& mv /opt/tools /opt/tools.orig && ln -s /srv/evil /opt/tools",
    ],
    ids=[
        "pytest-rewritten",
        "python3-on-path",
        "pth-file",
        "ld-preload",
        "path-folder-linked",
    ],
)
def test_an_episode_that_rewrote_the_tests_tools_gets_no_test_run(harbor_env, tamper: str) -> None:
    """As root on its image the agent may write anywhere, the tests' interpreter and pytest
    included: with the task unsolved, a tampered toolchain must not pass it, and with it
    solved, the tests do not run on that toolchain either."""
    for commands in ([tamper], [SOLVE, tamper]):
        reward, info = _play(harbor_env, iter([f"```bash\n{command}\n```" for command in commands] + ["submit"]))
        assert reward == 0.0, (tamper, info)
        assert info["reward_breakdown"] == {"the task's tests pass": False}
        assert "changed what the tests run on" in info["failed_checks"][0], info["failed_checks"]


def test_the_verdicts_own_pytest_is_out_of_the_agents_reach(harbor_env) -> None:
    """The image has no pytest: the verdict's own (a read-only layer under bubblewrap, owned by
    an id the sandbox does not map; a read-only volume in a container) runs the tests. An agent
    that rewrites it, or moves it aside for one of its own, gets no pass from it."""
    packages = "/opt/rlenvs-verdict/packages"
    tamper = (
        f"echo 'import sys; sys.exit(0)' > {packages}/pytest/__init__.py; "
        f"mv /opt/rlenvs-verdict /opt/moved; mkdir -p {packages}/pytest && "
        f"echo 'import sys; sys.exit(0)' > {packages}/pytest/__init__.py; true"
    )
    harbor_env.reset(options={"task_index": 0})
    assert "No module named pytest" in harbor_env.step("```bash\npython3 -m pytest --version\n```")[0]
    reward, info = _play(harbor_env, iter([f"```bash\n{tamper}\n```", "submit"]))
    assert reward == 0.0, info
    reward, info = _play(harbor_env, iter([f"```bash\n{SOLVE}; {tamper}\n```", "submit"]))
    assert reward == 1.0 or "changed what the tests run on" in info["failed_checks"][0], info


def test_a_standard_module_name_in_the_workdir_is_not_imported_by_the_tests(harbor_env) -> None:
    """Python 3.13 imports some modules only where they exist (platform: _wmi, ntpath: nt) and
    goes on without them; the verdict puts the WORKDIR at the end of sys.path, where an
    /app/_wmi.py ending the process with status 0 ran inside pytest (red team, 2026-12-02)."""
    shadow = "printf 'import os\\nos._exit(0)\\n' > /app/_wmi.py && cp /app/_wmi.py /app/nt.py"
    assert _play(harbor_env, iter([f"```bash\n{shadow}\n```", "submit"]))[0] == 0.0
    assert _play(harbor_env, iter([f"```bash\n{SOLVE} && {shadow}\n```", "submit"]))[0] == 1.0


def test_more_changes_than_can_be_read_get_no_test_run(harbor_env, monkeypatch) -> None:
    """Changes past the reader's cap are unread: they might hide a rewritten tool (red team,
    2026-12-02: 210,000 files, then a python3 on the tests' PATH, scored 1)."""
    monkeypatch.setattr("rlenvs.sandbox.shells.rootfs.MAX_CHANGES", 1000)
    filler = "mkdir /opt/zz && cd /opt/zz && seq 1 1100 | xargs touch"
    plant = "printf '#!/bin/sh\\nexit 0\\n' > /opt/tools/python3 && chmod +x /opt/tools/python3"
    reward, info = _play(harbor_env, iter([f"```bash\n{filler}\n```", f"```bash\n{plant}\n```", "submit"]))
    assert reward == 0.0 and "too many to check" in info["failed_checks"][0], info
    in_workspace = "mkdir /app/many && cd /app/many && seq 1 1100 | xargs touch"  # the agent's own: not read
    reward, info = _play(harbor_env, iter([f"```bash\n{SOLVE} && {in_workspace}\n```", "submit"]))
    assert reward == 1.0, info


def test_the_episodes_processes_together_stay_under_the_sandbox_memory_cap(harbor_env) -> None:
    """Two processes each under half the sandbox's cap (about 1.4 GB here) but together over
    it: the kernel kills one of them, in the episode's own memory cgroup (bubblewrap:
    rlenvs.sandbox.cgroups; Docker and Podman: --memory). No address-space rlimit stops a
    process first: a session capped as a whole has none, as in a container, so a runtime
    that reserves far more address space than it uses (a JVM) starts."""
    cap = harbor_env.limits.sandbox_memory_bytes
    hog = "python3 -c 'b = bytearray({size}); import time; time.sleep(2)'"
    two = f"{hog.format(size=(cap // 2) + (64 << 20))} & {hog.format(size=(cap // 2) + (64 << 20))} & wait -n; a=$?; wait -n; echo exits $a $?"
    harbor_env.reset(options={"task_index": 0})
    seen = harbor_env.step(f"```bash\n{two}\n```")[0]
    assert "exits" in seen and "137" in seen.split("exits")[-1], seen  # 128 + SIGKILL
    fits = harbor_env.step(f"```bash\n{hog.format(size=cap // 3)} && echo fits\n```")[0]
    assert "fits" in fits, fits
    reserves = "python3 -c 'import mmap; m = mmap.mmap(-1, 8 << 30); print(\"reserved\", len(m) >> 30)'"
    # nor a file-size rlimit under the disk's size: g++ writes objects past file_size_mb (16 MiB)
    big = "head -c 40M /dev/zero > /app/big.o && stat -c %s /app/big.o && rm /app/big.o"
    seen = harbor_env.step(f"```bash\n{reserves}; {big}\n```")[0]  # the episode's last turn of 4
    assert "reserved 8" in seen and str(40 << 20) in seen, seen  # untouched pages cost nothing


@pytest.mark.parametrize(
    "extra",
    [
        "echo note > /root/notes.txt && echo x > /app/extra.py",  # the workspace and HOME are the agent's
        "chmod +x /opt/tools/greet && touch -a /opt/tools/greet",  # tools copied up unchanged
        "ln /opt/tools/greet /app/greet-link && python3 -c 'import six'",
    ],
    ids=["workspace-and-home", "no-op-chmod-touch", "hard-link"],
)
def test_a_solution_that_leaves_the_tools_as_they_were_passes(harbor_env, extra: str) -> None:
    reward, info = _play(harbor_env, iter([f"```bash\n{SOLVE} && {extra}\n```", "submit"]))
    assert reward == 1.0, info


@pytest.mark.full_data
def test_evoeval_folders_run_on_their_image_and_task_4_passes_on_python_3_13(image_store) -> None:
    """On the image's Python 3.13 (the t-bench python-3-13 image, mapped to Debian trixie),
    task 4's reference solution passes its test: it checks `sum(weights) != 1`, which Python
    3.12's compensated float sum makes exact; on the host's 3.11 (backend "host") it fails."""
    folder = SHARED_DATA / "terminal-bench" / "evoeval"
    picked = Path(shutil.copytree(folder / "4", Path(image_store.root) / "evoeval-sample" / "4"))
    shutil.copytree(folder / "17", picked.parent / "17")
    env = TerminalEnv(task_dir=str(picked.parent), backend="bwrap", max_turns=4, timeout_s=60)
    try:
        for index in range(2):
            env.reset(options={"task_index": index})
            reward = _solve(env)
            assert reward == 1.0, env.tasks.tasks[index].task_id
            env.reset(options={"task_index": index})
            assert env.step("submit")[1] == 0.0
    finally:
        env.close()


def _solve(env: TerminalEnv) -> float:
    while True:
        _, reward, terminated, truncated, _ = env.step(env.oracle_action())
        if terminated or truncated:
            return float(reward)


def test_the_oracle_follows_its_plan_after_harmless_steps_and_says_when_it_cannot_restore(harbor_env) -> None:
    from rlenvs.envs.terminal.oracle import OracleError

    harbor_env.reset(options={"task_index": 0})
    harbor_env.step("```bash\nls -la /app && cat /srv/data/numbers.txt\n```")  # changes nothing
    reward = _solve(harbor_env)
    assert reward == 1.0
    harbor_env.reset(options={"task_index": 0})
    harbor_env.step("```bash\necho 9 >> /app/numbers.txt\n```")  # a file of the image's, changed
    with pytest.raises(OracleError, match="changed files of its image, which the oracle cannot put back"):
        harbor_env.oracle_action()


@pytest.mark.parametrize(
    "backend",
    ["bwrap", pytest.param("docker", marks=pytest.mark.docker), pytest.param("podman", marks=pytest.mark.podman)],
)
def test_a_final_user_is_whom_the_agent_runs_as_and_the_tests_stay_root(image_store, backend, tmp_path) -> None:
    """Docker runs a container as its image's final USER; so do the agent's commands here, without
    the root's capabilities, in its home. The verdict's tests run as the image's root, so what
    the user may write on their PATH (here the image gives it /opt/tools) is checked as root's is."""
    folder = Path(shutil.copytree(HARBOR_TASK, tmp_path / "as-agent"))
    dockerfile = folder / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN chown agent /app /opt/tools\nUSER agent\n")
    env = TerminalEnv(task_dir=str(folder), backend=backend, max_turns=4, timeout_s=30)
    try:
        env.reset(options={"task_index": 0})
        who = env.step("```bash\nid -un; echo $HOME; grep CapEff /proc/self/status; touch /usr/bin/x\n```")[0]
        assert "agent\n/home/agent\nCapEff:\t0000000000000000" in who and "Permission denied" in who, who
        reward, info = _play(env, iter(["```bash\n" + SOLVE + "\n```", "submit"]))
        assert reward == 1.0, info
        assert _play(env, iter(["submit"]))[0] == 0.0
        plant = "printf '#!/bin/sh\\nexit 0\\n' > /opt/tools/python3 && chmod +x /opt/tools/python3"
        for commands in ([plant], [SOLVE, plant]):  # a python3 of the user's ahead of the image's
            reward, info = _play(env, iter([f"```bash\n{command}\n```" for command in commands] + ["submit"]))
            assert reward == 0.0 and "changed what the tests run on" in info["failed_checks"][0], info
    finally:
        env.close()


@pytest.mark.parametrize(
    "backend",
    ["bwrap", pytest.param("docker", marks=pytest.mark.docker), pytest.param("podman", marks=pytest.mark.podman)],
)
def test_certify_plants_earn_nothing_on_every_backend(image_store, backend) -> None:
    """certify's terminal plants, traced on the image's own python3 through each backend: the
    modules it looks up and lacks planted in the WORKDIR, test files, a background process,
    links. None passes the Harbor folder's tests."""
    from rlenvs.testing.certify import certify
    from rlenvs.testing.certify.terminal_plants import terminal_probes

    kwargs = {"task_dir": str(HARBOR_TASK), "backend": backend, "max_turns": 4, "timeout_s": 30}
    report = certify("rlenvs/Terminal-v2", env_kwargs=kwargs, task_indices=[0], generators=(terminal_probes,))
    assert len(report.checks) == 4 and report.wrong == [], str(report)
    (traced,) = [check for check in report.checks if check.probe.kind == "planted module"]
    assert "/org/__init__.py" in traced.played[1]


TMP_WORKDIR_TASK = Path(__file__).parents[2] / "data" / "images" / "tmp-workdir-task"


@pytest.mark.parametrize("backend", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_tmp_is_the_images_own_kept_for_the_tests_and_may_hold_the_workspace(image_store, backend) -> None:
    """A build that puts the task's inputs in /tmp, a WORKDIR below it and an answer asked for
    in /tmp (TermiGen's shape): the agent sees the image's /tmp, the verdict keeps what the
    instruction names there and removes the rest of the agent's (its scratch: links and all),
    and a named answer that is a link fails the verdict."""
    env = TerminalEnv(task_dir=str(TMP_WORKDIR_TASK), backend=backend, max_turns=4, timeout_s=30)
    try:
        assert env.tasks.tasks[0].workdir == "/tmp/project"
        env.reset(options={"task_index": 0})
        reward, info = _play(env, iter([env.oracle_action(), "submit"] * 2))
        assert reward == 1.0, info
        assert _play(env, iter(["submit"]))[0] == 0.0
        scratch = "python3 -m venv --without-pip /tmp/venv && ln /tmp/result.txt /tmp/copy && ln -s /proc/self /tmp/p"
        env.reset(options={"task_index": 0})
        env.step(f"```bash\n{scratch}\n```")
        *_, info = env.step(env.oracle_action())  # the reference from here, then submit
        assert info["reward_breakdown"] == {"the task's tests pass": True}, (
            info
        )  # the scratch removed, not held against it
        for alias in ("ln -s", "ln"):  # the test's own reference would be written into the answer
            plant = f"echo done > notes.txt; echo 0 > /tmp/result.txt; {alias} /tmp/result.txt /tmp/expected_total.txt"
            assert _play(env, iter([f"```bash\n{plant}\n```", "submit"]))[0] == 0.0  # the plant removed
        plant = "echo done > notes.txt; ln -s /tmp/expected_total.txt /tmp/result.txt"  # the answer reads the reference
        reward, info = _play(env, iter([f"```bash\n{plant}\n```", "submit"]))
        assert reward == 0.0 and "/tmp/result.txt" in " ".join(info["failed_checks"]), info
    finally:
        env.close()
