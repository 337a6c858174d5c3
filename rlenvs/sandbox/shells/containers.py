"""Episodes in containers of a container engine, Docker or Podman: the docker and podman
backends' side of `ShellSession(image=...)`.

One container per episode, made from the task's image (built by the engine:
rlenvs.images.engine_build) and removed when the episode ends. Its process 1 is the
sandbox's zygote, under `docker run --interactive` (or `podman run`): the same protocol
as under bubblewrap, over the client's stdin and stdout, so a session's commands, limits,
read-only verdict folders and test runs work as they do there. The container has no network,
the engine's default capabilities for the agent (Docker's list; the zygote also keeps
CAP_SYS_ADMIN, to make a verdict's folders read-only, which its children drop before they run
anything; no-new-privileges keeps what they exec from regaining it), no user namespaces (a
seccomp filter of the zygote's, and the sandbox's own on every process below it: guest
`seccomp`), and /dev/shm a tmpfs of the session's `disk_mb` and inode cap. Writes elsewhere
(the workspace, /tmp: the image's own, as the verdict keeps them) go to the engine's
storage, uncapped.

The host reads an episode's files through /proc/<its process 1>/root, as under bubblewrap,
and what it changed in the image from the container's overlay upper layer (the verdict's
toolchain check): the engine must run on this machine as root with overlay storage, and its
data root must be readable here (`Engine.check`).

Docker is reached through its SDK (`DockerEngine`), Podman through its command line (whose
`inspect`, `rm` and `import` answer as Docker's do). Both build and run with their command
line: the SDK has no BuildKit and no plain pipes to a container.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

try:
    import docker
except ImportError:  # the optional extra `docker`: engine("docker") says how to install it
    docker = None

from rlenvs.sandbox.launch import GUEST_MOUNT, WorkerLaunch, staged_guest_dir, zygote_tmpfs_args
from rlenvs.sandbox.requests import Limits
from rlenvs.sandbox.shells.rootfs import AGENT_CAPS, CAP_NUMBERS, EpisodeChanges, episode_changes, image_entry
from rlenvs.sandbox.worker import Worker

LOG = logging.getLogger("rlenvs.sandbox")
ENGINE_OPAQUE_XATTR = "trusted.overlay.opaque"
"""overlay's mark of an opaque folder in an engine's storage: the engine runs as the host's root."""
CLIENT_VARIABLES = (
    "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "HOME",
    "CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "PATH",
)  # fmt: skip
"""What an episode's client keeps of the host's environment: where the engine and its settings
are, and PATH (Podman runs the network's helpers, iptables among them, from it)."""
API_TIMEOUT_S = 120
CLI_TIMEOUT_S = 120
CLI_VARIABLES = {"docker": "RLENVS_DOCKER", "podman": "RLENVS_PODMAN"}


RLIMITS_REFUSED = "error setting rlimit"
RLIMITS_FIX = (
    "set default_ulimits to limits no higher than this machine's own (`ulimit -Hn`, `ulimit -Hu`), e.g. "
    '["nofile=1024:1024", "nproc=4096:4096"], in the [containers] table of /etc/containers/containers.conf'
)


class EngineUnavailable(RuntimeError):
    """A container backend cannot run here; the message says why and how to fix it."""


