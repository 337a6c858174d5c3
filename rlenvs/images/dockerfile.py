"""Reading Dockerfiles: the instructions (split by `dockerfile-parse`, a maintained parser),
Docker's word processing in them, and what a COPY or ADD takes from the build context.

Shared by the image builder (rlenvs.images.build) and the terminal env's host mode, which
reads a Dockerfile without building it (rlenvs.envs.terminal.dockerfile). Both raise
`DockerfileError`, whose message the caller prefixes with the file and the line.

Heredocs. A RUN, COPY or ADD line may take here-documents as BuildKit's dockerfile:1 syntax
has them: a word `<<NAME` (`<<-NAME` strips leading tabs; a quoted `<<'NAME'` or `<<"NAME"`
expands no variables) takes the lines after the instruction up to one holding only NAME, one
document after another for several. `instructions` reads them into `Instruction.heredocs`, so
that no body line is read as an instruction and every instruction keeps its own line number.

Variables. Docker expands $NAME and ${NAME} from the ENVs and ARGs before the instruction,
and the base image's own environment. A build knows that environment (`docker_rules`): an
unset name is empty and ${NAME:-word} / ${NAME:+word} work, as in Docker. Host mode has no
image, so there a name no earlier ENV sets is refused, as are the `:-` forms.
"""

from __future__ import annotations

import io
import json
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from dockerfile_parse import DockerfileParser

_ARCHIVE = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar\.zst)$", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_READONLY = frozenset(("BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID"))
"""Variables bash does not let anyone set, so a task cannot export them."""
_HEREDOC_WORD = re.compile(r"(\d*)<<(-?)([^<]*)")
"""A word that opens a here-document, as BuildKit's parser matches it (the whole word)."""
_HEREDOC_KEYWORDS = frozenset(("RUN", "COPY", "ADD"))


class DockerfileError(ValueError):
    """A Dockerfile instruction that cannot be read or done; the message says why."""


def short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def instructions(text: str) -> tuple[str, list[Instruction]]:
    """A Dockerfile's escape character and instructions (keywords upper-cased, continuation
    lines joined, comments dropped, inside a continued instruction too), each RUN, COPY and
    ADD with its heredocs (module docstring)."""
    escape = "\\"
    for line in text.splitlines():  # parser directives: comments before anything else
        if match := re.fullmatch(r"\s*#\s*escape\s*=\s*(\S)\s*", line):
            escape = match.group(1)
        elif not re.fullmatch(r"\s*#\s*\w+\s*=.*", line):
            break
    lines = text.split("\n")
    documents: dict[int, tuple[Heredoc, ...]] = {}  # by the instruction's first line (0-based)
    read_to = -1  # the last line read as part of a heredoc
    while True:
        # Each round parses the file with the bodies read so far blanked out (blank lines keep
        # the numbering), and reads the bodies of the first instruction after them that opens
        # heredocs: until then a body line would be read as an instruction.
        structure = _parse(lines)
        pending = next(
            (
                (item, markers)
                for item in structure
                if item["startline"] > read_to and (markers := _heredoc_markers(item["instruction"], item["value"]))
            ),
            None,
        )
        if pending is None:
            break
        item, markers = pending
        at, found = item["endline"] + 1, []
        for name, chomp, expand in markers:
            body: list[str] = []
            while True:
                if at >= len(lines):
                    ins = Instruction(item["startline"] + 1, item["instruction"], item["value"].strip())
                    raise DockerfileError(
                        f"(line {ins.line}: `{ins.text()}`) opens the heredoc {name}, which no later line ends: end "
                        f"it with a line holding only {name}"
                    )
                line, at = lines[at], at + 1
                if (line.rstrip("\r").lstrip("\t") if chomp else line.rstrip("\r")) == name:
                    break
                body.append(line + "\n")
            found.append(Heredoc(name, "".join(body), chomp, expand))
        lines[item["endline"] + 1 : at] = [""] * (at - item["endline"] - 1)
        documents[item["startline"]] = tuple(found)
        read_to = at - 1
    listed = []
    for item in structure:
        if item["instruction"] == "COMMENT":
            continue
        heredocs = documents.get(item["startline"], ())
        listed.append(Instruction(item["startline"] + 1, item["instruction"], item["value"].strip(), heredocs))
    return escape, listed


