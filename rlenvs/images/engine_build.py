"""Images built by a container engine (the docker and podman backends): `docker build` (or
`podman build`) of the task's own build context, episodes in containers of the result
(rlenvs.sandbox.shells.containers).

The build is the engine's own, so every instruction it knows works, multi-stage builds
included, and its layer cache is the engine's. What differs from a plain build is the FROM
images, since rlenvs reaches no registry:

- a FROM image the engine holds is used as it is: the real image, pulled beforehand;
- one it does not hold is never pulled. It maps to a local root as under bubblewrap
  (rlenvs.images.bases: the defaults, or $RLENVS_BASE_IMAGES), made once into the layer
  store and imported into the engine under the FROM name, labelled `rlenvs.stand-in` (with
  what it stands in for) so that the build finds it. `docker rmi` a stand-in and pull the real
  image to build on that instead. A stand-in whose mapping changed is imported again.
- a FROM image pinned by digest (`python:3.12-slim@sha256:...`, as many Harbor tasks pin
  theirs) that the engine lacks cannot be imported under its name (an engine names an image by
  its digest only when that is its digest): its stand-in is imported under a local name
  (`standin_name`), and the engine builds a copy of the Dockerfile in which that name replaces
  the pinned one, line for line, so that its messages name the task's own lines.

`BuildOptions.host_certificates` (the default) puts the host's CA bundle into each stand-in,
since a build cannot mount it for a step as bubblewrap does: on a machine behind a
TLS-inspecting proxy, pip and curl in RUN steps need it. The proxy variables are passed as
the predefined build arguments. `BuildOptions.wheels` is not supported here: a Dockerfile
cannot see a host folder outside its context.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import subprocess
import tarfile
import tempfile
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rlenvs.images.bases import DEFAULT_PATH, BaseImageError, BaseRoot
from rlenvs.images.build import (
    HOST_CERTIFICATES,
    LOG,
    PROXY_VARIABLES,
    BuildOptions,
    ImageBuildError,
    arg_defaults,
    base_layer,
    from_name,
    no_python,
    resolve_base,
)
from rlenvs.images.dockerfile import DockerfileError, Instruction, instructions, words
from rlenvs.images.layers import ImageUser, Layer, LayerStore, has_python_module, image_python, image_user
from rlenvs.sandbox.shells.containers import (
    ENGINE_OPAQUE_XATTR,
    RLIMITS_FIX,
    RLIMITS_REFUSED,
    ContainerImage,
    Engine,
    EngineUnavailable,
    engine,
)
from rlenvs.sandbox.shells.rootfs import IdMap

STAND_IN_LABEL = "rlenvs.stand-in"
"""On a base image rlenvs imported: the key of the root it was made from."""
OUTPUT_LINES = 40


@dataclass(frozen=True)
class EngineImage:
    """An image the engine built: what a container of it starts with (its config)."""

    id: str
    workdir: str
    environment: dict[str, str]
    user: str
    lowers: tuple[str, ...]
    """Its layer folders in the engine's overlay storage, top first (read by the host)."""
    bases: tuple[str, ...]
    """Each FROM image and what it was: the engine's own, or the stand-in imported for it."""
    engine: str = "docker"

    def has_python_module(self, name: str) -> bool:
        return has_python_module(self.lowers, name, ENGINE_OPAQUE_XATTR)

    @functools.cached_property
    def agent_user(self) -> ImageUser | None:
        """The final USER, whom the agent's commands run as (None: root; layers.image_user)."""
        try:
            return image_user(self.lowers, self.user, ENGINE_OPAQUE_XATTR)
        except ValueError as error:
            raise ImageBuildError(str(error)) from None

    def root(self, *, network: bool = False) -> ContainerImage:
        """What a shell session runs on (rlenvs.sandbox.ShellSession(image=...)); `network`:
        episodes on the engine's network (ContainerImage.network)."""
        python = image_python(self.lowers, ENGINE_OPAQUE_XATTR)
        if python is None:
            raise ImageBuildError(no_python(", ".join(self.bases)))
        user = self.agent_user.for_guest() if self.agent_user is not None else ""
        path = self.environment.get("PATH", DEFAULT_PATH)
        stood_in = "; ".join(base for base in self.bases if " (stood in for by " in base)
        return ContainerImage(
            self.id, python, path, self.engine, user=user, network=network, lowers=self.lowers, stood_in=stood_in
        )


