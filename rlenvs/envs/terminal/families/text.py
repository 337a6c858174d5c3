"""Terminal task families about text files: CSV columns, renames, configs, trees, sorting, edits.

Each family makes a small workspace of realistic files (orders, employees, notes, configs)
and asks for one well-defined change or answer that plain shell tools can produce. Every
instruction names the exact paths, format and order it wants, and the expectations check
exactly that, so a careless solution (a sed without anchors or word boundaries, a sort in
the wrong order, a rename that also hits `x.txt.bak`) scores 0 while a careful one scores 1.

| family | level | asks | example (task id) |
|---|---|---|---|
| csv-column | 1 | the sum of one numeric column, as the answer | `amount` of `exports/orders_2024.csv` -> `submit 12347.79` (L1/0) |
| csv-column | 2 | a total per category, maybe over filtered rows, byte-sorted, into a file | `quantity` per `product` where `city` is `Lyon`, into `quantity_by_product.csv` as `Desk Lamp,38` lines (L2/0) |
| rename-files | 1 | one extension changed in one folder | `drafts/recipes.txt` -> `drafts/recipes.md`; `packing-list.txt.bak` stays (L1/1) |
| rename-files | 2 | a pattern rule: camera photos, lower case with underscores, or US dates to ISO | `camera/IMG_0550.JPG` -> `camera/2021-02-photo-550.jpg`; `IMG_0642.MOV` stays (L2/0) |
| fix-config | 1 | one key of a flat `key = value` or `KEY=value` file, nothing else | `MAX_CONNECTIONS=988` in `deploy/app.env`; the commented-out default stays (L1/0) |
| fix-config | 2 | one key in one INI section: a value, another section's value or an increment | `host` of `[replica]` in `deploy/databases.ini` to `db2.internal`, other `host`s kept (L2/2) |
| make-tree | 1 | listed folders and empty files | `history-101/week-03/quiz.md`, `history-101/resources/videos/` (L1/1) |
| make-tree | 2 | a skeleton from an indented tree, one-line files, nothing extra | `weather-bot/src/weather_bot/__init__.py -> __version__ = "0.2.0"`, empty `logs/` (L2/0) |
| dedupe-sort | 1 | distinct lines in byte order | `lists/hosts.txt` -> `unique_hosts.txt`, `DB-Primary` before `backup-nas` (L1/0) |
| dedupe-sort | 2 | a numeric sort on a field, a case-insensitive first-occurrence dedupe, or merged lists | first spelling of each address of `export/subscribers.txt`, in input order (L2/1) |
| replace-text | 1 | a renamed project in every `.txt` file of a folder | `Nimbus` -> `Stratus` in `minutes/*.txt` (L1/0) |
| replace-text | 2 | a whole word in one extension across a tree, other files unchanged | `host` -> `server` in `docs/**/*.txt`; `hostname`, `*.html` and `*.txt.bak` stay (L2/0) |

Task ids are `terminal/{family}/L{level}/{index}`.

All randomness comes from the `rng` handed to a generator (`task_rng` of the task id), drawn
with `integers` and `permutation` only. Orders the instruction calls "byte order" are
computed here by sorting UTF-8 bytes, which is what `LC_ALL=C sort` does; the reference
solutions set `LC_ALL=C` wherever order matters and use only coreutils, grep, sed and
POSIX awk (mawk runs them).
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Sequence

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample, shuffled
from rlenvs.core.names import FIRST_NAMES, LAST_NAMES, people
from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.rewards.workspace import (
    AnswerIs,
    DirEntries,
    Expectation,
    FileLines,
    FileText,
    IsDir,
)

SUBMIT = "When you are done, reply with `submit`."
BYTE_ORDER = "in byte order (as `LC_ALL=C sort` orders them: uppercase before lowercase)"

# --- drawing -------------------------------------------------------------------------------


def _byte_sorted(items: Sequence[str]) -> list[str]:
    """Sorted as `LC_ALL=C sort` sorts: by UTF-8 bytes."""
    return sorted(items, key=lambda item: item.encode())


def _q(text: str) -> str:
    return shlex.quote(text)


def _cents(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


# --- shared word pools ---------------------------------------------------------------------

CITIES = (
    "Amsterdam", "Austin", "Berlin", "Boston", "Chicago", "Cork", "Denver", "Dublin",
    "Leeds", "Lisbon", "Lyon", "Madrid", "New York", "Newark", "Oslo", "Porto",
    "San Diego", "Seattle", "Toronto", "Vienna", "Zurich",
)  # fmt: skip
"""No city is a prefix of another, so sorting `city,total` lines whole or by the first
field gives one order."""
PRODUCTS = (
    "Desk Lamp", "Docking Station", "HDMI Cable", "Headset", "Keyboard", "Laptop Stand",
    "Monitor", "Mouse", "Notebook", "USB Hub", "Webcam", "Whiteboard",
)  # fmt: skip
DEPARTMENTS = (
    "Engineering", "Finance", "Human Resources", "IT", "Legal", "Marketing", "Operations",
    "Sales", "Support",
)  # fmt: skip
CARRIERS = ("DHL", "DPD", "FedEx", "GLS", "PostNL", "UPS")
EXPENSE_CATEGORIES = (
    "Client Gifts", "Hardware", "Meals", "Office Supplies", "Software", "Training", "Travel",
)  # fmt: skip
PROJECTS = (
    "Apollo",
    "Borealis",
    "Cobalt",
    "Delta",
    "Ember",
    "Falcon",
    "Granite",
    "Harbor",
)
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


# === csv-column ============================================================================

# A column is (name, kind, argument). Kinds: "id" (argument: prefix; sequential ids),
# "date" (2024 dates), "cat" (argument: pool; each task uses a few of its values),
# "person" (a few full names per task), "name" (a different full name on each row), "int" ((low, high)), "dec" ((low, high) in cents,
# written with two decimals).
Column = tuple[str, str, object]

CSV_DATASETS: tuple[tuple[str, tuple[Column, ...]], ...] = (
    (
        "orders",
        (
            ("order_id", "id", "SO-"),
            ("date", "date", None),
            ("city", "cat", CITIES),
            ("product", "cat", PRODUCTS),
            ("quantity", "int", (1, 25)),
            ("amount", "dec", (199, 99999)),
            ("status", "cat", ("cancelled", "pending", "returned", "shipped")),
        ),
    ),
    (
        "employees",
        (
            ("employee_id", "id", "E"),
            ("name", "name", None),
            ("department", "cat", DEPARTMENTS),
            ("city", "cat", CITIES),
            ("level", "cat", ("junior", "lead", "mid", "senior")),
            ("salary", "int", (38000, 165000)),
            ("vacation_days", "int", (10, 30)),
        ),
    ),
    (
        "expenses",
        (
            ("date", "date", None),
            ("employee", "person", None),
            ("category", "cat", EXPENSE_CATEGORIES),
            ("amount", "dec", (350, 189000)),
            ("city", "cat", CITIES),
            ("approved", "cat", ("no", "yes")),
        ),
    ),
    (
        "shipments",
        (
            ("shipment_id", "id", "SH-"),
            ("origin", "cat", CITIES),
            ("carrier", "cat", CARRIERS),
            ("packages", "int", (1, 40)),
            ("weight_kg", "dec", (50, 250000)),
            ("status", "cat", ("delayed", "delivered", "in transit")),
        ),
    ),
    (
        "timesheet",
        (
            ("date", "date", None),
            ("employee", "person", None),
            ("project", "cat", PROJECTS),
            ("task", "cat", ("design", "development", "meetings", "review", "testing")),
            ("hours", "int", (1, 9)),
            ("billable", "cat", ("no", "yes")),
        ),
    ),
)


def _csv_table(rng: np.random.Generator, columns: Sequence[Column], rows: int) -> list[list[str]]:
    """`rows` data rows; categorical columns draw from a few values each so they repeat."""
    pools: list[Sequence[str]] = []
    for _name, kind, arg in columns:
        if kind == "cat":
            pool = arg  # type: ignore[assignment]
            pools.append(draw_sample(rng, pool, min(len(pool), draw_int(rng, 3, 6))))
        elif kind == "person":
            pools.append(people(rng, draw_int(rng, 4, 7)))
        else:
            pools.append(())
    first_id = draw_int(rng, 1000, 8000)
    names = people(rng, rows) if any(kind == "name" for _, kind, _ in columns) else []
    table = []
    for row in range(rows):
        cells = []
        for (_name, kind, arg), pool in zip(columns, pools, strict=True):
            if kind == "id":
                cells.append(f"{arg}{first_id + row}")
            elif kind == "name":
                cells.append(names[row])
            elif kind == "date":
                cells.append(f"2024-{draw_int(rng, 1, 12):02d}-{draw_int(rng, 1, 28):02d}")
            elif kind in ("cat", "person"):
                cells.append(draw_from(rng, pool))
            elif kind == "int":
                low, high = arg  # type: ignore[misc]
                cells.append(str(draw_int(rng, low, high)))
            else:
                low, high = arg  # type: ignore[misc]
                cells.append(_cents(draw_int(rng, low, high)))
        table.append(cells)
    return table


def _csv_text(columns: Sequence[Column], table: Sequence[Sequence[str]]) -> str:
    lines = [",".join(name for name, _, _ in columns)]
    lines += [",".join(row) for row in table]
    return "\n".join(lines) + "\n"


def _as_cents(cell: str) -> int:
    """A column value in hundredths: exact sums for both "12" and "12.50"."""
    whole, _, part = cell.partition(".")
    return int(whole) * 100 + int(part.ljust(2, "0") or 0)


def _csv_place(rng: np.random.Generator, stem: str) -> str:
    return draw_from(rng, (f"{stem}.csv", f"data/{stem}.csv", f"exports/{stem}_2024.csv"))


def csv_column(rng: np.random.Generator, level: int) -> Scenario:
    stem, columns = draw_from(rng, CSV_DATASETS)
    path = _csv_place(rng, stem)
    numeric = [i for i, (_, kind, _) in enumerate(columns) if kind in ("int", "dec")]
    if level == 1:
        return _csv_sum(rng, path, columns, draw_from(rng, numeric))
    return _csv_group(rng, path, columns, draw_from(rng, numeric))


def _csv_sum(rng: np.random.Generator, path: str, columns: Sequence[Column], col: int) -> Scenario:
    """Level 1: the sum of one numeric column, submitted as the answer."""
    table = _csv_table(rng, columns, draw_int(rng, 15, 40))
    name, kind, _ = columns[col]
    total = sum(_as_cents(row[col]) for row in table)
    if kind == "int":
        answer, example = str(total // 100), "`submit 1234`"
        program = f"NR > 1 {{ total += ${col + 1} }} END {{ print total }}"
    else:
        answer, example = _cents(total), "`submit 1234.50`, the exact total"
        program = f'NR > 1 {{ total += ${col + 1} }} END {{ printf "%.2f\\n", total }}'
    instruction = (
        f"`{path}` is a comma-separated file whose first line is a header. What is the sum "
        f"of its `{name}` column over all {len(table)} data rows? Reply with "
        f"`submit <total>` (for example {example})."
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, _csv_text(columns, table)),),
        solution=(f"head -n 3 {path}", f"awk -F, {_q(program)} {path}"),
        expect=(AnswerIs(answer, numeric=True),),
        answer=answer,
    )


def _csv_group(rng: np.random.Generator, path: str, columns: Sequence[Column], col: int) -> Scenario:
    """Level 2: totals per category, maybe over a filtered subset, sorted, into a file."""
    groupable = [i for i, (_, kind, _) in enumerate(columns) if kind in ("cat", "person")]
    group = draw_from(rng, groupable)
    filters = [i for i in groupable if i != group and columns[i][1] == "cat"]
    use_filter = bool(filters) and coin(rng)
    fcol = draw_from(rng, filters) if use_filter else -1
    while True:  # redraw (same stream) until the filter drops a row and keeps some
        table = _csv_table(rng, columns, draw_int(rng, 30, 70))
        if fcol < 0:
            fval = ""
            break
        fval = draw_from(rng, sorted({row[fcol] for row in table}))
        kept = sum(row[fcol] == fval for row in table)
        if 0 < kept < len(table):
            break
    name, kind, _ = columns[col]
    gname = columns[group][0]
    totals: dict[str, int] = {}
    for row in table:
        if fcol < 0 or row[fcol] == fval:
            totals[row[group]] = totals.get(row[group], 0) + _as_cents(row[col])
    show = (lambda c: str(c // 100)) if kind == "int" else _cents
    lines = [f"{key},{show(totals[key])}" for key in _byte_sorted(list(totals))]
    header = f"{gname},total_{name}"
    with_header = coin(rng)
    if with_header:
        lines.insert(0, header)
    out = f"{name}_by_{gname}.csv"

    condition = f'NR > 1 && ${fcol + 1} == "{fval}"' if fcol >= 0 else "NR > 1"
    if kind == "int":
        emit = 'print k "," t[k]'
    else:
        emit = 'printf "%s,%.2f\\n", k, t[k]'
    program = f"{condition} {{ t[${group + 1}] += ${col + 1} }} END {{ for (k in t) {emit} }}"
    pipeline = f"awk -F, {_q(program)} {path} | LC_ALL=C sort -t, -k1,1"
    if with_header:
        command = f"{{ echo {_q(header)}; {pipeline}; }} > {out}"
    else:
        command = f"{pipeline} > {out}"

    counted = f" (counting only the rows whose `{columns[fcol][0]}` is `{fval}`)" if fcol >= 0 else ""
    first = (
        f"The first line of `{out}` is the header `{header}`; after it come"
        if with_header
        else f"`{out}` has no header line, only"
    )
    number = (
        "the total as a whole number"
        if kind == "int"
        else "the total written with exactly two decimals (e.g. `1234.50`)"
    )
    instruction = (
        f"`{path}` is a comma-separated file (no quoted fields) whose first line is a header. "
        f"Total its `{name}` column per `{gname}`{counted} and write the result to `{out}` "
        f"in the current directory. {first} lines of the form `<{gname}>,<total>`, one for each "
        f"`{gname}` value that has at least one counted row, with {number}, sorted by the "
        f"`{gname}` value {BYTE_ORDER}. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, _csv_text(columns, table)),),
        solution=(f"head -n 3 {path}", command),
        expect=(FileLines(out, tuple(lines)),),
    )


# === rename-files ==========================================================================

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
        f"their names. {SUBMIT}"
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
        f"its name, and each photo keeps its content. {SUBMIT}"
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
        f"file keeps its content. {SUBMIT}"
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
        f"keeps its content. {SUBMIT}"
    )
    glob = f"{prefix}_[0-9][0-9]-[0-9][0-9]-[0-9][0-9][0-9][0-9]{ext}"
    script = r"s/^([a-z]+)_([0-9]{2})-([0-9]{2})-([0-9]{4})/\1_\4-\2-\3/"
    command = (
        f"for f in {folder}/{glob}; do b=${{f#{folder}/}}; "
        f'mv -- "$f" "{folder}/$(printf \'%s\' "$b" | sed -E {_q(script)})"; done'
    )
    return Scenario(
        instruction=instruction,
        files=tuple(shuffled(rng, files)),
        solution=(f"ls -la {folder}", command),
        expect=_rename_check(folder, final),
    )


# === fix-config ============================================================================

# A value spec: ("int", low, high) or ("choice", options) or ("fixed", text).
ValueSpec = tuple
CONF_GROUPS: tuple[tuple[str, tuple[tuple[str, ValueSpec], ...]], ...] = (
    (
        "Network",
        (
            ("listen_address", ("choice", ("0.0.0.0", "127.0.0.1", "10.0.0.5"))),
            ("listen_port", ("int", 1024, 9999)),
            ("max_connections", ("int", 50, 2000)),
            ("max_connections_per_ip", ("int", 5, 60)),
        ),
    ),
    (
        "Timeouts, in seconds",
        (
            ("timeout", ("int", 10, 300)),
            ("read_timeout", ("int", 5, 120)),
            ("write_timeout", ("int", 5, 120)),
            ("keepalive_timeout", ("int", 30, 600)),
        ),
    ),
    (
        "Logging",
        (
            ("log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("log_file", ("fixed", "/var/log/app/server.log")),
            ("log_max_size_mb", ("int", 10, 500)),
        ),
    ),
    (
        "Cache",
        (
            ("cache_enabled", ("choice", ("true", "false"))),
            ("cache_size_mb", ("int", 64, 4096)),
            ("cache_ttl", ("int", 60, 86400)),
        ),
    ),
    (
        "Workers",
        (
            ("worker_threads", ("int", 2, 64)),
            ("worker_queue_size", ("int", 100, 10000)),
            ("retry_count", ("int", 1, 10)),
            ("retry_delay_ms", ("int", 100, 5000)),
        ),
    ),
)


def _value(rng: np.random.Generator, spec: ValueSpec) -> str:
    if spec[0] == "int":
        return str(draw_int(rng, spec[1], spec[2]))
    if spec[0] == "choice":
        return draw_from(rng, spec[1])
    return spec[1]


def _other_value(rng: np.random.Generator, spec: ValueSpec, old: str) -> str:
    """A value of the same kind as `old` but different from it."""
    while True:
        value = _value(rng, spec)
        if value != old:
            return value


def _sed_value(text: str) -> str:
    """`text` safe as a sed replacement with '|' as the delimiter."""
    return text.replace("\\", "\\\\").replace("&", "\\&").replace("|", "\\|")


def fix_config(rng: np.random.Generator, level: int) -> Scenario:
    return _fix_flat(rng) if level == 1 else _fix_ini(rng)


def _fix_flat(rng: np.random.Generator) -> Scenario:
    """Level 1: one key of a flat file. Decoys: a commented-out line for the same key and a
    longer key containing it (`max_connections_per_ip`, `read_timeout`)."""
    env_style = coin(rng)
    path = draw_from(
        rng,
        (".env", "config/production.env", "deploy/app.env")
        if env_style
        else ("config/app.conf", "etc/server.conf", "service.conf"),
    )
    targets = [
        (g, k) for g, (_, keys) in enumerate(CONF_GROUPS) for k, (_, spec) in enumerate(keys) if spec[0] != "fixed"
    ]
    # half the time a key with a look-alike (`timeout` beside `read_timeout`)
    lookalike = [
        (g, k)
        for g, k in targets
        if any(other != CONF_GROUPS[g][1][k][0] and CONF_GROUPS[g][1][k][0] in other for other, _ in CONF_GROUPS[g][1])
    ]
    target_group, target_key = draw_from(rng, lookalike if coin(rng) else targets)
    key_name, spec = CONF_GROUPS[target_group][1][target_key]

    def show(key: str) -> str:
        return key.upper() if env_style else key

    def line(key: str, value: str) -> str:
        return f"{show(key)}={value}" if env_style else f"{key} = {value}"

    lines = [
        f"# {draw_from(rng, ('Server', 'Service', 'Gateway', 'Worker pool'))} settings",
        "",
    ]
    old = new = ""
    for g in shuffled(rng, range(len(CONF_GROUPS))):
        title, keys = CONF_GROUPS[g]
        if g != target_group and not draw_int(rng, 0, 3):
            continue  # leave out some groups, so files differ in shape
        lines.append(f"# {title}")
        for k, (key, kspec) in enumerate(keys):
            related = g == target_group and (key_name in key or key in key_name)
            if not related and not draw_int(rng, 0, 2):
                continue
            value = _value(rng, kspec)
            if g == target_group and k == target_key:
                old = value
                new = _other_value(rng, spec, old)
                lines.append(f"# {line(key, _other_value(rng, spec, old))}  (old default)")
            lines.append(line(key, value))
        lines.append("")
    before = "\n".join(lines)
    after = before.replace(f"\n{line(key_name, old)}\n", f"\n{line(key_name, new)}\n")
    assert after != before
    pattern = re.escape(f"{show(key_name)}{'=' if env_style else ' = '}")
    command = f"sed -i {_q(f's|^{pattern}.*|{_sed_value(line(key_name, new))}|')} {path}"
    instruction = (
        f"In `{path}`, change the active (uncommented) `{show(key_name)}` setting to "
        f"`{new}`: that line must read `{line(key_name, new)}`. Every other line, comments "
        f"and blank lines included, must stay exactly as it is. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, before),),
        solution=(f"grep -n {_q(show(key_name))} {path}", command),
        expect=(FileText(path, after),),
    )


INI_THEMES: tuple[tuple[str, str, tuple[str, ...], tuple[tuple[str, ValueSpec], ...]], ...] = (
    (
        "databases.ini",
        "Database connections",
        ("primary", "replica", "analytics", "reporting", "backup"),
        (
            (
                "host",
                (
                    "choice",
                    ("db1.internal", "db2.internal", "db3.internal", "10.0.4.12"),
                ),
            ),
            ("port", ("int", 5400, 5499)),
            ("replication_port", ("int", 6400, 6499)),
            ("pool_size", ("int", 5, 80)),
            ("connect_timeout", ("int", 2, 30)),
            ("timeout", ("int", 10, 120)),
            ("sslmode", ("choice", ("disable", "prefer", "require", "verify-full"))),
        ),
    ),
    (
        "services.ini",
        "Service settings",
        ("api", "worker", "scheduler", "frontend", "gateway"),
        (
            ("port", ("int", 8000, 8999)),
            ("metrics_port", ("int", 9100, 9199)),
            ("log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("threads", ("int", 1, 32)),
            ("io_threads", ("int", 1, 16)),
            ("max_memory_mb", ("int", 256, 8192)),
        ),
    ),
    (
        "environments.ini",
        "Per-environment settings",
        ("development", "testing", "staging", "production"),
        (
            (
                "db_host",
                ("choice", ("localhost", "db.staging.lan", "db.prod.lan", "10.1.0.7")),
            ),
            (
                "cache_host",
                ("choice", ("localhost", "redis.staging.lan", "redis.prod.lan")),
            ),
            ("debug", ("choice", ("true", "false"))),
            ("log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("sql_log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("replicas", ("int", 1, 12)),
        ),
    ),
)


def _fix_ini(rng: np.random.Generator) -> Scenario:
    """Level 2: a key present in every section changes in one section only: to a given value,
    to another section's value, or by a stated amount."""
    name, title, section_pool, keys = draw_from(rng, INI_THEMES)
    path = draw_from(rng, (name, f"config/{name}", f"deploy/{name}"))
    sections = draw_sample(rng, section_pool, draw_int(rng, 3, len(section_pool)))
    key_index = draw_int(rng, 0, len(keys) - 1)
    key, spec = keys[key_index]
    values: dict[str, dict[str, str]] = {}
    for section in sections:
        values[section] = {}
        for k, (other, ospec) in enumerate(keys):
            if k == key_index or draw_int(rng, 0, 3):
                values[section][other] = _value(rng, ospec)
    target = sections[draw_int(rng, 0, len(sections) - 1)]
    old = values[target][key]
    others = [s for s in sections if s != target and values[s][key] != old]
    mode = draw_int(rng, 0, 2)
    if mode == 1 and others:
        source = draw_from(rng, others)
        new = values[source][key]
        ask = f"set `{key}` in the `[{target}]` section to the value that `{key}` has in the `[{source}]` section"
    elif mode == 2 and spec[0] == "int":
        step = draw_int(rng, 1, 5) * (10 if spec[2] - spec[1] >= 100 else 1)
        new = str(int(old) + step)
        ask = f"increase `{key}` in the `[{target}]` section by {step}"
        source = ""
    else:
        source = ""
        new = _other_value(rng, spec, old)
        ask = f"set `{key}` in the `[{target}]` section to `{new}`"
    # some section besides the target (and the source) differs from the new value, so
    # changing `{key}` everywhere is caught
    bystanders = [s for s in sections if s not in (target, source)]
    if all(values[s][key] == new for s in bystanders):
        values[bystanders[0]][key] = _other_value(rng, spec, new)

    def render(section_values: dict[str, dict[str, str]]) -> str:
        lines = [f"; {title}", ""]
        for section in sections:
            lines.append(f"[{section}]")
            lines += [f"{k} = {v}" for k, v in section_values[section].items()]
            lines.append("")
        return "\n".join(lines)

    before = render(values)
    values[target][key] = new
    after = render(values)
    script = f"/^\\[{target}\\]$/,/^\\[/ s|^{key} = .*|{key} = {_sed_value(new)}|"
    instruction = (
        f"In `{path}`, {ask}. The changed line keeps the `{key} = <value>` form. Other "
        f"sections have their own `{key}`: leave them alone, and keep every other line "
        f"exactly as it is. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, before),),
        solution=(f"cat {path}", f"sed -i {_q(script)} {path}"),
        expect=(FileText(path, after),),
    )


