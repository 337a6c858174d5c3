"""The one small interface every generation backend implements.

The rollout engine speaks token ids only (token in, token out): it hands a backend the exact
token ids of each active episode so far and gets back the sampled token ids with their
log-probabilities. A backend never sees text and never applies a chat template, so what
the trainer later scores is exactly what was sampled.

Two shapes: every backend generates a batch in one blocking call (`Backend`, what the
engine's round schedule uses); a backend that can also take prompts one by one and hand
each back when it is done (`StreamingBackend`: vLLM's engine in-process, the vLLM server)
lets the continuous schedule submit an episode's next turn the moment its env step returns,
while other episodes are still generating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from rlenvs.core.checks import check_int

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one turn. `max_tokens` is the cap for this turn; generation also stops
    at any of `stop_token_ids` (the tokenizer's end-of-turn / EOS ids), which are kept as the
    last sampled token. `top_k=0` and `top_p=1.0` mean no truncation; `seed=None` is random.
    A seed covers the whole call: prompts of one call (a GRPO group's identical prompts)
    must still get independent samples, so a backend derives one stream per prompt from it."""

    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    stop_token_ids: tuple[int, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        check_int("SamplingParams.max_tokens", self.max_tokens, at_least=1)
        if not self.temperature >= 0:
            raise ValueError(f"SamplingParams.temperature must be >= 0, got {self.temperature!r}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"SamplingParams.top_p must be in (0, 1], got {self.top_p!r}")
        check_int("SamplingParams.top_k", self.top_k, at_least=0, meaning="0: no limit")
        object.__setattr__(self, "stop_token_ids", tuple(int(t) for t in self.stop_token_ids))


@dataclass(frozen=True)
class Generation:
    """One sampled turn: the new token ids (a stop token, if hit, is the last one), the
    log-probability of each under the distribution it was sampled from (temperature and
    top-p/top-k applied: vLLM's `processed_logprobs`, what TRL's importance-sampling
    correction expects), and why it ended."""

    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    finish_reason: FinishReason

    def __post_init__(self) -> None:
        if len(self.token_ids) != len(self.logprobs):
            raise ValueError(f"Generation has {len(self.token_ids)} tokens but {len(self.logprobs)} logprobs")


@runtime_checkable
class Backend(Protocol):
    """Generates the next turn of many episodes in one batched call."""

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> list[Generation]:
        """One `Generation` per prompt, in order. Each prompt is the episode's whole token
        sequence so far (prompt + completion); the backend continues it as is."""
        ...


@runtime_checkable
class StreamingBackend(Protocol):
    """Takes prompts one at a time and returns each generation as soon as it is finished.

    Used from one thread (the rollout engine's), which alternates `submit` and `collect`."""

    def submit(self, key: int, prompt: Sequence[int], params: SamplingParams) -> None:
        """Start generating `prompt` (the episode's tokens so far). `key` names the request in
        `collect`'s answers (one request per key at a time) and picks its random stream: the
        request is sampled with the seed `generate` would give the `key`-th prompt of a batch
        with `params.seed`, so a seeded request samples the same whenever it is submitted."""
        ...

    def collect(self) -> list[tuple[int, Generation]]:
        """Advance generation a little (one engine step, or a short wait on the server) and
        return the requests finished since the last call, as (key, generation); [] if none."""
        ...

    def in_flight(self) -> int:
        """Requests submitted and not yet collected."""
        ...

    def abort(self) -> None:
        """Drop every request in flight (a rollout that failed half-way): none is collected."""
        ...
