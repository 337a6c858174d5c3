"""The `vllm` backend: an in-process `vllm.LLM`, fed token ids, returning token ids.

    backend = VLLMBackend.from_model("/tmp/tiny")          # its own engine
    backend = VLLMBackend.from_trainer(trainer)            # TRL's colocated engine (vllm_mode="colocate")
    backend = VLLMBackend(llm)                             # an engine built elsewhere

Each prompt goes in as `TokensPrompt(prompt_token_ids=...)` and comes back as the sampled token
ids (a stop token, if hit, kept as the last one) with the log-probability of each under the
distribution it was sampled from. That is vLLM's `logprobs_mode="processed_logprobs"`
(temperature and top-k/top-p applied), the mode TRL creates its own engines with and its
importance-sampling correction expects; an engine in another mode is used with a warning.

`submit` / `collect` (the `StreamingBackend` half, for the engine's continuous schedule)
drive the same engine request by request: `LLMEngine.add_request` and one `LLMEngine.step`
per `collect`, the loop `LLM.generate` itself runs, so vLLM's scheduler batches whatever is
in flight (continuous batching) and a turn is added the moment it is ready. This is the
engine TRL colocates and syncs weights into: streaming from it needs no second engine (an
`AsyncLLM` would hold its own weights and KV cache) and no event loop.

`vllm` is imported only when an engine is built or used, so importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import warnings
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import FinishReason, Generation, SamplingParams

if TYPE_CHECKING:
    import vllm

__all__ = ["PROCESSED_LOGPROBS", "VLLMBackend", "check_finish_reason", "request_seed"]

PROCESSED_LOGPROBS = "processed_logprobs"
"""The `logprobs_mode` (`--logprobs-mode`) whose log-probabilities `Generation.logprobs` holds."""


def request_seed(seed: int | None, rank: int, index: int) -> int | None:
    """The seed of the `index`-th prompt of a batch generated with `SamplingParams.seed=seed`
    on process `rank`.

    vLLM seeds each request on its own, so one seed for the whole batch would give every copy
    of a prompt (a GRPO group) the same completion. Each prompt gets its own seed instead,
    drawn from (seed, rank, index): the same batch with the same seed gives the same tokens,
    and two ranks of a multi-process run don't repeat each other's samples. Both vLLM backends
    use this, so an engine in-process and one behind a server sample alike. The result is
    below 2**63, the range the OpenAI-compatible server accepts."""
    if seed is None:
        return None
    digest = hashlib.blake2b(f"{int(seed)}/{int(rank)}/{int(index)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def check_finish_reason(reason: object) -> FinishReason:
    """vLLM's finish reason as `Generation.finish_reason`; anything but "stop" or "length"
    (an aborted or failed request) is an error."""
    if reason == "stop" or reason == "length":
        return reason
    raise RuntimeError(f"vLLM ended a generation with finish_reason={reason!r}, expected 'stop' or 'length'")


def _engine_logprobs_mode(llm: Any) -> str | None:
    for owner in (getattr(llm, "model_config", None), getattr(getattr(llm, "llm_engine", None), "model_config", None)):
        mode = getattr(owner, "logprobs_mode", None)
        if mode is not None:
            return str(getattr(mode, "value", mode))
    return None


class VLLMBackend:
    """Generates with an in-process `vllm.LLM` (see the module docstring).

    `rank` is folded into per-prompt seeds (`request_seed`); `from_trainer` sets it to the
    process index. Not thread-safe: one `generate` at a time, as with `vllm.LLM` itself, and
    no `generate` while streamed requests are in flight."""

    def __init__(self, llm: vllm.LLM, *, rank: int = 0) -> None:
        self.llm = llm
        self.rank = int(rank)
        self._trainer_generation: Any = None
        self._seeded_prefill_budget = _cpu_chunked_prefill_budget(llm)
        self._streamed: dict[str, int] = {}
        """Request id -> key of every streamed request in the engine."""
        self._waiting: deque[tuple[int, list[int], Any]] = deque()
        """Streamed requests held back by the CPU prefill budget (see `_admit`)."""
        self._requests = 0
        mode = _engine_logprobs_mode(llm)
        if mode != PROCESSED_LOGPROBS:
            warnings.warn(
                f"this vLLM engine returns logprobs_mode={mode!r} log-probabilities, not {PROCESSED_LOGPROBS!r}: "
                "Generation.logprobs will not be those of the distribution sampled from unless temperature is 1 "
                "and top_p/top_k don't truncate, which biases an importance-sampling correction. Create the "
                f"engine with vllm.LLM(..., logprobs_mode={PROCESSED_LOGPROBS!r}) (VLLMBackend.from_model does).",
                stacklevel=2,
            )

    @classmethod
    def from_model(cls, model: Any, *, seed: int = 0, rank: int = 0, **llm_kwargs: Any) -> VLLMBackend:
        """Build a `vllm.LLM` for `model` (a path or hub id) and wrap it.

        Defaults: `logprobs_mode="processed_logprobs"` and `seed`; on vLLM's CPU backend also
        `gpu_memory_utilization=0.1` (there the fraction of CPU memory to take),
        `enforce_eager=True` (no torch.compile warm-up) and `enable_chunked_prefill=False`
        (seeded sampling fails there on a prompt prefilled in chunks; see `generate`; vLLM
        then raises `max_num_batched_tokens` to `max_model_len`). `llm_kwargs` go to `vllm.LLM` and
        override these; pass e.g. `max_model_len` to bound the KV cache to what rollouts need.
        Build it under `if __name__ == "__main__":` in a script: vLLM may start processes."""
        import vllm
        from vllm.platforms import current_platform

        kwargs: dict[str, Any] = {"logprobs_mode": PROCESSED_LOGPROBS, "seed": seed}
        if current_platform.is_cpu():
            kwargs.update(gpu_memory_utilization=0.1, enforce_eager=True, enable_chunked_prefill=False)
        kwargs.update(llm_kwargs)
        return cls(vllm.LLM(model=str(model), **kwargs), rank=rank)

    @classmethod
    def from_trainer(cls, trainer: Any) -> VLLMBackend:
        """The colocated engine of a TRL `GRPOTrainer` built with `use_vllm=True,
        vllm_mode="colocate"` (TRL 1.16 keeps it at `trainer.vllm_generation.llm`).

        TRL pushes the policy's weights into it before each `rollout_func` call. With
        `vllm_enable_sleep_mode=True` the backend wakes the engine before generating (and
        reloads the weights if a level-2 sleep dropped them, as TRL's own generation does);
        call `sleep()` after the rollout to give its memory back to training.
        In server mode use `VLLMServerBackend.from_trainer` instead."""
        generation = getattr(trainer, "vllm_generation", None)
        if not getattr(trainer, "use_vllm", False) or generation is None:
            raise ValueError(
                "this trainer does not generate with vLLM: build it with GRPOConfig(use_vllm=True, "
                "vllm_mode='colocate') to share its engine, or use another backend"
            )
        mode = getattr(generation, "mode", None)
        if mode == "server":
            raise ValueError(
                "this trainer uses vLLM in server mode (vllm_mode='server'): there is no engine in this process; "
                "use rlenvs_train.backends.vllm_server.VLLMServerBackend.from_trainer(trainer)"
            )
        if mode != "colocate" or getattr(generation, "llm", None) is None:
            raise ValueError(f"expected TRL's colocated vLLM engine (vllm_mode='colocate'), got vllm_mode={mode!r}")
        tp = int(getattr(generation, "tensor_parallel_size", 1) or 1)
        if tp > 1:
            raise NotImplementedError(
                f"vllm_tensor_parallel_size={tp}: the ranks of a tensor-parallel group must generate the same "
                "batch in lockstep, which a multi-turn rollout (each rank with its own episodes) does not do; "
                "use vllm_tensor_parallel_size=1 or vllm_mode='server'"
            )
        accelerator = getattr(trainer, "accelerator", None)
        backend = cls(generation.llm, rank=getattr(accelerator, "process_index", 0))
        backend._trainer_generation = generation
        return backend

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> list[Generation]:
        """One `Generation` per prompt, in order, from one batched `LLM.generate` call.

        One exception: vLLM's CPU backend fails a seeded request whose prompt it prefills in
        chunks ("CPU Generator does not use offset"), which it does once the batch's prompts
        total more than `max_num_batched_tokens`. On such an engine (chunked prefill on, as
        TRL's colocated one is) a seeded batch is generated in consecutive slices that each
        fit; every prompt keeps the seed of its place in the whole batch, so the tokens are
        those one call would give."""
        from vllm.inputs import TokensPrompt

        batch = [[int(t) for t in prompt] for prompt in prompts]
        if not batch:
            return []
        if self.in_flight():
            raise RuntimeError(
                f"generate() while {self.in_flight()} streamed requests are in flight: LLM.generate would collect "
                "their outputs as its own; collect() them first"
            )
        self._wake_trainer_engine()
        sampling = self._vllm_sampling(params, len(batch))
        outputs = []
        for piece in self._slices(batch, seeded=params.seed is not None):
            outputs += self.llm.generate(
                [TokensPrompt(prompt_token_ids=batch[i]) for i in piece],
                sampling if params.seed is None else [sampling[i] for i in piece],
                use_tqdm=False,
            )
        if len(outputs) != len(batch):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(batch)} prompts")
        return [_generation(request.outputs[0]) for request in outputs]

    def _vllm_sampling(self, params: SamplingParams, count: int, first: int = 0) -> Any:
        """vLLM's sampling parameters for `count` prompts from position `first` of a batch:
        one object for an unseeded batch, else one per prompt with its own seed."""
        from vllm import SamplingParams as VLLMSamplingParams

        common: dict[str, Any] = {
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "top_k": params.top_k,  # 0: no limit, in vLLM as here (-1 also means no limit there)
            "stop_token_ids": list(params.stop_token_ids),
            # Stop only at the ids asked for: without this vLLM also stops at the tokenizer's EOS and the
            # generation config's eos ids. vLLM keeps a stop token as the last of output.token_ids.
            "ignore_eos": True,
            "logprobs": 0,  # the sampled token's log-probability only
            "detokenize": False,
        }
        if params.seed is None:
            return VLLMSamplingParams(**common)
        return [
            VLLMSamplingParams(**common, seed=request_seed(params.seed, self.rank, i))
            for i in range(first, first + count)
        ]

    # --- streaming (StreamingBackend) -----------------------------------------------------------

    def submit(self, key: int, prompt: Sequence[int], params: SamplingParams) -> None:
        """Queue `prompt` as one request; `collect` returns it under `key` (see
        `base.StreamingBackend`): its seed is the one `generate` gives position `key`."""
        from vllm.sampling_params import RequestOutputKind

        tokens = [int(t) for t in prompt]
        sampling = self._vllm_sampling(params, 1, first=key)
        sampling = sampling if params.seed is None else sampling[0]
        sampling.output_kind = RequestOutputKind.FINAL_ONLY  # as LLM.generate: the finished output only
        if params.seed is not None and self._seeded_prefill_budget is not None:
            max_batched, _ = self._seeded_prefill_budget
            if len(tokens) > max_batched:
                raise ValueError(
                    f"prompt {key} has {len(tokens)} tokens, more than this CPU engine's max_num_batched_tokens="
                    f"{max_batched}: vLLM's CPU backend cannot sample it with a seed (its prefill would be chunked). "
                    "Build the engine with enable_chunked_prefill=False (VLLMBackend.from_model does) or a larger "
                    "max_num_batched_tokens, or sample without a seed"
                )
        if not self._streamed and not self._waiting:
            self._wake_trainer_engine()
        self._waiting.append((key, tokens, sampling))

    def collect(self) -> list[tuple[int, Generation]]:
        """Admit what waits, run one engine step, return the requests it finished."""
        from vllm import RequestOutput
        from vllm.inputs import TokensPrompt

        engine = self.llm.llm_engine
        for key, tokens, sampling in self._admit():
            self._requests += 1
            request_id = f"rlenvs-stream-{self._requests}"  # outputs carry this id (vLLM adds a suffix inside)
            engine.add_request(request_id, TokensPrompt(prompt_token_ids=tokens), sampling)
            self._streamed[request_id] = key
        if not self._streamed:
            return []
        finished = []
        for output in engine.step():
            if isinstance(output, RequestOutput) and output.finished and output.request_id in self._streamed:
                finished.append((self._streamed.pop(output.request_id), _generation(output.outputs[0])))
        return finished

    def in_flight(self) -> int:
        return len(self._streamed) + len(self._waiting)

    def abort(self) -> None:
        if self._streamed:
            self.llm.llm_engine.abort_request(list(self._streamed))
        self._streamed.clear()
        self._waiting.clear()

    def _admit(self) -> list[tuple[int, list[int], Any]]:
        """The waiting requests to add to the engine now: all of them, except on a CPU engine
        that prefills in chunks, where a seeded request must be prefilled in one piece (see
        `generate`): there a step's new prompts must fit its token budget beside the
        sequences decoding, and no request may wait for a sequence slot."""
        if self._seeded_prefill_budget is None:
            admitted, self._waiting = list(self._waiting), deque()
            return admitted
        max_batched, max_seqs = self._seeded_prefill_budget
        admitted, used = [], 0
        while self._waiting and len(self._streamed) + len(admitted) < max_seqs:
            tokens = self._waiting[0][1]
            if admitted and used + len(tokens) > max(1, max_batched - max_seqs):
                break
            admitted.append(self._waiting.popleft())
            used += len(tokens)
        return admitted

    def _slices(self, batch: list[list[int]], *, seeded: bool) -> list[range]:
        """The whole batch, or (see `generate`) consecutive slices whose prompts fit the budget."""
        if not seeded or self._seeded_prefill_budget is None:
            return [range(len(batch))]
        max_batched, max_seqs = self._seeded_prefill_budget
        # Prompts that wait for a free sequence slot are prefilled beside up to `max_seqs`
        # decoding sequences, one token each: that much of the step's budget is kept for them.
        budget = max(1, max_batched - max_seqs)
        slices, start, used = [], 0, 0
        for i, prompt in enumerate(batch):
            if len(prompt) > max_batched:
                raise ValueError(
                    f"prompt {i} has {len(prompt)} tokens, more than this CPU engine's max_num_batched_tokens="
                    f"{max_batched}: vLLM's CPU backend cannot sample it with a seed (its prefill would be chunked). "
                    "Build the engine with enable_chunked_prefill=False (VLLMBackend.from_model does) or a larger "
                    "max_num_batched_tokens, or sample without a seed"
                )
            if used + len(prompt) > budget and i > start:
                slices.append(range(start, i))
                start, used = i, 0
            used += len(prompt)
        slices.append(range(start, len(batch)))
        return slices

    def sleep(self) -> None:
        """After a rollout: put TRL's colocated engine back to sleep (level 2, as TRL does), when
        the trainer was built with `vllm_enable_sleep_mode=True`; otherwise do nothing. The next
        `generate` wakes it and reloads the current weights."""
        generation = self._trainer_generation
        if generation is None or not getattr(generation, "enable_sleep_mode", False):
            return
        self.llm.sleep(level=2)
        generation._llm_weights_sleeping = True  # what TRL's VLLMGeneration checks before its own generate

    def _wake_trainer_engine(self) -> None:
        generation = self._trainer_generation
        if generation is None or not getattr(generation, "enable_sleep_mode", False):
            return
        if getattr(generation, "_llm_weights_sleeping", False):
            generation.sync_weights()  # wakes the weights and loads the policy's (as VLLMGeneration.generate does)
        if self.llm.llm_engine.is_sleeping():
            self.llm.wake_up(tags=["kv_cache"])


def _cpu_chunked_prefill_budget(llm: Any) -> tuple[int, int] | None:
    """`max_num_batched_tokens` and `max_num_seqs` of a CPU engine that prefills in chunks;
    None for any other engine."""
    config = getattr(getattr(llm, "llm_engine", None), "vllm_config", None)
    scheduler = getattr(config, "scheduler_config", None)
    device = getattr(getattr(config, "device_config", None), "device_type", None)
    if device != "cpu" or scheduler is None or not getattr(scheduler, "enable_chunked_prefill", False):
        return None
    return int(scheduler.max_num_batched_tokens), int(scheduler.max_num_seqs)


def _generation(output: Any) -> Generation:
    token_ids = tuple(int(t) for t in output.token_ids)
    steps = output.logprobs
    if steps is None or len(steps) != len(token_ids):
        raise RuntimeError(
            f"vLLM returned {0 if steps is None else len(steps)} logprob entries for {len(token_ids)} tokens"
        )
    logprobs = tuple(float(step[token].logprob) for step, token in zip(steps, token_ids))
    return Generation(token_ids=token_ids, logprobs=logprobs, finish_reason=check_finish_reason(output.finish_reason))
