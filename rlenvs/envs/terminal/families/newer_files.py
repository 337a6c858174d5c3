"""newer-files: list the files modified after a reference file.

| level | asks | judged by |
|---|---|---|
| 1 | names of the files modified after a stamp file, in any order | lines of a file |
| 2 | paths of the files with one extension modified after a stamp, in a tree, sorted | lines of changed.txt, in order |

Why the verdict holds: one newer and one older file lie within two minutes of the stamp,
closer than `ls -l`'s minutes show. At level 1 the folder itself is newer too (it is made
when the workspace is), so a `find` without `-type f` lists it. At level 2 files of other
extensions changed too (compiled output, notes), and one old file of the extension sits just
before the stamp.
"""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family, Level
from rlenvs.envs.terminal.families.contents import content_for
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.paths import distinct
from rlenvs.envs.terminal.families.times import BASE_TIME, DAY
from rlenvs.envs.terminal.families.words import MODULES, PACKAGES, USERS, WORDS
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import FileLines


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
    layout, others, stems = LANGUAGES[ext]
    root, pkg = draw_from(rng, ("project", "service", "backend")), draw_from(rng, PACKAGES)
    folders = [f.format(pkg=pkg) for f in draw_sample(rng, layout, draw_int(rng, 3, len(layout)))]
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


FAMILY: Family = Family.of_levels(
    "newer-files",
    "List the files modified after a reference file.",
    {
        1: Level("names of the newer files of one folder, in any order", newer_flat),
        2: Level("sorted paths of the newer files of one extension in a tree", newer_tree),
    },
    tags=("files", "find", "mtime"),
)
