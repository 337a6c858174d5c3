"""The example packages (examples/<name>/) as the repository runs them: each declares its envs in
the `rlenvs.envs` entry points and, once pip installed (.ci/run installs every one), has them
registered by `import rlenvs`; their tests run in the same pytest run (`testpaths`), where an
uninstalled example is skipped locally and fails CI (examples/conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from rlenvs.envs.plugins import GROUP, plugin_entries

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(path.parent for path in (ROOT / "examples").glob("*/pyproject.toml"))


def project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda path: path.name)
def test_an_example_declares_its_envs_and_they_are_registered(folder: Path) -> None:
    declared = project(folder).get("entry-points", {}).get(GROUP)
    assert declared, f"examples/{folder.name}/pyproject.toml declares no [project.entry-points.{GROUP!r}]"
    assert (folder / "tests").is_dir() and not (folder / "tests" / "__init__.py").exists(), (
        f"examples/{folder.name}/tests/ must exist without __init__.py (pytest imports its files by base name)"
    )
    name = project(folder)["name"]
    packages = {entry.package for entry in plugin_entries()}
    if name not in packages:
        pytest.skip(f"{name} is not installed or registers nothing: pip install -e examples/{folder.name}")


def test_example_test_files_have_distinct_names() -> None:
    """Without __init__.py two test files of one base name collide when pytest imports them."""
    names = Counter(path.name for folder in EXAMPLES for path in (folder / "tests").rglob("*.py"))
    assert not [name for name, count in names.items() if count > 1], names


def test_an_uninstalled_example_is_skipped_and_fails_under_require_all(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "examples" / "absent" / "tests").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "conftest.py", tmp_path / "examples")
    (tmp_path / "examples" / "absent" / "pyproject.toml").write_text('[project]\nname = "absent-example"\n')
    (tmp_path / "examples" / "absent" / "tests" / "test_absent.py").write_text("import absent\n")
    outcomes = {}
    for require_all in ("0", "1"):
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "examples"],
            cwd=tmp_path,
            env={**os.environ, "RLENVS_REQUIRE_ALL": require_all},
            capture_output=True,
            text=True,
            timeout=120,
        )
        outcomes[require_all] = (result.returncode, result.stdout)
    code, output = outcomes["0"]
    assert code == pytest.ExitCode.NO_TESTS_COLLECTED and "1 skipped" in output, output  # the skip, nothing else
    assert "absent-example (examples/absent) is not installed: pip install -e examples/absent" in output
    code, output = outcomes["1"]
    assert code != 0 and "RLENVS_REQUIRE_ALL is set" in output and "absent-example" in output, output
