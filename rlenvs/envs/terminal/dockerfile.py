"""The Dockerfile and docker-compose interpreter of task folders (rlenvs.envs.terminal.folders):
what a task's image would hold, read without Docker, as the workspace files, WORKDIR and
environment of a `TerminalTask`.

What it interprets:

- a Dockerfile's instructions, continuation lines joined and comments dropped, with the
  `# escape=` parser directive: FROM (one stage; the image itself is not used, commands run
  on the host's own /usr), WORKDIR (the last one is the workdir, /app without one), ENV (both
  forms, later values winning) and COPY / ADD of local non-archive files (shell or JSON form,
  `--chmod`, `--chown` and `--link` accepted, the first setting the mode); USER root; and
  instructions that change nothing a task's commands see (LABEL, EXPOSE, ARG, CMD, ...),
  which are ignored;
- Docker's word processing in ENV, WORKDIR and COPY: quotes, the escape character, and
  `$NAME` / `${NAME}` taking the value of an earlier ENV;
- the build context's `.dockerignore`, and what each COPY puts into the workspace (files and
  folders with their permission bits and mtime, later copies over earlier ones);
- a docker-compose file's one service: its `build` (context and dockerfile), its
  `environment` (literal values; Terminal-Bench's `TEST_DIR` is left to the test command) and
  a `command` / `entrypoint` that only sleeps.

What it refuses, with a `TaskFolderError` naming the file, the line and what would fix it:
RUN, a second FROM, ENTRYPOINT, a non-root USER and every other instruction that needs Docker
(a build: RUN, several stages and `COPY --from` say to load the folder with backend="bwrap");
COPY with `--from`, `--parents`, `--exclude`, `--checksum` or `--keep-git-dir`;
sources that are URLs, outside the build context or missing, archives that ADD would unpack,
symbolic links and special files; destinations or a WORKDIR outside the workspace (the rest of
the sandbox is read-only); more than the byte cap of what goes into the sandbox; variables no
earlier ENV sets (the image's own, build ARGs), `${NAME:-x}`-style forms and names bash keeps
read-only; and in compose, several services, a prebuilt image, a build context outside the task
folder, a start command of its own and any value taken from the host's environment.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rlenvs.envs.terminal.folder_files import (
    Budget,
    TaskFolderError,
    file_entry,
    read_text,
    read_yaml,
    rel,
    short,
    walk,
)
from rlenvs.envs.terminal.tasks import Entry
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
    variable_name,
    words,
)
from rlenvs.sandbox.launch import check_workspace_path

DEFAULT_WORKDIR = "/app"
"""Where the workspace is when the Dockerfile sets no WORKDIR (Terminal-Bench's images use /app)."""
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml")
_IGNORED_INSTRUCTIONS = frozenset(
    ("LABEL", "MAINTAINER", "EXPOSE", "ARG", "CMD", "SHELL", "HEALTHCHECK", "STOPSIGNAL", "VOLUME", "ONBUILD")
)
"""Dockerfile instructions that change nothing a task's commands see (CMD: both harnesses
start the container with `sleep infinity` in its place)."""
_ROOT_USERS = frozenset(("root", "0", "root:root", "0:0"))


# --- variables ----------------------------------------------------------------------------------------


def exports(environment: Mapping[str, str]) -> str:
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in environment.items())


def _compose_setting(item: str) -> tuple[str, str | None]:
    """One item of a compose service's `environment` list: `NAME=value`, or `NAME` alone
    (None: its value would come from the host)."""
    name, equals, value = item.partition("=")
    return name, value if equals else None


def env_table(table: Any, where: str, *, compose: bool = False) -> dict[str, str]:
    """Literal NAME=value settings: a task.toml env table, or (`compose`) a compose service's
    `environment`, a list or a mapping. A value taken from the host is refused (`${...}`; in
    compose any `$NAME`, `$$` being a `$`, and a name without a value): nothing of the host's
    goes into the sandbox."""
    if not table:
        return {}
    if compose and isinstance(table, list):
        table = dict(_compose_setting(item) for item in map(str, table))
    if not isinstance(table, dict):
        raise TaskFolderError(f'{where} must be a table of NAME = "value"')
    environment = {}
    for name, value in table.items():
        if compose and name == "TEST_DIR":
            continue  # Terminal-Bench's own, for the tests; the test command sets it here
        if isinstance(value, (dict, list)):
            raise TaskFolderError(f"{where}'s {name} must be a string or a number, got {value!r}")
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if value is None or ("$" in text.replace("$$", "") if compose else "${" in text):
            raise TaskFolderError(
                f"{where} takes {name} from the host's environment ({'no value' if value is None else repr(text)}): "
                "rlenvs passes nothing from the host into the sandbox; write the value out"
            )
        try:
            name = variable_name(str(name), f"{where} ")
        except DockerfileError as error:
            raise TaskFolderError(str(error)) from None
        environment[name] = text.replace("$$", "$") if compose else text
    return environment


