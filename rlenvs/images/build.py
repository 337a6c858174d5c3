"""Building a Dockerfile into an image without Docker: its base mapped to a local root
(rlenvs.images.bases), its RUN steps run in the sandbox over the layers so far, its COPY
steps done by the host, each step a layer of the cache (rlenvs.images.layers).

What a build does, instruction by instruction:

- FROM (`--platform` and `AS name` accepted): the base image's root, built once; the build
  starts in its WORKDIR with its ENV, as Docker's does. Several FROMs make a multi-stage build
  (_Build): a stage may start FROM an earlier one, `COPY --from` takes files out of a stage's
  root or a mapped image's, the last stage is the image, and a stage it needs nothing of is
  never built.
- RUN (shell and JSON forms, and heredocs as BuildKit runs them: _heredoc_command):
  bubblewrap over the layers (rlenvs.sandbox.shells.rootfs), as the
  image's root (or USER) in a user namespace, with the network (apt from the Debian
  archive, pip from the package index), Docker's default capabilities, the ENV and ARG
  values as its environment, in the WORKDIR. A failing step stops the build, naming the
  Dockerfile line and the end of its output.
- COPY and ADD of local files (`--chown`, `--chmod`, `--link`; .dockerignore honoured), of
  heredocs and `--from` another root: copied by the host into a layer of their own.
- WORKDIR (made when missing), ENV, ARG (defaults only), USER, SHELL; LABEL, EXPOSE, CMD,
  VOLUME, HEALTHCHECK, STOPSIGNAL, MAINTAINER and ONBUILD change no file and are noted only.

Refused, naming the line and what would make it work: ENTRYPOINT, RUN flags (`--mount`,
`--network`, ...), COPY --parents / --exclude, a COPY --from image nothing stands in for, ADD of
URLs and of archives.
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

from rlenvs.images.bases import DEFAULT_PATH, BaseImageError, BaseRoot, base_for, make_root, stand_in
from rlenvs.images.dockerfile import (
    Copy,
    DockerfileError,
    Heredoc,
    Instruction,
    absolute,
    copy_sources,
    dockerignore,
    env_instruction,
    heredoc_marker,
    ignored,
    instructions,
    is_glob,
    parse_copy,
    short,
    words,
)
from rlenvs.images.layers import (
    ImageUser,
    Layer,
    LayerStore,
    has_python_module,
    image_glob,
    image_python,
    image_table,
    image_user,
    layer_key,
    lookup,
    resolve_path,
    walk_image,
)
from rlenvs.sandbox.launch import find_bwrap
from rlenvs.sandbox.shells.rootfs import AGENT_CAPS, IdMap, Overlay, RootImage, bwrap_over_root, spawn

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
        note = f"; {self.note}" if self.note else ""
        stood_in = f"{self.base} (stood in for by {self.base_root}{note})" if self.base != "scratch" else ""
        return RootImage(
            self.lowers, python, path, user=user.for_guest() if user is not None else "", stood_in=stood_in
        )


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
    CA; a layer of the step's only, `_host_certificates_layer`: nothing of it stays in the
    image unless the step writes the bundle itself), and the host's proxy variables are passed on.
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
    global_args: dict[str, str] = field(default_factory=dict)
    """The ARGs before the first FROM: a stage's bare `ARG NAME` takes its default from them."""
    source_root: Callable[[str], tuple[tuple[Layer, ...], str]] | None = None
    """What `COPY --from=REF` copies out of: the layers of that stage or image and a key of them."""

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
    build = _Build(
        dockerfile, context, escape, found, bases, IdMap.for_this_user(), store or LayerStore(),
        options or BuildOptions(), tell,
    )  # fmt: skip
    final = build.stage(len(build.stages) - 1)
    for stage in build.stages:
        if stage.index not in build.done:
            tell(f"stage {stage.label()}: skipped, the image takes nothing from it")
    return Image(
        key=final.key,
        layers=final.layers,
        workdir=final.workdir,
        environment=final.env,
        user=final.user,
        base=final.base_name,
        base_root=final.base_root.describe() if final.base_root is not None else "nothing (scratch)",
        note=final.base_root.note if final.base_root is not None else "",
    )