def _parse(lines: list[str]) -> list[dict]:
    text = "\n".join(lines)
    return DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8", "replace")), env_replace=False).structure


def _heredoc_markers(keyword: str, value: str) -> list[tuple[str, bool, bool]]:
    """The heredocs an instruction opens, in order: (name, chomp, expand). Only RUN, COPY and
    ADD (also after ONBUILD) in their shell form take heredocs, as in BuildKit."""
    value = value.strip()
    if keyword == "ONBUILD":
        keyword, _, value = value.partition(" ")
        keyword, value = keyword.upper(), value.strip()
    if keyword not in _HEREDOC_KEYWORDS or _json_form(value):
        return []
    found = []
    for word in raw_words(value):
        if (marker := heredoc_marker(word)) is not None:
            found.append(marker)
    return found


def _json_form(value: str) -> bool:
    try:
        listed = json.loads(value) if value.startswith("[") else None
    except ValueError:
        return False
    return isinstance(listed, list) and all(isinstance(word, str) for word in listed)


def raw_words(line: str) -> list[str]:
    """A shell line's words, their quotes and backslashes kept as written."""
    found: list[str] = []
    word, quote, i = "", "", 0
    while i < len(line):
        char = line[i]
        if char == "\\" and quote != "'" and i + 1 < len(line):
            word, i = word + line[i : i + 2], i + 2
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char.isspace():
            if word:
                found.append(word)
            word, i = "", i + 1
            continue
        elif line.startswith("<<", i):  # `<< EOF`: the blanks after << belong to the word (dockerfile 1.15+)
            blanks = len(line[i + 2 :]) - len(line[i + 2 :].lstrip(" \t"))
            word, i = word + line[i : i + 2 + blanks], i + 2 + blanks
            continue
        word, i = word + char, i + 1
    if word:
        found.append(word)
    return found


def heredoc_marker(word: str) -> tuple[str, bool, bool] | None:
    """(name, chomp, expand) when `word` opens a heredoc (`<<EOF`, `<<-EOF`, `<<'EOF'`, `<< EOF`), else None."""
    match = _HEREDOC_WORD.fullmatch(word)
    if match is None or not match.group(3):
        return None
    rest = match.group(3).strip()
    if not rest or len(raw_words(rest)) != 1:
        return None
    name = re.sub(r"\\(.)", r"\1", rest.replace("'", "").replace('"', ""))
    return name, match.group(2) == "-", not any(quote in rest for quote in "'\"")


def variable_name(name: str, where: str = "") -> str:
    if not _NAME.fullmatch(name):
        raise DockerfileError(f"{where}sets {name!r}, which is not a shell variable name")
    if name in _READONLY:
        raise DockerfileError(f"{where}sets {name}, which bash keeps read-only")
    return name


def words(
    text: str, env: Mapping[str, str], escape: str, *, split: bool = True, docker_rules: bool = False
) -> list[str]:
    """Docker's word processing (ENV, WORKDIR, COPY, USER): quotes group and are removed,
    `escape` escapes any character (in double quotes only `"`, `$` and itself), and $NAME /
    ${NAME} (not in single quotes) take values from `env` (see the module on `docker_rules`).
    Without `split` the whole text is one word, its whitespace kept."""
    found: list[str] = []
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
            value, i = _variable(text, i, env, docker_rules)
            word.append(value)
        elif char in "'\"" and quote in ("", char):
            quote, quoted = ("" if quote else char), True
        elif split and not quote and char.isspace():
            if word or quoted:
                found.append("".join(word))
            word, quoted = [], False
        else:
            word.append(char)
    if quote:
        raise DockerfileError(f"has an unmatched {quote}")
    if word or quoted or not split:
        found.append("".join(word))
    return found


