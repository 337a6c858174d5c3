"""File chores for rlenvs/Terminal-v1: count, find, list, summarise, fix modes, unpack.

Six procedural families. A task is a pure function of (family, level, index) through the
`rng` the generator gets, and every one is judged from the host by what it can read in the
workspace (contents, modes, folder listings; `rlenvs.rewards.workspace`) or by the submitted
answer, never by what the agent's commands print. Each level plants the mistakes a hurried
agent makes so that they score 0: near-miss names (`sales.csv.bak`), a folder to leave out,
sizes a few bytes apart, a WARN line that mentions ERROR, tied counts that `sort -rn -k2`
puts in the wrong order, files that must keep their modes, hidden files an `mv dir/*` leaves.

| family | level | asks | judged by |
|---|---|---|---|
| count-files | 1 | files of one folder whose names end in an extension (decoys `.csv.bak`, `_csv.txt`) | submitted count |
| count-files | 2 | files of a tree matching a name pattern, leaving out one folder or all hidden entries | submitted count |
| largest-file | 1 | the largest file of one folder, all sizes within 300 bytes | name in largest.txt, or submitted |
| largest-file | 2 | the largest file of a tree, as a path from the current directory | path in largest.txt, or submitted |
| newer-files | 1 | names of the files modified after a stamp file, in any order | lines of a file |
| newer-files | 2 | paths of the files with one extension modified after a stamp, in a tree, sorted | lines of changed.txt, in order |
| log-summary | 1 | every ERROR line of a log, unchanged and in order | lines of errors.txt |
| log-summary | 2 | ERROR lines per component over several logs, by count then name | lines of error_counts.txt |
| permissions | 1 | mode 755 for the named scripts, nothing else changes | mode and content of every entry |
| permissions | 2 | modes by rule over a tree: directories, scripts, a private folder that wins | mode of every entry |
| archive | 1 | extract a .tar.gz into a folder, keeping or dropping its top folder | contents and listings |
| archive | 2 | restore from a backup .tar.gz only the files a manifest names | contents and listings |
| archive | 3 | unpack the .tar.gz inside a .tar into a folder, leaving nothing else behind | contents and listings |

Example (terminal/count-files/L1/0): "How many files in `exports/` have a name that ends in
`.csv`? Count files only, in `exports/` itself. Reply with `submit <count>`." -> 7. Beside the
seven, `exports/` holds `forecast_2023_10.csv.bak`, `contacts_2024_07.csv~`,
`invoice_2023_10_csv.txt`, `payroll_2024_07.csv.gz` and `.json`, `.txt`, `.xlsx` files.

Reference solutions use only bash, coreutils, findutils, grep, sed, tar and gzip, one command
per turn; the oracle then submits `Scenario.answer`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import TypeVar

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample, shuffled
from rlenvs.core.procedural import Family, Level
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.rewards.workspace import (
    AnswerIs,
    DirEntries,
    Expectation,
    FileLines,
    FileMode,
    FileText,
)

T = TypeVar("T")

DONE = "When you are done, reply with `submit`."
BASE_TIME = 1_704_067_200
"""2024-01-01T00:00:00Z: file times and log timestamps are drawn within the year after it."""
DAY = 86_400

USERS = ("alice", "bob", "carol", "dmitri", "emma", "farah", "george", "hiro", "ines", "jamal", "kate", "luis", "mei",
         "nora", "omar", "priya")  # fmt: skip
WORDS = ("report", "summary", "invoice", "budget", "roadmap", "minutes", "forecast", "inventory", "customers", "orders",
         "sales", "payroll", "audit", "metrics", "backlog", "survey", "contacts", "schedule", "pricing", "expenses")  # fmt: skip
MODULES = ("models", "views", "utils", "parser", "config", "client", "server", "auth", "cache", "storage", "api", "cli",
           "schema", "tasks", "events", "render", "loader", "metrics", "errors", "session", "routes", "billing")  # fmt: skip
PACKAGES = ("shop", "ledger", "atlas", "orbit", "harbor", "pixel", "tracker", "relay")
COMPONENTS = ("auth", "billing", "cache", "db", "gateway", "inventory", "mailer", "payments", "reports", "scheduler",
              "search", "storage", "users", "webhooks")  # fmt: skip
PROSE = ("the", "team", "agreed", "to", "review", "numbers", "weekly", "before", "release", "customer", "feedback", "was",
         "mostly", "positive", "please", "check", "figures", "in", "appendix", "next", "steps", "are", "listed", "below",
         "owner", "due", "date", "budget", "approved", "for", "q3", "migration", "plan")  # fmt: skip
BINARY = frozenset(("jpg", "jpeg", "png", "heic", "mov", "mp4", "pdf", "xlsx", "docx", "gz", "zip", "pyc", "swp"))


# --- drawing -----------------------------------------------------------------------------------


def distinct(rng: np.random.Generator, k: int, make: Callable[[np.random.Generator], str], taken=()) -> list[str]:
    """`k` different values of `make(rng)`, none already in `taken`: two files must never
    share a path, and a name drawn twice would silently shrink a count."""
    seen, out = set(taken), []
    for _ in range(100 * k + 100):
        if len(out) == k:
            return out
        value = make(rng)
        if value not in seen:
            seen.add(value)
            out.append(value)
    if len(out) == k:
        return out
    raise RuntimeError(f"could not draw {k} different names")  # a pool too small for the level: a bug here


# --- contents ----------------------------------------------------------------------------------


def sentence(rng: np.random.Generator) -> str:
    text = " ".join(draw_from(rng, PROSE) for _ in range(draw_int(rng, 5, 11)))
    return text[0].upper() + text[1:] + "."


def extension(name: str) -> str:
    """What follows the last dot of a name ("" for `Makefile` or `.bashrc`)."""
    stem = name.lstrip(".")
    return stem.rsplit(".", 1)[-1] if "." in stem else ""


def content_for(rng: np.random.Generator, name: str) -> str | bytes:
    """A few plausible lines (or bytes) for a file called `name`, going by its extension, so
    that `cat` and `file` show what a person would expect to find there."""
    ext, stem = extension(name), name.lstrip(".").split(".")[0]
    known = well_known(rng, name)
    if known is not None:
        return known
    if ext in BINARY:
        return rng.integers(0, 256, size=draw_int(rng, 64, 600), dtype=np.uint8).tobytes()
    if ext in ("py", "pyi"):
        return f'"""{stem} helpers."""\n\n\ndef {draw_from(rng, MODULES)}_value(x):\n    return x * {draw_int(rng, 2, 99)}\n'
    if ext in ("md", "mdx", "markdown", "rst", "orig", "bak"):
        return f"# {stem.replace('_', ' ').title()}\n\n{sentence(rng)}\n{sentence(rng)}\n"
    if ext in ("csv", "tsv"):
        sep = "," if ext == "csv" else "\t"
        rows = [
            sep.join((str(i), draw_from(rng, USERS), str(draw_int(rng, 10, 9999))))
            for i in range(1, draw_int(rng, 3, 8))
        ]
        return sep.join(("id", "owner", "amount")) + "\n" + "\n".join(rows) + "\n"
    if ext == "json":
        return f'{{"id": {draw_int(rng, 1, 9999)}, "owner": "{draw_from(rng, USERS)}", "active": true}}\n'
    if ext in ("yaml", "yml"):
        return f"name: {stem}\nreplicas: {draw_int(rng, 1, 6)}\nimage: registry.example.com/{stem}:1.{draw_int(rng, 0, 20)}\n"
    if ext in ("toml", "ini", "cfg", "conf", "env"):
        return f"[{stem}]\nowner = {draw_from(rng, USERS)}\nretries = {draw_int(rng, 1, 9)}\n"
    if ext == "sh":
        return f'#!/bin/sh\nset -eu\necho "{stem}: starting"\n'
    if ext == "html":
        return f"<!doctype html>\n<title>{stem.title()}</title>\n<p>{sentence(rng)}</p>\n"
    if ext in ("js", "ts", "css", "map"):
        return f"// {stem}\nexport const {stem.replace('-', '_')}Limit = {draw_int(rng, 1, 500)};\n"
    if ext == "go":
        return f"package {stem}\n\nconst Limit = {draw_int(rng, 1, 500)}\n"
    return f"{sentence(rng)}\n{sentence(rng)}\n"


def well_known(rng: np.random.Generator, name: str) -> str | None:
    """The usual content of a file known by its whole name (dotfiles and the like)."""
    user = draw_from(rng, USERS)
    if name == ".bashrc":
        return f"export EDITOR=vim\nexport HISTSIZE={draw_int(rng, 1, 9)}000\nalias ll='ls -alF'\n"
    if name == ".vimrc":
        return f"set number\nset tabstop={draw_from(rng, (2, 4, 8))}\nsyntax on\n"
    if name == ".gitconfig":
        return f"[user]\n\tname = {user.title()}\n\temail = {user}@example.com\n"
    if name == ".inputrc":
        return f"set completion-ignore-case {draw_from(rng, ('on', 'off'))}\nset bell-style none\n"
    if name == ".tmux.conf":
        return f"set -g history-limit {draw_int(rng, 1, 9)}0000\nset -g mouse on\n"
    if name == ".htaccess":
        return f'ErrorDocument 404 /404.html\nExpiresDefault "access plus {draw_int(rng, 1, 30)} days"\n'
    if name in ("ignore", ".gitignore"):
        return "*.swp\n.DS_Store\n__pycache__/\n"
    if name == ".env.example":
        return f"DATABASE_URL=postgres://localhost/{draw_from(rng, PACKAGES)}\nSECRET_KEY=change-me\n"
    if name == "LICENSE":
        return f"MIT License\n\nCopyright (c) {draw_int(rng, 2015, 2024)} {user.title()}\n"
    return None


def sized_text(rng: np.random.Generator, size: int, width: int) -> str:
    """Exactly `size` bytes of ASCII text in lines of about `width` characters: the line
    count can be made to disagree with the byte count (`wc -l` is not the size)."""
    lines, total = [], 0
    while total < size:
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < width:
            words.append(draw_from(rng, PROSE))
        lines.append(" ".join(words))
        total += len(lines[-1]) + 1
    return "\n".join(lines)[: size - 1] + "\n"


def entries(files: dict[str, str | bytes]) -> tuple[Entry, ...]:
    """The files as workspace entries, in path order."""
    return tuple(Entry(path, content) for path, content in sorted(files.items()))


def name_test(globs: Sequence[str]) -> str:
    """`find`'s test for a name matching any of `globs`."""
    tests = " -o ".join(f"-name '{g}'" for g in globs)
    return f"\\( {tests} \\)" if len(globs) > 1 else tests


