"""Building a Dockerfile into an image without Docker: its base mapped to a local root
(rlenvs.images.bases), its RUN steps run in the sandbox over the layers so far, its COPY
steps done by the host, each step a layer of the cache (rlenvs.images.layers).

What a build does, instruction by instruction:

- FROM (one stage; `--platform` and `AS name` accepted): the base image's root, built once;
  the build starts in its WORKDIR with its ENV, as Docker's does.
- RUN (shell and JSON forms): bubblewrap over the layers (rlenvs.sandbox.rootfs), as the
  image's root (or USER) in a user namespace, with the network (apt from the Debian
  archive, pip from the package index), Docker's default capabilities, the ENV and ARG
  values as its environment, in the WORKDIR. A failing step stops the build, naming the
  Dockerfile line and the end of its output.
- COPY and ADD of local files (`--chown`, `--chmod`, `--link`; .dockerignore honoured):
  copied by the host into a layer of their own, owned as the image's user they name.
- WORKDIR (made when missing), ENV, ARG (defaults only), USER, SHELL; LABEL, EXPOSE, CMD,
  VOLUME, HEALTHCHECK, STOPSIGNAL, MAINTAINER and ONBUILD change no file and are noted only.

Refused, naming the line and what would make it work: a second FROM (multi-stage builds),
ENTRYPOINT, heredocs, COPY --from / --parents / --exclude, ADD of URLs and of archives.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import select
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from rlenvs.images.bases import DEFAULT_PATH, BaseRoot, base_for, make_root, stand_in
from rlenvs.images.dockerfile import (
    Copy,
    DockerfileError,
    Instruction,
    absolute,
    copy_sources,
    dockerignore,
    env_instruction,
    ignored,
    instructions,
    parse_copy,
    short,
    words,
)
from rlenvs.images.layers import (
    ImageUser,
    Layer,
    LayerStore,
    has_python_module,
    image_python,
    image_table,
    image_user,
    layer_key,
    lookup,
)
from rlenvs.sandbox.launch import find_bwrap
from rlenvs.sandbox.rootfs import AGENT_CAPS, IdMap, Overlay, RootImage, bwrap_over_root, spawn

LOG = logging.getLogger("rlenvs.images")
STEP_TIMEOUT_S = 1800.0
OUTPUT_TAIL = 3000
_NO_FILES = frozenset(("LABEL", "EXPOSE", "CMD", "VOLUME", "HEALTHCHECK", "STOPSIGNAL", "MAINTAINER", "ONBUILD"))


class ImageBuildError(ValueError):
    """A Dockerfile that cannot be built here; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Image:
    """A built image: its layers (base first) and what a container of it starts with."""

    key: str
    layers: tuple[Layer, ...]
    workdir: str
    environment: dict[str, str]
    user: str
    base: str
    """The FROM name, and what stood in for it."""
    base_root: str
    note: str = ""

    @property
    def lowers(self) -> tuple[str, ...]:
        """The layer folders as overlayfs takes them, top first."""
        return tuple(str(layer.diff) for layer in reversed(self.layers))

    def has_python_module(self, name: str) -> bool:
        """Whether the image's python3 can import the top-level module `name` (layers.has_python_module)."""
        return has_python_module(self.lowers, name)

    @functools.cached_property
    def agent_user(self) -> ImageUser | None:
        """The final USER, whom the agent's commands run as (None: root; layers.image_user)."""
        try:
            return image_user(self.lowers, self.user)
        except ValueError as error:
            raise ImageBuildError(str(error)) from None

    def root(self) -> RootImage:
        """What a shell session runs on (rlenvs.sandbox.ShellSession(image=...))."""
        python = image_python(self.lowers)
        if python is None:
            raise ImageBuildError(no_python(self.base))
        user = self.agent_user
        if user is not None and IdMap.for_this_user().count == 1:
            raise ImageBuildError(
                f"the image ends as USER {self.user}, and as a user other than root bubblewrap maps only that user "
                "into the image (as its root): run rlenvs as root, or use backend='docker' or 'podman'"
            )
        path = self.environment.get("PATH", DEFAULT_PATH)
        return RootImage(self.lowers, python, path, user=user.for_guest() if user is not None else "")


