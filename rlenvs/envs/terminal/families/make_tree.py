"""make-tree: create a directory structure from a description.

| level | asks | example (task id) |
|---|---|---|
| 1 | listed folders and empty files | `history-101/week-03/quiz.md`, `history-101/resources/videos/` (L1/1) |
| 2 | a skeleton from an indented tree, one-line files, nothing extra | `weather-bot/src/weather_bot/__init__.py -> __version__ = "0.2.0"`, empty `logs/` (L2/0) |

Why the verdict holds: every listed folder must be a folder and every listed file must hold
exactly its text. At level 1 extra things are not checked; at level 2 the listing of every
folder is, so the root must hold exactly the tree (hidden files count), and a leftover from an
earlier attempt may have to go.
"""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families.byte_order import byte_sorted
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.shell import quote
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import DirEntries, Expectation, FileText, IsDir

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
    listing = "\n".join(f"- `{p}/`" for p in byte_sorted(list(folders)))
    listing += "\n" + "\n".join(f"- `{p}`" for p in byte_sorted(list(files)))
    instruction = (
        "Create the following folders and files, relative to the current directory. A path "
        "ending in `/` is a folder; every other path is a file that must exist and be empty.\n"
        f"{listing}\n{DONE}"
    )
    leaves = [f for f in folders if not any(o.startswith(f + "/") for o in folders)]
    solution = (
        "mkdir -p " + " ".join(byte_sorted(leaves)),
        "touch " + " ".join(byte_sorted(list(files))),
    )
    expect: list[Expectation] = [IsDir(p) for p in byte_sorted(list(folders))]
    expect += [FileText(p, "") for p in byte_sorted(list(files))]
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
        cleanup.append(f"rm -f {quote(stray)}")
        preface = f"`{root}/` already exists with leftovers from an earlier attempt; make it match the tree exactly. "
    else:
        preface = ""

    def children(folder: str) -> list[str]:
        names = {p[len(folder) + 1 :].split("/")[0] for p in (*files, *folders) if p.startswith(folder + "/")}
        return byte_sorted(list(names))

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
        f"(hidden files count).\n\n```\n{tree}\n```\n\n{DONE}"
    )
    leaves = [f for f in folders if not any(o.startswith(f + "/") for o in folders)]
    writes = []
    for path in byte_sorted(list(files)):
        text = files[path]
        writes.append(f"printf '%s\\n' {quote(text)} > {quote(path)}" if text else f": > {quote(path)}")
    solution = [
        *cleanup,
        "mkdir -p " + " ".join(quote(f) for f in byte_sorted(leaves)),
        "\n".join(writes),
    ]
    expect: list[Expectation] = [DirEntries(f, tuple(children(f))) for f in byte_sorted(list(folders))]
    expect += [FileText(p, files[p]) for p in byte_sorted(list(files))]
    return Scenario(
        instruction=instruction,
        files=tuple(start),
        solution=tuple(solution),
        expect=tuple(expect),
    )


FAMILY: Family = Family(
    "make-tree",
    "Create a directory structure from a description.",
    {
        1: "listed folders and empty files",
        2: "a project skeleton from an indented tree, files with one-line contents, nothing extra",
    },
    make_tree,
    tags=("text",),
)
