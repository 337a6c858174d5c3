"""`--policy model:PATH`: a local model as an evaluation policy (`rlenvs eval`, `rlenvs.evaluate`).

    result = rlenvs.evaluate("rlenvs/GSM8K-v1", "model:runs/quickstart/final-model",
                             env_kwargs={"split": "test"})

Each round of an evaluation hands this policy the pending turn of every episode in play; it
renders each conversation with the model's chat template and generates all of them in one
batched call of an `rlenvs_train` backend (transformers by default, or vLLM). That is what a
served model does with the same messages (`openai:URL`), so the two policies score alike; it
differs from `rlenvs-train eval`, which plays episodes token in, token out as training
samples them (`rlenvs_train.rollout`) and so scores exactly what a rollout would produce.

The run's caps apply as in training: `max_tokens` per reply, and `max_episode_tokens` on the
tokens after the first prompt (replies and env messages, counted on the rendered
conversation): a turn gets at most what is left, and an episode with nothing left ends with
stop reason "max_episode_tokens". Each reply carries its finish reason ("length" when cut).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlenvs.core.checks import check_int
from rlenvs.evaluation.policies import Reply, Turn
from rlenvs_train.backends.base import Backend, SamplingParams
from rlenvs_train.backends.kinds import BACKENDS, KINDS
from rlenvs_train.chat import ChatTemplate
from rlenvs_train.evaluate import DEFAULT_MAX_EPISODE_TOKENS, DEFAULT_MAX_TOKENS_PER_TURN
from rlenvs_train.model_path import checked_model_path

EPISODE_BUDGET_SPENT = "max_episode_tokens"
"""The stop reason of an episode whose token budget ran out (the rollout engine's name)."""


class ModelPolicy:
    """A local model folder or hub id, generating a batch of turns per call.

    `backend`: "hf" (transformers, cuda if there is one), "vllm" (vLLM in this process) or
    "vllm-server" (`server_url`; the model then names the tokenizer). `temperature` 0 is
    greedy. `tokenizer`: a path, default the model's own. `chat_template_kwargs` go to every
    chat-template call (e.g. `enable_thinking=False`); `backend_kwargs` to the backend."""

    default_concurrency = 32
    """Episodes whose turns are generated together: one batched call per round."""

    def __init__(
        self,
        model: str,
        *,
        backend: str = "hf",
        max_tokens: int = DEFAULT_MAX_TOKENS_PER_TURN,
        max_episode_tokens: int | None = DEFAULT_MAX_EPISODE_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
        tokenizer: str | None = None,
        server_url: str | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        backend_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r} for model:{model}: choose one of {', '.join(BACKENDS)}")
        check_int("max_tokens (--max-tokens)", max_tokens, at_least=1, meaning="the cap on one reply")
        if max_episode_tokens is not None:
            check_int("max_episode_tokens", max_episode_tokens, at_least=1, or_none="no limit")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature >= 0:
            raise ValueError(f"temperature must be a number >= 0 (0: greedy), got {temperature!r}")
        path = checked_model_path(model, what=f"model:{model}")
        from transformers import AutoTokenizer

        self.template = ChatTemplate(
            AutoTokenizer.from_pretrained(tokenizer or path), **dict(chat_template_kwargs or {})
        )
        self.backend: Backend = KINDS[backend].for_model(
            path, seed=seed, server_url=server_url, kwargs=dict(backend_kwargs or {})
        )
        self.max_tokens, self.max_episode_tokens = max_tokens, max_episode_tokens
        self.temperature, self.seed = float(temperature), seed
        self.name = f"model:{model}"
        self._first_prompt: dict[int, int] = {}  # episode -> its first prompt's length

    def reply(self, turn: Turn) -> Reply:
        return self.replies([turn])[0]

    def replies(self, turns: Sequence[Turn]) -> list[Reply]:
        """One reply per turn; turns with the same token room are generated in one call."""
        prompts = [self.template.prompt_ids(turn.messages) for turn in turns]
        room = [self._room(turn, prompt) for turn, prompt in zip(turns, prompts)]
        answers: list[Reply] = [Reply(None, EPISODE_BUDGET_SPENT)] * len(turns)
        for cap in sorted({r for r in room if r > 0}):
            rows = [i for i, r in enumerate(room) if r == cap]
            params = SamplingParams(
                max_tokens=cap,
                temperature=self.temperature,
                stop_token_ids=self.template.stop_token_ids(),
                seed=None if self.temperature == 0 else self.seed + turns[rows[0]].seed,
            )
            for row, generation in zip(rows, self.backend.generate([prompts[i] for i in rows], params)):
                text = self.template.reply_text(generation.token_ids, generation.finish_reason)
                answers[row] = Reply(text, generation.finish_reason)
        return answers

    def _room(self, turn: Turn, prompt: list[int]) -> int:
        """Tokens this turn may generate: `max_tokens`, or less where the episode's budget
        (tokens after its first prompt) is nearly spent; 0 when it is spent."""
        if turn.turn == 0:
            self._first_prompt[turn.episode] = len(prompt)
        if self.max_episode_tokens is None:
            return self.max_tokens
        used = len(prompt) - self._first_prompt.get(turn.episode, len(prompt))
        return max(0, min(self.max_tokens, self.max_episode_tokens - used))