# === make-tree =============================================================================

# A tree theme for level 1: root names, and (folder, file names) choices below the root.
TREE_THEMES: tuple[tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    (
        ("portfolio-site", "shop-frontend", "landing-page", "event-site"),
        (
            ("", ("index.html", "about.html", "README.md")),
            ("css", ("style.css", "reset.css", "print.css")),
            ("js", ("app.js", "menu.js", "analytics.js")),
            ("images/icons", ()),
            ("images/photos", ()),
            ("fonts", ()),
        ),
    ),
    (
        ("python-course", "algebra-course", "history-101", "biology-lab"),
        (
            ("", ("syllabus.md", "grades.csv")),
            ("week-01", ("notes.md", "exercises.md")),
            ("week-02", ("notes.md", "exercises.md")),
            ("week-03", ("notes.md", "quiz.md")),
            ("resources/readings", ("list.md",)),
            ("resources/videos", ()),
        ),
    ),
    (
        ("sales-analysis", "churn-study", "weather-data", "survey-2024"),
        (
            ("", ("README.md", "Makefile")),
            ("data/raw", ("export.csv",)),
            ("data/processed", ()),
            ("notebooks", ("explore.ipynb", "model.ipynb")),
            ("reports/figures", ()),
            ("scripts", ("clean.sh", "fetch.sh")),
        ),
    ),
    (
        ("family-photos", "travel-archive", "photo-library"),
        (
            ("", ("index.txt",)),
            ("2023/summer", ("captions.txt",)),
            ("2023/winter", ("captions.txt",)),
            ("2024/spring", ("captions.txt",)),
            ("2024/autumn", ()),
            ("scans/old-albums", ("todo.txt",)),
        ),
    ),
)


