"""The generation backends by name: one registry (`KINDS`), each kind saying what it can do
and setting itself up, so that no caller switches on "hf", "vllm" or "vllm-server".

A kind is not a `Backend` (`base.Backend`: token ids in, samples out): it is how to make one
where the adapter needs it, for `GRPOTrainer` (`for_trainer`, `during_rollout`, `trl_args`)
and for `evaluate` (`for_model`), and what it can do (`streams`: the continuous schedule;
`colocated`: generation inside the training processes; `needs_vllm`: vLLM in this process),
which the config check and the rollout function read instead of lists of names.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from rlenvs_train.backends.base import Backend

if TYPE_CHECKING:
    from rlenvs_train.config.schema import InferenceConfig
    from rlenvs_train.rollout import RolloutEngine


class BackendKind(abc.ABC):
    """One way of generating: its name, what it can do, and how to build its `Backend`."""

    name: ClassVar[str]
    streams: ClassVar[bool]
    """Takes prompts one by one and hands each back when done (`base.StreamingBackend`): the
    engine's continuous schedule needs it."""
    colocated: ClassVar[bool]
    """Generates inside the training processes (no separate server)."""
    needs_vllm: ClassVar[bool]
    """Imports vLLM in this process."""

    def prepare(self) -> None:  # noqa: B027 - a hook: most kinds need nothing, so no override is required
        """What this process needs before a trainer uses the kind (once; idempotent)."""

    @abc.abstractmethod
    def for_trainer(self, trainer: Any) -> Backend:
        """The backend the rollout function's engine samples with, made from `trainer`."""

    @contextlib.contextmanager
    def during_rollout(self, trainer: Any, engine: RolloutEngine) -> Iterator[None]:
        """Around one `rollout_func` call's episodes (what must hold while they generate)."""
        yield

    @abc.abstractmethod
    def for_model(self, model: Any, *, seed: int, server_url: str | None, kwargs: dict[str, Any]) -> Backend:
        """The backend `evaluate` samples `model` with (a folder or hub id; `kwargs`: the
        backend's own keywords)."""

    def trl_args(self, inference: InferenceConfig) -> dict[str, Any]:
        """GRPOConfig's arguments for this kind (`rlenvs-train`'s inference section)."""
        return {}


class HFKind(BackendKind):
    """transformers' generate on the trainer's live policy (CPU, tests, small models)."""

    name, streams, colocated, needs_vllm = "hf", False, True, False

    def for_trainer(self, trainer: Any) -> Backend:
        return _PendingBackend()  # replaced on each call by the unwrapped live model

    @contextlib.contextmanager
    def during_rollout(self, trainer: Any, engine: RolloutEngine) -> Iterator[None]:
        from trl.models import unwrap_model_for_generation

        from rlenvs_train.backends.hf import HFBackend

        # The policy being trained, unwrapped from DDP/DeepSpeed (ZeRO-3 parameters gathered)
        # for the length of the rollout: the engine samples from the live weights, not a copy.
        with unwrap_model_for_generation(
            trainer.model_wrapped,
            trainer.accelerator,
            gather_deepspeed3_params=getattr(trainer.args, "ds3_gather_for_generation", True),
            gradient_checkpointing_kwargs=getattr(trainer.args, "gradient_checkpointing_kwargs", None),
        ) as model:
            engine.backend = HFBackend(model)
            yield

    def for_model(self, model: Any, *, seed: int, server_url: str | None, kwargs: dict[str, Any]) -> Backend:
        from rlenvs_train.backends.hf import HFBackend

        if isinstance(model, str) and "device" not in kwargs:
            import torch

            kwargs["device"] = "cuda" if torch.cuda.is_available() else "cpu"
        return HFBackend(model, **kwargs)


class VLLMKind(BackendKind):
    """vLLM's engine in the training process: TRL's colocated one (`vllm_mode="colocate"`),
    into which TRL pushes the policy's weights before each call."""

    name, streams, colocated, needs_vllm = "vllm", True, True, True

    def prepare(self) -> None:
        from rlenvs_train.compat import install_cpu_colocate_weight_sync

        install_cpu_colocate_weight_sync()

    def for_trainer(self, trainer: Any) -> Backend:
        from rlenvs_train.backends.vllm import VLLMBackend

        return VLLMBackend.from_trainer(trainer)

    @contextlib.contextmanager
    def during_rollout(self, trainer: Any, engine: RolloutEngine) -> Iterator[None]:
        try:
            yield
        finally:
            sleep = getattr(engine.backend, "sleep", None)
            if callable(sleep):
                sleep()  # gives the colocated engine's memory back to training (sleep mode only)

    def for_model(self, model: Any, *, seed: int, server_url: str | None, kwargs: dict[str, Any]) -> Backend:
        from rlenvs_train.backends.vllm import VLLMBackend

        return VLLMBackend.from_model(model, **{"seed": seed, **kwargs})

    def trl_args(self, inference: InferenceConfig) -> dict[str, Any]:
        return {
            "use_vllm": True,
            "vllm_mode": "colocate",
            "vllm_gpu_memory_utilization": inference.gpu_memory_utilization,
        }


class VLLMServerKind(BackendKind):
    """A separate `trl vllm-serve` server (`vllm_mode="server"`), to which the main process
    pushes the weights."""

    name, streams, colocated, needs_vllm = "vllm-server", True, False, False

    def for_trainer(self, trainer: Any) -> Backend:
        from rlenvs_train.backends.vllm_server import VLLMServerBackend

        return VLLMServerBackend.from_trainer(trainer)

    @contextlib.contextmanager
    def during_rollout(self, trainer: Any, engine: RolloutEngine) -> Iterator[None]:
        # Only the main process pushes new weights to the server; no rank may sample before
        # that push is done.
        trainer.accelerator.wait_for_everyone()
        yield

    def for_model(self, model: Any, *, seed: int, server_url: str | None, kwargs: dict[str, Any]) -> Backend:
        from rlenvs_train.backends.vllm_server import VLLMServerBackend

        if server_url is not None:
            kwargs["base_url"] = server_url
        return VLLMServerBackend(**kwargs)

    def trl_args(self, inference: InferenceConfig) -> dict[str, Any]:
        return {
            "use_vllm": True,
            "vllm_mode": "server",
            "vllm_server_host": inference.server_host,
            "vllm_server_port": inference.server_port,
            "vllm_server_timeout": inference.server_timeout_s,
        }


class _PendingBackend:
    """Stands in for the hf backend until a call supplies the unwrapped live model."""

    def generate(self, prompts: Any, params: Any) -> Any:
        raise RuntimeError("the hf backend is set for each rollout_func call")


KINDS: dict[str, BackendKind] = {kind.name: kind for kind in (HFKind(), VLLMKind(), VLLMServerKind())}
"""Every backend kind by name, in the order the messages list them."""
BACKENDS: tuple[str, ...] = tuple(KINDS)
"""The names, for choices and messages."""
