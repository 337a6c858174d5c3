"""Judging a terminal task by the state of its workspace, read by the host's own code.

Why its own reader: the agent had a shell in that workspace. Anything it could run or edit
(`ls`, `cat`, `python3` on its PATH, a file the checker would follow) must not take part in
the verdict. `read_workspace` walks the folder from outside the sandbox with directory file
descriptors and `O_NOFOLLOW`, never resolving a symlink, never opening a FIFO or device, and
with caps on entries, depth and bytes read, so a workspace built to hang or flood the reader
gets a verdict too. A symlink is reported as a symlink: `report.txt -> /etc/passwd` is not
a file called report.txt with the host's passwords in it.

Expectations are small frozen records that turn into JSON and back (`expectation_from_dict`),
so a task's ground truth can live in a Parquet column or a user's own task row. The reward
of an episode is 1.0 when every expectation holds; `check_all` says which did not.
"""

from __future__ import annotations

import abc
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import PurePosixPath
from typing import Any, ClassVar

from rlenvs.envs.terminal.tree import WorkspaceUnreadable, open_no_follow, walk

MAX_FILE_BYTES = 1 << 20
"""Bytes read from one file; a longer file is recorded with its size and no content."""
MAX_ENTRIES = 20_000
MAX_DEPTH = 64


@dataclass(frozen=True)
class Node:
    """One thing in the workspace, as `lstat` sees it (symlinks are not followed)."""

    kind: str
    """"file", "dir", "symlink" or "other" (FIFO, socket, device)."""
    mode: int
    """Permission bits, e.g. 0o644."""
    size: int
    mtime: float
    data: bytes | None = None
    """A regular file's content, or None when it is longer than the reader's cap."""
    target: str = ""
    """A symlink's target text."""

    def text(self) -> str | None:
        """The content as UTF-8 text (undecodable bytes replaced), or None when there is none.
        A byte-order mark at the start is dropped: editors and Windows tools write one, and
        it marks the encoding, it is not content."""
        return None if self.data is None else self.data.decode("utf-8", "replace").removeprefix("\ufeff")


@dataclass(frozen=True)
class Workspace:
    """The whole workspace: relative posix paths ("logs/app.log") to nodes."""

    nodes: Mapping[str, Node]

    def get(self, path: str) -> Node | None:
        return self.nodes.get(normalise_path(path))

    def children(self, path: str) -> list[str]:
        """Names directly inside the directory `path` ("" or "." for the top)."""
        prefix = normalise_path(path)
        prefix = "" if prefix == "." else prefix + "/"
        return sorted(p[len(prefix) :] for p in self.nodes if p.startswith(prefix) and "/" not in p[len(prefix) :])

    def files(self) -> list[str]:
        return sorted(p for p, node in self.nodes.items() if node.kind == "file")


def normalise_path(path: str) -> str:
    """A workspace-relative path in one spelling ("./a//b/" -> "a/b"); refuses absolute
    paths and "..", which could name something outside the workspace."""
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"a workspace path must be a non-empty string, got {path!r}")
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        raise ValueError(f"workspace path {path!r} must be relative and must not contain '..'")
    return str(pure)


def read_workspace(
    root: str | os.PathLike, *, max_file_bytes: int = MAX_FILE_BYTES, max_entries: int = MAX_ENTRIES
) -> Workspace:
    """Every entry under `root`, without following a symlink anywhere below it."""
    nodes: dict[str, Node] = {}
    for found in walk(root, max_entries=max_entries, max_depth=MAX_DEPTH):
        info = found.entry.stat(follow_symlinks=False)
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            target = os.readlink(found.name, dir_fd=found.dir_fd)
            nodes[found.path] = Node("symlink", mode, info.st_size, info.st_mtime, target=target)
        elif stat.S_ISDIR(info.st_mode):
            nodes[found.path] = Node("dir", mode, info.st_size, info.st_mtime)
        elif stat.S_ISREG(info.st_mode):
            data = read_file(found.name, found.dir_fd, info, max_file_bytes) if info.st_size <= max_file_bytes else None
            nodes[found.path] = Node("file", mode, info.st_size, info.st_mtime, data=data)
        else:
            nodes[found.path] = Node("other", mode, info.st_size, info.st_mtime)
    return Workspace(nodes)


