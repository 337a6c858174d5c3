"""replace-text: replace text across files.

| level | asks | example (task id) |
|---|---|---|
| 1 | a renamed project in every `.txt` file of a folder | `Nimbus` -> `Stratus` in `minutes/*.txt` (L1/0) |
| 2 | a whole word in one extension across a tree, other files unchanged | `host` -> `server` in `docs/**/*.txt`; `hostname`, `*.html` and `*.txt.bak` stay (L2/0) |

Why the verdict holds: every file's whole text is checked. At level 1 the first file names
the project twice on one line, so a sed without `g` misses one. At level 2 longer words
containing the word (`username`), the word in other extensions and in `x.md.bak` all stay, so
a sed without word boundaries, or over every file, scores 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample, shuffled
from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.shell import quote
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import Expectation, FileText

FILLER_SENTENCES = (
    "Lunch is provided on Fridays.",
    "The office is closed on public holidays.",
    "Remember to update your timesheet before Monday.",
    "The quarterly review starts at 10:00 in room 4.",
    "Parking passes are renewed every January.",
    "Please water the plants if you are the last to leave.",
    "The printer on the third floor is out of toner again.",
    "New laptops arrive at the end of next month.",
    "Coffee beans are ordered every second Tuesday.",
    "Visitors must sign in at the front desk.",
    "The fire drill is planned for early autumn.",
    "Slides from the all-hands meeting are in the shared drive.",
)


RENAMES = (
    ("Falcon", "Osprey"), ("Zephyr", "Aurora"), ("Tundra", "Glacier"), ("Bluebird", "Kestrel"),
    ("Orion", "Vega"), ("Helios", "Solaris"), ("Quarry", "Summit"), ("Nimbus", "Stratus"),
)  # fmt: skip
NAME_SENTENCES = (
    "The {w} launch moved to the second week of June.",
    "Please send {w} feedback to the product channel.",
    "The {w} roadmap was reviewed on Monday.",
    "Budget for {w} is approved until the end of the year.",
    "Questions about {w} go to the team lead.",
    "The next {w} demo is on Thursday at 15:00.",
    "We agreed to freeze {w} features before the audit.",
    "Tag every {w} ticket with the release label.",
    "{w} support contracts renew in October.",
    "Marketing wants a short video about {w}.",
)
# whole-word terms: (word, replacement, sentences with longer words containing it)
WORD_TERMS = (
    ("user", "member", (
        "Reset your username from the account page.",
        "Only a superuser can change this setting.",
        "The userspace driver was rewritten last year.",
        "Usernames are case-sensitive.",
    )),
    ("log", "journal", (
        "The login page loads in under a second.",
        "See the catalog for the full list of products.",
        "The new logo ships with version 3.",
        "The team blog has more details.",
        "Backlog grooming happens on Tuesdays.",
    )),
    ("data", "telemetry", (
        "The database is backed up every night.",
        "Metadata is stored next to each file.",
        "Refresh the dataset before training a model.",
    )),
    ("host", "server", (
        "The hostname is printed at startup.",
        "Try everything on localhost first.",
        "The old ghost entries were removed from the index.",
        "Hosting costs went down this quarter.",
    )),
    ("port", "endpoint", (
        "The weekly report is due on Friday.",
        "Contact support if the import fails.",
        "The portal shows every open ticket.",
        "It is important to keep backups.",
    )),
    ("key", "token", (
        "The keyboard shortcuts are listed in the help menu.",
        "Store secrets in the keychain, never in the repository.",
        "The keynote is recorded for those who cannot attend.",
        "The turkey sandwiches ran out at the offsite.",
    )),
)  # fmt: skip
WORD_SENTENCES = (
    "Check the {w} settings before every release.",
    "The {w} field must not be left empty.",
    "Our {w} policy changed in March.",
    "Each {w} entry is reviewed by two people.",
    "The new {w} format is described below.",
    "Ask the platform team if a {w} value looks wrong.",
    "Every {w} record keeps its creation date.",
    "Old {w} values are archived after ninety days, and each {w} change is logged.",
    "A missing {w} is flagged in the nightly summary.",
)
MEETINGS = (
    "monday",
    "standup",
    "planning",
    "retro",
    "kickoff",
    "review",
    "all-hands",
    "budget",
)
DOC_FOLDERS = (
    "guides",
    "policies",
    "archive/2023",
    "teams/platform",
    "teams/data",
    "howto",
)
DOC_TITLES = (
    "Getting started", "Setup", "FAQ", "Release process", "Security", "On-call",
    "Onboarding", "Glossary", "Troubleshooting", "Access", "Backups", "Monitoring",
)  # fmt: skip


def replace_text(rng: np.random.Generator, level: int) -> Scenario:
    return _replace_names(rng) if level == 1 else _replace_words(rng)


def _paragraph(rng: np.random.Generator, sentences: Sequence[str]) -> str:
    return " ".join(shuffled(rng, sentences))


def _replace_names(rng: np.random.Generator) -> Scenario:
    """Level 1: a renamed project or company, replaced in every `.txt` file of a folder.
    The name never appears inside a longer word, so a plain substitution is right."""
    old, new = draw_from(rng, RENAMES)
    folder = draw_from(rng, ("minutes", "notes", "memos", "updates"))
    count = draw_int(rng, 3, 6)
    mentions = [True, True] + [coin(rng) for _ in range(count - 2)]
    files = []
    expect: list[Expectation] = []
    for i, stem in enumerate(draw_sample(rng, MEETINGS, count)):
        chosen = draw_sample(rng, FILLER_SENTENCES, draw_int(rng, 1, 3))
        if mentions[i]:
            # the first file names it twice on one line: a sed without `g` misses one
            least = 2 if i == 0 else 1
            chosen += [s.format(w=old) for s in draw_sample(rng, NAME_SENTENCES, draw_int(rng, least, 3))]
        text = f"{stem.title()} notes\n\n{_paragraph(rng, chosen)}\n"
        path = f"{folder}/{stem}.txt"
        files.append(Entry(path, text))
        expect.append(FileText(path, text.replace(old, new)))
    instruction = (
        f"The project `{old}` was renamed `{new}`. In every `.txt` file in `{folder}/`, "
        f"replace each occurrence of `{old}` with `{new}` (exact, case-sensitive); change "
        f"nothing else. {DONE}"
    )
    return Scenario(
        instruction=instruction,
        files=tuple(files),
        solution=(
            f"grep -c {old} {folder}/*.txt",
            f"sed -i 's/{old}/{new}/g' {folder}/*.txt",
        ),
        expect=tuple(expect),
    )


def _replace_words(rng: np.random.Generator) -> Scenario:
    """Level 2: whole-word replace in one extension across a tree. Longer words containing
    the word (`username`), the word in other extensions and in `x.md.bak` all stay."""
    word, new, decoys = draw_from(rng, WORD_TERMS)
    ext = draw_from(rng, (".md", ".txt"))
    other_exts = [".txt" if ext == ".md" else ".md", ".html", f"{ext}.bak"]
    root = draw_from(rng, ("handbook", "docs", "wiki", "knowledge-base"))
    folders = ["", *draw_sample(rng, DOC_FOLDERS, draw_int(rng, 2, 3))]
    count = draw_int(rng, 5, 8)
    titles = draw_sample(rng, DOC_TITLES, count)
    pattern = re.compile(rf"\b{word}\b")
    files = []
    expect: list[Expectation] = []
    for i, title in enumerate(titles):
        # file 0: target with word and decoy; file 1: another extension with the word
        target = i == 0 or (i >= 2 and draw_int(rng, 0, 2) > 0)
        suffix = ext if target else draw_from(rng, other_exts)
        sentences = draw_sample(rng, FILLER_SENTENCES, draw_int(rng, 1, 2))
        if i <= 1 or coin(rng):
            sentences += [s.format(w=word) for s in draw_sample(rng, WORD_SENTENCES, draw_int(rng, 1, 3))]
        if i == 0 or coin(rng):
            sentences += draw_sample(rng, decoys, draw_int(rng, 1, 2))
        stem = title.lower().replace(" ", "-")
        folder = folders[i % len(folders)]
        path = f"{root}/{folder}/{stem}{suffix}" if folder else f"{root}/{stem}{suffix}"
        body = _paragraph(rng, sentences)
        if suffix == ".html":
            text = f"<h1>{title}</h1>\n<p>{body}</p>\n"
        elif suffix.startswith(".md"):
            text = f"# {title}\n\n{body}\n"
        else:
            text = f"{title}\n{'=' * len(title)}\n\n{body}\n"
        files.append(Entry(path, text))
        expect.append(FileText(path, pattern.sub(new, text) if target else text))
    ext_name = "Markdown (`.md`)" if ext == ".md" else "plain-text (`.txt`)"
    instruction = (
        f"In every {ext_name} file anywhere under `{root}/`, replace the word `{word}` with "
        f"`{new}`, but only where `{word}` stands as a whole word: inside longer words such "
        f"as `{_longer(decoys, word)}` it stays, and the match is case-sensitive. Files with "
        f"any other extension (including `*{ext}.bak`) must stay exactly as they are. {DONE}"
    )
    script = f"s/\\b{word}\\b/{new}/g"
    return Scenario(
        instruction=instruction,
        files=tuple(files),
        solution=(
            f"grep -rnw {word} {root}",
            f"find {root} -type f -name '*{ext}' -exec sed -i {quote(script)} {{}} +",
        ),
        expect=tuple(expect),
    )


def _longer(decoys: Sequence[str], word: str) -> str:
    """The first longer word in the decoy sentences that contains `word` (lower-case)."""
    for sentence in decoys:
        for token in re.findall(r"[A-Za-z]+", sentence):
            if word in token and token != word:
                return token
    raise ValueError(f"no decoy contains {word!r}")


FAMILY: Family = Family(
    "replace-text",
    "Replace text across files.",
    {
        1: "a renamed project in every `.txt` file of one folder",
        2: "a whole word in one extension across a tree, other files unchanged",
    },
    replace_text,
    tags=("text",),
)