@dataclass(frozen=True)
class _Stage:
    """One FROM of the Dockerfile and the instructions up to the next."""

    index: int
    name: str
    """Its `AS name`, lower-cased as Docker matches it; "" without one."""
    start: Instruction
    body: tuple[Instruction, ...]

    def label(self) -> str:
        return f"{self.index} ({self.name})" if self.name else str(self.index)


@dataclass(frozen=True)
class _Built:
    """A stage built: its layers and what a stage FROM it starts with."""

    layers: tuple[Layer, ...]
    env: dict[str, str]
    workdir: str
    user: str
    shell: tuple[str, ...]
    base_name: str
    base_root: BaseRoot | None
    """What stands in for the first FROM of its chain (None: scratch)."""

    @property
    def key(self) -> str:
        return self.layers[-1].key if self.layers else ""


class _Build:
    """A multi-stage build: a stage is built when the final one needs it (its FROM, or a
    `COPY --from`), once, so a stage nothing takes from is never built (as BuildKit does), and
    each stage's layers are cached like any other."""

    def __init__(
        self,
        dockerfile: Path,
        context: Path,
        escape: str,
        found: list[Instruction],
        bases: Mapping[str, BaseRoot] | None,
        ids: IdMap,
        store: LayerStore,
        options: BuildOptions,
        tell: Callable[[str], None],
    ) -> None:
        self.dockerfile, self.context, self.escape, self.bases = dockerfile, context, escape, bases
        self.ids, self.store, self.options, self.tell = ids, store, options, tell
        self.numbers = {id(ins): number for number, ins in enumerate(found, 1)}
        self.total = len(found)
        self.global_args: dict[str, str] = {}
        self.stages: list[_Stage] = []
        self.done: dict[int, _Built] = {}
        self.building: list[int] = []
        body: list[Instruction] = []
        for ins in reversed(found):  # each FROM takes the instructions after it
            if ins.keyword == "FROM":
                self.stages.insert(0, _Stage(0, "", ins, tuple(body)))
                body = []
            else:
                body.insert(0, ins)
        for ins in body:  # before the first FROM: ARGs only (_check_buildable)
            self._step(ins, functools.partial(self._global_arg, ins), lambda: ("", False))
        seen: dict[str, Instruction] = {}
        for index, stage in enumerate(self.stages):
            try:
                name = self._stage_name(stage.start)
            except ValueError as error:
                raise ImageBuildError(f"{self._where(stage.start)} {error}") from None
            if name and name in seen:
                raise ImageBuildError(
                    f"{self._where(stage.start)} names a second stage {name} (the first at line {seen[name].line}): "
                    "give each stage a name of its own"
                )
            seen[name] = stage.start
            self.stages[index] = _Stage(index, name, stage.start, stage.body)

    def _where(self, ins: Instruction) -> str:
        return f"{self.dockerfile} (line {ins.line}: `{ins.text()}`)"

    def _step(self, ins: Instruction, do: Callable[[], object], state: Callable[[], tuple[str, bool]]) -> None:
        """Do one instruction, naming its line in any error, and report it."""
        started, (before, _) = time.monotonic(), state()
        try:
            do()
        except ValueError as error:  # ImageBuildError, DockerfileError, BaseImageError, an id not mapped
            if str(error).startswith(f"{self.dockerfile} ("):  # a stage built for this step: its own line
                raise
            raise ImageBuildError(f"{self._where(ins)} {error}") from None
        key, built = state()
        made = "no files" if key == before else "built" if built else "cached"
        line = f"step {self.numbers[id(ins)]}/{self.total} {ins.text()}: {made}"
        self.tell(f"{line} ({time.monotonic() - started:.1f} s)")

    def _global_arg(self, ins: Instruction) -> None:
        for name, value in arg_defaults(ins.args, self.global_args, self.escape).items():
            if value is not None:
                self.global_args[name] = value

    def _stage_name(self, ins: Instruction) -> str:
        parts = words(ins.args, self.global_args, self.escape, docker_rules=True)
        return parts[-1].lower() if len(parts) >= 3 and parts[-2].lower() == "as" else ""

    def stage(self, index: int) -> _Built:
        """Stage `index`, built (with the stages it needs) the first time it is asked for."""
        if index in self.done:
            return self.done[index]
        stage = self.stages[index]
        self.building.append(index)
        state = _State(self.ids, self.store, self.context, self.escape, self.options, self.tell)
        state.global_args, state.source_root = self.global_args, functools.partial(self._source_root, index)
        origin: list[tuple[str, BaseRoot | None]] = []
        progress = lambda: (state.key, state.built)  # noqa: E731
        self._step(stage.start, lambda: origin.append(self._from(stage, state)), progress)
        for ins in stage.body:
            state.built = False
            self._step(ins, functools.partial(_instruction, ins, state), progress)
        self.building.pop()
        base_name, base_root = origin[0]
        built = _Built(tuple(state.layers), state.env, state.workdir, state.user, state.shell, base_name, base_root)
        self.done[index] = built
        return built

    def _from(self, stage: _Stage, state: _State) -> tuple[str, BaseRoot | None]:
        """Start `state` as the FROM line says: on an earlier stage, on nothing (scratch), or on
        the root that stands in for a base image; as Docker does, in its WORKDIR, with its ENV."""
        name = from_name(stage.start, self.global_args, self.escape)
        earlier = next((other for other in self.stages[: stage.index] if other.name == name.lower()), None)
        if earlier is not None:  # the stage's files and config: ENV, WORKDIR, USER, SHELL
            up = self.stage(earlier.index)
            state.layers, state.env, state.workdir = list(up.layers), dict(up.env), up.workdir
            state.user, state.shell = up.user, up.shell
            return up.base_name, up.base_root
        if name == "scratch":  # an empty root: a stage that only gathers files
            _add_layer(state, ("scratch",), lambda diff: None)
            return name, None
        base, layer, state.built = base_layer(name, self.bases, self.store, self.ids, self.tell)
        state.layers, state.env, state.workdir = [layer], dict(base.environment), base.workdir
        return name, base

    def _source_root(self, index: int, ref: str) -> tuple[tuple[Layer, ...], str]:
        """The root `COPY --from=ref` in stage `index` copies from: a stage by its index or name
        (built now if it was not), else an image, as FROM would have it."""
        names = {stage.name: stage.index for stage in self.stages if stage.name}
        if ref.isdigit():
            if int(ref) >= len(self.stages):
                raise ImageBuildError(
                    f"copies from stage {ref}, and the Dockerfile has stages 0 to {len(self.stages) - 1} (counted "
                    "from 0 in FROM order)"
                )
            wanted = int(ref)
        elif ref.lower() in names:
            wanted = names[ref.lower()]
        else:
            try:
                _, layer, _ = base_layer(ref, self.bases, self.store, self.ids, self.tell)
            except BaseImageError as error:
                raise BaseImageError(
                    f"copies from {ref}, which no stage of this Dockerfile is named, so an image: {error}; or make "
                    "what it holds with a RUN step (pip install, apt-get install)"
                ) from None
            return (layer,), layer.key
        if wanted == index or wanted in self.building:
            raise ImageBuildError(
                f"copies from stage {self.stages[wanted].label()}, which "
                + ("is this stage" if wanted == index else "is still being built: it needs this one")
                + ": copy from a stage that does not depend on it"
            )
        built = self.stage(wanted)
        return built.layers, built.key


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
            if value is not None:
                state.args[name] = value
            elif name not in state.args and name in state.global_args:  # Docker's way to use a global ARG
                state.args[name] = state.global_args[name]
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
        if copy.source_from is not None:
            assert state.source_root is not None  # every stage's state has one (_Build.stage)
            _copy_from(copy, state, *state.source_root(copy.source_from))
        else:
            _copy(copy, state)
    elif ins.keyword == "RUN":
        _run(ins, state)


