"""The example packages' own tests (examples/<name>/tests/), run by the repository's pytest
(`testpaths` in pyproject.toml) against the package as pip installed it: their envs reach
gymnasium only through the package's `rlenvs.envs` entry point, which an uninstalled folder
does not have.

An example folder whose package is not installed is skipped as a whole, naming the package
and the command that installs it; under RLENVS_REQUIRE_ALL=1 (.ci/run, which installs every
example) it fails instead, and so does any test skipped inside an example, as
tests/conftest.py has it for the rest of the suite (a conftest applies only to the folder it
is in, so the rule is stated here again for this one).

Each example's tests/ folder has no __init__.py: pytest imports its test files by base name,
so those names must differ across the examples, and an example's tests need no conftest.py.
"""

from __future__ import annotations

import importlib.metadata
import os
import tomllib
from pathlib import Path
from typing import NoReturn

import pytest

REQUIRE_ALL = os.environ.get("RLENVS_REQUIRE_ALL", "") not in ("", "0")


class NotInstalled(pytest.Directory):
    """An example folder whose package is missing: one skip (or failure) instead of its tests'
    import errors."""

    reason = ""

    def collect(self) -> NoReturn:
        if REQUIRE_ALL:
            pytest.fail(f"RLENVS_REQUIRE_ALL is set (.ci/run installs every example): {self.reason}", pytrace=False)
        pytest.skip(self.reason)


def missing_package(folder: Path) -> str | None:
    """Why the package of example `folder` is not installed, or None when it is."""
    project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    try:
        importlib.metadata.distribution(project)
    except importlib.metadata.PackageNotFoundError:
        return f"example package {project} (examples/{folder.name}) is not installed: pip install -e examples/{folder.name}"
    return None


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path.parent != Path(__file__).parent or not (path / "pyproject.toml").is_file():
        return None
    reason = missing_package(path)
    if reason is None:
        return None
    collector = NotInstalled.from_parent(parent, path=path)
    collector.reason = reason
    return collector


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Under RLENVS_REQUIRE_ALL a skip in an example's tests is a failure naming its reason."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_ALL and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, and RLENVS_REQUIRE_ALL is set (.ci/run installs every example): {reason}"
