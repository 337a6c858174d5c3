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
RUN, a second FROM, ENTRYPOINT, a non-root USER and every other instruction that needs Docker;
COPY with a heredoc or `--from`, `--parents`, `--exclude`, `--checksum` or `--keep-git-dir`;
sources that are URLs, outside the build context or missing, archives that ADD would unpack,
symbolic links and special files; destinations or a WORKDIR outside the workspace (the rest of
the sandbox is read-only); more than the byte cap of what goes into the sandbox; variables no
earlier ENV sets (the image's own, build ARGs), `${NAME:-x}`-style forms and names bash keeps
read-only; and in compose, several services, a prebuilt image, a build context outside the task
folder, a start command of its own and any value taken from the host's environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
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
from rlenvs.sandbox.launch import check_workspace_path

DEFAULT_WORKDIR = "/app"
"""Where the workspace is when the Dockerfile sets no WORKDIR (Terminal-Bench's images use /app)."""
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml")
_ARCHIVE = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar\.zst)$", re.IGNORECASE)
_IGNORED_INSTRUCTIONS = frozenset(
    ("LABEL", "MAINTAINER", "EXPOSE", "ARG", "CMD", "SHELL", "HEALTHCHECK", "STOPSIGNAL", "VOLUME", "ONBUILD")
)
"""Dockerfile instructions that change nothing a task's commands see (CMD: both harnesses
start the container with `sleep infinity` in its place)."""
_ROOT_USERS = frozenset(("root", "0", "root:root", "0:0"))
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_READONLY = frozenset(("BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"))
"""Variables bash does not let anyone set, so a task cannot export them."""


# --- variables ----------------------------------------------------------------------------------------


def exports(environment: Mapping[str, str]) -> str:
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in environment.items())


def _variable_name(name: str, where: str = "") -> str:
    if not _NAME.fullmatch(name):
        raise TaskFolderError(f"{where}sets {name!r}, which is not a shell variable name")
    if name in _READONLY:
        raise TaskFolderError(f"{where}sets {name}, which bash keeps read-only")
    return name


def env_table(table: Any, where: str, *, compose: bool = False) -> dict[str, str]:
    """Literal NAME=value settings: a task.toml env table, or (`compose`) a compose service's
    `environment`, a list or a mapping. A value taken from the host is refused (`${...}`; in
    compose any `$NAME`, `$$` being a `$`, and a name without a value): nothing of the host's
    goes into the sandbox."""
    if not table:
        return {}
    if compose and isinstance(table, list):
        table = dict(item.split("=", 1) if "=" in item else (item, None) for item in map(str, table))
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
        environment[_variable_name(str(name), f"{where} ")] = text.replace("$$", "$") if compose else text
    return environment


def _words(text: str, env: Mapping[str, str], escape: str, *, split: bool = True) -> list[str]:
    """Docker's word processing (ENV, WORKDIR, COPY): quotes group and are removed, `escape`
    escapes any character (in double quotes only `"`, `$` and itself), and $NAME / ${NAME}
    (not in single quotes) take values from `env`, the earlier ENVs. Without `split` the
    whole text is one word, its whitespace kept."""
    words: list[str] = []
    word: list[str] = []
    quote, quoted, i = "", False, 0
    while i < len(text):
        char, i = text[i], i + 1
        if quote == "'":
            quote = "" if char == "'" else quote
            word.append("" if char == "'" else char)
        elif char == escape and i < len(text) and (not quote or text[i] in ('"', "$", escape)):
            word.append(text[i])
            i += 1
        elif char == "$":
            value, i = _variable(text, i, env)
            word.append(value)
        elif char in "'\"" and quote in ("", char):
            quote, quoted = ("" if quote else char), True
        elif split and not quote and char.isspace():
            if word or quoted:
                words.append("".join(word))
            word, quoted = [], False
        else:
            word.append(char)
    if quote:
        raise TaskFolderError(f"has an unmatched {quote}")
    if word or quoted or not split:
        words.append("".join(word))
    return words


def _variable(text: str, i: int, env: Mapping[str, str]) -> tuple[str, int]:
    """The value of the reference whose `$` is at text[i - 1], and where the text goes on."""
    if text.startswith("{", i):
        end = text.find("}", i)
        name = text[i + 1 : end]
        if end < 0 or not _NAME.fullmatch(name):
            raise TaskFolderError(
                f"uses `${text[i : end + 1] if end > 0 else text[i:]}`, which rlenvs does not expand: only "
                "$NAME and ${NAME} of an earlier ENV"
            )
        i = end + 1
    else:
        match = _NAME.match(text, i)
        if match is None:
            return "$", i
        name, i = match.group(), match.end()
    if name not in env:
        raise TaskFolderError(
            f"refers to ${name}, which no earlier ENV sets: rlenvs uses neither the image (its PATH and the like) "
            "nor build ARGs, so write the value out"
        )
    return env[name], i


