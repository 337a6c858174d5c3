"""Build tools that download themselves when the tests run: a network need no test file shows.

A Gradle wrapper (`./gradlew test`) fetches the Gradle release its
`gradle/wrapper/gradle-wrapper.properties` names (`distributionUrl=https://services.gradle.org/...`)
the first time it runs, into the home folder, and then the build's dependencies. In a sandbox
without a network that first run fails whatever the agent did: every episode scores 0 (Aider
Polyglot's Java tasks in terminal-bench-datasets, measured: the reference solution scores 0 with
`UnknownHostException: services.gradle.org`). Unless the image's own build already ran the wrapper
(a `RUN ./gradlew build` step leaves the release in the image, fetched on the build's network),
such a folder is refused when it loads (rlenvs.envs.terminal.folders), by the file and the host,
as rlenvs.envs.terminal.network refuses tests that connect off the machine.

Read from files, never guessed from a shared script's text: Aider Polyglot's one run-tests.sh
names `./gradlew` in every language's copy, and only the folders that ship a wrapper run it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from rlenvs.envs.terminal.network.addresses import host_of, is_local

WRAPPER_PROPERTIES = "gradle/wrapper/gradle-wrapper.properties"
_RUNS_WRAPPER = re.compile(r"(?<![\w.-])(?:\./|\S*/)?gradlew\s+[\w:-]")
"""`./gradlew test`, `sh gradlew build`: the wrapper run with a task (not `chmod +x ./gradlew`)."""
_DISTRIBUTION = re.compile(r"^\s*distributionUrl\s*[=:]\s*(\S+)", re.MULTILINE)
_MAX_DEPTH = 6
"""How deep below the build context a wrapper is looked for (the workspace's project root)."""


@dataclass(frozen=True)
class ToolDownload:
    """A wrapper the tests run that would download its build tool."""

    properties: Path
    """The wrapper's properties file."""
    host: str
    """Where it downloads from (`services.gradle.org`)."""


def wrapper_download(context: Path, runner_text: str, dockerfile_text: str) -> ToolDownload | None:
    """The Gradle wrapper the tests run (`runner_text` runs `gradlew <task>`) whose release is
    not in the image (`dockerfile_text` never runs it) and comes from a remote host; None when
    there is none. `context` is the folder the image is built from (its workspace)."""
    if not _RUNS_WRAPPER.search(_code(runner_text)) or _RUNS_WRAPPER.search(_code(dockerfile_text)):
        return None
    for properties in _wrapper_properties(context):
        try:
            text = properties.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        match = _DISTRIBUTION.search(text)
        if match is None:
            continue
        host = host_of(match.group(1).replace("\\:", ":"))
        if host is not None and not is_local(host):
            return ToolDownload(properties, host)
    return None


def _code(text: str) -> str:
    """The text without its comment lines ("# make gradlew executable" runs nothing)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _wrapper_properties(context: Path) -> list[Path]:
    found = []
    for root, dirs, _ in os.walk(context):  # follows no symlinked folder
        depth = len(Path(root).relative_to(context).parts)
        dirs[:] = sorted(d for d in dirs if depth < _MAX_DEPTH)
        candidate = Path(root, WRAPPER_PROPERTIES)
        if candidate.is_file() and not candidate.is_symlink():
            found.append(candidate)
    return found