# --- the Dockerfile --------------------------------------------------------------------------------


@contextlib.contextmanager
def _at(where: str, ins: Instruction) -> Iterator[None]:
    """Name the Dockerfile line in the reasons raised within."""
    try:
        yield
    except (TaskFolderError, DockerfileError) as error:
        raise TaskFolderError(f"{where} (line {ins.line}: `{ins.text()}`) {error}") from None


@dataclass(frozen=True)
class Image:
    """What a task takes from its Dockerfile and compose file."""

    workdir: str = DEFAULT_WORKDIR
    files: tuple[Entry, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)


def build_source(folder: Path, base: Path) -> tuple[Path, Path, dict[str, str]]:
    """The build context and Dockerfile of the task in `base` (its compose file's service's,
    when it has one), and the variables the compose file sets."""
    compose = next((base / name for name in COMPOSE_FILES if (base / name).is_file()), None)
    return _compose(compose, folder) if compose else (base, base / "Dockerfile", {})


def runs_anything(path: Path) -> bool:
    """Whether a Dockerfile's image must be built (rlenvs.images) rather than read: it has a RUN
    line, several stages or a `COPY --from` (files of another root, which only a build has)."""
    try:
        found = instructions(path.read_text(encoding="utf-8", errors="replace"))[1]
    except (OSError, DockerfileError):
        return False
    froms = sum(ins.keyword == "FROM" for ins in found)
    copies_from = any(ins.keyword in ("COPY", "ADD") and re.search(r"(^|\s)--from=", ins.args) for ins in found)
    return froms > 1 or copies_from or any(ins.keyword == "RUN" for ins in found)


def image(folder: Path, base: Path, extra: Mapping[str, str] | None = None) -> Image:
    """The image of the Dockerfile (or compose file) in `base`; `extra`: variables set over it."""
    context, dockerfile, environment = build_source(folder, base)
    environment = {**environment, **(extra or {})}
    if not dockerfile.is_file():
        return Image(environment=environment)
    where = f"its {rel(dockerfile, folder)}"
    workdir, copies, image_env = _parse_dockerfile(read_text(dockerfile, folder), where)
    try:
        check_workspace_path(workdir)
    except ValueError as error:
        raise TaskFolderError(
            f"{where}'s WORKDIR cannot be the workspace: {error} (the host backend mounts its own /tmp; an image "
            "backend, backend='bwrap', 'docker' or 'podman', runs the image's own)"
        ) from None
    files = _workspace_files(PurePosixPath(workdir), copies, context, folder, where)
    return Image(workdir, files, {**image_env, **environment})


def _parse_dockerfile(text: str, where: str) -> tuple[str, list[Copy], dict[str, str]]:
    """The Dockerfile's last WORKDIR, its COPYs and its ENV variables."""
    try:
        escape, found = instructions(text)
    except DockerfileError as error:
        raise TaskFolderError(f"{where} {error}") from None
    runs = [ins for ins in found if ins.keyword == "RUN"]
    if runs:
        first = runs[0]
        more = (
            f"line {first.line}" if len(runs) == 1 else f"{len(runs)} RUN instructions; the first at line {first.line}"
        )
        raise TaskFolderError(
            f"{where} runs `{first.text()}` ({more}): the host backend reads a Dockerfile without building it, "
            'on the host\'s own tools (its /usr) with no network. Load the folder with backend="bwrap" (or '
            '"auto") to build its image without Docker (rlenvs.images), or move set-up that needs no network '
            "into setup.sh (run in the workspace before the agent starts)"
        )
    workdir, stages = PurePosixPath(DEFAULT_WORKDIR), 0
    copies: list[Copy] = []
    env: dict[str, str] = {}
    for ins in found:
        with _at(where, ins):
            if ins.keyword == "FROM":
                stages += 1
                if stages > 1:
                    raise TaskFolderError(
                        "is a second FROM: the host backend reads a Dockerfile without building it, and several "
                        'build stages must be built: load the folder with backend="bwrap" (or "auto") to build its '
                        "image without Docker (rlenvs.images), or keep one FROM with WORKDIR, ENV and COPY only"
                    )
            elif ins.keyword == "ENV":
                env.update(env_instruction(ins.args, env, escape))
            elif ins.keyword == "WORKDIR":
                workdir = absolute(workdir, words(ins.args, env, escape, split=False)[0])
            elif ins.keyword in ("COPY", "ADD"):
                copy = parse_copy(ins, workdir, env, escape)
                if copy.source_from is not None:
                    raise TaskFolderError(
                        f"copies from {copy.source_from}, another stage or image, which the host backend does not "
                        'build: load the folder with backend="bwrap" (or "auto") to build its image without Docker'
                    )
                copies.append(copy)
            elif ins.keyword == "USER":
                if ins.args not in _ROOT_USERS:
                    raise TaskFolderError(
                        "switches user: the sandbox has one user, so the task cannot count on another one; drop "
                        "the USER line"
                    )
            elif ins.keyword == "ENTRYPOINT":
                raise TaskFolderError(
                    "starts a process with the container: rlenvs keeps no process running between the agent's "
                    "commands; drop the ENTRYPOINT"
                )
            elif ins.keyword not in _IGNORED_INSTRUCTIONS:
                raise TaskFolderError(
                    "cannot be done without Docker: only FROM, WORKDIR, ENV and COPY (and ADD of local files) shape "
                    "a task's workspace"
                )
    return str(workdir), copies, env