# --- count-files -------------------------------------------------------------------------------

FLAT_COUNTS = (
    # folder, extension, other extensions, near misses (appended to a stem), stem
    ("exports", "csv", ("json", "xlsx", "tsv", "txt"), (".csv.bak", ".csv~", "_csv.txt", ".csv.gz"),
     lambda rng: f"{draw_from(rng, WORDS)}_{draw_int(rng, 2021, 2024)}_{draw_int(rng, 1, 12):02d}"),
    ("photos", "jpg", ("png", "jpeg", "heic", "mov"), (".jpg.tmp", ".jpg.xmp", "_jpg.txt"),
     lambda rng: f"IMG_{draw_int(rng, 1000, 9999)}"),
    ("notes", "md", ("txt", "pdf", "html", "mdx"), (".md.bak", ".md.swp", "_md.txt"),
     lambda rng: f"{draw_from(rng, WORDS)}-{draw_from(rng, USERS)}"),
    ("logs", "log", ("gz", "txt", "json"), (".log.1", ".log.gz", "_log.txt"),
     lambda rng: f"{draw_from(rng, COMPONENTS)}-2024-{draw_int(rng, 1, 12):02d}-{draw_int(rng, 1, 28):02d}"),
    ("src", "py", ("pyc", "pyi", "txt", "cfg"), (".py.orig", ".py~", "_py.txt"),
     lambda rng: f"{draw_from(rng, MODULES)}_{draw_from(rng, MODULES)}"),
)  # fmt: skip