def no_python(base: str) -> str:
    return (
        f"the image of {base} has no python3 in /usr/bin or /usr/local/bin, which the sandbox needs to run "
        "the agent's shell: install python3 in the Dockerfile (RUN apt-get install -y python3-minimal)"
    )


HOST_CERTIFICATES = "/etc/ssl/certs/ca-certificates.crt"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
WHEELS_MOUNT = "/opt/rlenvs-wheels"


@dataclass(frozen=True)
class BuildOptions:
    """How RUN steps reach the network. `host_certificates`: the host's CA bundle stands in
    for the image's while a step runs (a machine behind a TLS-inspecting proxy trusts its
    CA; nothing of it stays in the layer), and the host's proxy variables are passed on.
    `wheels`: a folder of wheels pip installs from, offline (PIP_FIND_LINKS, PIP_NO_INDEX)."""

    host_certificates: bool = True
    wheels: Path | None = None
    step_timeout_s: float = STEP_TIMEOUT_S


@dataclass
class _State:
    """The build so far: the image's layers and what the next instruction sees."""

    ids: IdMap
    store: LayerStore
    context: Path
    escape: str
    options: BuildOptions
    tell: Callable[[str], None]
    layers: list[Layer] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    user: str = "root"
    shell: tuple[str, ...] = ("/bin/sh", "-c")
    built: bool = False
    """Whether the last instruction built a layer (rather than finding it in the cache)."""

    @property
    def key(self) -> str:
        return self.layers[-1].key if self.layers else ""

    def variables(self) -> dict[str, str]:
        return {**self.args, **self.env}


def build_image(
    dockerfile: Path,
    context: Path | None = None,
    *,
    bases: Mapping[str, BaseRoot] | None = None,
    store: LayerStore | None = None,
    progress: Callable[[str], None] | None = None,
    options: BuildOptions | None = None,
) -> Image:
    """Build `dockerfile` (its build context: `context`, default its folder). `bases`: more
    base-image mappings (rlenvs.images.bases); `progress`: called with one line per step
    (default: the "rlenvs.images" logger)."""
    dockerfile = Path(dockerfile)
    context = Path(context) if context is not None else dockerfile.parent
    tell = progress or LOG.info
    try:
        text = dockerfile.read_text(encoding="utf-8")
        escape, found = instructions(text)
    except OSError as error:
        raise ImageBuildError(f"{dockerfile} cannot be read: {error}") from None
    except DockerfileError as error:
        raise ImageBuildError(f"{dockerfile} {error}") from None
    _check_buildable(found, dockerfile)
    state = _State(IdMap.for_this_user(), store or LayerStore(), context, escape, options or BuildOptions(), tell)
    base_name, base_root = "", None
    for number, ins in enumerate(found, 1):
        where = f"{dockerfile} (line {ins.line}: `{ins.text()}`)"
        started, before, state.built = time.monotonic(), state.key, False
        try:
            if ins.keyword == "FROM":
                base_name, base_root = _from(ins, state, bases)
                state.env = dict(base_root.environment)
                state.workdir = base_root.workdir  # a Dockerfile without WORKDIR starts in the base's
            else:
                _instruction(ins, state)
        except ValueError as error:  # ImageBuildError, DockerfileError, BaseImageError, an id not mapped
            raise ImageBuildError(f"{where} {error}") from None
        made = "no files" if state.key == before else "built" if state.built else "cached"
        line = f"step {number}/{len(found)} {ins.text()}: {made}"
        tell(f"{line} ({time.monotonic() - started:.1f} s)")
    assert base_root is not None  # _check_buildable: one FROM, first
    return Image(
        key=state.key,
        layers=tuple(state.layers),
        workdir=state.workdir,
        environment=state.env,
        user=state.user,
        base=base_name,
        base_root=base_root.describe(),
        note=base_root.note,
    )