def _env_instruction(args: str, env: Mapping[str, str], escape: str) -> dict[str, str]:
    """One ENV's settings, in either form; its references see the ENVs before it, as in
    Docker (`ENV A=2 B=$A` gives B the earlier A)."""
    head = args.split(None, 1)
    if head and "=" not in head[0]:  # the old form: ENV NAME the rest of the line
        if len(head) < 2:
            raise TaskFolderError("sets no value: write ENV NAME=value")
        pairs = [(head[0], _words(head[1], env, escape, split=False)[0])]
    else:
        words = _words(args, env, escape)
        if not words or not all("=" in word for word in words):
            raise TaskFolderError('cannot be read: write ENV NAME=value, or NAME="a value" with spaces')
        pairs = [tuple(word.split("=", 1)) for word in words]
    return {_variable_name(name): value for name, value in pairs}


# --- the Dockerfile --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Instruction:
    line: int
    keyword: str
    args: str

    def text(self) -> str:
        return short(f"{self.keyword} {self.args}")


@contextlib.contextmanager
def _at(where: str, ins: _Instruction) -> Iterator[None]:
    """Name the Dockerfile line in the reasons raised within."""
    try:
        yield
    except TaskFolderError as error:
        raise TaskFolderError(f"{where} (line {ins.line}: `{ins.text()}`) {error}") from None


@dataclass(frozen=True)
class _Copy:
    ins: _Instruction
    sources: tuple[str, ...]
    dest: PurePosixPath
    """Absolute (a relative destination is taken from the WORKDIR at that point)."""
    dest_is_dir: bool
    chmod: int | None


@dataclass(frozen=True)
class Image:
    """What a task takes from its Dockerfile and compose file."""

    workdir: str = DEFAULT_WORKDIR
    files: tuple[Entry, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)


def image(folder: Path, base: Path, extra: Mapping[str, str] | None = None) -> Image:
    """The image of the Dockerfile (or compose file) in `base`; `extra`: variables set over it."""
    compose = next((base / name for name in COMPOSE_FILES if (base / name).is_file()), None)
    context, dockerfile, environment = _compose(compose, folder) if compose else (base, base / "Dockerfile", {})
    environment = {**environment, **(extra or {})}
    if not dockerfile.is_file():
        return Image(environment=environment)
    where = f"its {rel(dockerfile, folder)}"
    workdir, copies, image_env = _parse_dockerfile(read_text(dockerfile, folder), where)
    try:
        check_workspace_path(workdir)
    except ValueError as error:
        raise TaskFolderError(f"{where}'s WORKDIR cannot be the workspace: {error}") from None
    files = _workspace_files(PurePosixPath(workdir), copies, context, folder, where)
    return Image(workdir, files, {**image_env, **environment})


def _instructions(text: str) -> tuple[str, list[_Instruction]]:
    """A Dockerfile's escape character and instructions, continuation lines joined, comments
    and blank lines dropped (inside a continued instruction too, as Docker does)."""
    escape = "\\"
    lines = text.splitlines()
    for line in lines:  # parser directives: comments before anything else
        if match := re.fullmatch(r"\s*#\s*escape\s*=\s*(\S)\s*", line):
            escape = match.group(1)
        elif not re.fullmatch(r"\s*#\s*\w+\s*=.*", line):
            break
    code = [(number, line.strip()) for number, line in enumerate(lines, 1) if line.strip() and line.strip()[0] != "#"]
    found, parts, start = [], [], 0
    for index, (number, line) in enumerate(code):
        start = start if parts else number
        continued = line.endswith(escape)
        parts.append(line[:-1] if continued else line)
        if not continued or index == len(code) - 1:
            words = " ".join(part for part in parts if part).split(None, 1)
            if words:
                found.append(_Instruction(start, words[0].upper(), words[1].strip() if len(words) > 1 else ""))
            parts = []
    return escape, found


def _parse_dockerfile(text: str, where: str) -> tuple[str, list[_Copy], dict[str, str]]:
    """The Dockerfile's last WORKDIR, its COPYs and its ENV variables."""
    escape, instructions = _instructions(text)
    runs = [ins for ins in instructions if ins.keyword == "RUN"]
    if runs:
        first = runs[0]
        more = (
            f"line {first.line}" if len(runs) == 1 else f"{len(runs)} RUN instructions; the first at line {first.line}"
        )
        raise TaskFolderError(
            f"{where} runs `{first.text()}` ({more}): building that image needs Docker, and rlenvs runs task "
            "folders without Docker, on the host's own tools (its /usr) with no network. Move set-up that needs "
            "no network into setup.sh (run in the workspace before the agent starts), or drop the Dockerfile"
        )
    workdir, copies, env, stages = PurePosixPath(DEFAULT_WORKDIR), [], {}, 0
    for ins in instructions:
        with _at(where, ins):
            if ins.keyword == "FROM":
                stages += 1
                if stages > 1:
                    raise TaskFolderError(
                        "is a second FROM: several build stages need Docker to build, and rlenvs runs task folders "
                        "without Docker; keep one FROM with WORKDIR, ENV and COPY only"
                    )
            elif ins.keyword == "ENV":
                env.update(_env_instruction(ins.args, env, escape))
            elif ins.keyword == "WORKDIR":
                workdir = _absolute(workdir, _words(ins.args, env, escape, split=False)[0])
            elif ins.keyword in ("COPY", "ADD"):
                copies.append(_parse_copy(ins, workdir, env, escape))
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


