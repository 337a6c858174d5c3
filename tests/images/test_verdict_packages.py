"""The verdict's own packages (rlenvs.images.verdict_packages): what a task's test script
installs, installed from PyPI when the folder loads, for the image's Python, and the tests'
folder under a name pytest imports as a package. Real pip, real PyPI, real bubblewrap."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from rlenvs.envs.terminal.env import TerminalEnv
from rlenvs.envs.terminal.folders import TaskFolderError, load_task_folders
from rlenvs.images.verdict_packages import (
    PackagesError,
    PythonTarget,
    check_requirements,
    packages_layer,
    with_pytest,
)
from rlenvs.sandbox.shells.verdict import PACKAGES_VARIABLE, VERDICT_PACKAGES, VerdictRun

PACKAGE_TESTS = Path(__file__).parents[1] / "data" / "images" / "tb-package-tests"
"""run-tests.sh in the official `uv venv` / `uv pip install pytest==8.4.1 PyYAML==6.0.2` shape;
tests/ a package whose test imports its helper relatively and imports `yaml`."""


def test_the_tests_folder_is_a_python_identifier_and_unguessable() -> None:
    names = {VerdictRun.new("/app").tests_name for _ in range(3)}
    assert len(names) == 3 and all(name.isidentifier() and name.startswith("tests_") for name in names)


def test_the_packages_variable_names_only_the_verdicts_folder() -> None:
    run = VerdictRun("0", "/app")
    environment = run.environment(task_environment=[(PACKAGES_VARIABLE, VERDICT_PACKAGES), ("PYTHONPATH", "/srv/lib")])
    assert environment["PYTHONPATH"] == f"{run.site}:{VERDICT_PACKAGES}:/srv/lib"
    assert PACKAGES_VARIABLE not in environment
    with pytest.raises(ValueError, match=f"{PACKAGES_VARIABLE} must be {VERDICT_PACKAGES}"):
        run.environment(task_environment=[(PACKAGES_VARIABLE, "/app/site-packages")])


@pytest.mark.parametrize("spec", ["-r/tmp/x", "git+https://example.com/x", "./local", "x @ https://e.com/x.whl"])
def test_a_requirement_that_is_no_package_name_is_refused(spec: str) -> None:
    with pytest.raises(PackagesError, match="installs from PyPI by name only"):
        check_requirements([spec])


def test_pytest_comes_with_every_set_of_requirements() -> None:
    assert with_pytest(["numpy"]) == ("numpy", "pytest==8.4.1")
    assert with_pytest(["pytest==8.3.0"]) == ("pytest==8.3.0",)
    assert "--only-binary=:all:" in PythonTarget("3.13", (2, 41), "x86_64").pip_options()


@pytest.mark.images
@pytest.mark.sandbox
def test_a_package_test_folder_with_a_uv_venv_runner_scores_the_reference_one_and_nothing_zero(image_store) -> None:
    """Loaded on bubblewrap: pytest and PyYAML come from the verdict's packages (the image's
    python3 has no yaml), the tests import their helper relatively; reference 1, submit 0."""
    env = TerminalEnv(task_dir=str(PACKAGE_TESTS), backend="bwrap", max_turns=3, timeout_s=60)
    try:
        task = env.tasks.tasks[0]
        assert dict(task.test_environment)[PACKAGES_VARIABLE] == VERDICT_PACKAGES
        for replies, expected in (([env.oracle_action], 1.0), ([lambda: "submit"], 0.0)):
            env.reset(options={"task_index": 0})
            while True:
                _, reward, terminated, truncated, info = env.step(replies[0]())
                if terminated or truncated:
                    break
            assert reward == expected, info
    finally:
        env.close()


@pytest.mark.images
@pytest.mark.sandbox
def test_a_package_without_a_wheel_for_the_image_is_refused_by_name(image_store, tmp_path: Path) -> None:
    folder = shutil.copytree(PACKAGE_TESTS, tmp_path / "task")
    runner = folder / "run-tests.sh"
    runner.write_text(runner.read_text().replace("PyYAML==6.0.2", "no-such-distribution-xyz-rlenvs==1.0"))
    with pytest.raises(TaskFolderError, match=r"run-tests.sh: pip could not install .*no-such-distribution-xyz-rlenvs"):
        load_task_folders(folder, backend="bwrap")


def test_the_hosts_pip_settings_choose_where_packages_come_from_not_where_they_go(
    image_store, tmp_path: Path, monkeypatch
) -> None:
    """A host's PIP_TARGET or PIP_USER would put the verdict's packages elsewhere (or nowhere
    the tests look); its index and wheel folder settings are where the packages come from."""
    monkeypatch.setenv("PIP_TARGET", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # kept: with no index and no wheel folder, nothing installs
    target = PythonTarget("3.13", (2, 41), "x86_64")
    with pytest.raises(PackagesError, match="pip could not install"):
        packages_layer(target, ["six==1.16.0"], image_store)
    assert not (tmp_path / "elsewhere").exists()


def test_the_pytest_plugins_the_images_build_installed_are_named_and_no_others(tmp_path: Path) -> None:
    """Real pytest loads every installed plugin; the verdict loads only those it names. A
    Dockerfile's `pip install pytest-json-ctrf` (its test script then passes `--ctrf`) is named,
    for the tests' python3 only, under /usr only, and not where a higher layer deleted it."""
    from rlenvs.images.verdict_packages import image_pytest_plugins

    base, top = tmp_path / "base", tmp_path / "top"

    def plugin(layer: Path, site: str, distribution: str, module: str) -> Path:
        info = layer / site / f"{distribution}.dist-info"
        info.mkdir(parents=True)
        (info / "entry_points.txt").write_text(
            f"[console_scripts]\nx = not_a_plugin:main\n\n[pytest11]\nname = {module}\n"
        )
        return info

    plugin(base, "usr/local/lib/python3.12/site-packages", "pytest_json_ctrf-0.3.5", "ctrf.main")
    plugin(base, "usr/lib/python3/dist-packages", "pytest_timeout-2.1.0", "pytest_timeout")
    plugin(base, "usr/local/lib/python3.11/site-packages", "pytest_other-1", "for_another_python")
    plugin(base, "opt/venv/lib/python3.12/site-packages", "pytest_venv-1", "outside_usr")
    deleted = plugin(base, "usr/local/lib/python3.12/site-packages", "pytest_gone-1", "deleted_above")
    whiteout = top / deleted.relative_to(base)
    whiteout.parent.mkdir(parents=True)
    os.mknod(whiteout, 0o600 | stat.S_IFCHR, os.makedev(0, 0))  # overlayfs' mark of a deletion
    assert image_pytest_plugins([str(top), str(base)], "3.12") == ("ctrf.main", "pytest_timeout")