def _from(ins: Instruction, state: _State, bases: Mapping[str, BaseRoot] | None) -> tuple[str, BaseRoot]:
    name = from_name(ins, state.args, state.escape)
    base, layer, state.built = base_layer(name, bases, state.store, state.ids, state.tell)
    state.layers = [layer]
    return name, base


def from_name(ins: Instruction, args: Mapping[str, str], escape: str) -> str:
    """The image a FROM line names (`--platform` and `AS name` dropped)."""
    parts = words(ins.args, args, escape, docker_rules=True)
    parts = [part for part in parts if not part.startswith("--platform=")]
    if len(parts) == 3 and parts[1].lower() == "as":
        parts = parts[:1]
    if len(parts) != 1:
        raise ImageBuildError("cannot be read: write FROM IMAGE[:TAG] [AS NAME]")
    return parts[0]


def base_layer(
    name: str, bases: Mapping[str, BaseRoot] | None, store: LayerStore, ids: IdMap, tell: Callable[[str], None]
) -> tuple[BaseRoot, Layer, bool]:
    """The root that stands in for the base image `name` (rlenvs.images.bases: its mapping,
    or that mapping's fallback where its archive is out of reach), made into a layer of
    `store` the first time; and whether it was made now."""
    base = resolve_base(name, bases, store, ids)
    key = base_key(base, ids)
    layer = store.get(key)
    if layer is not None:
        return base, layer, False
    tell(f"base image {name}: making {base.describe()}")
    folder = store.new(key)
    try:
        make_root(base, folder / "diff", ids)
    except BaseException:
        store.discard(folder)
        raise
    return base, store.commit(key, folder, {"from": name, "root": base.describe()}), True


def resolve_base(name: str, bases: Mapping[str, BaseRoot] | None, store: LayerStore, ids: IdMap) -> BaseRoot:
    """The root `name` maps to, or its fallback (bases.stand_in): a root already in `store`
    is used without asking its archive."""
    return stand_in(base_for(name, bases), lambda base: store.get(base_key(base, ids)) is not None)


def base_key(base: BaseRoot, ids: IdMap) -> str:
    return layer_key("", "base", base.key(), ids.name)


def _instruction(ins: Instruction, state: _State) -> None:
    escape = state.escape
    variables = state.variables()
    if ins.keyword == "ARG":
        for name, value in arg_defaults(ins.args, variables, escape).items():
            if value is not None:  # a bare ARG NAME keeps what an earlier one gave it
                state.args[name] = value
    elif ins.keyword == "ENV":
        state.env.update(env_instruction(ins.args, variables, escape, docker_rules=True))
    elif ins.keyword == "WORKDIR":
        path = absolute(
            PurePosixPath(state.workdir), words(ins.args, variables, escape, split=False, docker_rules=True)[0]
        )
        state.workdir = str(path)
        if lookup(state.layers, state.workdir) is None:
            _add_layer(state, ("WORKDIR", state.workdir), lambda diff: _make_dirs(state, diff, path, True))
    elif ins.keyword == "USER":
        state.user = words(ins.args, variables, escape, split=False, docker_rules=True)[0]
        _ids_of(state, state.user)  # an unknown user fails here, at its line
    elif ins.keyword == "SHELL":
        shell = json.loads(ins.args) if ins.args.startswith("[") else None
        if not isinstance(shell, list) or not shell or not all(isinstance(word, str) for word in shell):
            raise ImageBuildError('must be a JSON array, e.g. SHELL ["/bin/bash", "-c"]')
        state.shell = tuple(shell)
    elif ins.keyword in ("COPY", "ADD"):
        copy = parse_copy(ins, PurePosixPath(state.workdir), variables, escape, docker_rules=True)
        _copy(copy, state)
    elif ins.keyword == "RUN":
        _run(ins, state)


_BUILT = frozenset(("FROM", "ARG", "ENV", "WORKDIR", "USER", "SHELL", "COPY", "ADD", "RUN"))
_COPY_FLAGS = frozenset(("chown", "chmod", "link"))


