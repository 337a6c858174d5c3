"""`rlenvs new` (rlenvs/scaffold): the names NAME gives and the names it is refused, and every
kind as generated, installed into a venv as a user installs it: its own tests pass, its code is
lint-clean, `rlenvs list` shows its id and `rlenvs certify` finds no wrong verdict; and a
procedural package's pinned tasks fail once its generator changes, so the pin is a test that
can fail. (The whole flow on to serving and training: tests/project/test_new_package_flow.py.)"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from rlenvs.cli import main
from rlenvs.scaffold import KINDS, PLACEHOLDER, NewPackage, _templates, names_of, new_package, render
from tests.support.overlay_venv import overlay_venv, pip_install_editable, run

ROOT = Path(__file__).resolve().parents[1]
KIND_NAMES = {"single": "plural-words", "tool": "stock-check", "procedural": "letter-count"}
"""The NAME each kind is generated under here."""


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["letter-count", "letter_count", "LetterCount", "Letter-Count"])
def test_one_package_whichever_way_name_is_written(name: str) -> None:
    names = names_of(name)
    assert (names.distribution, names.package, names.namespace) == ("letter-count", "letter_count", "letter-count")
    assert (names.env_id, names.env_class) == ("letter-count/LetterCount-v0", "LetterCountEnv")


def test_a_one_word_name() -> None:
    names = names_of("plurals2")
    assert (names.package, names.env_id, names.env_class) == ("plurals2", "plurals2/Plurals2-v0", "Plurals2Env")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "write ASCII letters and digits, words joined by '-' or '_', starting with a letter"),
        ("2fast", "starting with a letter"),
        ("my env", "words joined by '-' or '_'"),
        ("a--b", "words joined by '-' or '_'"),
        ("café", "ASCII letters"),
        ("rlenvs", "the `rlenvs` namespace and package are rlenvs' own"),
        ("RLenvs", "rlenvs' own"),
        ("rlenvs_train", "rlenvs' own"),
        ("tests", "rlenvs' own"),
        ("class", "a Python keyword or standard module"),
        ("json", "a Python keyword or standard module"),
        ("numpy", "a module of that name is already importable here"),
    ],
)
def test_a_name_that_cannot_be_a_package_is_refused_with_the_fix(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        names_of(name)


# --- writing -------------------------------------------------------------------------------------


def test_a_folder_in_use_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="already exists and is not an empty folder: pass --dir a new or empty"):
        new_package("letter-count", "single", tmp_path)
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert new_package("letter-count", "single", empty).root == empty
    with pytest.raises(ValueError, match="--kind 'chat' is not a kind of env rlenvs new writes: choose one of single"):
        new_package("letter-count", "chat", tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_rlenvs_new_writes_the_package_and_says_what_to_run(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "letter-count"
    assert main(["new", "LetterCount", "--kind", "procedural", "--dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "the package letter-count with the env letter-count/LetterCount-v0 (procedural)" in out
    assert "  src/letter_count/env.py\n" in out and "  tests/task_hashes.json\n" in out
    assert "rlenvs certify letter-count/LetterCount-v0" in out and "rlenvs-train --config train.yaml" in out
    assert main(["new", "LetterCount", "--dir", str(folder)]) == 2
    assert "rlenvs new: error:" in capsys.readouterr().err
    assert main(["new", "json", "--dir", str(tmp_path / "json")]) == 2
    assert "a Python keyword or standard module" in capsys.readouterr().err


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_template_of_a_kind_is_filled_whole(kind: str) -> None:
    values = names_of("letter-count").values(kind)
    for path, text in _templates(kind):
        assert not PLACEHOLDER.search(render(path, values, path) + render(text, values, path)), path


def test_a_template_naming_an_unknown_key_is_refused() -> None:
    with pytest.raises(KeyError, match=r"template env.py names \{\{colour\}\}, which rlenvs new does not fill"):
        render("x = {{colour}}", {"package": "p"}, "env.py")


def test_the_templates_ship_in_the_wheel() -> None:
    """pyproject.toml's package-data globs (setuptools reads `**` recursively) take every template."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["rlenvs"]
    shipped = {path for pattern in patterns for path in (ROOT / "rlenvs").glob(pattern)}
    templates = set((ROOT / "rlenvs" / "scaffold" / "templates").rglob("*"))
    assert {path for path in templates if path.is_file()} <= shipped


# --- every kind, installed as a user installs it ------------------------------------------------


@dataclass(frozen=True)
class Installed:
    python: Path
    """The Python of the venv the packages are installed in."""
    packages: dict[str, NewPackage]
    """Each kind's package, and "moved" (a procedural one whose generator a test edits)."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("new-packages")
    packages = {kind: new_package(name, kind, root / name) for kind, name in KIND_NAMES.items()}
    packages["moved"] = new_package("moved-count", "procedural", root / "moved-count")
    python = overlay_venv(root / "venv")
    pip_install_editable(python, *(package.root for package in packages.values()))
    return Installed(python, packages)


@pytest.mark.parametrize("kind", sorted(KIND_NAMES))
def test_a_generated_package_passes_its_own_tests(installed: Installed, kind: str) -> None:
    done = run(installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=installed.packages[kind].root)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed in [\d.]+s", summary), summary  # nothing skipped, nothing warned


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="needs ruff: pip install -e '.[dev]'")
@pytest.mark.parametrize("kind", sorted(KIND_NAMES))
def test_generated_code_is_lint_clean_and_formatted(installed: Installed, kind: str) -> None:
    """Under the generated pyproject.toml's own ruff width, with rlenvs as the third-party
    package it is in a user's project."""
    folder = installed.packages[kind].root
    lint = run(installed.python, "-m", "ruff", "check", "--select", "E,W,F,I,UP,B,C4,SIM", ".", cwd=folder)
    assert lint.returncode == 0, lint.stdout
    layout = run(installed.python, "-m", "ruff", "format", "--check", "--diff", ".", cwd=folder)
    assert layout.returncode == 0, layout.stdout + layout.stderr


def test_rlenvs_lists_every_generated_id_with_its_package(installed: Installed) -> None:
    done = run(installed.python, "-m", "rlenvs.cli", "list", cwd=installed.python.parent)
    assert done.returncode == 0 and "PluginWarning" not in done.stderr, done.stderr
    for package in installed.packages.values():
        line = next((line for line in done.stdout.splitlines() if line.startswith(package.names.env_id + " ")), "")
        assert f" {package.names.distribution} " in line, done.stdout


@pytest.mark.parametrize("kind", sorted(KIND_NAMES))
def test_rlenvs_certify_finds_no_wrong_verdict(installed: Installed, kind: str) -> None:
    env_id = installed.packages[kind].names.env_id
    done = run(installed.python, "-m", "rlenvs.cli", "certify", env_id, cwd=installed.python.parent)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.match(rf"certify {re.escape(env_id)} .* 10 tasks · \d+ checks, 0 wrong", done.stdout), done.stdout[:300]


def test_a_changed_generator_fails_the_pinned_tasks_with_the_rule(installed: Installed) -> None:
    package = installed.packages["moved"]
    env = package.root / "src" / "moved_count" / "env.py"
    source = env.read_text()
    assert source.count('"giraffe",\n') == 1
    env.write_text(source.replace('"giraffe",\n', '"giraffe", "hippopotamus",\n'))  # every draw from WORDS moves
    done = run(installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "pinned", cwd=package.root)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "(count/L1 moved, count/L2 moved)" in done.stdout, done.stdout[-3000:]
    assert "bump the id's -vN (moved-count/MovedCount-v1)" in done.stdout
