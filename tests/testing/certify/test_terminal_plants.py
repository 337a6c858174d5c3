"""`rlenvs certify` on Terminal-v2: the generic replies and the terminal plants (modules named
like what the test run's python3 looks up and lacks, traced in the episode's own sandbox;
passing test files and configs where tests and pytest look; a background process; links) on
real Terminal-Bench 1 folders and the procedural families. And what the verdict reads of the
tests to decide which modules the toolchain may take from the agent's folders."""

from __future__ import annotations

import base64

import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.sandbox.shells.verdict import modules_tests_import
from rlenvs.testing.certify import CertifyReport, certify
from tests.conftest import SHARED_DATA

EVOEVAL = SHARED_DATA / "terminal-bench" / "evoeval"


def _clean(report: CertifyReport) -> None:
    assert report.tasks > 0
    assert report.wrong == [], "\n" + str(report)


@pytest.mark.sandbox
@pytest.mark.full_data
def test_terminal_bench_folders_certify_clean() -> None:
    report = certify("rlenvs/Terminal-v2", env_kwargs={"task_dir": str(EVOEVAL)}, task_indices=[0, 17, 41, 77])
    _clean(report)
    traced = [c for c in report.checks if c.probe.kind == "planted module"]
    assert traced and all("RLENVS_TRACED" in c.probe.turns[0] for c in traced)
    assert all("/org/__init__.py" in c.played[1] for c in traced)  # the trace found copy's and pickle's `org`


@pytest.mark.sandbox
@pytest.mark.parametrize("level", [1, 2])
def test_procedural_terminal_tasks_certify_clean(level: int) -> None:
    _clean(certify("rlenvs/Terminal-v2", env_kwargs={"level": level}, tasks=3, seed=7))


class _File:
    def __init__(self, path: str, text: str) -> None:
        self.record = {"path": path, "dir": False, "data": base64.b64encode(text.encode()).decode()}

    def for_guest(self) -> dict:
        return self.record


def test_the_modules_the_tests_import_by_name() -> None:
    files = [
        _File("tests/test_outputs.py", "import os, json.decoder\nfrom mylib.sub import f\nfrom . import local\n"
              "def test():\n    import importlib\n    importlib.import_module('plugin_x.y')\n    __import__('z')\n"),
        _File("tests/run-tests.sh", "#!/bin/bash\npython3 -m pytest -p myplugin $TEST_DIR -rA\n"),
        _File("tests/broken.py", "def (:\n"),
    ]  # fmt: skip
    names = modules_tests_import(files, "bash $TEST_DIR/run-tests.sh", [("PYTEST_ADDOPTS", "-p other_plugin")])
    assert names == {"os", "json", "mylib", "importlib", "plugin_x", "z", "pytest", "myplugin", "other_plugin"}