def _check_buildable(found: list[Instruction], dockerfile: Path) -> None:
    """Refuse, before anything is built, an instruction the build could not do."""
    froms = 0
    for ins in found:
        reason = ""
        if ins.keyword == "FROM":
            froms += 1
            if froms > 1:
                reason = "is a second FROM: multi-stage builds are not supported; build the stage you need as one FROM"
        elif froms == 0 and ins.keyword != "ARG":
            reason = "comes before any FROM"
        elif ins.keyword == "ENTRYPOINT":
            reason = (
                "starts a process with the container: episodes keep no process running between the agent's "
                "commands; drop the ENTRYPOINT"
            )
        elif ins.keyword in ("COPY", "ADD"):
            flags = re.findall(r"(?:^|\s)--([A-Za-z][\w-]*)", ins.args.split(" /", 1)[0])
            unknown = [flag for flag in flags if flag not in _COPY_FLAGS]
            if unknown:
                reason = f"uses --{unknown[0]}, which rlenvs does not build (COPY takes --chown, --chmod and --link)"
        elif ins.keyword not in _BUILT | _NO_FILES:
            reason = f"uses {ins.keyword}, which rlenvs does not build"
        if reason:
            raise ImageBuildError(f"{dockerfile} (line {ins.line}: `{ins.text()}`) {reason}")
    if froms == 0:
        raise ImageBuildError(f"{dockerfile} has no FROM line")


def arg_defaults(text: str, variables: Mapping[str, str], escape: str) -> dict[str, str | None]:
    """ARG NAME[=default] ...: the defaults (no --build-arg: a task folder gives none)."""
    found: dict[str, str | None] = {}
    for word in words(text, variables, escape, docker_rules=True):
        name, equals, value = word.partition("=")
        found[name] = value if equals else None
    return found


# --- layers --------------------------------------------------------------------------------------


def _add_layer(state: _State, made_by: tuple, fill: Callable[[Path], None]) -> None:
    store = state.store
    key = layer_key(state.key, state.ids.name, *made_by)
    layer = store.get(key)
    if layer is None:
        folder = store.new(key)
        try:
            _own(folder / "diff", state.ids, 0, 0)
            fill(folder / "diff")
        except BaseException:
            store.discard(folder)
            raise
        layer = store.commit(key, folder, {"parent": state.key, "made_by": list(map(str, made_by))})
        state.built = True
    state.layers.append(layer)


def _own(path: Path, ids: IdMap, uid: int, gid: int) -> None:
    mode = os.lstat(path).st_mode
    os.lchown(path, *ids.host_ids(uid, gid))
    if not stat.S_ISLNK(mode):
        os.chmod(path, stat.S_IMODE(mode))


def _make_dirs(state: _State, diff: Path, path: PurePosixPath, include_self: bool) -> None:
    """The folders on the way to `path` in a new layer: as the image has them (owner, mode),
    or made by root with mode 755 where it has none."""
    chain = [*reversed(path.parents), path] if include_self else list(reversed(path.parents))
    for folder in chain:
        if str(folder) == "/":
            continue
        target = diff / str(folder).lstrip("/")
        found = lookup(state.layers, str(folder))
        if found is not None and not stat.S_ISDIR(found[1].st_mode):
            raise ImageBuildError(
                f"needs the folder {folder}, which is a {'link' if stat.S_ISLNK(found[1].st_mode) else 'file'} in the "
                "image: write the path the link leads to"
            )
        if target.exists():
            continue
        target.mkdir(mode=0o755)
        if found is not None:
            os.lchown(target, found[1].st_uid, found[1].st_gid)
            os.chmod(target, stat.S_IMODE(found[1].st_mode))
        else:
            _own(target, state.ids, 0, 0)


