"""The env tables of README.md and docs/index.md, made from `CATALOG`.

The tables were written by hand beside the catalog and drifted from it (the catalog said one
thing in `rlenvs info`, the README another). Now the catalog entries hold the table's text, in
Markdown, and this module renders it; tests/project/test_catalog_docs.py fails when a committed table
differs from the rendered one. To regenerate both tables after editing the catalog:

    python -m rlenvs.envs.catalog_docs            # rewrites the tables in place
    python -m rlenvs.envs.catalog_docs --check    # exit 1 if a table is stale (what CI asks)

It lives beside the catalog, not in catalog.py, because registration imports the catalog on
every `import rlenvs` and needs none of this; nor in a tools folder, because `rlenvs info`
uses `plain()` to print the same Markdown text in a terminal.

Links in the catalog's text are written relative to docs/ (`[the verifier](rewards.md)`), as
a docs page beside index.md would write them; each page gets them relative to itself, so the
README's point into docs/ and docs/index.md's stay as they are. The table sits between two
HTML comments that say it is generated (GitHub and mkdocs show neither).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from rlenvs.core.registration import EnvEntry
from rlenvs.envs.catalog import CATALOG

REGENERATE = "python -m rlenvs.envs.catalog_docs"
BEGIN = f"<!-- The env table is made from rlenvs/envs/catalog.py: edit the catalog, then run `{REGENERATE}`. -->"
END = "<!-- End of the generated env table. -->"

# Each page that shows the table, relative to the repository root, and the prefix that turns
# a link relative to docs/ into one relative to that page.
PAGES: dict[str, str] = {"README.md": "docs/", "docs/index.md": ""}

HEADER = ("id", "family", "the agent sees", "the agent does", "reward", "turns")

# The id cell: code that never wraps. mkdocs' Material theme styles code `word-break:
# break-word` with `white-space: pre-wrap`, so a narrow id column broke ids mid-word
# ("rlenvs/Arithmeti" / "c-Tool-v1"); a style on the code element itself outranks the theme's
# (one on a wrapping span would not: the theme sets white-space on code). GitHub drops the
# style and shows plain code, as a backtick span; the id copies as typed either way, which
# non-breaking hyphens or word joiners would not.
ID_CELL = '<code style="white-space: nowrap">{id}</code>'

# A Markdown code span: a run of backticks, text, the same run (CommonMark's rule, as
# tests/project/test_readme.py reads them).
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
# An inline link whose target is a relative path (not a web address, not an anchor on the page).
RELATIVE_LINK = re.compile(r"\]\((?!https?://|#)([^)\s]+)\)")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def _cell(text: str, field: str, entry: EnvEntry) -> str:
    """A table cell, refused where it would break the table rather than rendered broken.

    A newline ends the row (a blank line once made GitHub show the table as one row), and a
    `|` starts a new cell on GitHub even inside a code span (GFM splits cells before it reads
    code spans; mkdocs does not, so the two sites would show different tables)."""
    if "\n" in text:
        raise ValueError(f"{entry.id}: catalog field {field!r} has a newline, which would end the table row")
    if "|" in text:
        raise ValueError(
            f"{entry.id}: catalog field {field!r} has a '|', which splits the cell on GitHub even in a code span; "
            "reword it"
        )
    return text.strip()


def relink(text: str, prefix: str) -> str:
    """`text` with its relative links (written relative to docs/) made relative to a page."""
    return RELATIVE_LINK.sub(lambda m: f"]({prefix}{m.group(1)})", text)


def table_row(entry: EnvEntry, prefix: str) -> str:
    cells = [
        ID_CELL.format(id=entry.id),
        f"[{entry.family}]({prefix}envs/{entry.family}.md)",
        *(
            relink(_cell(getattr(entry, field), field, entry), prefix)
            for field in ("observes", "acts", "reward", "turns")
        ),
    ]
    return "| " + " | ".join(cells) + " |"


def env_table(prefix: str, entries: Iterable[EnvEntry] = CATALOG) -> str:
    """The env table (without the markers), one row per entry in catalog order, which is also
    the order of `rlenvs list`."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += [table_row(entry, prefix) for entry in entries]
    return "\n".join(lines)


def generated_block(prefix: str) -> str:
    return f"{BEGIN}\n\n{env_table(prefix)}\n\n{END}"


def with_table(page_text: str, prefix: str, where: str) -> str:
    """The page with its generated block replaced by the one the catalog makes now."""
    start, end = page_text.find(BEGIN), page_text.find(END)
    if start < 0 or end < start:
        raise ValueError(
            f"{where}: no generated env table (the lines {BEGIN!r} ... {END!r}); put the two lines "
            f"where the table goes and run `{REGENERATE}`"
        )
    return page_text[:start] + generated_block(prefix) + page_text[end + len(END) :]


def stale_pages(root: Path) -> list[str]:
    """The pages whose committed table is not the one the catalog makes."""
    stale = []
    for name, prefix in PAGES.items():
        text = (root / name).read_text(encoding="utf-8")
        if with_table(text, prefix, name) != text:
            stale.append(name)
    return stale


def write_pages(root: Path) -> list[str]:
    """Rewrite the stale pages' tables; returns the pages it changed."""
    changed = []
    for name, prefix in PAGES.items():
        path = root / name
        text = path.read_text(encoding="utf-8")
        new = with_table(text, prefix, name)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(name)
    return changed


def plain(text: str) -> str:
    """A catalog field as terminal text (`rlenvs info`): a link as its text and, in
    parentheses, where it leads from the checkout (docs/rewards.md), code spans without their
    backticks (`` ```python `` reads as ```python)."""

    def unlink(match: re.Match[str]) -> str:
        target = match.group(2)
        return f"{match.group(1)} ({target if target.startswith(('http://', 'https://')) else 'docs/' + target})"

    text = LINK.sub(unlink, text)

    def unquote(match: re.Match[str]) -> str:
        inner = match.group(2)
        # CommonMark strips one space from each end of a span padded on both sides.
        return inner[1:-1] if len(inner) > 2 and inner[0] == inner[-1] == " " else inner

    return CODE_SPAN.sub(unquote, text)


def checkout_root() -> Path:
    """The repository root of an editable install, where README.md and docs/ are."""
    root = Path(__file__).resolve().parents[2]
    missing = [name for name in PAGES if not (root / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{', '.join(missing)} not found under {root}: run this from a checkout installed with "
            "`pip install -e .`, or pass --root to the repository"
        )
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=REGENERATE, description="Render the env tables of README.md and docs/index.md from the catalog."
    )
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a table is stale")
    parser.add_argument("--root", type=Path, help="the repository root (default: this checkout)")
    args = parser.parse_args(argv)
    root = args.root if args.root is not None else checkout_root()
    if args.check:
        stale = stale_pages(root)
        for name in stale:
            print(f"{name}: the env table differs from rlenvs/envs/catalog.py; run `{REGENERATE}`", file=sys.stderr)
        return 1 if stale else 0
    for name in write_pages(root):
        print(f"rewrote the env table of {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