def _variable(text: str, i: int, env: Mapping[str, str], docker_rules: bool) -> tuple[str, int]:
    """The value of the reference whose `$` is at text[i - 1], and where the text goes on."""
    if text.startswith("{", i):
        end = text.find("}", i)
        name, operator, word = text[i + 1 : end], "", ""
        if docker_rules and (match := re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*):([-+])(.*)", name)):
            name, operator, word = match.groups()
        if end < 0 or not _NAME.fullmatch(name):
            raise DockerfileError(
                f"uses `${text[i : end + 1] if end > 0 else text[i:]}`, which rlenvs does not expand: only "
                + (
                    "$NAME, ${NAME}, ${NAME:-word} and ${NAME:+word}"
                    if docker_rules
                    else "$NAME and ${NAME} of an earlier ENV"
                )
            )
        i = end + 1
        if operator:
            value = env.get(name, "")
            return (value or word) if operator == "-" else (word if value else ""), i
    else:
        match = _NAME.match(text, i)
        if match is None:
            return "$", i
        name, i = match.group(), match.end()
    if name not in env:
        if docker_rules:
            return "", i
        raise DockerfileError(
            f"refers to ${name}, which no earlier ENV sets: rlenvs uses neither the image (its PATH and the like) "
            "nor build ARGs, so write the value out"
        )
    return env[name], i


def env_instruction(args: str, env: Mapping[str, str], escape: str, *, docker_rules: bool = False) -> dict[str, str]:
    """One ENV's (or ARG's) settings, in either form; its references see the ENVs before it,
    as in Docker (`ENV A=2 B=$A` gives B the earlier A)."""
    head = args.split(None, 1)
    if head and "=" not in head[0]:  # the old form: ENV NAME the rest of the line
        if len(head) < 2:
            raise DockerfileError("sets no value: write ENV NAME=value")
        pairs = [(head[0], words(head[1], env, escape, split=False, docker_rules=docker_rules)[0])]
    else:
        settings = words(args, env, escape, docker_rules=docker_rules)
        if not settings or not all("=" in word for word in settings):
            raise DockerfileError('cannot be read: write ENV NAME=value, or NAME="a value" with spaces')
        pairs = [(name, value) for name, value in (word.split("=", 1) for word in settings)]
    return {variable_name(name): value for name, value in pairs}


@dataclass(frozen=True)
class Heredoc:
    """A here-document of a RUN, COPY or ADD line (module docstring)."""

    name: str
    content: str
    """The body as written, each line with its newline."""
    chomp: bool
    """`<<-NAME`: leading tabs are stripped from each line (and the end line)."""
    expand: bool
    """An unquoted NAME: a COPY expands the build's variables in the body (a RUN's shell
    expands them itself)."""

    def text(self) -> str:
        """The body with leading tabs stripped for `<<-`."""
        return re.sub(r"(?m)^\t+", "", self.content) if self.chomp else self.content


@dataclass(frozen=True)
class Instruction:
    line: int
    keyword: str
    args: str
    heredocs: tuple[Heredoc, ...] = ()

    def text(self) -> str:
        return short(f"{self.keyword} {self.args}")


@dataclass(frozen=True)
class Copy:
    ins: Instruction
    sources: tuple[str, ...]
    dest: PurePosixPath
    """Absolute (a relative destination is taken from the WORKDIR at that point)."""
    dest_is_dir: bool
    chmod: int | None
    chown: str | None = None
    """`--chown`'s user[:group], as written (a build resolves names in the image)."""
    source_from: str | None = None
    """`--from`'s stage (name or index) or image: the sources are paths in its root, not the
    build context. The host backend builds nothing, so only a build can take it."""
    documents: tuple[Heredoc, ...] = ()
    """Sources written inline (`COPY <<EOF /path`): files named after their heredoc."""


