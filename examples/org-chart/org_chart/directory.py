"""The company directory as a tool on rlenvs' tool protocol (`rlenvs.envs.tools.turns.Tool`).

A reply calls it with `<lookup>Full Name</lookup>`; the next observation holds one line per
call, in order: `<record>Dana Okafor | title: Director | manager: Ravi Lind</record>`, or
`<error>...</error>` for a name the directory does not hold or a call never closed.

What it answers is one record: a person's own title and direct manager. It has no search, no
reverse lookup and no "manager of the manager", so a question two or more levels up the chart
takes as many lookups, each of a name the previous record gave. Names match whatever their
case, spacing and surrounding markdown (`normal`), as an answer is compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from rlenvs.envs.tools.turns import ToolCalls

OPEN, CLOSE = "<lookup>", "</lookup>"
MAX_CALLS_PER_REPLY = 3
"""Enough to check a name or two at once; a chain is still one hop per reply, since each hop's
name comes from the previous record. Bounds the work and the observation of a spamming reply."""
NAME_SHOWN = 60
"""Characters of an unknown name echoed in its error: an observation stays short."""
USAGE = (
    "You cannot see the company directory, but you can look people up: write <lookup>Full Name</lookup> "
    "and stop there; the next message holds their record, <record>Name | title: ... | manager: Name</record>, "
    f"or <error>why not</error>. At most {MAX_CALLS_PER_REPLY} lookups per reply."
)


@dataclass(frozen=True)
class Person:
    name: str
    title: str
    manager: str | None
    """None for the person at the top of the chart."""

    def record(self) -> str:
        return f"<record>{self.name} | title: {self.title} | manager: {self.manager or 'none'}</record>"


def normal(name: str) -> str:
    """A name as compared: markdown and punctuation around words dropped, spaces collapsed, case folded."""
    return " ".join(re.sub(r"[*_`\"“”.,:;!?()\[\]]", " ", name).split()).casefold()


def find_lookups(reply: str) -> ToolCalls:
    """The reply's `<lookup>` calls in order, up to the cap (None for one never closed).
    Linear in the reply's length, however many tags it holds."""
    calls: list[str | None] = []
    start = reply.find(OPEN)
    while start != -1 and len(calls) < MAX_CALLS_PER_REPLY:
        close = reply.find(CLOSE, start)
        if close == -1:
            calls.append(None)
            start = -1
        else:
            calls.append(reply[start + len(OPEN) : close])
            start = reply.find(OPEN, close)
    skipped = reply.count(OPEN, start) if start != -1 else 0
    return ToolCalls(tuple(calls), skipped)


@dataclass(frozen=True)
class Directory:
    """One task's directory as a `Tool`: `<lookup>Full Name</lookup>` calls, `<record>` lines."""

    people: Iterable[Person]
    usage: str = USAGE
    by_name: dict[str, Person] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {normal(person.name): person for person in self.people})

    def find_calls(self, reply: str) -> ToolCalls:
        return find_lookups(reply)

    def run(self, found: ToolCalls) -> tuple[str, int]:
        lines, errors = [], 0
        for call in found.calls:
            person = None if call is None else self.by_name.get(normal(call))
            if person is not None:
                lines.append(person.record())
                continue
            errors += 1
            if call is None:
                lines.append(f"<error>{OPEN} was not closed: write {OPEN}Full Name{CLOSE}</error>")
            else:
                lines.append(f"<error>no one named {call.strip()[:NAME_SHOWN]!r} in the directory</error>")
        if found.skipped:
            lines.append(
                f"<error>only {MAX_CALLS_PER_REPLY} lookups per reply are run; {found.skipped} were skipped</error>"
            )
        return "\n".join(lines), errors