def count_flat(rng: np.random.Generator) -> Scenario:
    """Files of one folder by extension; the near misses contain the extension but do not
    end in it, so `ls | grep csv` overcounts and only a match at the end is right."""
    folder, ext, others, near, stem = draw_from(rng, FLAT_COUNTS)
    n_match, n_other, n_near = draw_int(rng, 4, 15), draw_int(rng, 3, 9), draw_int(rng, 2, len(near))
    stems = distinct(rng, n_match + n_other + n_near, stem)
    names = [f"{s}.{ext}" for s in stems[:n_match]]
    names += [f"{s}.{draw_from(rng, others)}" for s in stems[n_match : n_match + n_other]]
    names += [s + suffix for s, suffix in zip(stems[n_match + n_other :], draw_sample(rng, near, n_near), strict=True)]
    files = {f"{folder}/{name}": content_for(rng, name) for name in names}
    return Scenario(
        instruction=(
            f"How many files in `{folder}/` have a name that ends in `.{ext}`? Count files only, in `{folder}/` "
            "itself. Reply with `submit <count>`."
        ),
        files=entries(files),
        solution=(f"find {folder} -maxdepth 1 -type f -name '*.{ext}' | wc -l",),
        expect=(AnswerIs(str(n_match), numeric=True),),
        answer=str(n_match),
    )


def _test_near(rng: np.random.Generator) -> str:
    m = draw_from(rng, MODULES)
    return draw_from(rng, (f"{m}_test.py", f"test_{m}.pyc", f"test_{m}.py.orig", f"testing_{m}.py", "conftest.py"))


def _doc_name(rng: np.random.Generator) -> str:
    return draw_from(rng, (*WORDS, "README", "CHANGELOG", "CONTRIBUTING", "install", "faq"))


def _yaml_name(rng: np.random.Generator) -> str:
    return draw_from(
        rng,
        (
            "docker-compose",
            "values",
            "config",
            "deployment",
            "service",
            "ingress",
            "settings",
            "pipeline",
            "alerts",
            "cron",
        ),
    )


NAME_PATTERNS = (
    # how the instruction says it, globs, a matching name, a near miss, hidden files that match
    ("Python test files (names that start with `test_` and end in `.py`)", ("test_*.py",),
     lambda rng: f"test_{draw_from(rng, MODULES)}.py", _test_near, ()),
    ("Markdown files (names that end in `.md`)", ("*.md",),
     lambda rng: f"{_doc_name(rng)}.md",
     lambda rng: _doc_name(rng) + draw_from(rng, (".md.bak", ".mdx", ".markdown", "_md.txt", ".md.orig")),
     (".notes.md", ".draft.md", ".todo.md")),
    ("YAML files (names that end in `.yaml` or `.yml`)", ("*.yaml", "*.yml"),
     lambda rng: _yaml_name(rng) + draw_from(rng, (".yaml", ".yml")),
     lambda rng: _yaml_name(rng) + draw_from(rng, (".yaml.bak", ".yml.orig", ".yaml.example", ".json", "_yml.txt")),
     (".pre-commit-config.yaml", ".gitlab-ci.yml", ".yamllint.yml")),
)  # fmt: skip

FILLERS = (
    lambda rng: f"{draw_from(rng, MODULES)}.py", lambda rng: f"{draw_from(rng, WORDS)}.txt", lambda rng: f"{draw_from(rng, WORDS)}.json",
    lambda rng: f"{draw_from(rng, MODULES)}.sh", lambda rng: f"{draw_from(rng, WORDS)}.csv", lambda rng: f"{draw_from(rng, MODULES)}.toml",
    lambda rng: draw_from(rng, ("Makefile", "LICENSE", "setup.cfg", "index.html", "README.md", "ci.yml", "app.yaml")),
)  # fmt: skip
"""Ordinary files of a project; those that happen to match the pattern simply count."""

EXCLUDED_FOLDERS = {"vendor": "vendor_patches", "third_party": "third_party_docs", "build": "build_tools",
                    "external": "external_api"}  # fmt: skip
"""A folder to leave out, and a sibling whose name starts the same and that does count."""
LIBRARIES = ("requests", "yaml", "leftpad", "chardet", "six", "attrs")
HIDDEN_FOLDERS = (".cache/pytest", ".github/workflows", ".idea", ".archive/2023", ".venv/lib/site-packages/six",
                  ".git/info")  # fmt: skip


def count_tree(rng: np.random.Generator) -> Scenario:
    """Files of a tree by name pattern, leaving out either one top folder (a sibling with a
    similar name counts) or every hidden file and folder. The count is recomputed from the
    generated paths by the stated rule, not tracked while drawing."""
    words, globs, match, near, hidden_files = draw_from(rng, NAME_PATTERNS)
    root, pkg = draw_from(rng, ("repo", "project", "webapp", "service")), draw_from(rng, PACKAGES)
    normal = ["", *draw_sample(rng, ("src", f"src/{pkg}", f"src/{pkg}/{draw_from(rng, MODULES)}", "tests", "tests/unit",
                                "tests/integration", "docs", "docs/guide", "scripts", "config"), draw_int(rng, 4, 7))]  # fmt: skip
    by_folder, excluded_top = bool(draw_int(rng, 0, 1)), ""
    if by_folder:
        excluded_top, sibling = draw_from(rng, sorted(EXCLUDED_FOLDERS.items()))
        lib = draw_from(rng, LIBRARIES)
        left_out = [excluded_top, f"{excluded_top}/{lib}", f"{excluded_top}/{lib}/tests"]
        normal.append(sibling)
        rule = f"Leave out everything inside `{root}/{excluded_top}/`."
        skip = f"-path {root}/{excluded_top} -prune"
    else:
        left_out = draw_sample(rng, HIDDEN_FOLDERS, 2)
        normal.append(draw_from(rng, ("config.d", "docs/v2.0", "conf.d")))  # a dot inside a name is not hidden
        rule = "Leave out hidden files and everything inside hidden folders (names that start with `.`)."
        skip = "-name '.*' -prune"
    files: dict[str, str | bytes] = {}

    def put(folder: str, make: Callable[[np.random.Generator], str]) -> None:
        path = "/".join(p for p in (root, folder, make(rng)) if p)
        if path not in files:
            files[path] = content_for(rng, path.rsplit("/", 1)[-1])

    for folder in normal:
        for make, low, high in ((match, 0, 2), (draw_from(rng, FILLERS), 1, 2), (near, 0, 1)):
            for _ in range(draw_int(rng, low, high)):
                put(folder, make)
    for folder in left_out:
        for _ in range(draw_int(rng, 1, 2)):
            put(folder, match)
        put(folder, draw_from(rng, FILLERS))
    if by_folder:
        put(normal[-1], match)
    elif hidden_files:
        for name in draw_sample(rng, hidden_files, draw_int(rng, 1, 2)):
            put(draw_from(rng, normal), lambda _, name=name: name)
    for folder in draw_sample(rng, normal, 3):
        put(folder, match)
        put(folder, near)

    def counted(path: str) -> bool:
        parts = path.split("/")[1:]
        if not any(fnmatchcase(parts[-1], g) for g in globs):
            return False
        return parts[0] != excluded_top if by_folder else not any(p.startswith(".") for p in parts)

    count = sum(counted(path) for path in files)
    return Scenario(
        instruction=(
            f"How many {words} are there under `{root}/`, in all its subfolders? Count regular files only. {rule} "
            "Reply with `submit <count>`."
        ),
        files=entries(files),
        solution=(f"find {root} {skip} -o -type f {name_test(globs)} -print | wc -l",),
        expect=(AnswerIs(str(count), numeric=True),),
        answer=str(count),
    )