_BUILT = frozenset(("FROM", "ARG", "ENV", "WORKDIR", "USER", "SHELL", "COPY", "ADD", "RUN"))
_COPY_FLAGS = frozenset(("chown", "chmod", "link", "from"))


def _check_buildable(found: list[Instruction], dockerfile: Path) -> None:
    """Refuse, before anything is built, an instruction the build could not do."""
    froms = 0
    for ins in found:
        reason = ""
        if ins.keyword == "FROM":
            froms += 1
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
                reason = (
                    f"uses --{unknown[0]}, which rlenvs does not build (COPY takes --from, --chown, --chmod and "
                    "--link): copy without it, or use backend='docker' or 'podman'"
                )
        elif ins.keyword == "RUN" and (flag := re.match(r"--(mount|network|security|device)\b\S*", ins.args)):
            reason = (
                f"uses {flag.group()}, which rlenvs does not build: RUN takes no flags here (a secret or cache mount "
                "needs BuildKit); write the step without it, or use backend='docker' or 'podman'"
            )
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
    """COPY or ADD from the build context, or of heredocs: a layer keyed by what it copies."""
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
    documents = [(doc, copy.dest / doc.name if into_dir else copy.dest) for doc in copy.documents]
    ids = _ids_of(state, copy.chown) if copy.chown else (0, 0)
    digest = hashlib.sha256()
    for source, target in plan:
        info = os.lstat(source)
        digest.update(f"{target}\0{stat.S_IFMT(info.st_mode)}\0{stat.S_IMODE(info.st_mode)}\0".encode())
        digest.update(
            os.readlink(source).encode() if source.is_symlink() else source.read_bytes() if source.is_file() else b""
        )
    for doc, target in documents:
        digest.update(f"{target}\0heredoc\0{len(doc.content)}\0{doc.content}".encode())

    def fill(diff: Path) -> None:
        owner = state.ids.host_ids(*ids)
        _place(state, diff, plan, copy.chmod, owner)
        for doc, target in documents:  # as BuildKit writes them: mode 644 unless --chmod
            _make_dirs(state, diff, target, include_self=False)
            place = diff / str(target).lstrip("/")
            if place.is_symlink() or place.exists():
                place.unlink()
            place.write_text(doc.content, encoding="utf-8")
            os.lchown(place, *owner)
            os.chmod(place, copy.chmod if copy.chmod is not None else 0o644)

    _add_layer(state, (copy.ins.keyword, str(copy.dest), copy.chown, copy.chmod, digest.hexdigest()), fill)