def _workspace_files(
    workdir: PurePosixPath, copies: list[Copy], context: Path, folder: Path, where: str
) -> tuple[Entry, ...]:
    """What the Dockerfile's COPYs put into the workspace, later copies over earlier ones."""
    rules = dockerignore(context)
    budget = Budget("workspace (what the Dockerfile copies)")
    files: dict[str, Entry] = {}
    dirs = {PurePosixPath("/"), *workdir.parents, workdir}

    def place(target: PurePosixPath, source: Path, chmod: int | None) -> None:
        if target != workdir and workdir not in target.parents:
            raise TaskFolderError(
                f"copies {rel(source, folder)} to {target}, outside the workspace {workdir}: the rest of the sandbox "
                "is read-only, so a task's files must be under its WORKDIR (setup.sh may write /tmp)"
            )
        if target == workdir:
            return
        at = target.relative_to(workdir).as_posix()
        budget.left += len(files[at].content) if at in files else 0
        files[at] = file_entry(source, at, folder, budget, chmod)
        dirs.update([target] if files[at].is_dir else [], target.parents)

    for copy in copies:
        with _at(where, copy.ins):
            for doc in copy.documents:  # COPY <<EOF: a file of the heredoc's body, mode 644 unless --chmod
                target = copy.dest / doc.name if copy.dest_is_dir or copy.dest in dirs else copy.dest
                if target == workdir or workdir not in target.parents:
                    raise TaskFolderError(
                        f"writes the heredoc {doc.name} to {target}, outside the workspace {workdir}: the rest of the "
                        "sandbox is read-only, so a task's files must be under its WORKDIR"
                    )
                at = target.relative_to(workdir).as_posix()
                data = doc.content.encode("utf-8")
                budget.left += len(files[at].content) if at in files else 0
                budget.take(len(data))
                files[at] = Entry(at, data, mode=copy.chmod if copy.chmod is not None else 0o644)
                dirs.update(target.parents)
            for text in copy.sources:
                for source in copy_sources(text, copy, context, rules):
                    if source.is_dir() and not source.is_symlink():
                        place(copy.dest, source, copy.chmod)  # the folder itself, with its mode
                        for path in walk(source):
                            if not ignored(path.relative_to(context).as_posix(), rules):
                                place(copy.dest / path.relative_to(source).as_posix(), path, copy.chmod)
                        dirs.add(copy.dest)
                    elif copy.dest_is_dir or copy.dest in dirs:
                        place(copy.dest / source.name, source, copy.chmod)
                    else:
                        place(copy.dest, source, copy.chmod)
    return tuple(files.values())


def _compose(compose: Path, folder: Path) -> tuple[Path, Path, dict[str, str]]:
    """The build context, Dockerfile and environment of a compose file's one service."""
    data = read_yaml(compose, folder)
    where = rel(compose, folder)
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services:
        raise TaskFolderError(f"{where} defines no services")
    if len(services) > 1:
        raise TaskFolderError(
            f"{where} runs {len(services)} services ({', '.join(map(str, services))}): rlenvs runs each task in one "
            "sandbox without Docker, so a task needing other containers cannot run"
        )
    ((name, service),) = services.items()
    service = service if isinstance(service, dict) else {}
    build = service.get("build")
    if build is None:
        raise TaskFolderError(
            f"{where}'s service {name} uses the prebuilt image {service.get('image')!r}: that needs Docker; give the "
            "task a Dockerfile with FROM, WORKDIR, ENV and COPY only"
        )
    spec = {"context": build} if isinstance(build, str) else build if isinstance(build, dict) else {}
    context = (compose.parent / str(spec.get("context", "."))).resolve()
    if not context.is_relative_to(folder):
        raise TaskFolderError(f"{where} builds from {context}, outside the task folder")
    for key in ("command", "entrypoint"):
        value = service.get(key)
        text = " ".join(map(str, value)) if isinstance(value, list) else str(value or "")
        if text and not re.search(r"\bsleep\b|tail\s+-f\s+/dev/null", text):
            raise TaskFolderError(
                f"{where}'s service {name} starts `{short(text)}` ({key}): rlenvs keeps no process running between "
                "the agent's commands"
            )
    environment = env_table(service.get("environment"), f"{where}'s environment", compose=True)
    return context, context / str(spec.get("dockerfile", "Dockerfile")), environment