# --- largest-file ------------------------------------------------------------------------------


def close_sizes(rng: np.random.Generator, n: int, low: int, high: int, spread: int) -> list[int]:
    """`n` different sizes within `spread` bytes of each other: no ties, and `du`, which
    counts blocks, ties most of them."""
    base = draw_int(rng, low, high)
    return [base + int(offset) for offset in rng.permutation(spread)[:n]]


def largest_flat(rng: np.random.Generator) -> Scenario:
    """The largest file of one folder. The runner-up is written in short lines, so it has the
    most lines; the largest in long ones, so it has the fewest."""
    folder = draw_from(rng, ("downloads", "reports", "exports", "backups"))
    n = draw_int(rng, 6, 11)
    names = distinct(
        rng, n, lambda r: f"{draw_from(r, WORDS)}_{draw_int(r, 2019, 2024)}.{draw_from(r, ('csv', 'txt', 'log', 'md'))}"
    )
    sizes = close_sizes(rng, n, 2000, 7000, 300)
    order = sorted(range(n), key=lambda i: sizes[i])
    widths = {order[-1]: draw_int(rng, 90, 130), order[-2]: draw_int(rng, 10, 16)}
    files = {
        f"{folder}/{name}": sized_text(rng, sizes[i], widths.get(i, draw_int(rng, 30, 70)))
        for i, name in enumerate(names)
    }
    answer = names[order[-1]]
    return _largest_scenario(
        rng,
        f"Which file in `{folder}/` is the largest (the most bytes)?",
        f"just its name, without the folder (like `data.csv`, not `{folder}/data.csv`)",
        answer,
        files,
        f"ls -S {folder} | head -n 1",
    )


LARGEST_TREES = {
    "media": (("2022/holiday", "2023/garden", "2023/wedding", "2024/trip", "2024/trip/raw", "scans", "scans/receipts",
               "videos"), lambda rng: draw_from(rng, (f"IMG_{draw_int(rng, 1000, 9999)}.jpg", f"clip_{draw_int(rng, 100, 999)}.mp4",
                                                 f"scan_{draw_int(rng, 10, 99)}.pdf"))),
    "project": (("src", "src/app", "src/app/static", "assets", "assets/img", "docs", "data", "data/raw"),
                lambda rng: draw_from(rng, (f"{draw_from(rng, MODULES)}.py", f"{draw_from(rng, WORDS)}.csv", f"logo_{draw_int(rng, 1, 99)}.png",
                                       f"{draw_from(rng, WORDS)}.md"))),
    "shared": (("finance", "finance/2024", "hr", "hr/policies", "marketing", "marketing/campaigns", "legal"),
               lambda rng: f"{draw_from(rng, WORDS)}_{draw_int(rng, 2019, 2024)}.{draw_from(rng, ('pdf', 'xlsx', 'docx'))}"),
}  # fmt: skip


def largest_tree(rng: np.random.Generator) -> Scenario:
    """The largest file anywhere in a tree, as a path. It always sits in a subfolder, so the
    largest file of the top folder alone is a different one."""
    root = draw_from(rng, sorted(LARGEST_TREES))
    folders, make = LARGEST_TREES[root]
    chosen = draw_sample(rng, folders, draw_int(rng, 4, 6))
    n = draw_int(rng, 12, 18)
    places = ["", ""] + [draw_from(rng, chosen) for _ in range(n - 2)]
    paths: list[str] = []
    for place in places:
        prefix = f"{root}/{place}/" if place else f"{root}/"
        paths.append(
            prefix + distinct(rng, 1, make, {p.removeprefix(prefix) for p in paths if p.startswith(prefix)})[0]
        )
    sizes = close_sizes(rng, n, 1500, 4500, 600)
    top = max(range(n), key=lambda i: sizes[i])
    nested = draw_from(rng, list(range(2, n)))
    sizes[top], sizes[nested] = sizes[nested], sizes[top]
    files = {
        path: (
            rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
            if extension(path) in BINARY
            else sized_text(rng, size, draw_int(rng, 20, 100))
        )
        for path, size in zip(paths, sizes, strict=True)
    }
    return _largest_scenario(
        rng,
        f"Which file is the largest (the most bytes) anywhere under `{root}/`, subfolders included?",
        f"its path relative to the current directory, without a leading `./` (like `{root}/folder/file.ext`)",
        paths[nested],
        files,
        f"find {root} -type f -printf '%s %p\\n' | sort -n | tail -n 1 | cut -d' ' -f2",
    )


def _largest_scenario(
    rng: np.random.Generator, question: str, form: str, answer: str, files: dict, command: str
) -> Scenario:
    """Half the tasks want the answer in largest.txt, half submitted."""
    if draw_int(rng, 0, 1):
        return Scenario(
            instruction=f"{question} Write {form} to `largest.txt`. {DONE}",
            files=entries(files),
            solution=(f"{command} > largest.txt",),
            expect=(FileText("largest.txt", answer),),
        )
    return Scenario(
        instruction=f"{question} Reply with `submit <answer>`, giving {form}.",
        files=entries(files),
        solution=(command,),
        expect=(AnswerIs(answer),),
        answer=answer,
    )


# --- newer-files -------------------------------------------------------------------------------


