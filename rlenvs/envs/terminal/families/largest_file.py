"""largest-file: find the largest file and write its name or path to largest.txt, or submit it.

| level | asks | judged by |
|---|---|---|
| 1 | the largest file of one folder, all sizes within 300 bytes | name in largest.txt, or submitted |
| 2 | the largest file of a tree, as a path from the current directory | path in largest.txt, or submitted |

Why the verdict holds: the sizes all differ, within a few hundred bytes of each other, and
`du`, which counts blocks, ties most of them. At level 1 the runner-up is written in short
lines, so it has the most lines, and the largest in long ones, so it has the fewest (`wc -l`
is not the size). At level 2 the largest file always sits in a subfolder, so the largest file
of the top folder alone is a different one.
"""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family, Level
from rlenvs.envs.terminal.families.contents import BINARY, extension
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.paths import distinct, entries
from rlenvs.envs.terminal.families.words import MODULES, PROSE, WORDS
from rlenvs.envs.terminal.tasks import Scenario
from rlenvs.envs.terminal.workspace import AnswerIs, FileText


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


FAMILY: Family = Family.of_levels(
    "largest-file",
    "Find the largest file and write its name or path to largest.txt, or submit it.",
    {
        1: Level("the largest file of one folder, by name", largest_flat),
        2: Level("the largest file of a tree, by relative path", largest_tree),
    },
    tags=("files", "find", "sizes"),
)
