"""docs/design.md's layout is the tree: every folder it names exists, and every package folder
of rlenvs/ and rlenvs_train/ (two levels down) is named there, so the map a newcomer reads
first cannot drift from the code as folders move."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPTH = 2
"""Folders this many levels below rlenvs/ and rlenvs_train/ must be in the layout."""


def layout_folders() -> list[str]:
    """The folders the layout block names, as paths from the repository root."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    block = re.search(r"## Layout[^\n]*\n\n```\n(.*?)```", text, re.S)
    assert block is not None, "docs/design.md has no ## Layout section with a code block"
    folders: list[str] = []
    parents: list[str] = []
    for line in block.group(1).splitlines():
        words = line.split()
        if not words or not words[0].endswith("/"):
            continue  # a line of files (pyproject.toml  README.md)
        if all(word.endswith("/") for word in words):  # tests/  benchmarks/  ...: folders, no description
            folders += words
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        parents = [*parents[:depth], words[0]]
        folders.append("".join(parents))
    return folders


def tree_folders() -> set[str]:
    found = set()
    for top in ("rlenvs", "rlenvs_train"):
        for path in (REPO / top).rglob("*"):
            relative = path.relative_to(REPO / top)
            if path.is_dir() and len(relative.parts) <= DEPTH and "__pycache__" not in relative.parts:
                found.add(f"{top}/{relative.as_posix()}/")
    return found


def test_every_folder_the_layout_names_exists() -> None:
    missing = [folder for folder in layout_folders() if not (REPO / folder).is_dir()]
    assert not missing, f"docs/design.md's layout names folders the tree lacks: {missing}"


def test_every_package_folder_is_in_the_layout() -> None:
    unnamed = sorted(tree_folders() - set(layout_folders()))
    assert not unnamed, f"folders missing from docs/design.md's layout: {unnamed}"