def file_times(rng: np.random.Generator, stamp: float, newer: int, older: int) -> tuple[list[float], list[float]]:
    """Times after and before `stamp`; one of each within two minutes of it, closer than
    `ls -l`'s minutes show."""
    after = [stamp + draw_int(rng, 5, 120)] + [stamp + draw_int(rng, 600, 5 * DAY) for _ in range(newer - 1)]
    before = [stamp - draw_int(rng, 5, 120)] + [stamp - draw_int(rng, 3600, 60 * DAY) for _ in range(older - 1)]
    return after, before


def newer_flat(rng: np.random.Generator) -> Scenario:
    """Names of the files newer than a stamp, any order. The folder itself is newer too (it is
    made when the workspace is), so a `find` without `-type f` lists it."""
    folder = draw_from(rng, ("uploads", "inbox", "photos", "shared"))
    stamp = draw_from(rng, ("last_backup.stamp", "last_sync.marker", ".last_run"))
    out = draw_from(rng, ("to_backup.txt", "changed.txt", "new_files.txt"))
    newer, older = draw_int(rng, 2, 7), draw_int(rng, 3, 8)

    def name(r: np.random.Generator) -> str:
        kind = draw_int(r, 0, 2)
        if kind == 0:
            return f"IMG_{draw_int(r, 1000, 9999)}.jpg"
        return f"{draw_from(r, WORDS)}_{draw_from(r, USERS)}.{draw_from(r, ('pdf', 'txt', 'csv', 'docx'))}"

    names = distinct(rng, newer + older, name)
    time = float(BASE_TIME + draw_int(rng, 0, 300 * DAY))
    after, before = file_times(rng, time, newer, older)
    times = dict(zip(names, after + before, strict=True))
    order = [names[int(i)] for i in rng.permutation(len(names))]
    files = [Entry(f"{folder}/{n}", content_for(rng, n), mtime=times[n]) for n in order]
    files.append(Entry(stamp, "", mtime=time))
    return Scenario(
        instruction=(
            f"`{stamp}` was touched when the last backup ran. Write the names of the files in `{folder}/` that were "
            f"modified more recently than `{stamp}` to `{out}`: one file name per line, just the name (like "
            f"`notes.txt`, not `{folder}/notes.txt`), in any order. {DONE}"
        ),
        files=tuple(files),
        solution=(f"find {folder} -type f -newer {stamp} | sed 's|.*/||' > {out}",),
        expect=(FileLines(out, tuple(names[:newer]), ordered=False),),
    )


LANGUAGES = {
    # extension, folders, other extensions that change with it, names
    "py": (("src/{pkg}", "src/{pkg}/api", "src/{pkg}/db", "tests", "scripts"), ("pyc", "md", "txt", "cfg"), MODULES),
    "ts": (("src", "src/components", "src/lib", "test", "scripts"), ("js", "json", "css", "md"),
           ("app", "router", "store", "button", "modal", "api-client", "format", "hooks", "theme", "auth")),
    "go": (("cmd/{pkg}", "internal/{pkg}", "internal/store", "pkg/httpx", "tools"), ("md", "txt", "yaml", "sum"),
           ("main", "server", "handler", "store", "cache", "config", "metrics", "client", "retry", "auth")),
}  # fmt: skip


def newer_tree(rng: np.random.Generator) -> Scenario:
    """Paths of the files of one extension newer than a stamp, in a tree, sorted. Files of
    other extensions changed too (compiled output, notes), and one old file of the extension
    sits just before the stamp."""
    ext = draw_from(rng, sorted(LANGUAGES))
    folders, others, stems = LANGUAGES[ext]
    root, pkg = draw_from(rng, ("project", "service", "backend")), draw_from(rng, PACKAGES)
    folders = [f.format(pkg=pkg) for f in draw_sample(rng, folders, draw_int(rng, 3, len(folders)))]
    newer, older, other_newer, other_older = (
        draw_int(rng, 3, 7),
        draw_int(rng, 3, 6),
        draw_int(rng, 2, 4),
        draw_int(rng, 1, 3),
    )
    n_target = newer + older
    targets = distinct(rng, n_target, lambda r: f"{root}/{draw_from(r, folders)}/{draw_from(r, stems)}.{ext}")
    decoys = distinct(
        rng,
        other_newer + other_older,
        lambda r: f"{root}/{draw_from(r, folders)}/{draw_from(r, stems)}.{draw_from(r, others)}",
    )
    time = float(BASE_TIME + draw_int(rng, 0, 300 * DAY))
    after, before = file_times(rng, time, newer, older)
    decoy_after, decoy_before = file_times(rng, time, other_newer, other_older)
    stamp = f"{root}/.last_build"
    files = [
        Entry(p, content_for(rng, p.rsplit("/", 1)[-1]), mtime=t) for p, t in zip(targets, after + before, strict=True)
    ]
    files += [
        Entry(p, content_for(rng, p.rsplit("/", 1)[-1]), mtime=t)
        for p, t in zip(decoys, decoy_after + decoy_before, strict=True)
    ]
    files.append(Entry(stamp, "", mtime=time))
    return Scenario(
        instruction=(
            f"Which `.{ext}` files under `{root}/` (subfolders included) were modified after `{stamp}`? Write their "
            f"paths relative to the current directory, without a leading `./` (like `{root}/folder/name.{ext}`), one per "
            f"line, sorted in byte order (as `LC_ALL=C sort` sorts them), to `changed.txt`. Only files whose names end "
            f"in `.{ext}` count. {DONE}"
        ),
        files=tuple(sorted(files, key=lambda e: e.path)),
        solution=(f"find {root} -type f -name '*.{ext}' -newer {stamp} | LC_ALL=C sort > changed.txt",),
        expect=(FileLines("changed.txt", tuple(sorted(targets[:newer]))),),
    )


# --- log-summary -------------------------------------------------------------------------------

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


# --- permissions -------------------------------------------------------------------------------

SCRIPTS = ("deploy", "backup", "rotate_logs", "healthcheck", "migrate_db", "sync_assets", "cleanup", "build", "release",
           "restart_workers", "seed_data", "renew_certs")  # fmt: skip


def _script(rng: np.random.Generator, name: str) -> str:
    return f'#!/bin/sh\n# {name.removesuffix(".sh").replace("_", " ")}\nset -eu\necho "{name}: done"\n'