def read_file(name: str, dir_fd: int, info: os.stat_result, max_bytes: int) -> bytes | None:
    """The content of the regular file `name` that `info` (its lstat) describes, or None when
    it is longer than `max_bytes`, or was replaced or cannot be opened."""
    fd = open_no_follow(name, dir_fd, 0)
    if fd is None:
        return None
    try:
        opened = os.fstat(fd)
        if (opened.st_ino, opened.st_dev) != (info.st_ino, info.st_dev) or not stat.S_ISREG(opened.st_mode):
            return None  # replaced between the lstat and the open
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= max_bytes else None
    finally:
        os.close(fd)


# --- expectations --------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """The outcome of one expectation."""

    expectation: str
    """The expectation, in words."""
    passed: bool
    detail: str = ""
    """Why it failed, in words an agent (or a person reading a transcript) can act on."""


class Expectation(abc.ABC):
    """Something that must hold after the episode. Subclasses are frozen dataclasses with a
    `kind` name; `to_dict` and `expectation_from_dict` turn them into JSON and back."""

    kind: ClassVar[str]

    @abc.abstractmethod
    def check(self, workspace: Workspace, answer: str | None) -> Check:
        """Whether it holds, and if not why."""

    @abc.abstractmethod
    def describe(self) -> str:
        """The expectation in words (the key of `reward_breakdown`)."""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}  # type: ignore[call-overload]


@dataclass(frozen=True)
class PathExpectation(Expectation):
    """An expectation about one path, written the one way `normalise_path` writes it (and
    refused at construction when absolute or climbing out with '..')."""

    path: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", normalise_path(self.path))


def _regular_file(workspace: Workspace, path: str) -> tuple[Node | None, str]:
    node = workspace.get(path)
    if node is None:
        return None, f"{path} does not exist"
    if node.kind != "file":
        return None, f"{path} is a {node.kind}, not a regular file"
    if node.data is None:
        return None, f"{path} is {node.size} bytes, over the checker's {MAX_FILE_BYTES}-byte cap"
    return node, ""


def text_lines(text: str) -> list[str]:
    """Lines without their endings; a final newline does not make an empty last line."""
    return text.splitlines()


@dataclass(frozen=True)
class FileText(PathExpectation):
    """The file holds exactly `text`, up to trailing whitespace at its end (a final newline
    or not is not what a task is about)."""

    kind: ClassVar[str] = "file_text"
    text: str

    def describe(self) -> str:
        return f"{self.path} holds the expected text"

    def check(self, workspace: Workspace, answer: str | None) -> Check:
        node, problem = _regular_file(workspace, self.path)
        if node is None:
            return Check(self.describe(), False, problem)
        text = node.text()
        assert text is not None  # `_regular_file` returns only nodes that hold their data
        ok = text.rstrip() == self.text.rstrip()
        return Check(self.describe(), ok, "" if ok else f"{self.path} does not hold the expected text")


@dataclass(frozen=True)
class FileLines(PathExpectation):
    """The file's lines, stripped of surrounding spaces and with blank lines dropped, are
    `lines` (in order, or as a multiset when `ordered` is False)."""

    kind: ClassVar[str] = "file_lines"
    lines: tuple[str, ...]
    ordered: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "lines", tuple(self.lines))

    def describe(self) -> str:
        order = "in this order" if self.ordered else "in any order"
        return f"{self.path} has the expected {len(self.lines)} lines {order}"

    def check(self, workspace: Workspace, answer: str | None) -> Check:
        node, problem = _regular_file(workspace, self.path)
        if node is None:
            return Check(self.describe(), False, problem)
        text = node.text()
        assert text is not None  # `_regular_file` returns only nodes that hold their data
        found = [line.strip() for line in text_lines(text) if line.strip()]
        want = [line.strip() for line in self.lines]
        ok = found == want if self.ordered else sorted(found) == sorted(want)
        return Check(self.describe(), ok, "" if ok else f"{self.path} has {len(found)} lines, not the expected ones")


@dataclass(frozen=True)
class FileMode(PathExpectation):
    """The entry exists (not as a symlink) with exactly these permission bits."""

    kind: ClassVar[str] = "file_mode"
    mode: int

    def describe(self) -> str:
        return f"{self.path} has mode {self.mode:o}"

    def check(self, workspace: Workspace, answer: str | None) -> Check:
        node = workspace.get(self.path)
        if node is None or node.kind == "symlink":
            return Check(
                self.describe(), False, f"{self.path} does not exist" if node is None else f"{self.path} is a symlink"
            )
        ok = node.mode == self.mode
        return Check(self.describe(), ok, "" if ok else f"{self.path} has mode {node.mode:o}")


