"""What a generated file holds, going by its name: `content_for` gives a few plausible lines
(or bytes) for a file's extension or whole name, so that `cat` and `file` show what a person
would expect to find there; `sentence` is one line of prose."""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import draw_from, draw_int
from rlenvs.envs.terminal.families.words import MODULES, PACKAGES, PROSE, USERS

BINARY = frozenset(("jpg", "jpeg", "png", "heic", "mov", "mp4", "pdf", "xlsx", "docx", "gz", "zip", "pyc", "swp"))


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
