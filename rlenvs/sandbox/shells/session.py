"""`ShellSession`: a persistent shell in a sandbox of its own, as a terminal env needs.

Unlike the pool (`Sandbox`), whose workers forget everything after each execution, a
session keeps its workspace and its shell state between commands: `cd`, variables,
functions, aliases and umask carry over as in a terminal. Each command still runs in a
fresh bash (see `guest/roles.SHELL_SESSION`) under the same limits as any sandboxed
execution, so a command that hangs or floods its output is killed on its own and the
session goes on from the state before it. Background processes do not outlive the
command that started them.

One command may see a folder read-only (`run(read_only=ReadOnlyFolder(...))`): a verdict's
own files while its tests run, which code of the agent's they run must not rewrite.

The workspace is a size-capped tmpfs inside the sandbox. The host reads it through
/proc/<sandbox pid 1>/root (`workspace_path`), with its own code and without following
symlinks (`rlenvs.envs.terminal.workspace.read_workspace`): nothing the agent can run takes part.

    with ShellSession() as session:
        session.reset([])                       # an empty workspace
        session.run("mkdir src && cd src")
        session.run("pwd").stdout               # '/workspace/src\\n'
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, Self

from rlenvs.sandbox.launch import (
    DEFAULT_WORKSPACE,
    WorkerLaunch,
    bwrap_launch,
    check_can_launch,
    check_workspace_path,
    find_bwrap,
    unsafe_launch,
)
from rlenvs.sandbox.requests import Limits
from rlenvs.sandbox.results import ExecResult
from rlenvs.sandbox.shells.containers import ContainerImage
from rlenvs.sandbox.shells.rootfs import EpisodeChanges, EpisodeImage, RootImage
from rlenvs.sandbox.worker import Worker, WorkerFailed, unsafe_workdir

LOST = "the session's sandbox died and its workspace with it; reset() starts a new one"
MAX_COMMAND_BYTES = 100_000
"""A command is passed to bash as one argument, and Linux caps one argument at 128 KiB."""


class SessionError(RuntimeError):
    """The session's sandbox could not be started or set up; the message says why."""


@dataclasses.dataclass(frozen=True)
class ReadOnlyFolder:
    """A folder one command sees read-only (`ShellSession.run`), but for the folders inside it
    in `writable`: a verdict's own files, which the code its tests run must not rewrite for
    the tests after it (`rlenvs.sandbox.shells.verdict`; guest `readonly`)."""

    folder: str
    writable: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for path in (self.folder, *self.writable):
            if not path.startswith("/") or ".." in path.split("/"):
                raise ValueError(f"a read-only folder and its writable ones are absolute paths, without '..': {path!r}")
        outside = [path for path in self.writable if not path.startswith(self.folder.rstrip("/") + "/")]
        if outside:
            raise ValueError(f"the writable folders of a read-only {self.folder} are inside it, not {outside}")

    def for_guest(self) -> dict:
        return {"folder": self.folder, "writable": list(self.writable)}


class _BrokenSandbox(SessionError):
    """The sandbox failed (not the files given to it): a fresh one may do (`reset`)."""


class WorkspaceEntry(Protocol):
    """Anything that can describe one file or folder for the zygote to write (see
    `rlenvs.envs.terminal.tasks.Entry`)."""

    def for_guest(self) -> dict: ...