@dataclass(frozen=True)
class Missing(PathExpectation):
    """Nothing exists at the path (the task asked to delete or move it)."""

    kind: ClassVar[str] = "missing"

    def describe(self) -> str:
        return f"{self.path} no longer exists"

    def check(self, workspace: Workspace, answer: str | None) -> Check:
        node = workspace.get(self.path)
        return Check(self.describe(), node is None, "" if node is None else f"{self.path} still exists")


@dataclass(frozen=True)
class DirEntries(PathExpectation):
    """The directory holds exactly these names (files and folders, not recursive)."""

    kind: ClassVar[str] = "dir_entries"
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "names", tuple(self.names))

    def describe(self) -> str:
        return f"{self.path} holds exactly {len(self.names)} expected entries"

    def check(self, workspace: Workspace, answer: str | None) -> Check:
        node = workspace.get(self.path) if self.path != "." else Node("dir", 0o755, 0, 0.0)
        if node is None or node.kind != "dir":
            return Check(self.describe(), False, f"{self.path} is not a directory")
        found = workspace.children(self.path)
        ok = found == sorted(self.names)
        missing, extra = sorted(set(self.names) - set(found)), sorted(set(found) - set(self.names))
        detail = "" if ok else f"{self.path}: missing {missing[:5]}, unexpected {extra[:5]}"
        return Check(self.describe(), ok, detail)


@dataclass(frozen=True)
class IsDir(PathExpectation):
    """A directory (not a symlink to one) exists at the path."""

    kind: ClassVar[str] = "is_dir"

    def describe(self) -> str:
        return f"{self.path} is a directory"

    def check(self, workspace: Workspace, answer: str | None) -> Check:
        node = workspace.get(self.path)
        ok = node is not None and node.kind == "dir"
        return Check(self.describe(), ok, "" if ok else f"{self.path} is not a directory")


_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class AnswerIs(Expectation):
    """The submitted answer (`submit <answer>`) equals `answer` once surrounding quotes
    (straight, curly or guillemets) and runs of whitespace are normalised, with or without
    a sentence's final period (`without_final_period`: replies end sentences with one, "the
    largest is contacts_2019.csv."); `numeric` compares numbers (`numbers_match`)."""

    kind: ClassVar[str] = "answer"
    answer: str
    numeric: bool = False

    def describe(self) -> str:
        return "the submitted answer is right"

    def check(self, workspace: Workspace, answer: str | None) -> Check:
        if answer is None or not answer.strip():
            return Check(self.describe(), False, "no answer was submitted (use: submit <answer>)")
        given, want = normalise_answer(answer), normalise_answer(self.answer)
        same = numbers_match if self.numeric else str.__eq__
        ok = same(given, want) or same(without_final_period(given), want)
        return Check(self.describe(), ok, "" if ok else "the submitted answer is wrong")


QUOTES = ("''", '""', "``", "\u201c\u201d", "\u2018\u2019", "\u00ab\u00bb")
"""The pairs of quotes an answer may be wrapped in: straight, backticks, curly, guillemets."""


def normalise_answer(text: str) -> str:
    text = _SPACES.sub(" ", text.removeprefix("\ufeff").strip())
    if len(text) >= 2 and text[0] + text[-1] in QUOTES:
        text = text[1:-1].strip()
    return text


def without_final_period(text: str) -> str:
    """`text` without the one period a sentence ends with ("12347.79.", "report.csv."), else
    as it is: "11.." ends no sentence, so it stays (and matches neither 11 nor "11."). An
    answer that itself ends with a period ("11." for 11, a name "notes.") is compared as
    given first, so taking one off never loses it."""
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text


_NUMBER = re.compile(
    r"([-+\u2212]?)(?:[$\u20ac\u00a3] ?)?([-+\u2212]?)([0-9]{1,3}(?:,[0-9]{3})+|[0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?"
)
"""A number as people and programs write one: a sign, a currency sign ($, EUR, GBP), digits
with commas only between groups of three (12,347.79; not 1,2347.79), a fraction, an exponent.
Digits are ASCII ones only: what a program prints. Fullwidth (１２), Arabic-Indic (١٢) or any
other script's digits are not read as a number, with whichever decimal separator."""
FLOAT_NOISE = Decimal("1e-12")
"""How far, relative to the stated answer, a reply more precise than it may be: the rounding
of binary floats (12347.790000000003 for 12347.79), not a different value. Relative to the
answer, so it holds for totals of values of one sign (every numeric column the families
sum); values that cancel to a total far smaller than themselves carry float noise relative
to their own size, which this does not allow for."""
MAX_NUMBER_CHARS = 100