def _ancestors(path: str) -> list[str]:
    """'a/b/c' -> ['a', 'a/b', 'a/b/c']."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def make_tree(rng: np.random.Generator, level: int) -> Scenario:
    return _tree_plain(rng) if level == 1 else _tree_skeleton(rng)


def _tree_plain(rng: np.random.Generator) -> Scenario:
    """Level 1: listed folders and empty files; extra things are not checked."""
    roots, choices = draw_from(rng, TREE_THEMES)
    root = draw_from(rng, roots)
    picked = [choices[0]] + draw_sample(rng, choices[1:], draw_int(rng, 2, 4))
    folders = {root}
    files: set[str] = set()
    for folder, names in picked:
        where = f"{root}/{folder}" if folder else root
        folders.update(_ancestors(where))
        files.update(f"{where}/{name}" for name in draw_sample(rng, names, draw_int(rng, 0, min(2, len(names)))))
    if not files:
        files.add(f"{root}/README.md")
    listing = "\n".join(f"- `{p}/`" for p in _byte_sorted(list(folders)))
    listing += "\n" + "\n".join(f"- `{p}`" for p in _byte_sorted(list(files)))
    instruction = (
        "Create the following folders and files, relative to the current directory. A path "
        "ending in `/` is a folder; every other path is a file that must exist and be empty.\n"
        f"{listing}\n{SUBMIT}"
    )
    leaves = [f for f in folders if not any(o.startswith(f + "/") for o in folders)]
    solution = (
        "mkdir -p " + " ".join(_byte_sorted(leaves)),
        "touch " + " ".join(_byte_sorted(list(files))),
    )
    expect: list[Expectation] = [IsDir(p) for p in _byte_sorted(list(folders))]
    expect += [FileText(p, "") for p in _byte_sorted(list(files))]
    return Scenario(instruction=instruction, files=(), solution=solution, expect=tuple(expect))


# Level 2 skeletons: (root names, entries). An entry is (path, content) for a file, with
# content None for an empty file, or (path/, None) for an empty folder; "{root}", "{pkg}",
# "{title}" are filled in. Entries marked "*" are optional.
SKELETONS: tuple[tuple[tuple[str, ...], tuple[tuple[str, str | None], ...]], ...] = (
    (
        (
            "inventory-service",
            "billing-api",
            "weather-bot",
            "invoice-parser",
            "route-planner",
        ),
        (
            ("README.md", "# {title}"),
            (".gitignore", "__pycache__/"),
            ("pyproject.toml", 'name = "{root}"'),
            ("src/{pkg}/__init__.py", '__version__ = "0.{minor}.0"'),
            ("*src/{pkg}/main.py", "from {pkg} import __version__"),
            ("*src/{pkg}/py.typed", None),
            ("tests/__init__.py", None),
            ("*tests/test_main.py", "def test_version(): assert True"),
            ("*docs/index.md", "# {title} documentation"),
            ("*logs/", None),
        ),
    ),
    (
        ("todo-app", "chat-widget", "price-tracker", "recipe-box"),
        (
            ("package.json", '{{"name": "{root}", "version": "1.{minor}.0"}}'),
            ("README.md", "# {title}"),
            (".gitignore", "node_modules/"),
            ("src/index.js", "console.log('{title} ready');"),
            ("*src/components/Header.js", "export default function Header() {{}}"),
            ("*src/components/Footer.js", "export default function Footer() {{}}"),
            ("public/index.html", "<!doctype html>"),
            ("*public/favicon.ico", None),
            ("*tests/index.test.js", "test('loads', () => {{}});"),
            ("*dist/", None),
        ),
    ),
    (
        ("infra", "deploy-config", "ops-playbooks"),
        (
            ("README.md", "# {title}"),
            ("inventory/hosts.ini", "[web]"),
            ("*inventory/staging.ini", "[staging]"),
            ("roles/web/tasks/main.yml", "- name: Install nginx"),
            ("*roles/web/templates/", None),
            ("roles/db/tasks/main.yml", "- name: Install postgres"),
            ("*roles/db/handlers/main.yml", "- name: Restart postgres"),
            ("group_vars/all.yml", "timezone: UTC"),
            ("*files/.keep", None),
        ),
    ),
)
STRAYS = ("notes.tmp", "old_README.txt", ".DS_Store", "draft.bak")


def _tree_skeleton(rng: np.random.Generator) -> Scenario:
    """Level 2: an indented tree with one-line file contents; the root must hold exactly it
    (a leftover from an earlier attempt may have to go)."""
    roots, entries = draw_from(rng, SKELETONS)
    root = draw_from(rng, roots)
    fill = {
        "root": root,
        "pkg": root.replace("-", "_"),
        "title": root.replace("-", " ").title(),
        "minor": draw_int(rng, 1, 9),
    }
    files: dict[str, str] = {}
    folders: set[str] = {root}
    for raw, content in entries:
        if raw.startswith("*") and coin(rng):
            continue
        rel = raw.lstrip("*").format(**fill)
        path = f"{root}/{rel.rstrip('/')}"
        parent = path if rel.endswith("/") else path.rsplit("/", 1)[0]
        folders.update(_ancestors(parent))
        if not rel.endswith("/"):
            files[path] = "" if content is None else content.format(**fill)
    start: list[Entry] = []
    cleanup: list[str] = []
    if coin(rng):
        stray = f"{root}/{draw_from(rng, STRAYS)}"
        start.append(Entry(stray, "leftover from an earlier attempt\n"))
        readme = f"{root}/README.md"
        start.append(Entry(readme, "Notes for this project go here.\n"))
        cleanup.append(f"rm -f {_q(stray)}")
        preface = f"`{root}/` already exists with leftovers from an earlier attempt; make it match the tree exactly. "
    else:
        preface = ""

    def children(folder: str) -> list[str]:
        names = {p[len(folder) + 1 :].split("/")[0] for p in (*files, *folders) if p.startswith(folder + "/")}
        return _byte_sorted(list(names))

    def render(folder: str, depth: int) -> list[str]:
        out = []
        for name in children(folder):
            path = f"{folder}/{name}"
            if path in folders:
                out.append(f"{'  ' * depth}{name}/")
                out += render(path, depth + 1)
            else:
                shown = files[path] or "(empty)"
                out.append(f"{'  ' * depth}{name} -> {shown}")
        return out

    tree = "\n".join([f"{root}/", *render(root, 1)])
    instruction = (
        f"Create this project skeleton in the current directory. A name ending in `/` is a "
        f"folder and the lines indented under it are inside it; `name -> text` is a file "
        f"holding exactly `text` as its only line, and `-> (empty)` means an empty file. "
        f"{preface}`{root}/` must contain exactly what is listed, nothing else at any depth "
        f"(hidden files count).\n\n```\n{tree}\n```\n\n{SUBMIT}"
    )
    leaves = [f for f in folders if not any(o.startswith(f + "/") for o in folders)]
    writes = []
    for path in _byte_sorted(list(files)):
        text = files[path]
        writes.append(f"printf '%s\\n' {_q(text)} > {_q(path)}" if text else f": > {_q(path)}")
    solution = [
        *cleanup,
        "mkdir -p " + " ".join(_q(f) for f in _byte_sorted(leaves)),
        "\n".join(writes),
    ]
    expect: list[Expectation] = [DirEntries(f, tuple(children(f))) for f in _byte_sorted(list(folders))]
    expect += [FileText(p, files[p]) for p in _byte_sorted(list(files))]
    return Scenario(
        instruction=instruction,
        files=tuple(start),
        solution=tuple(solution),
        expect=tuple(expect),
    )


# === dedupe-sort ===========================================================================

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
        if not adjacent and lines != _byte_sorted(lines):
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
        if _byte_sorted(values) != sorted(values, key=lambda v: (v.casefold(), v)):
            break
    lines = _with_repeats(rng, values, draw_int(rng, 5, 15))
    source = draw_from(rng, (name, f"lists/{name}", f"input/{name}"))
    out = f"unique_{name}"
    instruction = (
        f"`{source}` has {what}, and some lines appear more than once. Write `{out}` in the "
        f"current directory with every distinct line exactly once, sorted {BYTE_ORDER}, one "
        f"per line. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(source, "\n".join(lines) + "\n"),),
        solution=(f"LC_ALL=C sort -u {_q(source)} > {out}",),
        expect=(FileLines(out, tuple(_byte_sorted(values))),),
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
        f"same number are ordered by the first field {BYTE_ORDER}. {SUBMIT}"
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
        unsorted = want not in (_byte_sorted(want), sorted(want, key=str.lower))
        if exact != want and mixed and unsorted and len(lines) > len(exact):
            break
    source = draw_from(rng, ("signups.txt", "newsletter/signups.txt", "export/subscribers.txt"))
    out = "signups_unique.txt"
    instruction = (
        f"`{source}` lists email addresses, one per line. Some people signed up more than "
        f"once, sometimes with different capitalisation (`Ann.Lee@Example.com` and "
        f"`ann.lee@example.com` are the same address). Write `{out}` in the current directory "
        f"keeping only the first occurrence of each address (compared ignoring case), spelled "
        f"exactly as in that first occurrence, in the original order. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(source, "\n".join(lines) + "\n"),),
        solution=(f"awk '!seen[tolower($0)]++' {_q(source)} > {out}",),
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
    want = _byte_sorted(contacts)
    out = "all_contacts.txt"
    instruction = (
        f"Each `.txt` file in `{folder}/` is a contact list: a first line starting with `#` "
        f"(a comment), then one name per line. Merge them into `{out}` in the current "
        f"directory: every distinct name that appears in any of the lists exactly once, no "
        f"comment lines, sorted {BYTE_ORDER}. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        files=tuple(files),
        solution=(f"grep -hv '^#' {folder}/*.txt | LC_ALL=C sort -u > {out}",),
        expect=(FileLines(out, tuple(want)),),
    )


# === replace-text ==========================================================================

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
        f"nothing else. {SUBMIT}"
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
        f"any other extension (including `*{ext}.bak`) must stay exactly as they are. {SUBMIT}"
    )
    script = f"s/\\b{word}\\b/{new}/g"
    return Scenario(
        instruction=instruction,
        files=tuple(files),
        solution=(
            f"grep -rnw {word} {root}",
            f"find {root} -type f -name '*{ext}' -exec sed -i {_q(script)} {{}} +",
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


# --- the families ------------------------------------------------------------------------------


FAMILIES: tuple[Family, ...] = (
    Family(
        "csv-column",
        "Extract and aggregate a CSV column.",
        {
            1: "sum of one numeric column, submitted as the answer",
            2: "total per category (optionally over rows matching a filter), byte-sorted, into a file",
        },
        csv_column,
        tags=("text",),
    ),
    Family(
        "rename-files",
        "Rename files by a rule, keeping their contents.",
        {
            1: "change one extension in one folder (a `.bak` copy keeps its name)",
            2: "a pattern rule: camera photos, lower-case with underscores, or US dates to ISO",
        },
        rename_files,
        tags=("text",),
    ),
    Family(
        "fix-config",
        "Change one config value and nothing else.",
        {
            1: "one key of a flat `key = value` or `KEY=value` file, with decoy lines",
            2: "one key in one INI section, given literally, by another section's value or by an increment",
        },
        fix_config,
        tags=("text",),
    ),
    Family(
        "make-tree",
        "Create a directory structure from a description.",
        {
            1: "listed folders and empty files",
            2: "a project skeleton from an indented tree, files with one-line contents, nothing extra",
        },
        make_tree,
        tags=("text",),
    ),
    Family(
        "dedupe-sort",
        "Deduplicate and sort lines.",
        {
            1: "distinct lines in byte order into a new file",
            2: "numeric sort on a field, case-insensitive first-occurrence dedupe, or merging lists",
        },
        dedupe_sort,
        tags=("text",),
    ),
    Family(
        "replace-text",
        "Replace text across files.",
        {
            1: "a renamed project in every `.txt` file of one folder",
            2: "a whole word in one extension across a tree, other files unchanged",
        },
        replace_text,
        tags=("text",),
    ),
)
