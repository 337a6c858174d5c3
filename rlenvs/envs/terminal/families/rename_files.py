"""rename-files: rename files by a rule, keeping their contents.

| level | asks | example (task id) |
|---|---|---|
| 1 | one extension changed in one folder | `drafts/recipes.txt` -> `drafts/recipes.md`; `packing-list.txt.bak` stays (L1/1) |
| 2 | a pattern rule: camera photos, lower case with underscores, or US dates to ISO | `camera/IMG_0550.JPG` -> `camera/2021-02-photo-550.jpg`; `IMG_0642.MOV` stays (L2/0) |

Why the verdict holds: the folder must hold exactly the final names, each with the content it
had before (a level 1 body names its file, so a swapped content is caught). Each rule has
files it must leave alone: a `name.src.bak` (the extension in the middle) and a README, a
`.MOV` of the same camera, names that already comply, a file already in ISO form and a
template.
"""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample, shuffled
from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.shell import quote
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import DirEntries, Expectation, FileText

PROSE_NOTES = (
    "Call the venue about the projector.",
    "Send the draft agenda to everyone by Wednesday.",
    "Book the train to Lyon for the workshop.",
    "Ask Grace for the updated budget figures.",
    "Try the new pasta place near the station.",
    "Renew the domain before it expires in June.",
    "Finish chapter three of the onboarding guide.",
    "Check whether the backup job ran last night.",
    "Order more sticky notes and whiteboard markers.",
    "Collect feedback from the beta testers.",
    "Move the retro to Thursday afternoon.",
    "Buy a birthday card for Tara.",
)
# extension pairs, with the folders, base names and content each kind of file gets
RENAME_KINDS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ".txt",
        ".md",
        ("notes", "drafts", "journal", "minutes"),
        (
            "budget-draft", "contacts", "goals-2025", "ideas", "interview-questions",
            "meeting-2024-03-12", "packing-list", "reading-list", "recipes", "retro-q2",
            "standup-notes", "todo",
        ),
    ),
    (
        ".jpeg",
        ".jpg",
        ("photos", "pictures", "camera-roll"),
        (
            "beach", "birthday-cake", "city-lights", "garden", "harbor", "market",
            "mountain-trail", "old-town", "snow-day", "sunset-pier",
        ),
    ),
    (
        ".htm",
        ".html",
        ("site", "public", "www"),
        ("about", "blog", "careers", "contact", "faq", "index", "pricing", "team"),
    ),
    (
        ".yml",
        ".yaml",
        ("config", "deploy", "ci"),
        (
            "app", "database", "docker-compose", "logging", "nginx", "prometheus", "redis",
            "workers",
        ),
    ),
)  # fmt: skip


def _rename_content(rng: np.random.Generator, ext: str, base: str) -> str:
    """A file body that names its file, so a swapped content is caught."""
    if ext == ".txt":
        lines = draw_sample(rng, PROSE_NOTES, draw_int(rng, 1, 3))
        return f"{base}\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"
    if ext == ".jpeg":
        return f"JPEG image {base}: {draw_int(rng, 8, 40) * 100}x{draw_int(rng, 6, 30) * 100}\n"
    if ext == ".htm":
        title = base.replace("-", " ").title()
        return f"<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>\n"
    return f"name: {base}\nreplicas: {draw_int(rng, 1, 6)}\nport: {draw_int(rng, 3000, 9000)}\n"


