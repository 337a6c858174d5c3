"""Episodes in Docker containers: the docker backend's side of `ShellSession(image=...)`.

One container per episode, made from the task's image (built by the daemon:
rlenvs.images.docker_build) and removed when the episode ends. Its process 1 is the
sandbox's zygote, under `docker run --interactive`: the same line protocol as under
bubblewrap, over the client's stdin and stdout, so a session's commands, limits, read-only
verdict folders and test runs work as they do there. The container has no network, Docker's
default capabilities for the agent (the zygote also keeps CAP_SYS_ADMIN, to make a
verdict's folders read-only, which its children drop before they run anything;
no-new-privileges keeps what they exec from regaining it), no user namespaces (a seccomp
filter of the zygote's: guest `nouserns`), and /tmp and /dev/shm as tmpfs of the session's
`disk_mb`. Writes elsewhere go to the daemon's storage, uncapped.

The host reads an episode's files through /proc/<its process 1>/root, as under bubblewrap,
and what it changed in the image from the container's overlay2 upper layer (the verdict's
toolchain check): the daemon must be local, use the overlay2 storage driver, and its data
root must be readable here (`check_daemon`).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

try:
    import docker
except ImportError:  # the optional extra `docker`: docker_client() says how to install it
    docker = None

from rlenvs.sandbox.launch import GUEST_MOUNT, WorkerLaunch, staged_guest_dir
from rlenvs.sandbox.rootfs import AGENT_CAPS, CAP_NUMBERS, EpisodeChanges, episode_changes
from rlenvs.sandbox.worker import Worker

LOG = logging.getLogger("rlenvs.sandbox")
DOCKER_OPAQUE_XATTR = "trusted.overlay.opaque"
"""overlay2's mark of an opaque folder: the daemon runs as the host's root."""
CLIENT_VARIABLES = ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "HOME")
"""What the `docker` client of an episode keeps of the host's environment: where the daemon is."""
API_TIMEOUT_S = 120


class DockerUnavailable(RuntimeError):
    """The docker backend cannot run here; the message says why and how to fix it."""


@functools.cache
def docker_client() -> Any:
    """The Docker SDK's client for the daemon the environment names (DOCKER_HOST, else the
    local socket), checked to answer and to hold episodes as this module needs."""
    if docker is None:
        raise DockerUnavailable("the docker backend needs the Docker SDK for Python: pip install 'rlenvs[docker]'")
    try:
        client = docker.from_env(timeout=API_TIMEOUT_S)
        client.ping()
        info = client.info()
    except docker.errors.DockerException as error:
        raise DockerUnavailable(
            f"no Docker daemon answers ({error}): start one (`dockerd`, or `systemctl start docker`), or point "
            "DOCKER_HOST at it; without Docker, backend='bwrap' builds and runs the image under bubblewrap"
        ) from None
    check_daemon(info)
    return client


def check_daemon(info: dict) -> None:
    """Refuse a daemon whose episodes' changes the host cannot read (module docstring)."""
    if info.get("Driver") != "overlay2":
        raise DockerUnavailable(
            f"the Docker daemon stores containers with {info.get('Driver')!r}, and the docker backend reads what an "
            "episode changed from overlay2's layers: run the daemon with the overlay2 storage driver, or use "
            "backend='bwrap'"
        )
    root = str(info.get("DockerRootDir", "/var/lib/docker"))
    if not os.access(root, os.R_OK | os.X_OK):
        raise DockerUnavailable(
            f"the Docker daemon's data root {root} cannot be read here, and the docker backend reads what an episode "
            "changed from its layers: run rlenvs as root on the daemon's machine, or use backend='bwrap'"
        )


CLI_VARIABLE = "RLENVS_DOCKER"


@functools.cache
def docker_cli() -> str:
    """The docker client that builds images and runs episodes: $RLENVS_DOCKER, else the
    first `docker` on PATH. (The SDK has no BuildKit and no plain pipes to a container.)"""
    named = os.environ.get(CLI_VARIABLE) or "docker"
    path = shutil.which(named)
    if path is None:
        raise DockerUnavailable(
            f"the docker backend runs each build and episode with the docker client {named!r}, which is not found: "
            f"install Docker's client (Debian: apt-get install docker.io), or name it in ${CLI_VARIABLE}"
        )
    return path


