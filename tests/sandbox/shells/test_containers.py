"""The container backends (rlenvs.images.engine_build, rlenvs.sandbox.shells.containers) against a
real Docker daemon and a real Podman: their stand-ins for bases they cannot pull, their build
failures and refusals, and episodes, one container each. The Terminal-v2 verdicts on them are
in tests/envs/terminal/test_env_images.py (its Harbor fixture runs on every backend that builds)."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from rlenvs.envs.terminal.folders import load_task_folders
from rlenvs.images.bases import BaseImageError
from rlenvs.images.build import ImageBuildError
from rlenvs.images.engine_build import STAND_IN_LABEL, build_with_engine
from rlenvs.sandbox import Limits
from rlenvs.sandbox.shells import containers
from rlenvs.sandbox.shells.containers import EngineUnavailable, check_daemon, engine
from rlenvs.sandbox.shells.session import ShellSession

HARBOR_TASK = Path(__file__).parents[2] / "data" / "images" / "harbor-task"
T_BENCH_UBUNTU = "ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624"
"""The fixture's base: its stand-in is made once a run, for every test here."""
ENGINES = [
    pytest.param("docker", marks=[pytest.mark.images, pytest.mark.docker]),
    pytest.param("podman", marks=[pytest.mark.images, pytest.mark.podman]),
]


def test_an_engine_whose_layers_cannot_be_read_is_refused_by_name() -> None:
    with pytest.raises(EngineUnavailable, match=r"stores containers with 'vfs'.*overlay2.*backend='bwrap'"):
        check_daemon({"Driver": "vfs", "DockerRootDir": "/var/lib/docker"})
    with pytest.raises(EngineUnavailable, match=r"data root /nonexistent/docker cannot be read here"):
        check_daemon({"Driver": "overlay2", "DockerRootDir": "/nonexistent/docker"})


def test_a_missing_client_or_daemon_says_how_to_get_one(monkeypatch) -> None:
    monkeypatch.setenv(containers.CLI_VARIABLES["podman"], "no-such-podman-client")
    # Docker's case is the daemon's: any program passes the client lookup, made first, so the
    # machine needs no docker client (the daemon is asked through the SDK of the dev extra).
    monkeypatch.setenv(containers.CLI_VARIABLES["docker"], sys.executable)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    containers._checked.cache_clear()
    try:
        with pytest.raises(EngineUnavailable, match=r"'no-such-podman-client', which is not found.*RLENVS_PODMAN"):
            engine("podman")
        with pytest.raises(EngineUnavailable, match=r"no Docker daemon answers .*DOCKER_HOST.*backend='bwrap'"):
            engine("docker")
    finally:
        containers._checked.cache_clear()


@pytest.mark.images
@pytest.mark.podman
def test_podman_limits_it_cannot_set_are_named_with_the_fix(monkeypatch, tmp_path) -> None:
    """Podman's default rlimits exceed what a runtime without CAP_SYS_RESOURCE may set (this
    machine's case, which .ci/run configures away). Here a limit no machine can set (over
    fs.nr_open, the kernel's cap even for CAP_SYS_RESOURCE) stands in for it."""
    over = int(Path("/proc/sys/fs/nr_open").read_text()) + 1
    conf = tmp_path / "containers.conf"
    conf.write_text(f'[containers]\ndefault_ulimits = ["nofile={over}:{over}"]\n[engine]\nruntime = "runc"\n')
    monkeypatch.setenv("CONTAINERS_CONF", str(conf))
    containers._checked.cache_clear()
    try:
        with pytest.raises(EngineUnavailable, match=r"error setting rlimit.*set default_ulimits .*containers.conf"):
            engine("podman")
    finally:
        containers._checked.cache_clear()


@pytest.fixture(scope="module", params=ENGINES)
def harbor_image(image_store, request):
    lines: list[str] = []
    built = build_with_engine(
        HARBOR_TASK / "environment" / "Dockerfile", engine_name=request.param, progress=lines.append
    )
    return built, lines