def rename_files(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _rename_extension(rng)
    return draw_from(rng, (_rename_photos, _rename_lower, _rename_dates))(rng)


def _rename_check(folder: str, final: dict[str, str]) -> tuple[Expectation, ...]:
    """The folder holds exactly the final names, each with the content it had before."""
    checks: list[Expectation] = [DirEntries(folder, tuple(sorted(final)))]
    checks += [FileText(f"{folder}/{name}", text) for name, text in sorted(final.items())]
    return tuple(checks)


def _rename_extension(rng: np.random.Generator) -> Scenario:
    """Level 1: every `*.src` in one folder becomes `*.dst`; a `name.src.bak` (the extension
    in the middle) and a README must keep their names."""
    src, dst, folders, bases = draw_from(rng, RENAME_KINDS)
    folder = draw_from(rng, folders)
    chosen = draw_sample(rng, bases, draw_int(rng, 4, 7))
    renamed, kept = chosen[:-1], chosen[-1]
    files: list[Entry] = []
    final: dict[str, str] = {}
    for base in renamed:
        text = _rename_content(rng, src, base)
        files.append(Entry(f"{folder}/{base}{src}", text))
        final[f"{base}{dst}"] = text
    backup = f"{kept}{src}.bak"
    text = _rename_content(rng, src, kept)
    files.append(Entry(f"{folder}/{backup}", text))
    final[backup] = text
    if coin(rng):
        readme = f"Files in {folder}/ are synced nightly.\n"
        files.append(Entry(f"{folder}/README", readme))
        final["README"] = readme
    instruction = (
        f"In the folder `{folder}/`, rename every file whose name ends in `{src}` so that it "
        f"ends in `{dst}` instead (`{renamed[0]}{src}` becomes `{renamed[0]}{dst}`), keeping "
        f"the rest of the name and the content. Files whose names do not end in `{src}` keep "
        f"their names. {DONE}"
    )
    command = f'for f in {folder}/*{src}; do mv -- "$f" "${{f%{src}}}{dst}"; done'
    return Scenario(
        instruction=instruction,
        files=tuple(shuffled(rng, files)),
        solution=(f"ls -la {folder}", command),
        expect=_rename_check(folder, final),
    )


def _rename_photos(rng: np.random.Generator) -> Scenario:
    """`IMG_0012.JPG` -> `2024-05-photo-012.jpg`; a `.MOV` of the same camera stays."""
    folder = draw_from(rng, ("camera", "DCIM", "photos", "phone-backup"))
    year, month = draw_int(rng, 2018, 2025), draw_int(rng, 1, 12)
    numbers = [int(n) for n in rng.permutation(np.arange(1, 1000))[: draw_int(rng, 5, 10)]]
    photos, video = numbers[:-1], numbers[-1]
    files: list[Entry] = []
    final: dict[str, str] = {}
    for number in photos:
        text = f"JPEG image IMG_{number:04d}, shot {year}-{month:02d}-{draw_int(rng, 1, 28):02d}\n"
        files.append(Entry(f"{folder}/IMG_{number:04d}.JPG", text))
        final[f"{year}-{month:02d}-photo-{number:03d}.jpg"] = text
    text = f"QuickTime movie IMG_{video:04d}, {draw_int(rng, 3, 90)} seconds\n"
    files.append(Entry(f"{folder}/IMG_{video:04d}.MOV", text))
    final[f"IMG_{video:04d}.MOV"] = text
    if coin(rng):
        text = f"Photos from {year}-{month:02d}; keep the originals.\n"
        files.append(Entry(f"{folder}/notes.txt", text))
        final["notes.txt"] = text
    example = photos[0]
    prefix = f"{year}-{month:02d}-photo-"
    instruction = (
        f"The folder `{folder}/` holds camera files. Rename every photo named "
        f"`IMG_<number>.JPG` to `{prefix}<number>.jpg`, where `<number>` is the same number "
        f"written with exactly three digits (`IMG_{example:04d}.JPG` becomes "
        f"`{prefix}{example:03d}.jpg`; note the lower-case extension). Every other file keeps "
        f"its name, and each photo keeps its content. {DONE}"
    )
    command = (
        f"for f in {folder}/IMG_[0-9][0-9][0-9][0-9].JPG; do "
        f'n=${{f#{folder}/IMG_0}}; mv -- "$f" "{folder}/{prefix}${{n%.JPG}}.jpg"; done'
    )
    return Scenario(
        instruction=instruction,
        files=tuple(shuffled(rng, files)),
        solution=(f"ls -la {folder}", command),
        expect=_rename_check(folder, final),
    )


MESSY_NAMES = (
    "Quarterly Report Q1.PDF", "Team Photo.JPG", "Meeting Notes March.docx",
    "Invoice 2024-117.pdf", "Project Plan FINAL.xlsx", "Budget Overview.ods",
    "Client List.CSV", "Onboarding Checklist.md", "Travel Receipts May.pdf",
    "Board Minutes.txt", "Release Notes v2.3.TXT", "Floor Plan.PNG",
    "Vendor Contract DRAFT.docx", "Holiday Schedule.xlsx", "Logo Final v2.SVG",
)  # fmt: skip
TIDY_NAMES = (
    "budget_2024.xlsx",
    "readme.txt",
    "logo.png",
    "timesheet_week_12.csv",
    "agenda.md",
)


def _tidy(name: str) -> str:
    return name.lower().replace(" ", "_")


def _rename_lower(rng: np.random.Generator) -> Scenario:
    """Lower-case every name and turn spaces into underscores; tidy names already comply."""
    folder = draw_from(rng, ("inbox", "downloads", "scans", "shared"))
    messy = draw_sample(rng, MESSY_NAMES, draw_int(rng, 4, 7))
    tidy = draw_sample(rng, TIDY_NAMES, draw_int(rng, 1, 2))
    files: list[Entry] = []
    final: dict[str, str] = {}
    for name in messy + tidy:
        text = f"{name}: {draw_from(rng, PROSE_NOTES)} (rev {draw_int(rng, 1, 9)})\n"
        files.append(Entry(f"{folder}/{name}", text))
        final[_tidy(name)] = text
    instruction = (
        f"Tidy the file names in `{folder}/`: every name must be all lower-case (extension "
        f"included) with each space replaced by an underscore, so `{messy[0]}` becomes "
        f"`{_tidy(messy[0])}`. Names that already follow the rule stay as they are, and every "
        f"file keeps its content. {DONE}"
    )
    command = (
        f"for f in {folder}/*; do b=${{f#{folder}/}}; "
        f"n=$(printf '%s' \"$b\" | tr 'A-Z ' 'a-z_'); "
        f'[ "$b" = "$n" ] || mv -- "$f" "{folder}/$n"; done'
    )
    return Scenario(
        instruction=instruction,
        files=tuple(shuffled(rng, files)),
        solution=(f"ls -la {folder}", command),
        expect=_rename_check(folder, final),
    )


def _rename_dates(rng: np.random.Generator) -> Scenario:
    """`sales_03-15-2024.csv` -> `sales_2024-03-15.csv`: US dates to ISO dates."""
    folder = draw_from(rng, ("reports", "exports", "archive"))
    prefix = draw_from(rng, ("report", "sales", "invoice", "timesheet", "backup"))
    ext = draw_from(rng, (".csv", ".pdf", ".txt"))
    dates: list[tuple[int, int, int]] = []
    wanted = draw_int(rng, 5, 9)
    while len(dates) < wanted:
        date = (draw_int(rng, 2021, 2025), draw_int(rng, 1, 12), draw_int(rng, 1, 28))
        if date not in dates:
            dates.append(date)
    files: list[Entry] = []
    final: dict[str, str] = {}
    *old, done = dates
    for y, m, d in old:
        text = f"{prefix} for {y}-{m:02d}-{d:02d}\ntotal,{draw_int(rng, 100, 9999)}\n"
        files.append(Entry(f"{folder}/{prefix}_{m:02d}-{d:02d}-{y}{ext}", text))
        final[f"{prefix}_{y}-{m:02d}-{d:02d}{ext}"] = text
    y, m, d = done
    text = f"{prefix} for {y}-{m:02d}-{d:02d}\ntotal,{draw_int(rng, 100, 9999)}\n"
    files.append(Entry(f"{folder}/{prefix}_{y}-{m:02d}-{d:02d}{ext}", text))
    final[f"{prefix}_{y}-{m:02d}-{d:02d}{ext}"] = text
    text = f"{prefix} template: fill in the date and the total\n"
    files.append(Entry(f"{folder}/{prefix}_template{ext}", text))
    final[f"{prefix}_template{ext}"] = text
    y, m, d = old[0]
    instruction = (
        f"The files in `{folder}/` named `{prefix}_MM-DD-YYYY{ext}` carry US-style dates. "
        f"Rename each of them to `{prefix}_YYYY-MM-DD{ext}` (so "
        f"`{prefix}_{m:02d}-{d:02d}-{y}{ext}` becomes `{prefix}_{y}-{m:02d}-{d:02d}{ext}`). "
        f"Files already in that form and every other file keep their names, and every file "
        f"keeps its content. {DONE}"
    )
    glob = f"{prefix}_[0-9][0-9]-[0-9][0-9]-[0-9][0-9][0-9][0-9]{ext}"
    script = r"s/^([a-z]+)_([0-9]{2})-([0-9]{2})-([0-9]{4})/\1_\4-\2-\3/"
    command = (
        f"for f in {folder}/{glob}; do b=${{f#{folder}/}}; "
        f'mv -- "$f" "{folder}/$(printf \'%s\' "$b" | sed -E {quote(script)})"; done'
    )
    return Scenario(
        instruction=instruction,
        files=tuple(shuffled(rng, files)),
        solution=(f"ls -la {folder}", command),
        expect=_rename_check(folder, final),
    )


FAMILY: Family = Family(
    "rename-files",
    "Rename files by a rule, keeping their contents.",
    {
        1: "change one extension in one folder (a `.bak` copy keeps its name)",
        2: "a pattern rule: camera photos, lower-case with underscores, or US dates to ISO",
    },
    rename_files,
    tags=("text",),
)
