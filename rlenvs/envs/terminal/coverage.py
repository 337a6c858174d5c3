"""`rlenvs tasks check DIR`: how much of a corpus of task folders rlenvs can run, folder by folder.

A user who brings a corpus (Terminal-Bench 1, Harbor) wants to know, before training on it,
which folders load, whether each loaded folder's verdict is sound (its reference solution
scores 1, an immediate `submit` scores 0), and why the rest are refused. Loading the whole
corpus at once (`load_task_folders(DIR)`) stops at the first refusal's list, so here each
folder is loaded on its own (`TerminalEnv(task_dir=FOLDER)`, the loader's refusal being the
reason) and played through the real env with the same episode runner `rlenvs eval` uses
(`rlenvs.scripted.run_episode`): the oracle's replies, then a lone `submit`.

Refusals are grouped by a short class (`reason_class`): the loader's errors carry no category
of their own, so the class is read from the message, by the phrases the loader and the image
builder write, else from the message's first clause with names and numbers blanked out.
One class comes from playing, not loading: a folder whose reference solution scored 0 because
its tests reached for the network (the sandbox's own refusal in their output) cannot score here
whatever an agent does, so it is counted with the refusals (`RUNTIME_NETWORK`), not as a failed
reference. That reading of output text is for this report alone; the env's reward never looks.

The report (`--json FILE`) is JSON Lines, written as the run goes, so an interrupted run keeps
every folder already checked: a `run` line (what was asked), one `folder` line per folder, a
`totals` line at the end. A second run with the same FILE and options skips the folders it
already holds and writes the totals of all of them.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlenvs.envs.terminal import folders as loader
from rlenvs.envs.terminal.folder_files import TaskFolderError
from rlenvs.scripted import EpisodePlan, run_episode

ENV_DEFAULTS: Mapping[str, Any] = {"timeout_s": 180.0, "max_turns": 50}
"""TerminalEnv's keyword arguments for the check, where the caller gives none: a reference
solution is often one long command (a build, a download from the image's own files), which the
env's 10 s default per command would cut; and a solution.yaml of many commands needs a turn each."""
EXAMPLES = 3
"""Folder names shown for each refusal class in the table."""
SHOWN = 10
"""Loaded folders whose verdict failed, listed in the table (the report holds them all)."""
_START = {"options": {"task_index": 0}}

_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("run-tests.sh missing", r"run-tests\.sh is missing"),
        ("base image not mapped", r"is neither mapped to a local root nor can it be pulled"),
        (
            "a build on the host backend",
            r"the host backend reads a Dockerfile without building it|which the host backend does not build",
        ),
        ("heredoc", r"heredoc"),
        ("base root not built", r"mmdebstrap|the local root|root tarball"),
        ("RUN step timed out", r"\) timed out; the end of its output"),
        ("RUN step failed", r"failed with exit status \d+; the end of its output|\) failed in (docker|podman) build"),
        ("Dockerfile missing", r"Dockerfile is missing"),
        ("several compose services", r"runs \d+ services"),
        ("prebuilt image", r"prebuilt image|pins \S+ by digest"),
        (
            "tests need the network",
            r"needs the network \((it connects to|it downloads) .*they would fail whatever the agent did",
        ),
        ("network in a script", r"needs the network"),
        ("no pytest", r"runs pytest \(`"),
        ("tests' packages missing", r"with uv for the tests"),
        ("pytest plugin", r"pytest plugin"),
        ("separate verifier", r"separate verifier container"),
        ("multi-step task", r"\[\[steps\]\]"),
        ("GPU", r"GPU\(s\)"),
        ("non-pytest parser", r"parser_name is"),
        ("keystroke solution", r"types keystrokes"),
        ("value from the host", r"from the host's environment"),
        ("non-root USER", r"switches user|ends as USER|names the (user|group)"),
        ("process at start", r"starts a process with the container|starts `"),
        ("copy outside the workspace", r"outside the workspace|outside the task folder"),
        ("symbolic link", r"symbolic link"),
        ("over the size cap", r"over \d+ bytes|-byte cap"),
        ("WORKDIR not a workspace", r"WORKDIR"),
        ("instruction missing", r"instruction\)? is missing|has no `instruction`|instruction\.md is empty"),
        ("tests missing", r"tests/test\.sh \(the script"),
        ("unknown Dockerfile instruction", r"cannot be done without Docker|unknown instruction"),
        ("backend unavailable", r"cannot run here"),
    )
)
"""Refusal classes, first match wins: the phrases of the loader's (rlenvs.envs.terminal.folders,
.dockerfile) and the image builder's (rlenvs.images) messages. A message none matches is
classed by its first clause (`reason_class`)."""
RUNTIME_NETWORK = "tests need the network (at run time)"
"""The class of a folder that loaded but whose reference solution scored 0 because its tests
reached for the network, which the sandbox refused (`_NETWORK_REFUSED`): a folder that cannot
score here, counted with the refusals, not as a failed reference. The static scan at load
(rlenvs.envs.terminal.network) misses what it cannot read (an address built at run time,
a program the tests run); this catches the rest, for the report only."""
BUILD_HOST_OUT_OF_REACH = "RUN step fetches from a host out of reach"
"""A build step that failed because a host it fetches from (golang.org, NodeSource, a PPA) did
not resolve or answer from this machine: the build's network reaches what the host does."""
_NETWORK_REFUSED = re.compile(
    r"Network is unreachable|ENETUNREACH|Name or service not known|Temporary failure in name resolution"
    r"|Could not resolve host|UnknownHostException"
)
"""How the sandbox's missing network shows in the tests' output (errno 101, and resolvers with
no DNS: glibc, curl, Java). Read from the reference solution's run only, for the coverage report:
never for a reward or a mask, where an agent could print the same words."""
_FAILED_STEP = re.compile(r"\(line \d+: `(RUN [^`]*)`\) failed (with exit status|in \w+ build)")
_TOOL = re.compile(r"\b(pip3?|uv|apt-get|apt|npm|yarn|pnpm|cargo|go|gem|conda|curl|wget|git|make|cmake|python3?)\b")
"""The tool of a failed RUN step (its first known one), to tell apt from pip failures apart."""
_PREFIX = re.compile(r"^task folder \S.*?: ")
_QUOTED = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"")
_PATH = re.compile(r"(?<![\w.])/[\w./-]+")
_NUMBER = re.compile(r"\d+(\.\d+)?")
_CLAUSE_END = re.compile(r": |; |\. | \(|\n")