def test_a_base_the_engine_lacks_is_stood_in_for_and_labelled(harbor_image) -> None:
    image, lines = harbor_image
    stood_in = "Ubuntu noble" if "Ubuntu noble" in image.bases[0] else "Debian trixie"  # the archive reached or not
    described = (
        f"{T_BENCH_UBUNTU} (stood in for by {stood_in} built with mmdebstrap (python3, python3-pip, python3-venv, "
        "tmux, curl, ca-certificates, procps, passwd, asciinema)"
    )
    assert len(image.bases) == 1 and image.bases[0].startswith(described), image.bases
    # the fallback says what differs and why: reported in the env's info with the episode
    assert ("; Debian trixie, not " in image.bases[0]) == (stood_in == "Debian trixie")
    assert image.root().stood_in == image.bases[0]
    record = engine(image.engine).inspect("image", T_BENCH_UBUNTU)
    assert record is not None
    labels = record["Config"]["Labels"]
    assert labels[STAND_IN_LABEL] and stood_in in labels["rlenvs.stands-in-with"]
    assert record["Config"]["WorkingDir"] == "/app"  # the t-bench image's, imported with the root
    assert any("COPY --chmod=755 tools/greet /opt/tools/greet" in line for line in lines), lines  # a step a line
    assert (image.workdir, image.user, image.environment["GREETING"]) == ("/app", "root", "hello")
    assert image.has_python_module("six") and not image.has_python_module("no_such_module")
    again: list[str] = []
    rebuilt = build_with_engine(
        HARBOR_TASK / "environment" / "Dockerfile", engine_name=image.engine, progress=again.append
    )
    assert rebuilt.id == image.id
    assert not any("importing" in line for line in again)  # the stand-in is the engine's now


def test_a_failing_step_names_its_line_and_a_digest_through_an_argument_is_refused(harbor_image, tmp_path) -> None:
    name = harbor_image[0].engine
    (tmp_path / "Dockerfile").write_text(f"FROM {T_BENCH_UBUNTU}\nRUN true\nRUN echo broken-step && exit 3\n")
    with pytest.raises(ImageBuildError, match=rf"line 3: `RUN echo broken-step && exit 3`\) failed in {name} build"):
        build_with_engine(tmp_path / "Dockerfile", engine_name=name)
    (tmp_path / "Dockerfile").write_text("FROM quay.io/nobody/unmapped:1\n")
    with pytest.raises(BaseImageError, match=rf"neither mapped .* or pull it into the {name} engine"):
        build_with_engine(tmp_path / "Dockerfile", engine_name=name)
    (tmp_path / "Dockerfile").write_text("ARG BASE=debian@sha256:" + "0" * 64 + "\nFROM $BASE\n")
    with pytest.raises(ImageBuildError, match=r"line 2\) pins debian@sha256:0+ by digest through a build argument"):
        build_with_engine(tmp_path / "Dockerfile", engine_name=name)


def test_a_base_pinned_by_digest_that_the_engine_lacks_is_stood_in_for_under_a_local_name(harbor_image, tmp_path):
    """Harbor tasks pin their bases by digest (5 of 7 single-task repositories measured). No
    stand-in can carry that digest, so the engine builds on the stand-in under a local name, in
    a copy of the Dockerfile; the task's Dockerfile is left as it was."""
    pinned = T_BENCH_UBUNTU.partition(":")[0] + "@sha256:" + "0" * 64
    text = f"FROM {pinned}\nRUN echo built > /built.txt\n"
    (tmp_path / "Dockerfile").write_text(text)
    image = build_with_engine(tmp_path / "Dockerfile", engine_name=harbor_image[0].engine)
    assert image.bases[0].startswith(f"{pinned} (stood in for by ") and image.workdir == "/app"
    assert (tmp_path / "Dockerfile").read_text() == text


def test_a_workdir_the_image_lacks_is_made_as_docker_run_makes_it(harbor_image, tmp_path) -> None:
    """buildah makes a WORKDIR only for a later step that writes there (all 95 EvoEval images
    on Podman lacked /app: `podman run --workdir` refused to start); Docker's run makes it."""
    (tmp_path / "Dockerfile").write_text(f"FROM {T_BENCH_UBUNTU}\nWORKDIR /made-late\n")
    image = build_with_engine(tmp_path / "Dockerfile", engine_name=harbor_image[0].engine)
    with ShellSession(image=image.root(), workdir=image.workdir) as session:
        session.reset([])
        assert session.run("pwd && stat -c '%U %a' .").stdout == "/made-late\nroot 755\n"