def _place(
    state: _State, diff: Path, plan: list[tuple[Path, PurePosixPath]], chmod: int | None, owner: tuple[int, int] | None
) -> None:
    """Copy each (source, destination) of `plan` into the layer `diff`, with its mode (or
    `chmod`) and mtime, owned by the host ids `owner` (None: as the source is)."""
    for source, target in plan:
        _make_dirs(state, diff, target, include_self=False)
        place = diff / str(target).lstrip("/")
        info = os.lstat(source)
        if stat.S_ISLNK(info.st_mode):
            if place.is_symlink() or place.exists():
                place.unlink()
            os.symlink(os.readlink(source), place)
        elif stat.S_ISDIR(info.st_mode):
            place.mkdir(exist_ok=True)
            os.chmod(place, chmod if chmod is not None else stat.S_IMODE(info.st_mode))
        elif stat.S_ISREG(info.st_mode):
            if place.is_symlink():
                place.unlink()
            shutil.copyfile(source, place)
            os.chmod(place, chmod if chmod is not None else stat.S_IMODE(info.st_mode))
            os.utime(place, ns=(info.st_atime_ns, info.st_mtime_ns))  # Docker keeps a copied file's mtime
        else:
            raise ImageBuildError(
                f"copies {target}, which is a device, socket or pipe: copy regular files, folders and links only"
            )
        os.lchown(place, *(owner if owner is not None else (info.st_uid, info.st_gid)))
        if not stat.S_ISLNK(info.st_mode):  # chown clears the set-id bits: put the mode back
            os.chmod(place, chmod if chmod is not None else stat.S_IMODE(info.st_mode))