def build_with_engine(
    dockerfile: Path,
    context: Path | None = None,
    *,
    engine_name: str = "docker",
    bases: Mapping[str, BaseRoot] | None = None,
    store: LayerStore | None = None,
    progress: Callable[[str], None] | None = None,
    options: BuildOptions | None = None,
) -> EngineImage:
    """Build `dockerfile` (its context: `context`, default its folder) with the engine
    `engine_name`, "docker" or "podman" (module docstring); `progress`: called with each of
    the build's step lines. Raises EngineUnavailable where the engine cannot run."""
    dockerfile, options, tell = Path(dockerfile), options or BuildOptions(), progress or LOG.info
    context = Path(context) if context is not None else dockerfile.parent
    if options.wheels is not None:
        raise ImageBuildError(
            "BuildOptions(wheels=...) works with the bubblewrap backend only: an engine's build sees no host folder "
            "outside its context"
        )
    try:
        found = instructions(dockerfile.read_text(encoding="utf-8"))
    except OSError as error:
        raise ImageBuildError(f"{dockerfile} cannot be read: {error}") from None
    except DockerfileError as error:
        raise ImageBuildError(f"{dockerfile} {error}") from None
    builder, store = engine(engine_name), store or LayerStore()
    described, renamed = [], {}
    for name in _from_images(found, dockerfile):
        what, local = _base(builder, name, bases, store, options, tell)
        described.append(what)
        if local != name:
            renamed[name] = local
    image_id = _build(builder, dockerfile, context, found[1], options, tell, renamed)
    record = builder.inspect("image", image_id)
    if record is None:
        raise EngineUnavailable(f"{engine_name} built {dockerfile} as {image_id}, and then has no such image")
    config, data = record["Config"], record["GraphDriver"]["Data"]
    environment = dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
    lowers = (data["UpperDir"], *(data["LowerDir"].split(":") if data.get("LowerDir") else ()))
    return EngineImage(
        id=image_id,
        workdir=config.get("WorkingDir") or "/",
        environment=environment,
        user=config.get("User") or "root",
        lowers=lowers,
        bases=tuple(described),
        engine=engine_name,
    )


def _from_images(found: tuple[str, list[Instruction]], dockerfile: Path) -> list[str]:
    """The images the FROM lines name, not counting earlier stages (`AS name`) or scratch, and
    those a `COPY --from` names that no stage is named (the engine would pull them: a mapped
    one is imported as a FROM image is)."""
    escape, lines = found
    args: dict[str, str] = {}
    stages: set[str] = set()
    images: list[str] = []
    named = {ins.args.split()[-1].lower() for ins in lines if ins.keyword == "FROM" and len(ins.args.split()) >= 3}
    for ins in lines:
        if ins.keyword == "ARG" and not images:  # an ARG before the first FROM may name it
            args.update((name, value) for name, value in arg_defaults(ins.args, args, escape).items() if value)
        if ins.keyword in ("COPY", "ADD") and (flag := re.search(r"(?:^|\s)--from=(\S+)", ins.args)):
            source = words(flag.group(1), args, escape, split=False, docker_rules=True)[0]
            if source and not source.isdigit() and source.lower() not in named and source not in images:
                images.append(source)
        if ins.keyword != "FROM":
            continue
        try:
            name = from_name(ins, args, escape)
        except ValueError as error:
            raise ImageBuildError(f"{dockerfile} (line {ins.line}: `{ins.text()}`) {error}") from None
        parts = ins.args.split()
        if len(parts) >= 3 and parts[-2].lower() == "as":
            stages.add(parts[-1].lower())
        if name.lower() not in stages and name != "scratch" and name not in images:
            if "@" in name and name not in ins.args:
                raise ImageBuildError(
                    f"{dockerfile} (line {ins.line}) pins {name} by digest through a build argument, which rlenvs "
                    "cannot replace with a stand-in's name for the engine: write the name on the FROM line, or pull "
                    "the image into the engine first"
                )
            images.append(name)
    return images