def _parse_copy(ins: _Instruction, workdir: PurePosixPath, env: Mapping[str, str], escape: str) -> _Copy:
    args, chmod = ins.args, None
    if "<<" in args:
        raise TaskFolderError("writes a file with a heredoc; put the file in the folder and COPY it")
    while args.startswith("--"):
        flag, _, args = args.partition(" ")
        args = args.lstrip()
        name, _, value = flag[2:].partition("=")
        if name == "chmod":
            if not re.fullmatch(r"[0-7]{3,4}", value):
                raise TaskFolderError(f"has --chmod={value}: write it in octal, e.g. --chmod=755")
            chmod = int(value, 8)
        elif name in ("from", "parents", "exclude", "checksum", "keep-git-dir"):
            raise TaskFolderError(f"uses --{name}, which rlenvs does not support without Docker")
        elif name not in ("chown", "link"):
            raise TaskFolderError(f"has the unknown flag --{name}")
    try:  # the JSON form, else (as in Docker, also when it is not valid JSON) the shell form
        listed = json.loads(args) if args.startswith("[") else None
    except ValueError:
        listed = None
    if isinstance(listed, list) and all(isinstance(word, str) for word in listed):
        words = [_words(word, env, escape, split=False)[0] for word in listed]
    else:
        words = _words(args, env, escape)
    if len(words) < 2:
        raise TaskFolderError("needs a source and a destination")
    *sources, dest = words
    dest_is_dir = dest.endswith("/") or len(sources) > 1 or any(map(_is_glob, sources))
    return _Copy(ins, tuple(sources), _absolute(workdir, dest), dest_is_dir, chmod)


def _absolute(base: PurePosixPath, path: str) -> PurePosixPath:
    """`path` taken from `base` when relative, with "." and ".." resolved."""
    return PurePosixPath(posixpath.normpath(str(base / path)))


def _is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def _dockerignore(context: Path) -> list[tuple[bool, re.Pattern[str]]]:
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    rules = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
        if pattern in ("", "."):
            continue
        regex = ""
        for token in re.split(r"(\*\*/?|\*|\?|\[[^\]]*\])", pattern):
            if token.startswith("**"):
                regex += "(.*/)?" if token.endswith("/") else ".*"
            elif token in ("*", "?"):
                regex += "[^/]*" if token == "*" else "[^/]"
            elif token.startswith("[") and token.endswith("]"):
                regex += token
            else:
                regex += re.escape(token)
        rules.append((line.startswith("!"), re.compile(regex)))
    return rules


def _ignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or a folder above it decides."""
    parts = rel.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for negate, pattern in rules:
        if any(pattern.fullmatch(candidate) for candidate in candidates):
            ignored = not negate
    return ignored


def _sources(text: str, copy: _Copy, context: Path, rules: list[tuple[bool, re.Pattern[str]]]) -> list[Path]:
    """The files and folders of the build context that one COPY source names."""
    if "://" in text:
        raise TaskFolderError(f"downloads {text}: the sandbox has no network; put the file in the folder and COPY it")
    if ".." in PurePosixPath(text).parts or text.startswith("/"):
        raise TaskFolderError(f"copies {text}, which is outside its build context {context}")
    if _is_glob(text):
        found = sorted(path for path in context.glob(text) if not _ignored(path.relative_to(context).as_posix(), rules))
    else:
        path = context / text
        visible = path == context or not _ignored(path.relative_to(context).as_posix(), rules)
        found = [path] if visible and (path.exists() or path.is_symlink()) else []
    if not found:
        raise TaskFolderError(f"copies {text}, which is not in its build context {context}")
    for path in found:
        if copy.ins.keyword == "ADD" and path.is_file() and _ARCHIVE.search(path.name):
            raise TaskFolderError(
                f"unpacks the archive {path.name} with ADD, which rlenvs does not do: unpack it into the task folder "
                "and COPY the result"
            )
    return found


def _workspace_files(
    workdir: PurePosixPath, copies: list[_Copy], context: Path, folder: Path, where: str
) -> tuple[Entry, ...]:
    """What the Dockerfile's COPYs put into the workspace, later copies over earlier ones."""
    rules = _dockerignore(context)
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
        budget.left += len(files[at].data) if at in files else 0
        files[at] = file_entry(source, at, folder, budget, chmod)
        dirs.update([target] if files[at].is_dir else [], target.parents)

    for copy in copies:
        with _at(where, copy.ins):
            for text in copy.sources:
                for source in _sources(text, copy, context, rules):
                    if source.is_dir() and not source.is_symlink():
                        place(copy.dest, source, copy.chmod)  # the folder itself, with its mode
                        for path in walk(source):
                            if not _ignored(path.relative_to(context).as_posix(), rules):
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