def _copy_from(copy: Copy, state: _State, layers: tuple[Layer, ...], source_key: str) -> None:
    """COPY --from: paths in the root of another stage or image (`layers`, base first), taken as
    BuildKit takes them: relative to that root, links on the way and at the end followed, a
    folder's contents copied into the destination, owners and modes kept unless --chown or
    --chmod says otherwise. The layer is keyed by the source's own key, not its bytes."""
    dest_found = lookup(state.layers, str(copy.dest))
    into_dir = copy.dest_is_dir or (dest_found is not None and stat.S_ISDIR(dest_found[1].st_mode))
    found: list[tuple[str, str]] = []  # (the path as it resolves in the source root, its name)
    for text in copy.sources:
        matched = image_glob(layers, absolute(PurePosixPath("/"), text).as_posix())
        if not matched:
            raise ImageBuildError(
                f"copies {text}, which the root of {copy.source_from} does not have"
                + (" (nothing matches the pattern)" if is_glob(text) else "")
            )
        for path in matched:
            resolved = resolve_path(layers, path)
            if resolved is None:
                raise ImageBuildError(f"copies {path}, a link in the root of {copy.source_from} that leads nowhere")
            found.append((resolved, PurePosixPath(path).name))
    ids = _ids_of(state, copy.chown) if copy.chown else None

    def fill(diff: Path) -> None:
        owner = state.ids.host_ids(*ids) if ids is not None else None
        plan: list[tuple[Path, PurePosixPath]] = []
        for resolved, name in found:
            entry = lookup(layers, resolved)
            assert entry is not None  # resolve_path found it
            if stat.S_ISDIR(entry[1].st_mode):
                plan.append((entry[0].diff / resolved.lstrip("/"), copy.dest))
                plan += [(source, copy.dest / relative) for relative, source in walk_image(layers, resolved)]
            else:
                plan.append((entry[0].diff / resolved.lstrip("/"), copy.dest / name if into_dir else copy.dest))
        _place(state, diff, plan, copy.chmod, owner)

    made_by = (copy.ins.keyword, "from", source_key, copy.sources, str(copy.dest), into_dir, copy.chown, copy.chmod)
    _add_layer(state, made_by, fill)


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


HEREDOC_SCRIPTS = "/dev/pipes"
"""Where a RUN's `#!` heredoc is put to be run, as BuildKit does: outside the image's files."""


def _heredoc_command(ins: Instruction, shell: tuple[str, ...]) -> tuple[list[str], Heredoc | None]:
    """What a RUN with heredocs runs, as BuildKit's dockerfile frontend has it: a RUN of one
    heredoc alone runs its body, as a script of its own when it starts with `#!` (the second
    value: that script, run from HEREDOC_SCRIPTS), else in the shell; any other form gives the
    shell the line with each body and end line after it, and the shell reads the heredocs."""
    if heredoc_marker(ins.args) is not None:
        body = ins.heredocs[0].text()
        if body.startswith("#!"):
            return [f"{HEREDOC_SCRIPTS}/{_script_name(ins.heredocs[0])}"], ins.heredocs[0]
        return [*shell, body], None
    script = ins.args + "".join(f"\n{doc.content}{doc.name}" for doc in ins.heredocs)
    return [*shell, script], None


def _script_name(doc: Heredoc) -> str:
    return doc.name if re.fullmatch(r"[A-Za-z0-9_.-]+", doc.name) and doc.name not in (".", "..") else "heredoc"