def test_an_image_the_engine_holds_is_used_as_it_is(harbor_image, tmp_path) -> None:
    """The engine's own image (pulled by the user: here one imported without rlenvs' label)
    is built on unchanged; without a python3 it cannot hold an episode, and says so."""
    runner = engine(harbor_image[0].engine)
    data = b"hello\n"
    with tarfile.open(tmp_path / "own.tar", mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    runner.import_root(str(tmp_path / "own.tar"), "rlenvs-test/own:1", [])
    try:
        (tmp_path / "Dockerfile").write_text("FROM rlenvs-test/own:1\nCOPY Dockerfile /copied\n")
        lines: list[str] = []
        image = build_with_engine(tmp_path / "Dockerfile", engine_name=runner.name, progress=lines.append)
        assert image.bases == (f"rlenvs-test/own:1 (the {runner.name} engine's own)",)
        assert f"base image rlenvs-test/own:1: the {runner.name} engine's own" in lines
        with pytest.raises(ImageBuildError, match=r"no python3 in /usr/bin or /usr/local/bin"):
            image.root()
    finally:
        subprocess.run([runner.cli, "rmi", "-f", "rlenvs-test/own:1"], capture_output=True, check=False)


def test_episodes_are_containers_of_their_own_without_network_or_extra_privileges(harbor_image) -> None:
    image = harbor_image[0]
    one, other = ShellSession(image=image.root(), workdir="/app"), ShellSession(image=image.root(), workdir="/app")
    try:
        one.reset([])
        other.reset([])
        assert one.run("echo mine > /app/left && echo x > /usr/bin/planted").ok
        assert other.run("ls /app /usr/bin/planted").stdout.count("left") == 0
        status = one.run("grep -E '^Cap(Eff|Bnd)' /proc/self/status; ls /sys/class/net").stdout
        assert "CapEff:\t00000000a80425fb" in status  # Docker's default capabilities, no CAP_SYS_ADMIN
        assert status.split()[-1] == "lo"  # no network but loopback
        # A user namespace would give back every capability inside it (the container has
        # CAP_SYS_ADMIN for the zygote, and Docker's seccomp profile then allows one): found by
        # trying, 2026-12-02: `unshare -Ur` gave CapEff 000001ffffffffff. The zygote's filter forbids it.
        userns = one.run("unshare -Ur id; python3 -c 'import os; os.unshare(os.CLONE_NEWUSER)'").stdout
        assert userns.count("Operation not permitted") == 2 and "uid=0" not in userns, userns
        assert one.run("python3 -c 'import threading; t = threading.Thread(target=print); t.start(); t.join()'").ok
        # the sandbox's seccomp filter below the zygote, and its own tmpfs on /dev/shm, inodes capped, over
        # the engine's; /tmp is the image's own (what its build put there is there), as in a plain container
        confined = one.run("grep Seccomp: /proc/self/status; stat -f -c %c:%T /dev/shm /tmp").stdout.split()
        assert confined[:3] == ["Seccomp:", "2", f"{Limits().tmpfs_inodes}:tmpfs"], confined
        assert not confined[3].endswith(":tmpfs"), confined
        changed = one.image_changes(skip=("/app",)).changed
        assert changed == ("/usr/bin/planted",), changed
        name = one._worker.container  # type: ignore[union-attr]
        one.reset([])  # a new container: nothing of the last episode
        assert "No such file" in one.run("cat /app/left /usr/bin/planted").stdout
        assert one.image_changes().changed == ()
    finally:
        one.close()
        other.close()
    assert engine(image.engine).inspect("container", name) is None  # removed, not left to the engine


def test_network_is_opted_into_on_a_container_engine_only() -> None:
    from rlenvs.envs.terminal.env import TerminalEnv

    with pytest.raises(ValueError, match=r"network=True needs backend='docker' or 'podman', not 'bwrap'"):
        load_task_folders(HARBOR_TASK, backend="bwrap", network=True)
    with pytest.raises(ValueError, match=r"are for task folders: they need task_dir"):
        TerminalEnv(network=True)


def test_a_task_folder_gets_the_engines_network_when_opted_into_and_not_refused(harbor_image, tmp_path) -> None:
    import shutil

    name = harbor_image[0].engine
    (task,) = load_task_folders(HARBOR_TASK, backend=name, network=True)
    assert task.image is not None and task.image.network
    with ShellSession(image=task.image, workdir=task.workdir) as session:
        session.reset([])
        assert session.run("ls /sys/class/net").stdout.split() != ["lo"]  # an interface of the engine's network
    refused = Path(shutil.copytree(HARBOR_TASK, tmp_path / "offline-task"))
    (refused / "task.toml").write_text(
        (HARBOR_TASK / "task.toml").read_text() + "\n[environment]\nallow_internet = false\n"
    )
    (task,) = load_task_folders(refused, backend=name, network=True)
    assert task.image is not None and not task.image.network  # the task's own say


@pytest.mark.images
@pytest.mark.docker
def test_auto_builds_with_the_first_engine_that_answers(image_store) -> None:
    (task,) = load_task_folders(HARBOR_TASK, backend="auto")
    assert task.image is not None and task.image.backend == "docker"
