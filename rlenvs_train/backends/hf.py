"""`HFBackend`: generation with plain transformers, for CPU, tests and small models.

A hand-written sampling loop over the model's KV cache rather than `model.generate`, for
three reasons: the log-probability of each sampled token is computed from exactly the
distribution it was drawn from (no reconstruction from `scores` after the fact); sampling
draws from a `torch.Generator`, so a seed never touches torch's global RNG (the trainer's);
and the processing order is spelled out here, the same as vLLM's sampler: temperature, then
top-k, then top-p, then the log-softmax that gives `Generation.logprobs` (vLLM's
`processed_logprobs`).

`temperature=0` is greedy decoding: the token is the argmax of the raw logits and its
logprob is taken under the raw, untempered and untruncated distribution (top-k and top-p do
not change an argmax, and a distribution at temperature 0 would give every token 0 or -inf).

Prompts of different lengths are left-padded into one batch with explicit position ids, so
each row sees exactly what it would see alone; `max_batch_size` bounds memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from rlenvs_train.backends.base import Generation, SamplingParams


class HFBackend:
    """Generate turns with a transformers causal LM (a model object or a path to load).

    A model object is used where it is (e.g. the trainer's policy): `device=None` leaves it
    on its device, and generation switches it to eval mode only for the call. A path is
    loaded onto `device` (default cpu) in `dtype` (float32 by default, so that re-scoring
    reproduces the sampled logprobs closely). `pad_token_id`: any valid id (padded positions
    are masked out); by default the model's own pad id, else 0."""

    def __init__(
        self,
        model: Any,
        *,
        device: str | torch.device | None = None,
        dtype: torch.dtype = torch.float32,
        pad_token_id: int | None = None,
        max_batch_size: int | None = None,
    ) -> None:
        if isinstance(model, (str, Path)):
            from transformers import AutoModelForCausalLM

            # transformers wraps PreTrainedModel.to in a decorator whose type hides the signature
            model = AutoModelForCausalLM.from_pretrained(model, dtype=dtype).to(device or "cpu")  # type: ignore[arg-type]
        if not callable(model) or not hasattr(model, "config"):
            raise TypeError(f"HFBackend needs a transformers causal LM or a path to one, got {type(model).__name__}")
        if max_batch_size is not None and (
            isinstance(max_batch_size, bool) or not isinstance(max_batch_size, int) or max_batch_size < 1
        ):
            raise ValueError(f"max_batch_size must be an int >= 1 or None (one batch), got {max_batch_size!r}")
        if device is not None:
            model = model.to(device)
        self.model = model
        self.device = next(model.parameters()).device
        if pad_token_id is None:
            pad_token_id = getattr(model.config, "pad_token_id", None)
        self.pad_token_id = int(pad_token_id) if pad_token_id is not None else 0
        self.max_batch_size = max_batch_size

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> list[Generation]:
        prompts = [list(prompt) for prompt in prompts]
        for k, prompt in enumerate(prompts):
            if not prompt:
                raise ValueError(
                    f"prompt {k} is empty: a backend continues a token sequence, give it at least one token"
                )
        if not prompts:
            return []
        generator = None
        if params.seed is not None:
            generator = torch.Generator(self.device).manual_seed(params.seed)
        size = self.max_batch_size or len(prompts)
        out: list[Generation] = []
        training = self.model.training
        self.model.eval()  # no dropout while sampling; the caller's mode is restored after
        try:
            for start in range(0, len(prompts), size):
                out.extend(self._generate_batch(prompts[start : start + size], params, generator))
        finally:
            self.model.train(training)
        return out

    @torch.inference_mode()
    def _generate_batch(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams, generator: torch.Generator | None
    ) -> list[Generation]:
        rows, width = len(prompts), max(len(p) for p in prompts)
        input_ids = torch.full((rows, width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((rows, width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            input_ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
            attention[row, width - len(prompt) :] = 1
        input_ids, attention = input_ids.to(self.device), attention.to(self.device)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        output = self.model(
            input_ids=input_ids, attention_mask=attention, position_ids=positions, use_cache=True, logits_to_keep=1
        )
        next_position = attention.sum(-1, keepdim=True)
        stop = set(params.stop_token_ids)
        tokens: list[list[int]] = [[] for _ in prompts]
        logprobs: list[list[float]] = [[] for _ in prompts]
        finished = [False] * rows
        for step in range(params.max_tokens):
            chosen, chosen_logprobs = sample(output.logits[:, -1, :].float(), params, generator)
            for row, (token, logprob) in enumerate(zip(chosen.tolist(), chosen_logprobs.tolist())):
                if not finished[row]:
                    tokens[row].append(token)
                    logprobs[row].append(logprob)
                    finished[row] = token in stop
            if all(finished) or step == params.max_tokens - 1:
                break
            # Finished rows keep decoding (their tokens are dropped): the batch stays rectangular.
            attention = torch.cat([attention, attention.new_ones((rows, 1))], dim=-1)
            output = self.model(
                input_ids=chosen[:, None],
                attention_mask=attention,
                position_ids=next_position,
                past_key_values=output.past_key_values,
                use_cache=True,
            )
            next_position = next_position + 1
        return [
            Generation(tuple(t), tuple(lp), "stop" if t and t[-1] in stop else "length")
            for t, lp in zip(tokens, logprobs)
        ]


def processed_logprobs(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Log-probabilities of the distribution a token is sampled from, for logits [rows, vocab]:
    temperature, then top-k, then top-p (tokens cut off get -inf). At temperature 0, the raw
    log-softmax (see the module docstring). Public so tests can re-score with the same rule."""
    if params.temperature == 0:
        return torch.log_softmax(logits, dim=-1)
    logits = logits / params.temperature
    if 0 < params.top_k < logits.shape[-1]:
        kth = torch.topk(logits, params.top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if params.top_p < 1.0:
        ordered, order = torch.sort(logits, dim=-1, descending=True)
        probs = torch.softmax(ordered, dim=-1)
        # Drop a token when the tokens more likely than it already cover top_p (the first stays).
        drop = (probs.cumsum(-1) - probs) >= params.top_p
        drop[..., 0] = False
        logits = logits.scatter(-1, order, ordered.masked_fill(drop, float("-inf")))
    return torch.log_softmax(logits, dim=-1)


def sample(
    logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row and its processed logprob."""
    logp = processed_logprobs(logits, params)
    if params.temperature == 0:
        chosen = logits.argmax(dim=-1)
    else:
        chosen = torch.multinomial(logp.exp(), 1, generator=generator).squeeze(-1)
    return chosen, logp.gather(-1, chosen[:, None]).squeeze(-1)