def executable_scripts(rng: np.random.Generator) -> Scenario:
    """Mode 755 for the named scripts only. Other scripts in the folder are not named (one
    already 755, one owner-only 700), a sourced library stays 644, and a named script may
    start at 640 so that `chmod +x` (751) is not 755."""
    folder = draw_from(rng, ("scripts", "bin", "tools", "ops"))
    names = [f"{s}.sh" for s in draw_sample(rng, SCRIPTS, draw_int(rng, 5, 8))]
    wanted = names[: draw_int(rng, 2, 3)]
    modes = {name: draw_from(rng, (0o644, 0o644, 0o640, 0o600)) for name in wanted}
    modes[names[-1]] = 0o755
    modes[names[-2]] = 0o700
    for name in names[len(wanted) : -2]:
        modes[name] = draw_from(rng, (0o644, 0o664))
    files: dict[str, tuple[str, int]] = {f"{folder}/{n}": (_script(rng, n), modes[n]) for n in names}
    files[f"{folder}/lib/common.sh"] = ('# sourced by the other scripts\nlog() { echo "$(date) $*"; }\n', 0o644)
    files[f"{folder}/README.md"] = (f"# {folder}\n\n{sentence(rng)}\n", 0o644)
    files[f"{folder}/credentials.env"] = (f"API_TOKEN={rng.integers(16**8, 16**9):x}\n", 0o600)
    final = {path: (0o755 if path.rsplit("/", 1)[-1] in wanted else mode) for path, (_, mode) in files.items()}
    listed = ", ".join(f"`{folder}/{n}`" for n in wanted)
    dirs = (folder, f"{folder}/lib")
    workspace = [Entry(d, is_dir=True, mode=0o755) for d in dirs]
    workspace += [Entry(p, text, mode=mode) for p, (text, mode) in sorted(files.items())]
    expect: list[Expectation] = [FileMode(d, 0o755) for d in dirs]
    expect += [FileMode(p, final[p]) for p in sorted(files)]
    expect += [FileText(p, text) for p, (text, _) in sorted(files.items())]
    return Scenario(
        instruction=(
            f"Make these scripts executable with mode 755 (rwxr-xr-x): {listed}. Change nothing else: every other file "
            f"and folder keeps its mode and content. {DONE}"
        ),
        files=tuple(workspace),
        solution=(f"chmod 755 {' '.join(f'{folder}/{n}' for n in wanted)}",),
        expect=tuple(expect),
    )


PRIVATE_FOLDERS = {"secrets": ("db_password.txt", "api_token", "tls/server.key", "tls/server.crt"),
                   "keys": ("deploy_ed25519", "deploy_ed25519.pub", "gpg/release.asc"),
                   "credentials": ("aws.ini", "smtp.env", "oauth/client_secret.json")}  # fmt: skip
PLAIN_FILES = ("nginx.conf", "app.yml", "README.md", "hosts.ini", "Dockerfile", "logrotate.conf", "crontab.txt")


def mode_rules(rng: np.random.Generator) -> Scenario:
    """Modes by rule over a tree: directories, scripts, and a private folder whose rule wins
    over the scripts' (it holds a script). Every other file keeps a mode of its own, and
    files outside the tree must not change: `chmod -R` of anything fails."""
    root = draw_from(rng, ("deploy", "server", "infra", "release"))
    private = draw_from(rng, sorted(PRIVATE_FOLDERS))
    dir_mode, script_mode, private_mode = (
        draw_from(rng, (0o700, 0o750)),
        draw_from(rng, (0o750, 0o755, 0o700)),
        draw_from(rng, (0o600, 0o400)),
    )
    subfolders = draw_sample(rng, ("bin", "hooks", "conf", "conf/nginx", "cron"), draw_int(rng, 2, 4))
    files: dict[str, int] = {}
    for folder in ["", *subfolders]:
        prefix = f"{root}/{folder}/" if folder else f"{root}/"
        for name in draw_sample(rng, SCRIPTS, draw_int(rng, 1, 2)):
            files[f"{prefix}{name}.sh"] = draw_from(rng, (0o644, 0o755, 0o775, 0o700))
        for name in draw_sample(rng, PLAIN_FILES, draw_int(rng, 0, 2)):
            files[f"{prefix}{name}"] = draw_from(rng, (0o644, 0o664, 0o640, 0o444, 0o755))
    for name in draw_sample(rng, PRIVATE_FOLDERS[private], draw_int(rng, 2, len(PRIVATE_FOLDERS[private]))):
        files[f"{root}/{private}/{name}"] = draw_from(rng, (0o644, 0o640, 0o664))
    files[f"{root}/{private}/rotate.sh"] = draw_from(rng, (0o755, 0o644))
    outside = {"README.md": 0o644, "notes/todo.txt": 0o644, "notes/run.sh": 0o755}
    dirs = sorted({p.rsplit("/", 1)[0] for p in files} | {root} | {p.rsplit("/", 1)[0] for p in outside if "/" in p})
    dirs = sorted({"/".join(d.split("/")[:i]) for d in dirs for i in range(1, d.count("/") + 2)})

    def wanted(path: str, mode: int) -> int:
        if path.startswith(f"{root}/{private}/"):
            return private_mode
        return script_mode if path.endswith(".sh") else mode

    all_files = {**files, **outside}
    final = (
        {p: wanted(p, m) for p, m in files.items()}
        | outside
        | {d: dir_mode if d.split("/")[0] == root else 0o755 for d in dirs}
    )
    workspace = [Entry(d, is_dir=True, mode=0o755) for d in dirs]
    workspace += [Entry(p, content_for(rng, p.rsplit("/", 1)[-1]), mode=m) for p, m in sorted(all_files.items())]
    return Scenario(
        instruction=(
            f"Fix the permissions under `{root}/` by these rules: (1) every directory under `{root}/`, `{root}` itself "
            f"included, gets mode {dir_mode:o}; (2) every file whose name ends in `.sh` gets {script_mode:o}; (3) every "
            f"file anywhere under `{root}/{private}/` gets {private_mode:o}, and this rule wins over rule 2; (4) every "
            f"other file keeps its current mode. Modes are octal. Change nothing outside `{root}/`. {DONE}"
        ),
        files=tuple(workspace),
        solution=(
            f"find {root} -type d -exec chmod {dir_mode:o} {{}} +",
            f"find {root} -type f -name '*.sh' -exec chmod {script_mode:o} {{}} +",
            f"find {root}/{private} -type f -exec chmod {private_mode:o} {{}} +",
        ),
        expect=tuple(FileMode(p, m) for p, m in sorted(final.items())),
    )


