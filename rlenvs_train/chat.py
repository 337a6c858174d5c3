"""The chat template as token deltas: how env messages join an episode's tokens.

Token in, token out: an episode's tokens are the prompt, then the model's sampled tokens
exactly as sampled, then the tokens that add the env's next message(s) and open the next
assistant turn, and so on. The history is never re-rendered and re-tokenised: that could
split the model's text into different tokens than it sampled (BPE is not stable under
concatenation) and some templates rewrite past turns (Qwen3 drops reasoning), either of
which would make the trainer score tokens the model never produced.

The delta for some env messages is found by rendering a fixed dummy conversation that ends
with an assistant turn whose content is a sentinel, followed by the messages, with the
generation prompt; the text after the sentinel is the delta, e.g. for ChatML
"<|im_end|>\\n<|im_start|>user\\n...<|im_end|>\\n<|im_start|>assistant\\n". Its leading
end-of-turn token is dropped when the model's turn already ended with that very token, and
kept when the turn was cut by a length limit, so the delta always closes the turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlenvs_train.backends.base import FinishReason

Message = Mapping[str, str]

SENTINEL = "\u2063RLENVS-ASSISTANT-TURN\u2063"
"""The dummy assistant turn's content: text no template rewrites and no env message holds."""
_DUMMY_USER = {"role": "user", "content": "Hi."}


class ChatTemplate:
    """A tokenizer's chat template seen as token ids: the prompt, env deltas, and replies.

    `template_kwargs` go to every `apply_chat_template` call (e.g. `enable_thinking=False`).
    """

    def __init__(self, tokenizer: Any, **template_kwargs: Any) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError(
                f"{type(tokenizer).__name__} has no chat template: multi-turn rollouts need one to turn "
                "env messages into tokens. Load an instruct/chat model's tokenizer, or set "
                "tokenizer.chat_template to a Jinja template (e.g. ChatML) before building the engine"
            )
        self.tokenizer = tokenizer
        self.template_kwargs = template_kwargs
        closed = self._render([_DUMMY_USER, {"role": "assistant", "content": SENTINEL}], False)
        end_text = closed[self._after_sentinel(closed) :]
        end_ids = self.encode(end_text) if end_text else []
        special = set(getattr(tokenizer, "all_special_ids", ()))
        self.end_of_turn_id: int | None = end_ids[0] if end_ids and end_ids[0] in special else None
        """The special token that ends an assistant turn (ChatML's <|im_end|>), if there is one."""

    # --- what the engine calls ---------------------------------------------------------------

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        """The first prompt: `messages` rendered with the generation prompt, tokenised once."""
        if not messages:
            raise ValueError("the prompt needs at least one message (the env's info['messages'] after reset)")
        return self.encode(self._render([dict(m) for m in messages], True))

    def stop_token_ids(self) -> tuple[int, ...]:
        """Where a turn ends: the tokenizer's EOS and the template's end-of-turn token."""
        ids = [self.tokenizer.eos_token_id, self.end_of_turn_id]
        return tuple(dict.fromkeys(int(i) for i in ids if i is not None))

    def delta_ids(self, messages: Sequence[Message], turn_ids: Sequence[int], finish_reason: FinishReason) -> list[int]:
        """The tokens to append after a model turn (`turn_ids`, as sampled) to add the env's
        `messages` and open the next assistant turn."""
        ids = self.encode(self.delta_text(messages))
        if finish_reason == "stop" and ids and turn_ids and turn_ids[-1] == ids[0]:
            return ids[1:]  # the model already closed its turn with this token
        return ids

    def delta_text(self, messages: Sequence[Message]) -> str:
        """The text that closes an assistant turn, adds `messages`, opens the next turn."""
        for message in messages:
            if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
                raise TypeError(f"an env message must be a dict with a str 'content', got {message!r}")
        rendered = self._render(
            [_DUMMY_USER, {"role": "assistant", "content": SENTINEL}, *(dict(m) for m in messages)], True
        )
        delta = rendered[self._after_sentinel(rendered) :]
        missing = [m["content"] for m in messages if m["content"].strip() not in delta]  # templates may trim
        if missing:
            raise ValueError(
                f"the chat template did not render env message {missing[0][:60]!r} after the assistant turn; "
                "check that it supports the message's role"
            )
        return delta

    def reply_text(self, turn_ids: Sequence[int], finish_reason: FinishReason) -> str:
        """The model's reply as the env sees it: its tokens decoded as they are, less the stop
        token that ended the turn (special tokens sampled mid-reply are kept: what the env
        judges is what the model wrote)."""
        ids = list(turn_ids)
        if finish_reason == "stop" and ids:
            ids = ids[:-1]
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    # --- helpers --------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        # add_special_tokens=False: a template that wants a BOS writes it into the text itself.
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _render(self, messages: list[dict[str, Any]], generation_prompt: bool) -> str:
        # tokenize=False then encode: transformers 5 returns a BatchEncoding for tokenize=True.
        return self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=generation_prompt, **self.template_kwargs
        )

    @staticmethod
    def _after_sentinel(text: str) -> int:
        if text.count(SENTINEL) != 1:
            raise ValueError(
                "the chat template does not render a past assistant turn's content as given, so env "
                "messages cannot be appended as a token delta after the model's own tokens"
            )
        return text.index(SENTINEL) + len(SENTINEL)