@dataclass(frozen=True)
class ContainerImage:
    """An image of the Docker daemon's that episodes run in (rlenvs.images.docker_build)."""

    image: str
    """The image's id."""
    python: str
    """The image's own Python 3, which runs the sandbox's zygote (standard library only)."""
    path: str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    backend: str = "docker"

    def launch(self, disk_mb: int, workspace: str) -> WorkerLaunch:
        name = f"rlenvs-episode-{uuid.uuid4().hex[:20]}"
        size = str(disk_mb << 20)
        argv = [
            docker_cli(), "run", "--interactive", "--rm", "--name", name, "--label", "rlenvs.episode=1",
            "--network", "none", "--hostname", "sandbox", "--user", "0:0",
            "--cap-drop", "ALL", *(f"--cap-add={cap}" for cap in ("CAP_SYS_ADMIN", *AGENT_CAPS)),
            "--security-opt", "no-new-privileges", *_unconfined(),
            "--tmpfs", f"/tmp:rw,nosuid,nodev,size={size}", "--shm-size", size,
            "--volume", f"{staged_guest_dir()}:{GUEST_MOUNT}:ro",
            "--workdir", workspace, "--env", f"PATH={self.path}", "--entrypoint", self.python,
            self.image, "-I", "-S", "-B", f"{GUEST_MOUNT}/zygote.py", "--workspace", workspace, "--session",
            "--forbid-userns",
            "--child-caps", ",".join(str(CAP_NUMBERS[cap]) for cap in AGENT_CAPS),
        ]  # fmt: skip
        return WorkerLaunch(
            argv=tuple(argv),
            lease=None,
            spawn=_start_client,
            container=name,
            cleanup=functools.partial(remove_container, name),
        )

    def host_root(self, worker: Worker) -> str:
        return f"/proc/{_inspect(worker)['State']['Pid']}/root"

    def changes(self, worker: Worker, skip: Sequence[str]) -> EpisodeChanges:
        data = _inspect(worker)["GraphDriver"]["Data"]
        lowers = data["LowerDir"].split(":")
        # GUEST_MOUNT: the daemon makes the volume's mount point in the container's own layer
        return episode_changes(data["UpperDir"], lowers, (*skip, GUEST_MOUNT), DOCKER_OPAQUE_XATTR)


@functools.cache
def _unconfined() -> tuple[str, ...]:
    """AppArmor's docker-default profile forbids mount, which the verdict's read-only folders
    need; the capabilities, seccomp and no-new-privileges stay."""
    options = docker_client().info().get("SecurityOptions") or []
    return ("--security-opt", "apparmor=unconfined") if any("apparmor" in option for option in options) else ()


def _start_client(argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """`docker run` with the host's say of where the daemon is (the worker's environment has
    nothing else of the host's)."""
    found = {name: os.environ[name] for name in CLIENT_VARIABLES if name in os.environ}
    return subprocess.Popen(argv, **{**popen, "env": {**popen.get("env", {}), **found}})


_inspected: dict[str, dict] = {}
_inspected_lock = threading.Lock()


def _inspect(worker: Worker) -> dict:
    """The daemon's record of the worker's container (its pid 1 and layers: fixed for its life)."""
    name = worker.container
    if name is None:
        raise DockerUnavailable("this worker runs in no container")
    with _inspected_lock:
        found = _inspected.get(name)
    if found is None:
        try:
            found = docker_client().api.inspect_container(name)
        except docker.errors.DockerException as error:
            raise DockerUnavailable(f"the episode's container {name} cannot be inspected: {error}") from None
        with _inspected_lock:
            _inspected[name] = found
    return found


def remove_container(name: str) -> None:
    """Remove an episode's container, running or not (gone already: nothing to do). A
    failure is logged, not raised: it runs as a worker is killed, which must finish."""
    with _inspected_lock:
        _inspected.pop(name, None)
    try:
        docker_client().api.remove_container(name, force=True)
    except docker.errors.NotFound:
        pass
    except (docker.errors.DockerException, DockerUnavailable) as error:
        if "already in progress" not in str(error):  # --rm beat us to it
            LOG.warning("the episode's container %s could not be removed: %s", name, error)
