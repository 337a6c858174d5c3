"""archive: unpack tar and gzip archives into the layout asked for.

| level | asks | judged by |
|---|---|---|
| 1 | extract a .tar.gz into a folder, keeping or dropping its top folder | contents and listings |
| 2 | restore from a backup .tar.gz only the files a manifest names | contents and listings |
| 3 | unpack the .tar.gz inside a .tar into a folder, leaving nothing else behind | contents and listings |

A setup script builds each archive from the task's files. Why the verdict holds: each file's
content and the exact listing of the target folder and of every folder below it are checked,
so a missing or an extra file (or a leftover top folder) fails. Each archive holds a hidden
file at its top, which `mv top/* .` leaves behind. At level 2 the same note names recur in
every user's home and `.bak` copies sit beside some files, so a name-only match (`--wildcards
'*todo.md*'`) takes too much; at level 3 the current directory's listing is checked too.
"""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family, Level
from rlenvs.envs.terminal.families.contents import content_for, sentence
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.words import MODULES, PACKAGES, USERS, WORDS
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import DirEntries, Expectation, FileText

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


FAMILY: Family = Family.of_levels(
    "archive",
    "Unpack tar and gzip archives into the layout asked for.",
    {
        1: Level("extract a .tar.gz into a folder, keeping or dropping its top folder", extract_archive),
        2: Level("restore only the files a manifest lists from a backup .tar.gz", restore_from_manifest),
        3: Level("unpack the .tar.gz inside a .tar into a folder, leaving nothing else", nested_archive),
    },
    tags=("files", "tar", "gzip"),
)