class Engine:
    """A container engine driven by its command line `cli` (Podman's; Docker's answers the
    same, but `DockerEngine` uses the SDK where it can)."""

    name = "podman"
    own_paths: tuple[str, ...] = ("/run/.containerenv", "/etc/mtab")
    """What the engine writes into every container's own layer as it starts it (not the
    episode's change): Podman's container marker and its /etc/mtab link to /proc/mounts."""

    def __init__(self, cli: str) -> None:
        self.cli = cli

    def _run(self, *args: str, what: str) -> str:
        try:
            done = subprocess.run([self.cli, *args], capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise EngineUnavailable(f"{self.name} could not {what}: {error}") from None
        if done.returncode != 0:
            raise EngineUnavailable(f"{self.name} could not {what}: {(done.stderr or done.stdout).strip()[-800:]}")
        return done.stdout

    def check(self) -> None:
        """Refuse an engine whose episodes' changes the host cannot read (module docstring),
        or that cannot start a container here (`_probe`)."""
        info = json.loads(self._run("info", "--format", "json", what="describe itself (podman info)"))
        store = info.get("store", {})
        _check_storage(self.name, store.get("graphDriverName"), "overlay", store.get("graphRoot", ""))
        self._probe()

    def _probe(self) -> None:
        """Start a container on an empty root: the runtime sets it up (rlimits, cgroups) before
        it looks for the command, so "not found" means a container would start. Podman's
        defaults fail where no CAP_SYS_RESOURCE lets the runtime raise the rlimits (in a
        container, say), and crun fails on cgroups v1 hybrid mode."""
        with tempfile.TemporaryDirectory() as root:
            try:
                self._run(
                    "run", "--rm", "--network", "none", "--rootfs", root, "/rlenvs-probe", what="start a container"
                )
            except EngineUnavailable as error:
                text = str(error)
                if "/rlenvs-probe" in text and ("not found" in text or "no such file" in text):
                    return
                if RLIMITS_REFUSED in text:
                    raise EngineUnavailable(
                        f"{text[-400:]}: its runtime may not set the container's rlimits here; {RLIMITS_FIX}"
                    ) from None
                raise EngineUnavailable(
                    f'{text[-400:]}; where crun fails on cgroups v1 (hybrid mode), set runtime = "runc" in the [engine] '
                    "table of /etc/containers/containers.conf (apt-get install runc)"
                ) from None

    def inspect(self, kind: str, name: str) -> dict | None:
        """The engine's record of a container or image (`kind`), or None: there is none."""
        try:
            out = self._run(kind, "inspect", name, what=f"inspect the {kind} {name}")
        except EngineUnavailable as error:
            if "no such" in str(error).lower() or "not known" in str(error).lower():  # Docker's; Podman's image
                return None
            raise
        found = json.loads(out)
        return found[0] if found else None

    def remove_container(self, name: str) -> None:
        self._run("rm", "--force", "--ignore", name, what=f"remove the container {name}")

    def import_root(self, archive: str, name: str, changes: Sequence[str]) -> None:
        args = [arg for change in changes for arg in ("--change", change)]
        self._run("import", "--quiet", *args, archive, name, what=f"import a root as {name}")

    def run_options(self) -> tuple[str, ...]:
        """What every episode's `run` adds (Podman: nothing)."""
        return ()


class DockerEngine(Engine):
    """Docker, through its SDK (the daemon DOCKER_HOST names, else the local socket)."""

    name = "docker"
    own_paths = ()

    def __init__(self, cli: str) -> None:
        super().__init__(cli)
        if docker is None:
            raise EngineUnavailable("the docker backend needs the Docker SDK for Python: pip install 'rlenvs[docker]'")
        try:
            self.client = docker.from_env(timeout=API_TIMEOUT_S)
            self.client.ping()
            self._info = self.client.info()
        except docker.errors.DockerException as error:
            raise EngineUnavailable(
                f"no Docker daemon answers ({error}): start one (`dockerd`, or `systemctl start docker`), or point "
                "DOCKER_HOST at it; without Docker, backend='bwrap' builds and runs the image under bubblewrap"
            ) from None

    def check(self) -> None:
        check_daemon(self._info)

    def inspect(self, kind: str, name: str) -> dict | None:
        call = self.client.api.inspect_container if kind == "container" else self.client.api.inspect_image
        try:
            return call(name)
        except docker.errors.NotFound:
            return None
        except docker.errors.DockerException as error:
            raise EngineUnavailable(f"docker could not inspect the {kind} {name}: {error}") from None

    def remove_container(self, name: str) -> None:
        try:
            self.client.api.remove_container(name, force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as error:
            if "already in progress" not in str(error):  # --rm beat us to it
                raise EngineUnavailable(f"docker could not remove the container {name}: {error}") from None

    def import_root(self, archive: str, name: str, changes: Sequence[str]) -> None:
        repository, tag = _split_tag(name)
        try:
            self.client.api.import_image(src=archive, repository=repository, tag=tag, changes=list(changes))
        except docker.errors.DockerException as error:
            raise EngineUnavailable(f"docker could not import a root as {name}: {error}") from None

    def run_options(self) -> tuple[str, ...]:
        """AppArmor's docker-default profile forbids mount, which the verdict's read-only
        folders need; the capabilities, seccomp and no-new-privileges stay."""
        options = self._info.get("SecurityOptions") or []
        return ("--security-opt", "apparmor=unconfined") if any("apparmor" in option for option in options) else ()


def check_daemon(info: dict) -> None:
    """Refuse a Docker daemon whose episodes' changes the host cannot read (module docstring)."""
    _check_storage("docker", info.get("Driver"), "overlay2", str(info.get("DockerRootDir", "/var/lib/docker")))


def _check_storage(name: str, driver: object, wanted: str, root: str) -> None:
    if driver != wanted:
        raise EngineUnavailable(
            f"the {name} engine stores containers with {driver!r}, and the {name} backend reads what an episode "
            f"changed from {wanted}'s layers: run it with the {wanted} storage driver, or use backend='bwrap'"
        )
    if not os.access(root, os.R_OK | os.X_OK):
        raise EngineUnavailable(
            f"the {name} engine's data root {root} cannot be read here, and the {name} backend reads what an episode "
            "changed from its layers: run rlenvs as root on the engine's machine, or use backend='bwrap'"
        )


def _split_tag(name: str) -> tuple[str, str]:
    repository, _, tag = name.rpartition(":")
    if not repository or "/" in tag:  # no tag, or the colon of a registry's port
        return name, "latest"
    return repository, tag


ENGINES = ("docker", "podman")
"""The container engines, in the order backend="auto" tries them."""


def engine(name: str) -> Engine:
    """The engine `name` (of ENGINES), checked to answer and to hold episodes as this module
    needs (EngineUnavailable, with the fix, where it cannot). Checked once a process."""
    found = _checked(name)
    if isinstance(found, EngineUnavailable):
        raise EngineUnavailable(str(found))
    return found


@functools.cache
def _checked(name: str) -> Engine | EngineUnavailable:
    if name not in ENGINES:
        raise ValueError(f"the container engines are {', '.join(ENGINES)}, not {name!r}")
    try:
        made = DockerEngine(engine_cli(name)) if name == "docker" else Engine(engine_cli(name))
        made.check()
    except EngineUnavailable as error:
        return error
    return made


def engine_cli(name: str) -> str:
    """The client that builds images and runs episodes: $RLENVS_DOCKER (or $RLENVS_PODMAN),
    else the first `docker` (or `podman`) on PATH."""
    variable = CLI_VARIABLES[name]
    named = os.environ.get(variable) or name
    path = shutil.which(named)
    if path is None:
        install = "apt-get install docker.io" if name == "docker" else "apt-get install podman"
        raise EngineUnavailable(
            f"the {name} backend runs each build and episode with the {name} client {named!r}, which is not found: "
            f"install it (Debian: {install}), or name it in ${variable}"
        )
    return path


@dataclass(frozen=True)
class ContainerImage:
    """An image of a container engine's that episodes run in (rlenvs.images.engine_build)."""

    image: str
    """The image's id."""
    python: str
    """The image's own Python 3, which runs the sandbox's zygote (standard library only)."""
    path: str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    backend: str = "docker"
    """The engine: "docker" or "podman"."""
    user: str = ""
    """Whom the agent's commands run as, `uid:gid:groups` (rlenvs.images.layers.ImageUser);
    "": the image's root. The zygote and the verdict's tests are root either way."""
    network: bool = False
    """Whether episodes have the engine's default network (a task folder's, when its user
    opts in: rlenvs.envs.terminal.folders.load_task_folders); else none but loopback."""
    lowers: tuple[str, ...] = ()
    """Its layer folders in the engine's storage, top first: what the host reads of the image."""
    read_only: tuple[tuple[str, str], ...] = ()
    """(host folder, path in the container) mounted read-only in every episode: the verdict's
    own pytest and test packages (rlenvs.images.verdict_packages), which the image then needs
    not have. The agent has no CAP_SYS_ADMIN to mount over them."""
    stood_in: str = ""
    """What ran in place of the image's base, where rlenvs stood in for it (its FROM, the root
    built instead, what differs: rlenvs.images.bases); reported as the env's
    `info["stood_in"]` so a run on a stand-in is never mistaken for one on the real image."""

    def launch(self, limits: Limits, workspace: str) -> WorkerLaunch:
        """An episode's container: /dev/shm a tmpfs of `limits.disk_mb` MiB and
        `limits.tmpfs_inodes` inodes, which the zygote mounts over the engine's (--shm-size
        caps bytes only); /tmp the image's own; the engine's memory cgroup capped at
        `limits.sandbox_memory_bytes`, swap included."""
        runner = engine(self.backend)
        name = f"rlenvs-episode-{uuid.uuid4().hex[:20]}"
        disk_mb, inodes, memory = limits.disk_mb, limits.tmpfs_inodes, str(limits.sandbox_memory_bytes)
        size = str(disk_mb << 20)
        argv = [
            runner.cli, "run", "--interactive", "--rm", "--name", name, "--label", "rlenvs.episode=1",
            *(() if self.network else ("--network", "none")), "--hostname", "sandbox", "--user", "0:0",
            "--cap-drop", "ALL", *(f"--cap-add={cap}" for cap in ("CAP_SYS_ADMIN", *AGENT_CAPS)),
            "--security-opt", "no-new-privileges", *runner.run_options(),
            "--memory", memory, "--memory-swap", memory,
            "--shm-size", size,
            "--volume", f"{staged_guest_dir()}:{GUEST_MOUNT}:ro",
            *(option for host, path in self.read_only for option in ("--volume", f"{host}:{path}:ro")),
            "--workdir", "/", "--env", f"PATH={self.path}", "--entrypoint", self.python,
            self.image, "-I", "-S", "-B", f"{GUEST_MOUNT}/zygote.py", "--workspace", workspace, "--session",
            "--forbid-userns", "--make-workspace",
            *zygote_tmpfs_args(disk_mb, inodes, mount_on=("/dev/shm",)),
            "--child-caps", ",".join(str(CAP_NUMBERS[cap]) for cap in AGENT_CAPS),
            *(("--agent-user", self.user) if self.user else ()),
        ]  # fmt: skip
        return WorkerLaunch(
            argv=tuple(argv),
            lease=None,
            spawn=_start_client,
            container=name,
            cleanup=functools.partial(remove_container, self.backend, name),
        )

    def host_root(self, worker: Worker) -> str:
        return f"/proc/{self._inspect(worker)['State']['Pid']}/root"

    def changes(self, worker: Worker, skip: Sequence[str]) -> EpisodeChanges:
        data = self._inspect(worker)["GraphDriver"]["Data"]
        lowers = data["LowerDir"].split(":")
        # GUEST_MOUNT: the engine makes the volume's mount point in the container's own layer
        skipped = (*skip, GUEST_MOUNT, *engine(self.backend).own_paths)
        # and the read-only volumes' mount points, with their folders the image lacks: those
        # folders are the engine's, what is in them (the agent's, should it move a volume aside
        # and make a folder of its own there) is read as any change is
        made = {parent for _, path in self.read_only for parent in _folders_to(path)}
        engines = tuple(path for path in made if image_entry(lowers, path, ENGINE_OPAQUE_XATTR) is None)
        return episode_changes(data["UpperDir"], lowers, skipped, ENGINE_OPAQUE_XATTR, mount_points=engines)

    def _inspect(self, worker: Worker) -> dict:
        """The engine's record of the worker's container (its pid 1 and layers: fixed for its life)."""
        name = worker.container
        if name is None:
            raise EngineUnavailable("this worker runs in no container")
        with _inspected_lock:
            found = _inspected.get(name)
        if found is None:
            found = engine(self.backend).inspect("container", name)
            if found is None:
                raise EngineUnavailable(f"the episode's container {name} is gone")
            with _inspected_lock:
                _inspected[name] = found
        return found


def _start_client(argv: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """`docker run` (or `podman run`) with the host's say of where the engine is (the
    worker's environment has nothing else of the host's)."""
    found = {name: os.environ[name] for name in CLIENT_VARIABLES if name in os.environ}
    return subprocess.Popen(argv, **{**popen, "env": {**popen.get("env", {}), **found}})


_inspected: dict[str, dict] = {}
_inspected_lock = threading.Lock()


def remove_container(backend: str, name: str) -> None:
    """Remove an episode's container, running or not (gone already: nothing to do). A
    failure is logged, not raised: it runs as a worker is killed, which must finish."""
    with _inspected_lock:
        _inspected.pop(name, None)
    try:
        engine(backend).remove_container(name)
    except EngineUnavailable as error:
        LOG.warning("the episode's container %s could not be removed: %s", name, error)


def _folders_to(path: str) -> list[str]:
    """`path` and the folders above it, "/" aside: /opt/a/b -> /opt, /opt/a, /opt/a/b."""
    parts = path.strip("/").split("/")
    return ["/" + "/".join(parts[: count + 1]) for count in range(len(parts))]