@dataclass
class FolderRecord:
    """What one folder did: refused at load (and why), or its two episodes' rewards."""

    name: str
    """The folder's path relative to the corpus folder."""
    loaded: bool
    refusal: str | None = None
    """The loader's message (without its "task folder PATH: " prefix), when refused."""
    reason_class: str | None = None
    reference_reward: float | None = None
    """The reward of the episode the oracle (the folder's reference solution) played."""
    empty_reward: float | None = None
    """The reward of an immediate `submit`."""
    build_seconds: float | None = None
    """Loading the folder: reading it and, on the backends that build, its image."""
    episode_seconds: float | None = None
    """Both episodes, each with its test run."""
    error: str | None = None
    """An exception while loading or playing: a failure of the machinery, not a verdict."""
    reference_failed_checks: list[str] = field(default_factory=list)
    """Why the reference episode did not score 1 (the env's `failed_checks`)."""
    no_reference: bool = False
    """The folder brings no reference solution (some public corpora ship none): only its
    empty submit is played, and its verdict cannot be shown to go both ways."""

    @property
    def runs(self) -> bool:
        """Loaded, and not found unable to score here when played (`RUNTIME_NETWORK`)."""
        return self.loaded and self.reason_class is None

    @property
    def sound(self) -> bool:
        """Loaded, and the verdict went both ways: reference 1, empty submit 0 (without a
        reference, the empty submit's 0 is all that can be shown)."""
        reference = self.no_reference or self.reference_reward == 1.0
        return self.loaded and self.error is None and reference and self.empty_reward == 0.0


