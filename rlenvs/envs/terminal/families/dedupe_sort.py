"""dedupe-sort: deduplicate and sort lines.

| level | asks | example (task id) |
|---|---|---|
| 1 | distinct lines in byte order | `lists/hosts.txt` -> `unique_hosts.txt`, `DB-Primary` before `backup-nas` (L1/0) |
| 2 | a numeric sort on a field, a case-insensitive first-occurrence dedupe, or merged lists | first spelling of each address of `export/subscribers.txt`, in input order (L2/1) |

Why the verdict holds: the output is checked line by line, in order. Where lines repeat
(level 1, the numeric sort) no repeat sits right after its twin and the input is not already
sorted, so `uniq` alone or no sort both fail. Level 1's lists mix cases, so a locale-aware sort (which interleaves `apples` and `Bread`)
gives a different order; the numbers of a numeric sort span several digit counts and tie, so
a text sort of them is wrong and the tie-break matters.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample, shuffled
from rlenvs.core.names import FIRST_NAMES, LAST_NAMES, people
from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families.byte_order import BYTE_ORDER, byte_sorted
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.shell import quote
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import FileLines

DEDUPE_LISTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "tags.txt",
        "one tag per line",
        (
            "API", "Backend", "Go", "Kubernetes", "React", "Security", "UX", "aws", "ci",
            "docker", "frontend", "javascript", "linux", "postgres", "python", "rust", "sql",
            "terraform", "testing", "web",
        ),
    ),
    (
        "groceries.txt",
        "one item per line",
        (
            "Bread", "Cheddar", "Olive oil", "Parmesan", "Salt", "apples", "bananas",
            "butter", "eggs", "flour", "milk", "oat milk", "pasta", "rice", "sugar",
            "tomatoes", "yogurt",
        ),
    ),
    (
        "hosts.txt",
        "one host name per line",
        (
            "DB-Primary", "Web-01", "api-01", "api-02", "backup-nas", "cache-01", "db-replica",
            "grafana", "jenkins", "ldap", "mail", "proxy-eu", "proxy-us", "vpn", "web-02",
            "web-03",
        ),
    ),
    (
        "requirements.txt",
        "one Python package name per line",
        (
            "Django", "Flask", "Jinja2", "Markdown", "Pillow", "PyYAML", "SQLAlchemy",
            "boto3", "click", "httpx", "numpy", "pandas", "pytest", "requests", "scipy",
            "uvicorn",
        ),
    ),
)  # fmt: skip


def _with_repeats(rng: np.random.Generator, values: Sequence[str], extra: int) -> list[str]:
    """`values` once each plus `extra` repeats, shuffled until no repeat sits right after
    its twin and the list is not already sorted (so `uniq` alone or no sort both fail)."""
    while True:
        lines = list(values) + [draw_from(rng, values) for _ in range(extra)]
        lines = shuffled(rng, lines)
        adjacent = any(a == b for a, b in itertools.pairwise(lines))
        if not adjacent and lines != byte_sorted(lines):
            return lines


def dedupe_sort(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _dedupe_plain(rng)
    return draw_from(rng, (_dedupe_numeric, _dedupe_casefold, _dedupe_merge))(rng)


def _dedupe_plain(rng: np.random.Generator) -> Scenario:
    """Level 1: distinct lines in byte order. The lists mix cases, so a locale-aware sort
    (which interleaves `apples` and `Bread`) gives a different order."""
    name, what, pool = draw_from(rng, DEDUPE_LISTS)
    while True:
        values = draw_sample(rng, pool, draw_int(rng, 8, min(16, len(pool))))
        if byte_sorted(values) != sorted(values, key=lambda v: (v.casefold(), v)):
            break
    lines = _with_repeats(rng, values, draw_int(rng, 5, 15))
    source = draw_from(rng, (name, f"lists/{name}", f"input/{name}"))
    out = f"unique_{name}"
    instruction = (
        f"`{source}` has {what}, and some lines appear more than once. Write `{out}` in the "
        f"current directory with every distinct line exactly once, sorted {BYTE_ORDER}, one "
        f"per line. {DONE}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(source, "\n".join(lines) + "\n"),),
        solution=(f"LC_ALL=C sort -u {quote(source)} > {out}",),
        expect=(FileLines(out, tuple(byte_sorted(values))),),
    )


NUMERIC_LISTS: tuple[tuple[str, str, str, tuple[str, ...], tuple[int, int]], ...] = (
    (
        "latency.txt",
        "endpoint",
        "milliseconds",
        (
            "/api/cart", "/api/login", "/api/orders", "/api/search", "/api/users", "/checkout",
            "/health", "/metrics", "/static/app.js", "/Admin", "/Reports",
        ),
        (3, 2500),
    ),
    (
        "scores.txt",
        "player",
        "points",
        (
            "ada", "bjorn", "chidi", "Dev", "elena", "finn", "Gia", "hugo", "ivy", "jun", "kai",
            "lena", "Mo",
        ),
        (0, 1500),
    ),
    (
        "stock.txt",
        "SKU",
        "units",
        (
            "AB-1001", "AB-1002", "CX-220", "CX-221", "DK-7", "EL-3300", "FN-41", "GR-900",
            "HT-12", "KB-501", "MS-88",
        ),
        (0, 900),
    ),
)  # fmt: skip


def _dedupe_numeric(rng: np.random.Generator) -> Scenario:
    """Distinct `name number` lines ordered by the number (either direction), ties by name;
    the numbers span several digit counts, so a text sort of them is wrong."""
    name, label, unit, pool, (low, high) = draw_from(rng, NUMERIC_LISTS)
    descending = coin(rng)
    while True:
        names = draw_sample(rng, pool, draw_int(rng, 6, len(pool)))
        pairs = {(n, draw_int(rng, low, high)) for n in names}
        pairs |= {(draw_from(rng, names), draw_int(rng, low, high)) for _ in range(draw_int(rng, 1, 4))}
        # a tie on the number, so the tie-break matters
        tied = draw_from(rng, sorted(pairs))
        pairs.add((draw_from(rng, [n for n in names if n != tied[0]]), tied[1]))
        ordered = sorted(pairs, key=lambda p: ((-p[1] if descending else p[1]), p[0].encode()))
        # what `sort -k2,2[r] -k1,1` (the number compared as text) would give
        by_name = sorted(pairs, key=lambda p: p[0].encode())
        as_text = sorted(by_name, key=lambda p: str(p[1]).encode(), reverse=descending)
        if ordered != as_text:
            break
    want = [f"{n} {v}" for n, v in ordered]
    lines = _with_repeats(rng, want, draw_int(rng, 3, 8))
    out = f"sorted_{name}"
    direction = "largest first" if descending else "smallest first"
    instruction = (
        f"`{name}` holds lines of the form `<{label}> <{unit}>` (one space between), and some "
        f"lines are repeated. Write `{out}` with every distinct line exactly once, ordered by "
        f"the number in the second field ({direction}, compared as numbers); lines with the "
        f"same number are ordered by the first field {BYTE_ORDER}. {DONE}"
    )
    keys = "-k2,2nr -k1,1" if descending else "-k2,2n -k1,1"
    return Scenario(
        instruction=instruction,
        files=(Entry(name, "\n".join(lines) + "\n"),),
        solution=(f"LC_ALL=C sort -u {name} | LC_ALL=C sort {keys} > {out}",),
        expect=(FileLines(out, tuple(want)),),
    )


EMAIL_DOMAINS = (
    "example.com",
    "mail.example.org",
    "acme.io",
    "fastmail.test",
    "globex.net",
)


def _email(first: str, last: str, domain: str, style: int) -> str:
    """The address in one of several capitalisations people type."""
    local = f"{first}.{last}"
    if style == 0:
        return f"{local}@{domain}".lower()
    if style == 1:
        return f"{local}@{domain}"
    if style == 2:
        return f"{local}@{domain.upper()}"
    return f"{local}@{domain}".upper()


def _dedupe_casefold(rng: np.random.Generator) -> Scenario:
    """First occurrence wins, compared case-insensitively, original order kept."""
    people: list[tuple[str, str, str]] = []
    wanted = draw_int(rng, 7, 12)
    while len(people) < wanted:
        person = (
            draw_from(rng, FIRST_NAMES),
            draw_from(rng, LAST_NAMES),
            draw_from(rng, EMAIL_DOMAINS),
        )
        if person not in people:
            people.append(person)
    while True:
        lines = [_email(*p, draw_int(rng, 0, 2)) for p in people]
        lines += [_email(*draw_from(rng, people), draw_int(rng, 0, 3)) for _ in range(draw_int(rng, 4, 9))]
        lines = shuffled(rng, lines)
        seen: set[str] = set()
        want = []
        for line in lines:
            if line.lower() not in seen:
                seen.add(line.lower())
                want.append(line)
        exact = list(dict.fromkeys(lines))
        mixed = any(w != w.lower() for w in want)
        unsorted = want not in (byte_sorted(want), sorted(want, key=str.lower))
        if exact != want and mixed and unsorted and len(lines) > len(exact):
            break
    source = draw_from(rng, ("signups.txt", "newsletter/signups.txt", "export/subscribers.txt"))
    out = "signups_unique.txt"
    instruction = (
        f"`{source}` lists email addresses, one per line. Some people signed up more than "
        f"once, sometimes with different capitalisation (`Ann.Lee@Example.com` and "
        f"`ann.lee@example.com` are the same address). Write `{out}` in the current directory "
        f"keeping only the first occurrence of each address (compared ignoring case), spelled "
        f"exactly as in that first occurrence, in the original order. {DONE}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(source, "\n".join(lines) + "\n"),),
        solution=(f"awk '!seen[tolower($0)]++' {quote(source)} > {out}",),
        expect=(FileLines(out, tuple(want)),),
    )


MERGE_SOURCES = ("newsletter", "webinar", "trade-show", "shop", "support", "referrals")


def _dedupe_merge(rng: np.random.Generator) -> Scenario:
    """Several contact lists, each with a comment header, merged: distinct, byte order."""
    contacts = people(rng, draw_int(rng, 10, 18))
    sources = draw_sample(rng, MERGE_SOURCES, draw_int(rng, 2, 4))
    folder = draw_from(rng, ("lists", "contacts", "crm-export"))
    files = []
    used: set[str] = set()
    for i, source in enumerate(sources):
        # the first list shares someone with the second, so duplicates span files
        chosen = draw_sample(rng, contacts, draw_int(rng, 4, min(9, len(contacts))))
        if i == 1:
            chosen.append(draw_from(rng, sorted(used)))
        if i == len(sources) - 1:
            chosen += [c for c in contacts if c not in used and c not in chosen]
        used.update(chosen)
        body = [f"# exported from {source} on 2024-{draw_int(rng, 1, 12):02d}-{draw_int(rng, 1, 28):02d}"]
        body += chosen + [draw_from(rng, chosen)]
        files.append(Entry(f"{folder}/{source}.txt", "\n".join(body) + "\n"))
    want = byte_sorted(contacts)
    out = "all_contacts.txt"
    instruction = (
        f"Each `.txt` file in `{folder}/` is a contact list: a first line starting with `#` "
        f"(a comment), then one name per line. Merge them into `{out}` in the current "
        f"directory: every distinct name that appears in any of the lists exactly once, no "
        f"comment lines, sorted {BYTE_ORDER}. {DONE}"
    )
    return Scenario(
        instruction=instruction,
        files=tuple(files),
        solution=(f"grep -hv '^#' {folder}/*.txt | LC_ALL=C sort -u > {out}",),
        expect=(FileLines(out, tuple(want)),),
    )


FAMILY: Family = Family(
    "dedupe-sort",
    "Deduplicate and sort lines.",
    {
        1: "distinct lines in byte order into a new file",
        2: "numeric sort on a field, case-insensitive first-occurrence dedupe, or merging lists",
    },
    dedupe_sort,
    tags=("text",),
)