def _copy(copy: Copy, state: _State) -> None:
    context = state.context
    rules = dockerignore(context)
    plan: list[tuple[Path, PurePosixPath]] = []  # (source, destination in the image)
    dest_found = lookup(state.layers, str(copy.dest))
    into_dir = copy.dest_is_dir or (dest_found is not None and stat.S_ISDIR(dest_found[1].st_mode))
    for text in copy.sources:
        for source in copy_sources(text, copy, context, rules):
            if source.is_dir() and not source.is_symlink():
                plan.append((source, copy.dest))
                for folder, dirs, files in os.walk(source):
                    for name in sorted(dirs) + sorted(files):
                        path = Path(folder) / name
                        if not ignored(path.relative_to(context).as_posix(), rules):
                            plan.append((path, copy.dest / path.relative_to(source).as_posix()))
            else:
                plan.append((source, copy.dest / source.name if into_dir else copy.dest))
    uid, gid = _ids_of(state, copy.chown) if copy.chown else (0, 0)
    digest = hashlib.sha256()
    for source, target in plan:
        info = os.lstat(source)
        digest.update(f"{target}\0{stat.S_IFMT(info.st_mode)}\0{stat.S_IMODE(info.st_mode)}\0".encode())
        digest.update(
            os.readlink(source).encode() if source.is_symlink() else source.read_bytes() if source.is_file() else b""
        )

    def fill(diff: Path) -> None:
        for source, target in plan:
            _make_dirs(state, diff, target, include_self=False)
            place = diff / str(target).lstrip("/")
            if source.is_symlink():
                if place.is_symlink() or place.exists():
                    place.unlink()
                os.symlink(os.readlink(source), place)
            elif source.is_dir():
                place.mkdir(exist_ok=True)
                os.chmod(place, copy.chmod if copy.chmod is not None else stat.S_IMODE(os.stat(source).st_mode))
            else:
                shutil.copyfile(source, place)
                info = os.stat(source)
                os.chmod(place, copy.chmod if copy.chmod is not None else stat.S_IMODE(info.st_mode))
                os.utime(place, ns=(info.st_atime_ns, info.st_mtime_ns))  # Docker keeps a copied file's mtime
            os.lchown(place, *state.ids.host_ids(uid, gid))
            if not place.is_symlink():
                os.chmod(place, stat.S_IMODE(os.lstat(place).st_mode))

    _add_layer(state, (copy.ins.keyword, str(copy.dest), copy.chown, copy.chmod, digest.hexdigest()), fill)


def _ids_of(state: _State, spec: str) -> tuple[int, int]:
    """user[:group] (names or numbers) as the image's /etc/passwd and /etc/group give them;
    a user alone gets its own primary group (a number alone, the same number)."""
    user, _, group = spec.partition(":")
    passwd = _table(state, "/etc/passwd")
    if user.isdigit():
        uid, primary = int(user), int(user)
    elif user in passwd:
        uid, primary = int(passwd[user][1]), int(passwd[user][2])
    else:
        raise ImageBuildError(f"names the user {user}, whom the image's /etc/passwd does not have")
    if not group:
        return uid, primary
    if group.isdigit():
        return uid, int(group)
    groups = _table(state, "/etc/group")
    if group not in groups:
        raise ImageBuildError(f"names the group {group}, which the image's /etc/group does not have")
    return uid, int(groups[group][1])


def _table(state: _State, path: str) -> dict[str, list[str]]:
    return image_table([str(layer.diff) for layer in reversed(state.layers)], path)


# --- RUN -------------------------------------------------------------------------------------------


