"""The compatibility patches target the installed versions (rlenvs_train.compat.TARGETS)."""

from __future__ import annotations

import importlib.metadata

import pytest

from rlenvs_train.compat import TARGETS


@pytest.mark.parametrize("package", sorted(TARGETS))
def test_the_patches_target_the_installed_version(package: str) -> None:
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        version = importlib.metadata.version(f"{package}-cpu") if package == "vllm" else None
    if version is None:
        pytest.skip(f"{package} is not installed")
    installed = ".".join(version.split("+")[0].split(".")[:2])
    assert installed == TARGETS[package], (
        f"{package} {version} is installed but rlenvs_train/compat.py's patches were written for "
        f"{TARGETS[package]}: check each patch against {package} {installed} and update TARGETS"
    )