def _run(ins: Instruction, state: _State) -> None:
    store, options = state.store, state.options
    listed = _json_list(ins.args)
    script: Heredoc | None = None
    if ins.heredocs:
        command, script = _heredoc_command(ins, state.shell)
    else:
        command = listed if listed is not None else [*state.shell, ins.args]
    environment = {"PATH": state.env.get("PATH", DEFAULT_PATH)}
    environment.update(state.args)
    environment.update(state.env)
    uid, gid = _ids_of(state, state.user)
    home = _home(state, uid)
    environment.setdefault("HOME", home)
    made_by = ("RUN", command, sorted(environment.items()), state.user, state.workdir)
    script_text = () if script is None else (script.text(),)  # a heredoc's body is the step's too
    key = layer_key(state.key, state.ids.name, *made_by, *script_text)
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
        binds = _binds(state)
        if script is not None:  # read-only, executable, outside the layer (bubblewrap's /dev)
            (folder / "pipes").mkdir(mode=0o755)
            path = folder / "pipes" / _script_name(script)
            path.write_text(script.text(), encoding="utf-8")
            os.chmod(path, 0o755)
            binds.append((str(path), f"{HEREDOC_SCRIPTS}/{path.name}"))
        argv = bwrap_over_root(
            find_bwrap(),
            str(folder / "merged"),
            network=True,
            keep_caps=AGENT_CAPS,
            binds=binds,
            extra=[*extra, *as_user, *command],
        )
        lowers = tuple(str(layer.diff) for layer in reversed(state.layers))
        certificates = _host_certificates_layer(state, folder / "host-certificates")
        if certificates is not None:
            lowers = (str(certificates), *lowers)
        overlay = Overlay(lowers, str(folder / "merged"), upper=str(folder / "diff"), work=str(folder / "work"))
        status, output = _wait(overlay, argv, state.ids, options.step_timeout_s)
        if status != 0:
            ending = "timed out" if status is None else f"failed with exit status {status}"
            raise ImageBuildError(f"{ending}; the end of its output:\n{output[-OUTPUT_TAIL:]}")
        mount_point = folder / "diff" / WHEELS_MOUNT.lstrip("/")
        if options.wheels is not None and mount_point.is_dir() and not any(mount_point.iterdir()):
            mount_point.rmdir()  # bubblewrap's mount point for the wheels, not the step's
        shutil.rmtree(folder / "pipes", ignore_errors=True)
        shutil.rmtree(folder / "host-certificates", ignore_errors=True)
    except BaseException:
        store.discard(folder)
        raise
    state.layers.append(store.commit(key, folder, {"parent": state.key, "made_by": ["RUN", short(ins.args, 400)]}))
    state.built = True


def _host_certificates_layer(state: _State, layer: Path) -> Path | None:
    """A layer for one RUN step only, under its own, holding the host's CA bundle in place of
    the image's (BuildOptions.host_certificates), or None where the image has none. Not a bind
    mount: a step that installs a package refreshing the bundle (update-ca-certificates, as
    Java's and most TLS packages' do) renames a new one over it, which a mount point refuses
    (EBUSY) and failed the step. The new bundle lands in the step's layer; a step that leaves
    the bundle alone keeps the image's, since this layer is not kept."""
    found = lookup(state.layers, HOST_CERTIFICATES)
    if not state.options.host_certificates or not os.path.isfile(HOST_CERTIFICATES) or found is None:
        return None
    if not stat.S_ISREG(found[1].st_mode):  # a link to the bundle elsewhere: leave the image's
        return None
    layer.mkdir(mode=0o755)
    _make_dirs(state, layer, PurePosixPath(HOST_CERTIFICATES), include_self=False)
    target = layer / HOST_CERTIFICATES.lstrip("/")
    shutil.copyfile(HOST_CERTIFICATES, target)
    os.lchown(target, found[1].st_uid, found[1].st_gid)  # as the image has its own
    os.chmod(target, stat.S_IMODE(found[1].st_mode))
    return layer


def _binds(state: _State) -> list[tuple[str, str]]:
    """What a RUN step sees of the host, read-only, over files the image has (a bind over a
    missing file would leave its mount point in the layer)."""
    binds = [("/etc/resolv.conf", "/etc/resolv.conf")]
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