def _run(ins: Instruction, state: _State) -> None:
    store, options = state.store, state.options
    listed = _json_list(ins.args)
    command = listed if listed is not None else [*state.shell, ins.args]
    environment = {"PATH": state.env.get("PATH", DEFAULT_PATH)}
    environment.update(state.args)
    environment.update(state.env)
    uid, gid = _ids_of(state, state.user)
    home = _home(state, uid)
    environment.setdefault("HOME", home)
    made_by = ("RUN", command, sorted(environment.items()), state.user, state.workdir)
    key = layer_key(state.key, state.ids.name, *made_by)
    cached = store.get(key)
    if cached is not None:
        state.layers.append(cached)
        return
    folder = store.new(key)
    try:
        for name in ("work", "merged"):
            (folder / name).mkdir(mode=0o755)
        _own(folder / "diff", state.ids, 0, 0)
        _own(folder / "work", state.ids, 0, 0)
        as_user = [] if uid == 0 else ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
        extra = ["--tmpfs", "/dev/shm", "--chdir", state.workdir, "--clearenv"]
        for name, value in {**environment, **_network_variables(options)}.items():
            extra += ["--setenv", name, value]
        argv = bwrap_over_root(
            find_bwrap(),
            str(folder / "merged"),
            network=True,
            keep_caps=AGENT_CAPS,
            binds=_binds(state),
            extra=[*extra, *as_user, *command],
        )
        lowers = tuple(str(layer.diff) for layer in reversed(state.layers))
        overlay = Overlay(lowers, str(folder / "merged"), upper=str(folder / "diff"), work=str(folder / "work"))
        status, output = _wait(overlay, argv, state.ids, options.step_timeout_s)
        if status != 0:
            ending = "timed out" if status is None else f"failed with exit status {status}"
            raise ImageBuildError(f"{ending}; the end of its output:\n{output[-OUTPUT_TAIL:]}")
        mount_point = folder / "diff" / WHEELS_MOUNT.lstrip("/")
        if options.wheels is not None and mount_point.is_dir() and not any(mount_point.iterdir()):
            mount_point.rmdir()  # bubblewrap's mount point for the wheels, not the step's
    except BaseException:
        store.discard(folder)
        raise
    state.layers.append(store.commit(key, folder, {"parent": state.key, "made_by": ["RUN", short(ins.args, 400)]}))
    state.built = True


def _binds(state: _State) -> list[tuple[str, str]]:
    """What a RUN step sees of the host, read-only, over files the image has (a bind over a
    missing file would leave its mount point in the layer)."""
    binds = [("/etc/resolv.conf", "/etc/resolv.conf")]
    if state.options.host_certificates and os.path.isfile(HOST_CERTIFICATES):
        binds.append((HOST_CERTIFICATES, HOST_CERTIFICATES))
    binds = [(source, target) for source, target in binds if lookup(state.layers, target) is not None]
    if state.options.wheels is not None and lookup(state.layers, "/opt") is not None:
        binds.append((str(state.options.wheels), WHEELS_MOUNT))
    return binds


def _network_variables(options: BuildOptions) -> dict[str, str]:
    found = {name: os.environ[name] for name in PROXY_VARIABLES if options.host_certificates and name in os.environ}
    if options.wheels is not None:
        found.update(PIP_FIND_LINKS=WHEELS_MOUNT, PIP_NO_INDEX="1")
    return found


def _json_list(text: str) -> list[str] | None:
    try:
        value = json.loads(text) if text.startswith("[") else None
    except ValueError:
        return None
    return value if isinstance(value, list) and value and all(isinstance(word, str) for word in value) else None


def _home(state: _State, uid: int) -> str:
    for row in _table(state, "/etc/passwd").values():
        if len(row) >= 5 and row[1] == str(uid):
            return row[4]
    return "/root" if uid == 0 else "/"


def _wait(overlay: Overlay, argv: list[str], ids: IdMap, timeout_s: float) -> tuple[int | None, str]:
    """Run the step; its exit status (None: timed out, killed) and its output (the tail)."""
    process = spawn(
        overlay,
        ids,
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )
    assert process.stdout is not None  # a pipe, asked for above
    deadline, tail = time.monotonic() + timeout_s, b""
    fd = process.stdout.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(process.pid, 9)
            process.wait()
            return None, tail.decode("utf-8", "replace")
        readable, _, _ = select.select([fd], [], [], min(left, 1.0))
        if readable:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            tail = (tail + chunk)[-4 * OUTPUT_TAIL :]
    return process.wait(), tail.decode("utf-8", "replace")