def standin_name(name: str, key: str) -> str:
    """The local name a stand-in for the digest-pinned `name` is imported under (`key`: its
    mapping's, so that a changed mapping is a new name)."""
    readable = re.sub(r"[^a-z0-9._-]+", "-", name.partition("@")[0].lower()).strip("-.")[:80] or "base"
    return f"rlenvs-stand-in/{readable}:{key}"


def _base(
    builder: Engine,
    name: str,
    bases: Mapping[str, BaseRoot] | None,
    store: LayerStore,
    options: BuildOptions,
    tell: Callable[[str], None],
) -> tuple[str, str]:
    """Make sure the engine holds the FROM image `name` (module docstring); what it is, and
    the name the build finds it under (`name`, or a digest-pinned one's `standin_name`)."""
    held = _held(builder, name)
    if held is not None and STAND_IN_LABEL not in held:
        tell(f"base image {name}: the {builder.name} engine's own")
        return f"{name} (the {builder.name} engine's own)", name
    ids = IdMap.for_this_user()
    try:
        base = resolve_base(name, bases, store, ids)
    except BaseImageError as error:
        raise BaseImageError(f"{error}; or pull it into the {builder.name} engine, which then builds on it") from None
    config = json.dumps(sorted(base.environment.items()))  # imported as the image's ENV: a change re-imports
    key = hashlib.sha256(f"{base.key()}|{config}|{options.host_certificates}".encode()).hexdigest()[:24]
    local = standin_name(name, key) if "@" in name else name
    if local != name:
        held = _held(builder, local)
    if held is None or held.get(STAND_IN_LABEL) != key:
        _, layer, _ = base_layer(name, bases, store, ids, tell)
        tell(f"base image {name}: importing {base.describe()} into the {builder.name} engine")
        _import(builder, local, base, layer, ids, key, options, store)
    note = f"; {base.note}" if base.note else ""
    return f"{name} (stood in for by {base.describe()}{note})", local


def _held(builder: Engine, name: str) -> dict[str, str] | None:
    """The labels of the engine's image `name` ({} for none), or None: it has no such image."""
    record = builder.inspect("image", name)
    if record is None:
        return None
    return dict((record.get("Config") or {}).get("Labels") or record.get("Labels") or {})


def _import(
    builder: Engine,
    name: str,
    base: BaseRoot,
    layer: Layer,
    ids: IdMap,
    key: str,
    options: BuildOptions,
    store: LayerStore,
) -> None:
    """Import the root of `layer` into the engine as `name`, owned as the image has it."""
    changes = [f"ENV {variable}={json.dumps(value)}" for variable, value in base.environment.items()]
    changes += [f"WORKDIR {base.workdir}"] if base.workdir != "/" else []  # the image's: a build starts there
    changes += [f"LABEL {STAND_IN_LABEL}={key}", f"LABEL rlenvs.stands-in-with={json.dumps(base.describe())}"]
    certificates = HOST_CERTIFICATES if options.host_certificates and os.path.isfile(HOST_CERTIFICATES) else None
    with tempfile.TemporaryDirectory(dir=store.root / "tmp") as folder:  # a tarball as large as the root
        archive = Path(folder) / "root.tar"
        _tar_root(layer.diff, archive, ids, certificates)
        builder.import_root(str(archive), name, changes)