def parse_copy(
    ins: Instruction, workdir: PurePosixPath, env: Mapping[str, str], escape: str, *, docker_rules: bool = False
) -> Copy:
    """A COPY or ADD, its destination made absolute from `workdir`: local files, files of
    another stage or image (`--from`), or heredocs."""
    args, chmod, chown, source_from = ins.args, None, None, None
    while args.startswith("--"):
        flag, _, args = args.partition(" ")
        args = args.lstrip()
        name, _, value = flag[2:].partition("=")
        if name == "chmod":
            if not re.fullmatch(r"[0-7]{3,4}", value):
                raise DockerfileError(f"has --chmod={value}: write it in octal, e.g. --chmod=755")
            chmod = int(value, 8)
        elif name == "from":
            source_from = words(value, env, escape, split=False, docker_rules=docker_rules)[0]
            if not source_from:
                raise DockerfileError("has an empty --from: name a stage (AS name, or its index) or an image")
        elif name in ("parents", "exclude", "checksum", "keep-git-dir"):
            raise DockerfileError(f"uses --{name}, which rlenvs does not support without Docker")
        elif name == "chown":
            chown = words(value, env, escape, split=False, docker_rules=docker_rules)[0]
        elif name != "link":
            raise DockerfileError(f"has the unknown flag --{name}")
    try:  # the JSON form, else (as in Docker, also when it is not valid JSON) the shell form
        listed = json.loads(args) if args.startswith("[") else None
    except ValueError:
        listed = None
    documents: list[Heredoc] = []
    if isinstance(listed, list) and all(isinstance(word, str) for word in listed):
        paths = [words(word, env, escape, split=False, docker_rules=docker_rules)[0] for word in listed]
    elif ins.heredocs:  # a heredoc word names a document, not a path; the others read as usual
        by_name = {doc.name: doc for doc in ins.heredocs}
        paths, marker = [], None
        for word in raw_words(args):
            marker = heredoc_marker(word)
            if marker is None:
                paths.append(words(word, env, escape, split=False, docker_rules=docker_rules)[0])
            else:
                documents.append(by_name[marker[0]])
        if marker is not None:
            raise DockerfileError(f"writes the heredoc {marker[0]} as its destination: name a path after it")
        if documents and source_from is not None:
            raise DockerfileError("takes both --from and a heredoc: copy the heredoc in a COPY of its own")
        documents = [_expanded(doc, env, escape, docker_rules) for doc in documents]
    else:
        paths = words(args, env, escape, docker_rules=docker_rules)
    if len(paths) + len(documents) < 2:
        raise DockerfileError("needs a source and a destination")
    *sources, dest = paths
    count = len(sources) + len(documents)
    dest_is_dir = dest.endswith("/") or count > 1 or any(map(is_glob, sources))
    return Copy(ins, tuple(sources), absolute(workdir, dest), dest_is_dir, chmod, chown, source_from, tuple(documents))


def _expanded(doc: Heredoc, env: Mapping[str, str], escape: str, docker_rules: bool) -> Heredoc:
    """A COPY heredoc's body as BuildKit writes it: chomped for `<<-`, and, unless its name was
    quoted, with $NAME / ${NAME} expanded and the escape character taken off the character
    after it (quotes are kept as they are)."""
    text = doc.text()
    if not doc.expand:
        return Heredoc(doc.name, text, False, False)
    out, i = [], 0
    while i < len(text):
        char, i = text[i], i + 1
        if char == escape and i < len(text):
            out.append(text[i])
            i += 1
        elif char == "$":
            value, i = _variable(text, i, env, docker_rules)
            out.append(value)
        else:
            out.append(char)
    return Heredoc(doc.name, "".join(out), False, False)


def absolute(base: PurePosixPath, path: str) -> PurePosixPath:
    """`path` taken from `base` when relative, with "." and ".." resolved."""
    return PurePosixPath(posixpath.normpath(str(base / path)))


def is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def dockerignore(context: Path) -> list[tuple[bool, re.Pattern[str]]]:
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


def ignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or a folder above it decides."""
    parts = rel.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    verdict = False
    for negate, pattern in rules:
        if any(pattern.fullmatch(candidate) for candidate in candidates):
            verdict = not negate
    return verdict


def copy_sources(text: str, copy: Copy, context: Path, rules: list[tuple[bool, re.Pattern[str]]]) -> list[Path]:
    """The files and folders of the build context that one COPY source names."""
    if "://" in text:
        raise DockerfileError(f"downloads {text}: the sandbox has no network; put the file in the folder and COPY it")
    if ".." in PurePosixPath(text).parts or text.startswith("/"):
        raise DockerfileError(f"copies {text}, which is outside its build context {context}")
    if is_glob(text):
        found = sorted(path for path in context.glob(text) if not ignored(path.relative_to(context).as_posix(), rules))
    else:
        path = context / text
        visible = path == context or not ignored(path.relative_to(context).as_posix(), rules)
        found = [path] if visible and (path.exists() or path.is_symlink()) else []
    if not found:
        raise DockerfileError(f"copies {text}, which is not in its build context {context}")
    for path in found:
        if copy.ins.keyword == "ADD" and path.is_file() and _ARCHIVE.search(path.name):
            raise DockerfileError(
                f"unpacks the archive {path.name} with ADD, which rlenvs does not do: unpack it into the task folder "
                "and COPY the result"
            )
    return found