class ShellSession:
    """One persistent shell and its workspace. One caller at a time (a lock enforces it).

    `workdir` is where the workspace is inside the sandbox (Terminal-Bench tasks use /app).
    `unsafe=True` runs without bubblewrap, in a host folder, under rlimits only (see
    `Sandbox`); `workdir` then does not apply.

    `image`: the session runs on a built image (rlenvs.images) instead of the host's /usr: a
    copy-on-write view of it, the agent its root, `workdir` the image's own folder. Each
    reset() starts a new view, so nothing of one episode reaches the next. Under bubblewrap
    (`RootImage`) the agent's writes anywhere count against `limits.disk_mb`; in a Docker
    container (`ContainerImage`) only those in /dev/shm do. On an image /tmp is the image's
    own folder, and may hold the workspace (`WORKDIR /tmp/project`).
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        unsafe: bool = False,
        python: str | None = None,
        workdir: str = DEFAULT_WORKSPACE,
        image: EpisodeImage | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a rlenvs.sandbox.Limits, got {type(limits).__name__}")
        if image is not None and not isinstance(image, (RootImage, ContainerImage)):
            raise TypeError(
                "image must be a rlenvs.sandbox.shells.rootfs.RootImage (Image.root()) or a "
                f"rlenvs.sandbox.shells.containers.ContainerImage, got {type(image).__name__}"
            )
        if image is not None and unsafe:
            raise ValueError("a session on an image needs the sandbox: unsafe=True has no image to run on")
        check_workspace_path(workdir, on_image=image is not None)
        if image is None:
            check_can_launch(unsafe, python)
        elif isinstance(image, RootImage):
            find_bwrap()  # the image brings its own python3 (RootImage.python)
        self.limits = limits or Limits()
        self.unsafe = unsafe
        self.python = python
        self.workdir = workdir
        self.image = image
        self._state = ""
        self._lost = False
        self._worker: Worker | None = None
        self._lock = threading.Lock()
        self._holder: list[Worker] = []
        self._finalizer = weakref.finalize(self, _kill, self._holder)

    # --- public API -------------------------------------------------------------------------

    @property
    def workspace_path(self) -> str:
        """The workspace as the host sees it (valid while the session lives; read it without
        following symlinks)."""
        return self.host_path(self.workdir)

    def host_path(self, path: str) -> str:
        """Where the sandbox's absolute `path` is for the host (valid while the session lives;
        read it without following symlinks: an absolute link there resolves on the host). In
        unsafe mode only the workspace has one."""
        worker = self._episode_worker()
        if worker is None:
            raise SessionError(LOST)
        if not path.startswith("/") or ".." in path.split("/"):
            raise ValueError(f"a sandbox path is absolute, without '..': got {path!r}")
        if self.unsafe:
            if path != self.workdir:
                raise SessionError(f"in unsafe mode only the workspace is reachable from the host, not {path}")
            if worker.workdir is None:
                raise SessionError(LOST)
            return worker.workdir
        if self.image is not None:
            return self.image.host_root(worker) + path
        return f"/proc/{worker.child_pid}/root{path}"

    def image_changes(self, skip: Sequence[str] = ()) -> EpisodeChanges:
        """On an image: the paths this episode changed in it, but at or below `skip`
        (rlenvs.sandbox.shells.rootfs.episode_changes)."""
        worker = self._episode_worker()
        if self.image is None or worker is None:
            raise SessionError("image_changes needs a live session on an image" if worker else LOST)
        return self.image.changes(worker, skip)

    @property
    def shell_state(self) -> str:
        """The shell's state as bash source (cd, umask, variables, functions, aliases): what
        `reset(shell_state=...)` takes to start another session where this one is."""
        return self._state

    def reset(
        self, entries: Iterable[WorkspaceEntry] = (), setup_script: str = "", shell_state: str = ""
    ) -> ExecResult | None:
        """Start over: no processes, an empty workspace and /tmp, a shell in the workspace
        in `shell_state` (default: fresh); then write `entries` and run `setup_script` (its
        result is returned; its own shell state is not kept). Raises SessionError when the
        files cannot be written, or when neither this sandbox nor a fresh one would start
        the episode.

        The last episode may have broken the sandbox (its zygote killed, hung, or unable to
        empty what the agent left): the episode then starts on a fresh sandbox, once, rather
        than fail a whole batch of resets for one agent's doing."""
        with self._lock:
            self._state = shell_state
            records = [entry.for_guest() for entry in entries]
            try:
                # on an image, every episode is a new copy-on-write view of it: nothing to wipe
                self._start_episode(records, new_sandbox=self.image is not None)
            except _BrokenSandbox as broken:
                try:
                    self._start_episode(records, new_sandbox=True)
                except _BrokenSandbox as again:
                    raise SessionError(
                        f"the session's sandbox could not start an episode ({broken}), nor could a fresh one "
                        f"({again}): the sandbox itself fails here, whatever the last episode did"
                    ) from None
            if not setup_script:
                return None
            return self._run(setup_script, self.limits, keep_state=False)

    def _start_episode(self, records: list[dict], *, new_sandbox: bool) -> None:
        """Empty the workspace and write `records` into it, on the current sandbox or, with
        `new_sandbox`, on a fresh one (whose workspace is empty already). Raises
        `_BrokenSandbox` when the sandbox fails (a fresh one may not), SessionError when
        the files cannot be written (a fresh one could not either)."""
        self._lost = False
        if new_sandbox:
            _kill(self._holder)
            self._worker = None
        try:
            worker = self._live_worker()
        except SessionError as error:
            raise _BrokenSandbox(str(error)) from None
        requests: list[dict] = [] if new_sandbox else [{"kind": "wipe"}]
        for request in [*requests, {"kind": "populate", "entries": records}]:
            answer = self._request(worker, request, self.limits.timeout_s)
            detail = answer.get("detail", answer["status"])
            if answer["status"] == "setup_error":
                raise SessionError(f"the workspace could not be set up: {detail}")
            if answer["status"] != "ok":
                raise _BrokenSandbox(f"{answer['status']}: {detail}")

    def add_files(
        self, entries: Iterable[WorkspaceEntry], folder: str, *, wipe: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> None:
        """Write `entries` into `folder` (absolute, below /tmp or the workspace), replacing
        whatever was there: for files the agent must not see before its episode ends. `wipe`:
        scratch folders to empty first, as `wipe(wipe)` would (in the same request); `remove`:
        entries below the writable folders to remove first (a folder with what it holds)."""
        if self.unsafe:
            raise SessionError("add_files needs the bubblewrap sandbox: in unsafe mode /tmp is the host's own")
        wiped = self._scratch(wipe)
        with self._lock:
            request = {"kind": "populate", "folder": folder, "entries": [entry.for_guest() for entry in entries]}
            if wiped:
                request["wipe"] = wiped
            if removed := list(remove):
                request["remove"] = removed
            answer = self._request(self._episode_worker(), request, self.limits.timeout_s)
            if answer["status"] != "ok":
                raise SessionError(f"files could not be added under {folder}: {answer.get('detail', answer['status'])}")

    def wipe(self, folders: Iterable[str]) -> None:
        """Empty `folders` (of the sandbox's own writable ones, /tmp and /dev/shm; not the
        workspace) as a new episode empties them all: a verdict's tests then start with
        nothing the agent left there. Every process the agent started is gone already."""
        if self.unsafe:
            raise SessionError("wipe needs the bubblewrap sandbox: in unsafe mode /tmp is the host's own")
        folders = self._scratch(folders)
        with self._lock:
            answer = self._request(self._episode_worker(), {"kind": "wipe", "folders": folders}, self.limits.timeout_s)
            if answer["status"] != "ok":
                raise SessionError(
                    f"{', '.join(folders)} could not be emptied: {answer.get('detail', answer['status'])}"
                )

    def _scratch(self, folders: Iterable[str]) -> list[str]:
        folders = list(folders)
        holding = [
            folder for folder in folders if (self.workdir.rstrip("/") + "/").startswith(folder.rstrip("/") + "/")
        ]
        if holding:
            raise ValueError(
                f"wipe empties scratch folders such as /dev/shm, not {holding[0]}, which holds the workspace "
                f"{self.workdir}: use reset()"
            )
        return folders

    def run(
        self,
        command: str,
        *,
        timeout_s: float | None = None,
        fresh: bool = False,
        output_bytes: int | None = None,
        read_only: ReadOnlyFolder | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run one command in the session's shell and return its output (stdout and stderr
        together, in `stdout`). `fresh=True`: in a new shell in the workspace, neither
        using nor changing the session's shell state (for checks run after the agent).
        `output_bytes`: this command's output cap instead of the session's (a verdict's
        tests may print more than an agent's command should). `read_only`: a folder the
        command and everything it starts see read-only (bubblewrap only); a command whose
        folder cannot be made so does not run, and says why in its output. `environment`:
        the command runs in a bash of its own (`bash --noprofile --norc -c`, in the
        workspace; `fresh` implied) that the sandbox starts with exactly these variables,
        without the session's shell or its variables (a verdict's tests)."""
        if not isinstance(command, str):
            raise TypeError(f"command must be a str, got {type(command).__name__}")
        if read_only is not None and self.unsafe:
            raise SessionError("a read-only folder needs the bubblewrap sandbox: in unsafe mode /tmp is the host's own")
        size = len(command.encode("utf-8", "replace"))
        if environment is not None:
            environment = {_text(name): _text(value) for name, value in environment.items()}
            size += sum(len(f"{name}={value}".encode("utf-8", "replace")) + 1 for name, value in environment.items())
        if size > MAX_COMMAND_BYTES:
            return ExecResult(
                status="error",
                stdout="",
                stderr="",
                exit_code=None,
                signal=None,
                truncated=False,
                duration_s=0.0,
                detail=f"the command is over {MAX_COMMAND_BYTES} bytes: write long content to a file in several steps",
            )
        timeout_s = self.limits.timeout_s if timeout_s is None else timeout_s
        output_bytes = self.limits.output_bytes if output_bytes is None else output_bytes
        limits = dataclasses.replace(self.limits, timeout_s=timeout_s, output_bytes=output_bytes)
        with self._lock:
            return self._run(
                command,
                limits,
                keep_state=not fresh and environment is None,
                read_only=read_only,
                environment=environment,
            )

    def close(self) -> None:
        with self._lock:
            _kill(self._holder)
            self._worker = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------

    def _run(
        self,
        command: str,
        limits: Limits,
        *,
        keep_state: bool,
        read_only: ReadOnlyFolder | None = None,
        environment: dict[str, str] | None = None,
    ) -> ExecResult:
        worker = self._episode_worker()
        request = {
            "kind": "bash" if environment is None else "script",
            "code": command.encode("utf-8", "replace").decode(),
            "stdin": self._state if keep_state else "",
            # capped as a whole by a memory cgroup and its tmpfs, a session's processes get no
            # address-space rlimit and files up to the disk's size, as in a container: runtimes
            # (Java, Go) reserve far more than they use, compilers write large objects
            "limits": limits.for_guest(per_process=worker is None or not worker.memory_capped),
        }
        if environment is not None:
            request["script"] = {"environment": environment, "cwd": None if self.unsafe else self.workdir}
        if read_only is not None:
            request["read_only"] = read_only.for_guest()
        answer = self._request(worker, request, limits.timeout_s)
        if keep_state and "state" in answer:
            self._state = answer["state"]
        return ExecResult.from_answer(answer)

    def _request(self, worker: Worker | None, request: dict, timeout_s: float) -> dict:
        if worker is None:
            return {"status": "sandbox_error", "detail": LOST}
        try:
            return worker.request(request, timeout_s)
        except WorkerFailed as error:
            self._lost = True
            return {"status": "sandbox_error", "detail": f"{error}; {LOST}"}

    def _episode_worker(self) -> Worker | None:
        """The worker of the current episode, or None when it died since the reset: a
        silently restarted sandbox would hand the agent an empty workspace mid-episode."""
        if self._lost or (self._worker is not None and not self._worker.alive):
            self._lost = True
            return None
        return self._live_worker()

    def _live_worker(self) -> Worker:
        if self._worker is not None and not self._worker.alive:
            _kill(self._holder)
            self._worker = None
        if self._worker is None:
            try:
                self._worker = Worker(self._launch())
            except WorkerFailed as error:
                raise SessionError(str(error)) from None
            self._holder[:] = [self._worker]
        return self._worker

    def _launch(self) -> WorkerLaunch:
        if self.image is not None:
            return self.image.launch(self.limits, self.workdir)
        if self.unsafe:
            return unsafe_launch(self.python, unsafe_workdir(), session=True)
        return bwrap_launch(self.python, self.limits, session=True, workspace=self.workdir)


def _text(text: str) -> str:
    """`text` as the sandbox gets it: UTF-8, anything that is not replaced."""
    return text.encode("utf-8", "replace").decode()


def _kill(holder: list[Worker]) -> None:
    for worker in holder:
        worker.kill()
    holder.clear()