@dataclass
class Totals:
    """The counts of a check. `loaded`, `reference_1` and `empty_0` count the folders that load
    and can score here; one that loaded but whose tests needed the network when played is
    counted under `refused`, by its class (RUNTIME_NETWORK), as the folders refused at load."""

    folders: int = 0
    loaded: int = 0
    reference_1: int = 0
    empty_0: int = 0
    no_reference: int = 0
    errors: int = 0
    refused: int = 0
    refused_by_reason: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, records: Iterable[FolderRecord]) -> Totals:
        totals = cls()
        for record in records:
            totals.folders += 1
            totals.loaded += record.runs
            totals.reference_1 += record.runs and record.reference_reward == 1.0
            totals.empty_0 += record.runs and record.empty_reward == 0.0
            totals.no_reference += record.runs and record.no_reference
            totals.errors += record.error is not None
            if record.reason_class is not None:
                totals.refused += 1
                key = record.reason_class
                totals.refused_by_reason[key] = totals.refused_by_reason.get(key, 0) + 1
        totals.refused_by_reason = dict(sorted(totals.refused_by_reason.items(), key=lambda item: (-item[1], item[0])))
        return totals


def reason_class(refusal: str) -> str:
    """A short, stable class for a loader refusal, to count refusals by cause across a corpus:
    the first of `_CLASSES` whose phrase the message holds, else "other: " and the message's
    first clause with quoted text, paths and numbers blanked (so that two folders refused for
    the same cause fall in one class)."""
    message = _PREFIX.sub("", refusal, count=1)
    for name, pattern in _CLASSES:
        if pattern.search(message):
            if name == "RUN step failed" and _NETWORK_REFUSED.search(message):
                return BUILD_HOST_OUT_OF_REACH
            if name == "RUN step failed" and (step := _FAILED_STEP.search(message)) is not None:
                tool = _TOOL.search(step.group(1))
                return f"{name} ({tool.group(1) if tool else 'other'})"
            return name
    clause = _CLAUSE_END.split(message, maxsplit=1)[0]
    clause = _NUMBER.sub("N", _PATH.sub("PATH", _QUOTED.sub("…", clause)))
    return "other: " + (clause[:60].rstrip() or "(empty message)")


def task_folders(root: str | os.PathLike[str]) -> list[Path]:
    """The task folders a check covers: `root` itself when it is one, else every task folder in
    it (sorted by name). Raises ValueError naming `root` when it holds none."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise ValueError(
            f"{root} {'is not a folder' if root.exists() else 'does not exist'}: pass a folder of task folders"
        )
    found = loader.task_folders(root)
    if not found:
        raise ValueError(
            f"{root} holds no task folders (a Terminal-Bench one has task.yaml, a Harbor one instruction.md and "
            "task.toml): pass the folder that holds them"
        )
    return found


def sample(folders: Sequence[Path], limit: int | None, seed: int) -> list[Path]:
    """`limit` folders drawn with `seed` (kept in name order), or all of them."""
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    if limit is None or limit >= len(folders):
        return list(folders)
    chosen = set(random.Random(seed).sample(range(len(folders)), limit))
    return [folder for index, folder in enumerate(folders) if index in chosen]


def check_folder(folder: Path, name: str, backend: str, env_kwargs: Mapping[str, Any]) -> FolderRecord:
    """Load one folder as Terminal-v2 does and, when it loads, play its reference solution and
    an immediate `submit` through the env's real verdict."""
    from rlenvs.envs.terminal.env import TerminalEnv  # the env pulls in the sandbox: only when checking

    started = time.perf_counter()
    try:
        env = TerminalEnv(task_dir=str(folder), backend=backend, **{**ENV_DEFAULTS, **env_kwargs})
    except TaskFolderError as error:
        refusal = _PREFIX.sub("", str(error), count=1)
        return FolderRecord(name, False, refusal, reason_class(refusal), build_seconds=_since(started))
    except Exception as error:  # a fault of the machinery while loading: reported, the run goes on
        return FolderRecord(name, False, build_seconds=_since(started), error=f"{type(error).__name__}: {error}")
    record = FolderRecord(name, True, build_seconds=_since(started))
    started = time.perf_counter()
    task = env.tasks.get(0)
    record.no_reference = not task.solution and task.answer is None
    try:
        if not record.no_reference:
            reference = run_episode(env, EpisodePlan(reset=_START, replies=None), 0)
            record.reference_reward = reference.total_reward
            record.reference_failed_checks = list(reference.failed_checks)
        record.empty_reward = run_episode(env, EpisodePlan(reset=_START, replies=("submit",)), 1).total_reward
    except Exception as error:  # OracleError (no reference solution), a set-up script that failed, a lost sandbox
        record.error = f"{type(error).__name__}: {error}"
    finally:
        env.close()
        record.episode_seconds = _since(started)
    if record.error is None and record.reference_reward != 1.0:
        refused = next(filter(None, map(_NETWORK_REFUSED.search, record.reference_failed_checks)), None)
        if refused is not None:
            record.reason_class = RUNTIME_NETWORK
            record.refusal = (
                f"its tests reached for the network when the reference solution ran, and the sandbox has none: "
                f"`{_around(refused)}`"
            )
    return record


