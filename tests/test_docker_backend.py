"""The docker backend (rlenvs.images.docker_build, rlenvs.sandbox.containers) against a real
Docker daemon: its stand-ins for bases it cannot pull, its build failures and refusals, and
episodes, one container each. The Terminal-v0 verdicts on it are in test_terminal_images.py
(its Harbor fixture runs on both backends that build)."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from rlenvs.envs.terminal.folders import load_task_folders
from rlenvs.images.build import ImageBuildError
from rlenvs.images.docker_build import STAND_IN_LABEL, build_with_docker
from rlenvs.sandbox import containers
from rlenvs.sandbox.containers import DockerUnavailable, check_daemon, docker_cli
from rlenvs.sandbox.session import ShellSession

HARBOR_TASK = Path(__file__).parent / "data" / "images" / "harbor-task"
T_BENCH_UBUNTU = "ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624"
"""The fixture's base: its stand-in is made once a run, for every test here."""


def test_a_daemon_that_stores_containers_otherwise_than_overlay2_is_refused_by_name() -> None:
    with pytest.raises(DockerUnavailable, match=r"stores containers with 'vfs'.*overlay2.*backend='bwrap'"):
        check_daemon({"Driver": "vfs", "DockerRootDir": "/var/lib/docker"})
    with pytest.raises(DockerUnavailable, match=r"data root /nonexistent/docker cannot be read here"):
        check_daemon({"Driver": "overlay2", "DockerRootDir": "/nonexistent/docker"})


def test_a_missing_client_or_daemon_says_how_to_get_one(monkeypatch) -> None:
    monkeypatch.setenv(containers.CLI_VARIABLE, "no-such-docker-client")
    docker_cli.cache_clear()
    try:
        with pytest.raises(DockerUnavailable, match=r"'no-such-docker-client', which is not found.*RLENVS_DOCKER"):
            docker_cli()
    finally:
        docker_cli.cache_clear()
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    containers.docker_client.cache_clear()
    try:
        with pytest.raises(DockerUnavailable, match=r"no Docker daemon answers .*DOCKER_HOST.*backend='bwrap'"):
            containers.docker_client()
    finally:
        containers.docker_client.cache_clear()


@pytest.fixture(scope="module")
def harbor_image(image_store):
    lines: list[str] = []
    image = build_with_docker(HARBOR_TASK / "environment" / "Dockerfile", progress=lines.append)
    return image, lines


@pytest.mark.images
@pytest.mark.docker
def test_a_base_the_daemon_lacks_is_stood_in_for_and_labelled(harbor_image) -> None:
    image, lines = harbor_image
    assert image.bases == (
        f"{T_BENCH_UBUNTU} (stood in for by Debian trixie built with mmdebstrap (python3, python3-pip, python3-venv, "
        "python3-pytest, tmux, curl, ca-certificates, procps, passwd))",
    )
    labels = containers.docker_client().api.inspect_image(T_BENCH_UBUNTU)["Config"]["Labels"]
    assert labels[STAND_IN_LABEL] and "Debian trixie" in labels["rlenvs.stands-in-with"]
    assert any("COPY --chmod=755 tools/greet /opt/tools/greet" in line for line in lines), lines  # a step a line
    assert (image.workdir, image.user, image.environment["GREETING"]) == ("/app", "root", "hello")
    assert image.has_python_module("six") and not image.has_python_module("no_such_module")
    again: list[str] = []
    assert build_with_docker(HARBOR_TASK / "environment" / "Dockerfile", progress=again.append).id == image.id
    assert not any("importing" in line for line in again)  # the stand-in is the daemon's now


@pytest.mark.images
@pytest.mark.docker
def test_a_failing_step_names_its_line_and_a_digest_is_refused(harbor_image, tmp_path) -> None:
    (tmp_path / "Dockerfile").write_text(f"FROM {T_BENCH_UBUNTU}\nRUN true\nRUN echo broken-step && exit 3\n")
    with pytest.raises(ImageBuildError, match=r"line 3: `RUN echo broken-step && exit 3`\) failed in docker build"):
        build_with_docker(tmp_path / "Dockerfile")
    (tmp_path / "Dockerfile").write_text("FROM debian@sha256:" + "0" * 64 + "\n")
    with pytest.raises(ImageBuildError, match=r"line 1\) pins debian@sha256:0+ by digest.*pull the image"):
        build_with_docker(tmp_path / "Dockerfile")


@pytest.mark.images
@pytest.mark.docker
def test_an_image_the_daemon_holds_is_used_as_it_is(harbor_image, tmp_path) -> None:
    """The daemon's own image (pulled by the user: here one imported without rlenvs' label)
    is built on unchanged; without a python3 it cannot hold an episode, and says so."""
    data = b"hello\n"
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    client = containers.docker_client()
    client.api.import_image_from_data(archive.getvalue(), repository="rlenvs-test/own", tag="1")
    try:
        (tmp_path / "Dockerfile").write_text("FROM rlenvs-test/own:1\nCOPY Dockerfile /copied\n")
        lines: list[str] = []
        image = build_with_docker(tmp_path / "Dockerfile", progress=lines.append)
        assert image.bases == ("rlenvs-test/own:1 (the daemon's own)",)
        assert "base image rlenvs-test/own:1: the daemon's own" in lines
        with pytest.raises(ImageBuildError, match=r"no python3 in /usr/bin or /usr/local/bin"):
            image.root()
    finally:
        subprocess.run([docker_cli(), "rmi", "-f", "rlenvs-test/own:1"], capture_output=True, check=False)


@pytest.mark.images
@pytest.mark.docker
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
        changed = one.image_changes(skip=("/app",)).changed
        assert changed == ("/usr/bin/planted",), changed
        name = one._worker.container  # type: ignore[union-attr]
        one.reset([])  # a new container: nothing of the last episode
        assert "No such file" in one.run("cat /app/left /usr/bin/planted").stdout
        assert one.image_changes().changed == ()
    finally:
        one.close()
        other.close()
    listed = subprocess.run(
        [docker_cli(), "ps", "--all", "--quiet", "--filter", f"name={name}"], capture_output=True, text=True
    )
    assert listed.stdout.strip() == ""  # removed, not left to the daemon


@pytest.mark.images
@pytest.mark.docker
def test_auto_builds_with_docker_where_a_daemon_answers(harbor_image) -> None:
    (task,) = load_task_folders(HARBOR_TASK, backend="auto")
    assert task.image is not None and task.image.backend == "docker"
