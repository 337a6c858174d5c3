"""count-files: count the files that match a name pattern, and submit the count.

| level | asks | judged by |
|---|---|---|
| 1 | files of one folder whose names end in an extension (decoys `.csv.bak`, `_csv.txt`) | submitted count |
| 2 | files of a tree matching a name pattern, leaving out one folder or all hidden entries | submitted count |

Why the verdict holds: only the submitted answer is judged, never what the agent's commands
print, and each level plants the names a hurried count gets wrong. At level 1 the near misses
contain the extension but do not end in it, so `ls | grep csv` overcounts and only a match at
the end is right. At level 2 a sibling of the folder to leave out has a similar name and does
count, or hidden files match the pattern; the count is recomputed from the generated paths by
the stated rule, not tracked while drawing.

Example (terminal/count-files/L1/0): "How many files in `exports/` have a name that ends in
`.csv`? Count files only, in `exports/` itself. Reply with `submit <count>`." -> 7. Beside the
seven, `exports/` holds `forecast_2023_10.csv.bak`, `contacts_2024_07.csv~`,
`invoice_2023_10_csv.txt`, `payroll_2024_07.csv.gz` and `.json`, `.txt`, `.xlsx` files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family, Level
from rlenvs.envs.terminal.families.contents import content_for
from rlenvs.envs.terminal.families.paths import distinct, entries
from rlenvs.envs.terminal.families.words import COMPONENTS, MODULES, PACKAGES, USERS, WORDS
from rlenvs.envs.terminal.tasks import Scenario
from rlenvs.envs.terminal.workspace import AnswerIs


def name_test(globs: Sequence[str]) -> str:
    """`find`'s test for a name matching any of `globs`."""
    tests = " -o ".join(f"-name '{g}'" for g in globs)
    return f"\\( {tests} \\)" if len(globs) > 1 else tests


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


def _always(name: str) -> Callable[[np.random.Generator], str]:
    """A name maker that draws nothing: `name` itself."""
    return lambda _rng: name


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
            put(draw_from(rng, normal), _always(name))
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


FAMILY: Family = Family.of_levels(
    "count-files",
    "Count the files that match a name pattern and submit the count.",
    {
        1: Level("files of one folder by extension, with near-miss names", count_flat),
        2: Level("files of a tree by name pattern, leaving out one folder or everything hidden", count_tree),
    },
    tags=("files", "find", "answer"),
)