def _around(match: re.Match[str], width: int = 120) -> str:
    """The line of the tests' output where `match` is, cut to about `width` characters around it."""
    text = match.string
    start = max(text.rfind("\n", 0, match.start()) + 1, match.start() - width)
    end = min(len(text) if (stop := text.find("\n", match.end())) < 0 else stop, match.end() + width // 3)
    return " ".join(text[start:end].split())


def check_corpus(
    root: str | os.PathLike[str],
    *,
    backend: str = "host",
    env_kwargs: Mapping[str, Any] | None = None,
    limit: int | None = None,
    seed: int = 0,
    report: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[FolderRecord], Totals]:
    """Check every task folder under `root` (or a seeded sample of `limit`), one at a time,
    writing each record to `report` (JSON Lines) as soon as it exists. A `report` that already
    holds records of the same run (same folder, backend, sample and env arguments) is resumed:
    its folders are not checked again."""
    if backend not in loader.BACKENDS:
        raise ValueError(f"--backend must be one of {', '.join(loader.BACKENDS)}, got {backend!r}")
    env_kwargs = dict(env_kwargs or {})
    for reserved in ("task_dir", "backend", "families", "level"):
        if reserved in env_kwargs:
            raise ValueError(f"--env-arg {reserved}=... is set by `rlenvs tasks check` itself: leave it out")
    root = Path(root).expanduser().resolve()
    folders = task_folders(root)  # before the kwargs check, which makes an env: a wrong folder is the first fix
    _check_env_kwargs(env_kwargs)
    chosen = sample(folders, limit, seed)
    run = {
        "kind": "run",
        "dir": str(root),
        "backend": backend,
        "folders_in_dir": len(folders),
        "limit": limit,
        "seed": seed,
        "env_kwargs": {**ENV_DEFAULTS, **env_kwargs},
    }
    done = _resume(Path(report), run) if report is not None else {}
    writer = _Report(Path(report), run, done) if report is not None else None
    records = []
    try:
        for number, folder in enumerate(chosen, 1):
            name = folder.name if folder != root else "."
            record = done.get(name)
            if record is None:
                record = check_folder(folder, name, backend, env_kwargs)
                if writer is not None:
                    writer.add(record)
            if progress is not None:
                progress(f"[{number}/{len(chosen)}] {name}: {_outcome(record)}")
            records.append(record)
        totals = Totals.of(records)
        if writer is not None:
            writer.finish(totals)
    finally:
        if writer is not None:
            writer.close()
    return records, totals


def passed(records: Iterable[FolderRecord]) -> bool:
    """The command's exit status 0: every loaded folder's reference scored 1 and its empty
    submit 0, and nothing failed while loading (refused folders are counted, not failed)."""
    return all(record.sound if record.runs else record.error is None for record in records)


def _check_env_kwargs(env_kwargs: Mapping[str, Any]) -> None:
    """A bad --env-arg (a misspelt name, a negative limit) once, before any folder: in each
    folder's load it would pass for a fault of that folder."""
    from rlenvs.envs.terminal.env import TerminalEnv

    TerminalEnv(**{**ENV_DEFAULTS, **env_kwargs}).close()  # the procedural tasks: no folder read, no sandbox started


def table(records: Sequence[FolderRecord], totals: Totals, title: str) -> str:
    """The printed report: the counts, the refusals by class with example folders, and every
    loaded folder whose verdict did not go both ways."""
    width = max([24, *(len(reason) + 4 for reason in totals.refused_by_reason)])
    lines = [
        title,
        f"{'folders':<{width}} {totals.folders:>5}",
        f"{'loaded':<{width}} {totals.loaded:>5}",
        f"{'reference 1':<{width}} {totals.reference_1:>5} of {totals.loaded - totals.no_reference}"
        + (f" (and {totals.no_reference} without a reference solution)" if totals.no_reference else ""),
        f"{'empty submit 0':<{width}} {totals.empty_0:>5} of {totals.loaded}",
        f"{'refused':<{width}} {totals.refused:>5}",
    ]
    for reason, count in totals.refused_by_reason.items():
        examples = [r.name for r in records if not r.runs and r.reason_class == reason][:EXAMPLES]
        lines.append(f"  {reason:<{width - 2}} {count:>5}  e.g. {', '.join(examples)}")
    load_errors = [r for r in records if not r.loaded and r.error is not None]
    if load_errors:
        lines.append(f"{'errors while loading':<{width}} {len(load_errors):>5}")
    unsound = [r for r in records if r.runs and not r.sound]
    if unsound:
        lines.append("loaded folders whose verdict did not go both ways:")
        lines += [f"  {r.name}: {_outcome(r)}" for r in unsound[:SHOWN]]
        if len(unsound) > SHOWN:
            lines.append(f"  ... and {len(unsound) - SHOWN} more (the --json report has every folder)")
    lines += [f"  {r.name}: {r.error}" for r in load_errors]
    return "\n".join(lines)


def _outcome(record: FolderRecord) -> str:
    if not record.loaded:
        return f"error while loading: {_short(record.error)}" if record.error else f"refused ({record.reason_class})"
    timing = f"(build {record.build_seconds:.1f} s, episodes {record.episode_seconds:.1f} s)"
    if record.reason_class is not None:
        return f"loaded, refused when played ({record.reason_class}) {timing}"
    if record.error is not None:
        return f"error: {_short(record.error)} {timing}"
    reference = "no reference solution" if record.no_reference else f"reference {record.reference_reward:g}"
    text = f"{reference}, empty submit {record.empty_reward:g} {timing}"
    if record.reference_reward != 1.0 and record.reference_failed_checks:
        text += f"; reference failed: {_short(record.reference_failed_checks[0])}"
    return text


def _short(text: str | None, limit: int = 400) -> str:
    """One line of `text`, its start and its end where long: a test run's verdict is at the
    end of its output, what failed at the start."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else f"{text[: limit // 3]} … {text[-(limit - limit // 3) :]}"


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)


# --- the JSON Lines report -------------------------------------------------------------------------


def _resume(path: Path, run: Mapping[str, Any]) -> dict[str, FolderRecord]:
    """The folder records a report of the same run already holds (a torn last line, from an
    interrupted write, is dropped). Raises ValueError for a report of another run."""
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    entries = []
    for number, line in enumerate(lines, 1):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):
                break  # the line being written when the run stopped
            raise ValueError(f"{path} line {number} is not JSON: pass another --json FILE, or delete it") from None
    if not entries:
        return {}
    if entries[0].get("kind") != "run":
        raise ValueError(f"{path} is not a report of `rlenvs tasks check`: pass another --json FILE")
    first = {key: value for key, value in entries[0].items() if key in run}
    if first != dict(run):
        differ = sorted(key for key in run if first.get(key) != run[key])
        raise ValueError(
            f"{path} is the report of another check (its {', '.join(differ)} differ): rerun with the same options "
            "to resume it, or pass another --json FILE"
        )
    names = {f.name for f in FolderRecord.__dataclass_fields__.values()}
    return {
        entry["name"]: FolderRecord(**{key: value for key, value in entry.items() if key in names})
        for entry in entries[1:]
        if entry.get("kind") == "folder"
    }


class _Report:
    """The JSON Lines file: written anew (atomically) with the run line and the records kept
    from a resumed run, then one line per folder, flushed to disk as each folder finishes."""

    def __init__(self, path: Path, run: Mapping[str, Any], kept: Mapping[str, FolderRecord]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(path.name + ".partial")
        with staged.open("w", encoding="utf-8") as out:
            out.write(json.dumps(run) + "\n")
            out.writelines(_line(record) for record in kept.values())
        os.replace(staged, path)
        self.file = path.open("a", encoding="utf-8")

    def add(self, record: FolderRecord) -> None:
        self.file.write(_line(record))
        self.file.flush()
        os.fsync(self.file.fileno())

    def finish(self, totals: Totals) -> None:
        self.file.write(json.dumps({"kind": "totals", **asdict(totals)}) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def _line(record: FolderRecord) -> str:
    return json.dumps({"kind": "folder", **asdict(record)}) + "\n"
