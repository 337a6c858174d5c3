"""Throwaway distributions that declare envs in the `rlenvs.envs` entry-point group, laid out as
pip leaves them in site-packages (the modules, and a `NAME-VERSION.dist-info` folder with
METADATA and entry_points.txt), so that `importlib.metadata` really finds them once their folder
is on a fresh interpreter's path: discovery is tested as users meet it, not through a stand-in.

`GOOD` is a well-formed plugin whose env is tests/support/reverse_words.py's example under the
plugin's own namespace; its env module is a module of the plugin, so a test can tell whether
`import rlenvs` imported it (it must not: only the first `gym.make` does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

GOOD_ID = "good/Reverse-v0"
GOOD_BARE_ID = "good/Bare-v0"
"""An entry with only the three required fields."""
GOOD_SUMMARY = "Spell words backwards, from a plugin."
GOOD: dict[str, str] = {
    "good_plugin/__init__.py": f"""
from rlenvs import EnvEntry

ENVS = (
    EnvEntry(
        id="{GOOD_ID}",
        entry_point="good_plugin.env:GoodEnv",
        summary="{GOOD_SUMMARY}",
        family="words",
        observes="a word",
        acts="the word spelled backwards",
        reward="1 iff reversed",
        turns="1",
    ),
    EnvEntry(id="{GOOD_BARE_ID}", entry_point="good_plugin.env:GoodEnv", summary="The same, described in one line."),
)
""",
    "good_plugin/env.py": "from tests.support.reverse_words import ReverseWordsEnv as GoodEnv\n",
}
GOOD_ENTRY_POINTS = {"good": "good_plugin:ENVS"}


def write_distribution(
    site: Path, name: str, files: Mapping[str, str], entry_points: Mapping[str, str], version: str = "0.1"
) -> None:
    """Install distribution `name` into the folder `site`: `files` (path -> source) and its
    dist-info, whose entry_points.txt declares `entry_points` (name -> "module:attribute") in
    the `rlenvs.envs` group."""
    for relative, source in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[rlenvs.envs]\n{lines}", encoding="utf-8")


def run_python(site: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python ARGS` in a fresh interpreter with `site` (the plugins) and the repository (for
    tests.support) on its path."""
    path = os.pathsep.join([str(site), str(REPO)])
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=site)