# --- archive -----------------------------------------------------------------------------------

STAGE = ".stage"
"""Where a setup script builds an archive from the task's files; it removes the folder after."""


def _site(rng: np.random.Generator) -> list[str]:
    pages = [f"blog/{w}.html" for w in draw_sample(rng, WORDS, draw_int(rng, 1, 3))]
    return [".htaccess", "index.html", "about.html", "css/style.css", "js/app.js", *pages]


def _project(rng: np.random.Generator) -> list[str]:
    package = draw_from(rng, PACKAGES)
    modules = [f"src/{package}/{m}.py" for m in draw_sample(rng, MODULES, draw_int(rng, 2, 3))]
    return [
        ".gitignore",
        "README.md",
        "LICENSE",
        "pyproject.toml",
        *modules,
        f"tests/test_{draw_from(rng, MODULES)}.py",
    ]


def _dotfiles(rng: np.random.Generator) -> list[str]:
    return [
        ".bashrc",
        ".vimrc",
        ".gitconfig",
        "install.sh",
        ".config/git/ignore",
        *draw_sample(rng, (".tmux.conf", ".inputrc"), 1),
    ]


def _handbook(rng: np.random.Generator) -> list[str]:
    return ["README.md", *(f"chapters/{i:02d}-{w}.md" for i, w in enumerate(draw_sample(rng, WORDS, draw_int(rng, 2, 4)), 1)),
            "images/.keep", "glossary.md", ".gitignore"]  # fmt: skip


ARCHIVES = (
    ("site-backup.tar.gz", "site", _site),
    ("project-v{v}.tar.gz", "project-{v}", _project),
    ("dotfiles.tar.gz", "dotfiles", _dotfiles),
    ("handbook-{v}.tar.gz", "handbook", _handbook),
)
"""Archive name, its top folder, its files; each holds a hidden file at its top (`mv top/* .`
leaves it behind)."""


def listing_expectations(folder: str, files: dict[str, str | bytes]) -> list[Expectation]:
    """Each file's content, and the exact listing of `folder` and of every folder below it, so
    that a missing or an extra file (or a leftover top folder) fails."""
    children: dict[str, set[str]] = {folder: set()}
    for path in files:
        parts = path.split("/")
        for i in range(1, len(parts)):
            children.setdefault("/".join(parts[:i]), set()).add(parts[i])
    found: list[Expectation] = [DirEntries(d, tuple(sorted(names))) for d, names in sorted(children.items())]
    for path, text in sorted(files.items()):
        if not isinstance(text, str):
            raise TypeError(f"{path}: an archived file is checked as text, so it must be text")
        found.append(FileText(path, text))
    return found


def version(rng: np.random.Generator) -> str:
    return f"{draw_int(rng, 1, 4)}.{draw_int(rng, 0, 12)}.{draw_int(rng, 0, 9)}"


def extract_archive(rng: np.random.Generator) -> Scenario:
    """Extract a .tar.gz into a new folder, either as it is (`restored/site/...`) or with its
    top folder dropped (`restored/...`)."""
    archive, top, make = draw_from(rng, ARCHIVES)
    v = version(rng)
    archive, top = archive.format(v=v), top.format(v=v)
    target = draw_from(rng, ("restored", "unpacked", "recovered"))
    contents = {p: (content_for(rng, p.rsplit("/", 1)[-1]) if not p.endswith(".keep") else "") for p in make(rng)}
    strip = bool(draw_int(rng, 0, 1))
    example = min(contents, key=lambda p: (p.count("/") == 0, p))
    if strip:
        layout = (
            f"drop the archive's top folder `{top}/`: its contents go directly into `{target}/`, so that "
            f"`{top}/{example}` ends up as `{target}/{example}`"
        )
        placed = {f"{target}/{p}": c for p, c in contents.items()}
        command = f"mkdir -p {target} && tar -xzf {archive} -C {target} --strip-components=1"
    else:
        layout = f"keep the paths as they are in the archive, so that `{top}/{example}` ends up as `{target}/{top}/{example}`"
        placed = {f"{target}/{top}/{p}": c for p, c in contents.items()}
        command = f"mkdir -p {target} && tar -xzf {archive} -C {target}"
    return Scenario(
        instruction=(
            f"Extract the archive `{archive}` into a new folder `{target}/`; {layout}. Everything in the archive, hidden "
            f"files included, must end up in `{target}/`, and nothing else. {DONE}"
        ),
        files=tuple(Entry(f"{STAGE}/{top}/{p}", c) for p, c in sorted(contents.items())),
        setup_script=f"tar -czf {archive} -C {STAGE} {top} && rm -rf {STAGE}",
        solution=(command,),
        expect=tuple(listing_expectations(target, placed)),
    )


def _home(rng: np.random.Generator, user: str) -> list[str]:
    notes = [f"home/{user}/notes/{n}" for n in draw_sample(rng, ("todo.md", "ideas.md", "meeting.md", "reading.md"), 2)]
    docs = [f"home/{user}/Documents/{w}_{draw_int(rng, 2022, 2024)}.txt" for w in draw_sample(rng, WORDS, 2)]
    return [f"home/{user}/.bashrc", *notes, *docs]