def _tar_root(root: Path, archive: Path, ids: IdMap, certificates: str | None) -> None:
    """`root`'s files as a tarball with the image's owners (not the host ids they have in
    the store); with `certificates`, that bundle as the image's CA certificates."""
    bundle = "./" + HOST_CERTIFICATES.lstrip("/")

    def owned(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if certificates is not None and member.name == bundle:
            return None
        member.uid, member.gid = member.uid - ids.host_uid, member.gid - ids.host_gid
        member.uname = member.gname = ""
        return member

    with tarfile.open(archive, "w") as tar:
        tar.add(str(root), arcname=".", filter=owned)
        if certificates is not None:
            data = Path(certificates).read_bytes()
            info = tarfile.TarInfo(bundle)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


def _build(
    builder: Engine,
    dockerfile: Path,
    context: Path,
    found: list[Instruction],
    options: BuildOptions,
    tell: Callable[[str], None],
    renamed: Mapping[str, str] | None = None,
) -> str:
    """Run the engine's build (BuildKit where Docker's client has it); the new image's id.
    `renamed`: FROM names built on under another name (a digest-pinned base's stand-in),
    replaced in a copy of the Dockerfile. A failing step names its Dockerfile line and the
    end of the build's output."""
    tag = "rlenvs-task:" + hashlib.sha256(str(dockerfile.resolve()).encode()).hexdigest()[:16]
    buildkit = builder.name == "docker" and has_buildkit(builder.cli)
    with tempfile.TemporaryDirectory() as folder:
        iidfile = Path(folder) / "id"
        built = dockerfile.resolve()
        if renamed:
            text = dockerfile.read_text(encoding="utf-8")
            for name, local in renamed.items():
                text = text.replace(name, local)
            built = Path(folder) / "Dockerfile"
            built.write_text(text, encoding="utf-8")
        argv = [builder.cli, "build", "--file", str(built), "--tag", tag, "--iidfile", str(iidfile)]
        if builder.name == "podman":
            argv += ["--layers"]
        else:
            argv += ["--progress=plain"] if buildkit else ["--rm", "--force-rm"]
        for name in PROXY_VARIABLES:  # predefined build arguments: no ARG line needed
            if options.host_certificates and name in os.environ:
                argv += ["--build-arg", name]
        environment = {**os.environ, "DOCKER_BUILDKIT": "1" if buildkit else "0"}
        process = subprocess.Popen(
            [*argv, str(context)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment, text=True
        )
        output: deque[str] = deque(maxlen=OUTPUT_LINES)
        assert process.stdout is not None
        for line in process.stdout:
            line = ANSI.sub("", line.rstrip())
            output.append(line)
            if step := STEP.match(line):
                tell(step.group("text"))
        if process.wait() != 0:
            raise ImageBuildError(_failure(builder, dockerfile, found, list(output), buildkit))
        return iidfile.read_text(encoding="utf-8").strip()


ANSI = re.compile(r"\x1b\[[0-9;]*m")
STEP = re.compile(r"^(?:#\d+ (?=\[[^\]]*\d+/\d+\] )|Step \d+/\d+ : |STEP \d+/\d+: )(?P<text>.*)$")
"""A step's first line: BuildKit's plain progress (`#5 [2/4] RUN ...`), the classic builder's
(`Step 2/4 : RUN ...`), Podman's (`STEP 2/4: RUN ...`)."""
FAILED = re.compile(r"^ > \[[^\]]*\d+/\d+\] (?P<text>.*):$")
"""BuildKit's mark of the step that failed (others run in parallel); elsewhere the last step."""


@functools.cache
def has_buildkit(client: str) -> bool:
    """Whether the docker client builds with BuildKit: through its buildx plugin, or built
    in (clients before 23.0). Without it, the classic builder refuses `COPY --chmod`, `--link`
    and heredocs, and says so."""
    if subprocess.run([client, "buildx", "version"], capture_output=True, check=False).returncode == 0:
        return True
    version = subprocess.run(
        [client, "version", "--format", "{{.Client.Version}}"], capture_output=True, text=True, check=False
    ).stdout
    major = re.match(r"(\d+)\.", version.strip())
    return major is not None and int(major.group(1)) < 23


def _failure(builder: Engine, dockerfile: Path, found: list[Instruction], output: list[str], buildkit: bool) -> str:
    """What failed: the instruction of the failed (or last started) step, by its line."""
    marked = [match.group("text") for line in output if (match := FAILED.match(line))]
    steps = marked or [match.group("text") for line in output if (match := STEP.match(line))]
    where = ""
    if steps:
        failed = " ".join(re.sub(r"^\[[^\]]*\] ", "", steps[-1]).split())
        for ins in found:
            if " ".join(f"{ins.keyword} {ins.args}".split()).startswith(failed[:200]):
                where = f" (line {ins.line}: `{ins.text()}`)"
                break
    tail = "\n".join(line for line in output if line.strip())[-1500:]
    hint = ""
    if builder.name == "docker" and not buildkit:
        hint = " (the classic builder: a client with BuildKit, docker-buildx, builds more)"
    if RLIMITS_REFUSED in tail:
        hint = f" ({builder.name}'s runtime may not set the container's rlimits here: {RLIMITS_FIX})"
    return f"{dockerfile}{where} failed in {builder.name} build{hint}; its output ended:\n{tail}"