def parse_number(text: str) -> Decimal | None:
    """The exact value of a number written as `_NUMBER` reads it, or None when the text is
    anything else (words, units, misplaced commas, underscores, inf or nan)."""
    text = text.strip()
    match = _NUMBER.fullmatch(text) if len(text) <= MAX_NUMBER_CHARS else None
    if match is None or (match.group(1) and match.group(2)):
        return None
    sign, digits, fraction, exponent = (
        match.group(1) or match.group(2),
        match.group(3),
        match.group(4) or "",
        match.group(5) or "",
    )
    if not any(char.isdigit() for char in digits + fraction):
        return None
    value = Decimal(digits.replace(",", "") + fraction + exponent)
    return -value if sign in ("-", "\u2212") else value


def numbers_match(given: str, want: str) -> bool:
    """Whether the reply `given` states the number `want` states, at the precision `want`
    is stated to: equal in value (12 and 12.0; 12,347.79 and $12,347.79), or, where `want`
    has decimals (a total of decimal values), more precise than `want` and rounding to it
    with a difference no larger than float rounding (`FLOAT_NOISE`): 12347.790000000003 is
    the total 12347.79, and 12347.794 is not. A whole `want` (a count, a total of whole
    numbers) is an integer, which no float rounding went into: only its exact value is it,
    not 11.4 nor 7.0000000000001 for 7."""
    got, wanted = parse_number(given), parse_number(want)
    if got is None or wanted is None:
        return False
    if got == wanted:
        return True
    places = max(0, -int(wanted.as_tuple().exponent))
    if places == 0 or max(0, -int(got.as_tuple().exponent)) <= places:
        return False  # as precise as the answer, and another value
    try:
        rounded = got.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    except InvalidOperation:  # too many digits to round: no float prints that
        return False
    return rounded == wanted and abs(got - wanted) <= FLOAT_NOISE * max(abs(wanted), Decimal(1))


EXPECTATIONS: dict[str, type[Expectation]] = {
    cls.kind: cls for cls in (FileText, FileLines, FileMode, Missing, DirEntries, IsDir, AnswerIs)
}


def expectation_from_dict(data: Mapping[str, Any]) -> Expectation:
    """The inverse of `Expectation.to_dict`; a bad record is a ValueError naming the fix."""
    if not isinstance(data, Mapping) or data.get("kind") not in EXPECTATIONS:
        raise ValueError(f"an expectation needs a 'kind', one of {sorted(EXPECTATIONS)}; got {data!r}")
    cls = EXPECTATIONS[data["kind"]]
    fields = {k: v for k, v in data.items() if k != "kind"}
    try:
        return cls(**fields)
    except TypeError as error:
        raise ValueError(f"expectation {data!r} does not fit {cls.__name__}: {error}") from None


@dataclass(frozen=True)
class Verdict:
    """Every expectation's check; the reward is 1.0 only when all passed."""

    checks: tuple[Check, ...] = field(default_factory=tuple)
    unreadable: str = ""
    """Why the workspace could not be read (then nothing passed)."""

    @property
    def passed(self) -> bool:
        return not self.unreadable and bool(self.checks) and all(check.passed for check in self.checks)

    @property
    def reward(self) -> float:
        return 1.0 if self.passed else 0.0

    def failures(self) -> list[Check]:
        return [check for check in self.checks if not check.passed]


def check_all(expectations: Sequence[Expectation], workspace: Workspace | None, answer: str | None) -> Verdict:
    """Check every expectation against the workspace (None: it could not be read)."""
    if workspace is None:
        return Verdict(unreadable="the workspace could not be read")
    return Verdict(tuple(expectation.check(workspace, answer) for expectation in expectations))


def judge_workspace(root: str | os.PathLike, expectations: Iterable[Expectation], answer: str | None) -> Verdict:
    """Read the workspace at `root` from the host and check the expectations against it."""
    try:
        workspace = read_workspace(root)
    except WorkspaceUnreadable as error:
        return Verdict(unreadable=str(error))
    return check_all(tuple(expectations), workspace, answer)