def restore_from_manifest(rng: np.random.Generator) -> Scenario:
    """Extract only the files a manifest names from a backup, keeping their paths. The same
    note names recur in every user's home and `.bak` copies sit beside some files, so a
    name-only match (`--wildcards '*todo.md*'`) takes too much."""
    users = draw_sample(rng, USERS, draw_int(rng, 2, 3))
    app = draw_from(rng, ("nginx", "postgres", "cron", "ssh"))
    paths = [p for user in users for p in _home(rng, user)]
    paths += [f"etc/{app}/{n}" for n in draw_sample(rng, ("main.conf", "users.conf", "limits.conf", "tls.conf"), 2)]
    contents = {p: content_for(rng, p.rsplit("/", 1)[-1]) for p in paths}
    chosen = draw_sample(rng, paths, draw_int(rng, 3, 6))
    for p in draw_sample(rng, chosen, 2):
        contents[p + ".bak"] = content_for(rng, p.rsplit("/", 1)[-1])
    archive = f"backup-2024-{draw_int(rng, 1, 12):02d}-{draw_int(rng, 1, 28):02d}.tar.gz"
    tops = sorted({p.split("/")[0] for p in contents})
    return Scenario(
        instruction=(
            f"`{archive}` is a backup. Restore only the files listed in `manifest.txt` (one path inside the archive per "
            f"line) into a new folder `restore/`, keeping their paths: `{chosen[0]}` must end up as "
            f"`restore/{chosen[0]}`. Nothing that is not listed may end up in `restore/`. {DONE}"
        ),
        files=(
            Entry("manifest.txt", "\n".join(chosen) + "\n"),
            *(Entry(f"{STAGE}/{p}", c) for p, c in sorted(contents.items())),
        ),
        setup_script=f"tar -czf {archive} -C {STAGE} {' '.join(tops)} && rm -rf {STAGE}",
        solution=(f"mkdir -p restore && tar -xzf {archive} -C restore -T manifest.txt",),
        expect=tuple(listing_expectations("restore", {f"restore/{p}": contents[p] for p in chosen})),
    )


def _service(rng: np.random.Generator) -> list[str]:
    modules = [f"lib/{m}.py" for m in draw_sample(rng, MODULES, draw_int(rng, 2, 4))]
    return ["README.md", "VERSION", "bin/start.sh", "bin/stop.sh", f"conf/{draw_from(rng, ('app', 'server'))}.ini", *modules,
            ".env.example"]  # fmt: skip


def nested_archive(rng: np.random.Generator) -> Scenario:
    """Unpack the .tar.gz inside a .tar into a folder, dropping its top folder, and leave
    nothing else behind: the current directory's listing is checked too."""
    name, v = draw_from(rng, ("webshop", "ledger", "tracker", "relay")), version(rng)
    outer, inner_top, target = (
        draw_from(rng, ("delivery.tar", "release.tar", "bundle.tar")),
        f"{name}-{v}",
        draw_from(rng, ("app", name)),
    )
    wrapper = outer.removesuffix(".tar")
    contents = {p: content_for(rng, p.rsplit("/", 1)[-1]) for p in _service(rng)}
    contents["VERSION"] = f"{v}\n"
    inner = f"{wrapper}/{inner_top}.tar.gz"
    extras = {
        f"{wrapper}/RELEASE_NOTES.txt": f"{name} {v}\n\n{sentence(rng)}\n",
        f"{wrapper}/INSTALL.txt": f"{sentence(rng)}\n",
    }
    setup = (
        f"mkdir -p {STAGE}/out/{wrapper} && tar -czf {STAGE}/out/{inner} -C {STAGE}/src {inner_top} && "
        f"tar -cf {outer} -C {STAGE}/out {wrapper} && rm -rf {STAGE}"
    )
    return Scenario(
        instruction=(
            f"`{outer}` holds a compressed archive `{inner}`, whose files are in a top folder `{inner_top}/`. Unpack that "
            f"inner archive so that the contents of `{inner_top}/` end up directly in a new folder `{target}/` (so "
            f"`{inner_top}/bin/start.sh` becomes `{target}/bin/start.sh`; hidden files included). When you are done the "
            f"current directory must hold only `{outer}` and `{target}/`: remove anything else you unpacked on the way. "
            f"{DONE}"
        ),
        files=(
            *(Entry(f"{STAGE}/src/{inner_top}/{p}", c) for p, c in sorted(contents.items())),
            *(Entry(f"{STAGE}/out/{p}", c) for p, c in sorted(extras.items())),
        ),
        setup_script=setup,
        solution=(f"mkdir -p {target} && tar -xOf {outer} {inner} | tar -xzf - -C {target} --strip-components=1",),
        expect=(
            DirEntries(".", tuple(sorted((outer, target)))),
            *listing_expectations(target, {f"{target}/{p}": c for p, c in contents.items()}),
        ),
    )


# --- the families ------------------------------------------------------------------------------


FAMILIES: tuple[Family, ...] = (
    Family.of_levels(
        "count-files",
        "Count the files that match a name pattern and submit the count.",
        {
            1: Level("files of one folder by extension, with near-miss names", count_flat),
            2: Level("files of a tree by name pattern, leaving out one folder or everything hidden", count_tree),
        },
        tags=("files", "find", "answer"),
    ),
    Family.of_levels(
        "largest-file",
        "Find the largest file and write its name or path to largest.txt, or submit it.",
        {
            1: Level("the largest file of one folder, by name", largest_flat),
            2: Level("the largest file of a tree, by relative path", largest_tree),
        },
        tags=("files", "find", "sizes"),
    ),
    Family.of_levels(
        "newer-files",
        "List the files modified after a reference file.",
        {
            1: Level("names of the newer files of one folder, in any order", newer_flat),
            2: Level("sorted paths of the newer files of one extension in a tree", newer_tree),
        },
        tags=("files", "find", "mtime"),
    ),
    Family.of_levels(
        "log-summary",
        "Pick the ERROR lines out of logs and write a summary file.",
        {
            1: Level("copy every ERROR line of a log, in order", errors_of_log),
            2: Level(
                "count ERROR lines per component over several logs, sorted by count then name", errors_per_component
            ),
        },
        tags=("text", "grep", "sed", "sort"),
    ),
    Family.of_levels(
        "permissions",
        "Set file and folder modes exactly, changing nothing else.",
        {
            1: Level("mode 755 for the named scripts only", executable_scripts),
            2: Level("modes by rule over a tree: directories, scripts, a private folder", mode_rules),
        },
        tags=("files", "chmod"),
    ),
    Family.of_levels(
        "archive",
        "Unpack tar and gzip archives into the layout asked for.",
        {
            1: Level("extract a .tar.gz into a folder, keeping or dropping its top folder", extract_archive),
            2: Level("restore only the files a manifest lists from a backup .tar.gz", restore_from_manifest),
            3: Level("unpack the .tar.gz inside a .tar into a folder, leaving nothing else", nested_archive),
        },
        tags=("files", "tar", "gzip"),
    ),
)
