"""log-summary: pick the ERROR lines out of logs and write a summary file.

| level | asks | judged by |
|---|---|---|
| 1 | every ERROR line of a log, unchanged and in order | lines of errors.txt |
| 2 | ERROR lines per component over several logs, by count then name | lines of error_counts.txt |

Why the verdict holds: some WARN and INFO messages mention errors, so only the level field
says what a line is. At level 1 WARN lines quote ERROR and some errors carry a traceback, so
neither `grep ERROR` nor `grep -A` is right. At level 2 a rotated `api.log.1` holds errors too
(not counted), as do WARN lines that quote ERROR, and at least two counts are equal, so the
order of names among equal counts is always tested (`sort -rn -k2` puts them in the wrong
order).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample, shuffled
from rlenvs.core.procedural import Family, Level
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.paths import entries
from rlenvs.envs.terminal.families.times import BASE_TIME, DAY
from rlenvs.envs.terminal.families.words import COMPONENTS, USERS
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import FileLines

MESSAGES = {
    "DEBUG": ("payload size {n} bytes", "opening connection to db-{d}", "error_count=0 in the last window",
              "cache key user:{n} refreshed"),
    "INFO": ("request completed in {n}ms", "user {user} logged in", "job {n} finished", "health check passed",
             "recovered from error after {d} retries", "served /api/orders/{n}"),
    "WARN": ("slow query took {n}ms", "disk usage at {d}0%", "upstream returned ERROR {code}, retrying",
             "deprecated setting 'pool_size' used", "ERROR budget at {d}0% for this hour"),
    "ERROR": ("connection refused by db-{d}", "timeout after {d}s calling the {other} service",
              "failed to send mail to {user}@example.com", "unhandled exception in /api/orders/{n}",
              "payment {n} declined: card expired", "could not write /var/data/{n}.json: disk full"),
}  # fmt: skip
"""Some WARN and INFO messages mention errors: only the level field says what a line is."""
DECOY_WARNINGS = ("upstream returned ERROR {code}, retrying", "ERROR budget at {d}0% for this hour")
TRACEBACK = ("Traceback (most recent call last):", '  File "/srv/app/handlers.py", line {n}, in handle',
             "ConnectionError: [Errno 111] Connection refused")  # fmt: skip


def log_line(rng: np.random.Generator, when: int, level: str, component: str, message: str | None = None) -> str:
    text = (message or draw_from(rng, MESSAGES[level])).format(
        n=draw_int(rng, 10, 9999),
        d=draw_int(rng, 1, 9),
        user=draw_from(rng, USERS),
        code=draw_from(rng, (500, 502, 503, 504)),
        other=draw_from(rng, COMPONENTS),
    )
    stamp = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{stamp} {level} [{component}] {text}"


def write_log(
    rng: np.random.Generator, planned: list[tuple[str, str, str | None]], start: int, tracebacks: bool = False
) -> tuple[str, list[str]]:
    """A log whose lines are `planned` (level, component, message) in this order, with
    timestamps from `start` on, seconds apart; returns the text and its ERROR lines."""
    when = start
    lines, errors = [], []
    for level, component, message in planned:
        when += draw_int(rng, 1, 90)
        lines.append(log_line(rng, when, level, component, message))
        if level == "ERROR":
            errors.append(lines[-1])
            if tracebacks and draw_int(rng, 0, 2) == 0:
                lines += [t.format(n=draw_int(rng, 10, 400)) for t in TRACEBACK]
    return "\n".join(lines) + "\n", errors


def quiet_levels(rng: np.random.Generator, n: int, components: Sequence[str]) -> list[tuple[str, str, str | None]]:
    """`n` lines that are not errors, of mixed levels and components."""
    return [
        (draw_from(rng, ("DEBUG", "INFO", "INFO", "INFO", "WARN")), draw_from(rng, components), None) for _ in range(n)
    ]


def errors_of_log(rng: np.random.Generator) -> Scenario:
    """Every ERROR line of one log, unchanged and in order. WARN lines quote ERROR and some
    errors carry a traceback, so neither `grep ERROR` nor `grep -A` is right."""
    path = draw_from(rng, ("logs/app.log", "logs/server.log", "app.log", "var/log/api.log"))
    components = draw_sample(rng, COMPONENTS, draw_int(rng, 3, 6))
    planned = quiet_levels(rng, draw_int(rng, 25, 70), components)
    planned += [("ERROR", draw_from(rng, components), None) for _ in range(draw_int(rng, 3, 10))]
    planned += [
        ("WARN", draw_from(rng, components), draw_from(rng, DECOY_WARNINGS)) for _ in range(draw_int(rng, 1, 3))
    ]
    text, errors = write_log(rng, shuffled(rng, planned), BASE_TIME + draw_int(rng, 0, 300 * DAY), tracebacks=True)
    return Scenario(
        instruction=(
            f"Copy every line of `{path}` whose level is `ERROR` (the second field of the line) into `errors.txt`, "
            f"unchanged and in the order they appear in the log. {DONE}"
        ),
        files=(Entry(path, text),),
        solution=(f"grep '^[^ ]* ERROR ' {path} > errors.txt",),
        expect=(FileLines("errors.txt", tuple(errors)),),
    )


def tied_counts(rng: np.random.Generator, k: int) -> list[int]:
    """`k` error counts in 1..12 of which at least two are equal, so the order of names
    among equal counts is always tested."""
    counts = [draw_int(rng, 1, 12) for _ in range(k)]
    first, second = draw_sample(rng, range(k), 2)
    counts[second] = counts[first]
    return counts


def errors_per_component(rng: np.random.Generator) -> Scenario:
    """ERROR lines per component over the `.log` files of a folder. A rotated `api.log.1`
    holds errors too (not counted), as do WARN lines that quote ERROR."""
    services = draw_sample(rng, ("api", "worker", "scheduler", "web", "gateway"), draw_int(rng, 2, 4))
    components = draw_sample(rng, COMPONENTS, draw_int(rng, 5, 8))
    failing = components[: draw_int(rng, 3, len(components) - 1)]
    counts = dict(zip(failing, tied_counts(rng, len(failing)), strict=True))
    plans: dict[str, list[tuple[str, str, str | None]]] = {s: [] for s in services}
    for component, count in counts.items():
        for _ in range(count):
            plans[draw_from(rng, services)].append(("ERROR", component, None))
    for service in services:
        plans[service] += quiet_levels(rng, draw_int(rng, 10, 30), components)
        plans[service] += [
            ("WARN", draw_from(rng, components), draw_from(rng, DECOY_WARNINGS)) for _ in range(draw_int(rng, 1, 2))
        ]
    rotated = quiet_levels(rng, draw_int(rng, 5, 15), components)
    rotated += [("ERROR", draw_from(rng, components), None) for _ in range(draw_int(rng, 2, 5))]
    today = BASE_TIME + draw_int(rng, 1, 300) * DAY
    files = {
        f"logs/{s}.log": write_log(rng, shuffled(rng, plans[s]), today + draw_int(rng, 0, 600))[0] for s in services
    }
    files[f"logs/{services[0]}.log.1"] = write_log(rng, shuffled(rng, rotated), today - DAY + draw_int(rng, 0, 600))[0]
    summary = [f"{c} {n}" for c, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    components_of_errors = r"grep -h '^[^ ]* ERROR ' logs/*.log | sed 's/^[^ ]* ERROR \[\([^]]*\)\].*/\1/'"
    count_first = r"LC_ALL=C sort | uniq -c | sed 's/^ *\([0-9]*\) \(.*\)/\2 \1/'"
    return Scenario(
        instruction=(
            "The files in `logs/` whose names end in `.log` are logs with lines like "
            "`2024-05-14T09:12:03Z ERROR [billing] payment 4821 declined: card expired`: a timestamp, a level, the "
            "component in brackets, a message. Count the lines whose level is `ERROR`, per component, over all those "
            "files together (other files, such as rotated logs, do not count). Write `error_counts.txt` with one line "
            "per component that has errors: the component name without brackets, a single space, its count (like "
            "`billing 7`). Sort the lines by count, highest first, and equal counts by component name in byte "
            f"order. {DONE}"
        ),
        files=entries(files),
        solution=(f"{components_of_errors} | {count_first} | LC_ALL=C sort -k2,2nr -k1,1 > error_counts.txt",),
        expect=(FileLines("error_counts.txt", tuple(summary)),),
    )


FAMILY: Family = Family.of_levels(
    "log-summary",
    "Pick the ERROR lines out of logs and write a summary file.",
    {
        1: Level("copy every ERROR line of a log, in order", errors_of_log),
        2: Level("count ERROR lines per component over several logs, sorted by count then name", errors_per_component),
    },
    tags=("text", "grep", "sed", "sort"),
)
