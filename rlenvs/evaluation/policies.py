"""What plays an episode: a policy gives the reply for a turn from the conversation so far.

Named policies (`policy_from_spec`):
- `oracle`: the env's gold reply (`oracle_action()`); measures the env (the oracle should
  reach the maximum reward on every task) and the verifier's cost.
- `random`: a seeded sample of the env's action space (random unicode text, up to 64
  characters for an rlenvs env): the reward of noise, the floor a verifier must hold; it is
  not a model baseline and should score ~0.
- `file:PATH`: replies a model wrote elsewhere, from a completions file or a trajectories
  file of an earlier run, keyed by task id and sample (`rlenvs.evaluation.replies`).
- `openai:URL`: a model behind an OpenAI-compatible API, chat or completions
  (`rlenvs.evaluation.openai_api`), asked for several episodes' turns at once (`concurrent`),
  so the server batches them.
- `model:PATH`: a local model folder or hub id, run in this process by `rlenvs_train`
  (`rlenvs_train.model_policy`, the train extra), a batch of episodes' turns per call.

Any callable `messages -> reply` is a policy too (an agent, a model of your own).

A reply is the text, or a `Reply` that also says why generation stopped ("length": cut at
the token cap, which a table of wrong answers should show apart) or, with no text, why the
policy ends the episode (a model's episode token budget spent).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import gymnasium as gym

from rlenvs.evaluation import openai_api
from rlenvs.evaluation.replies import RecordedEpisode, RecordedReplies

Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class Reply:
    """A policy's answer for one turn, when it has more to say than the text."""

    text: str | None
    """The reply; None ends the episode without one (stop reason `finish_reason`)."""
    finish_reason: str | None = None
    """Why generation stopped: "stop", "length" (cut at the token cap), or why there is no text."""


@dataclass(frozen=True)
class Turn:
    """Everything a policy may look at for one reply."""

    messages: Messages
    """The conversation so far: the env's messages at reset, then each reply and the env's answer."""
    env: gym.Env
    task_id: str
    sample: int
    turn: int
    """Replies already given in this episode (0 for the first)."""
    seed: int
    """The episode's seed, for a policy that samples."""
    episode: int = 0
    """The episode's place in the run (a recorded policy's episodes are the file's lines)."""


class Policy(Protocol):
    """What `evaluate` plays. Optional, read where present: `concurrent` (True: `reply` may be
    called from several threads at once, as for a server), `replies(turns)` (one call for a
    batch of turns of different episodes, as a local model generates them), and
    `default_concurrency` (episodes played at once when the caller does not say)."""

    name: str

    def reply(self, turn: Turn) -> str | Reply | None:
        """The reply, or None when the policy has none left (a file's replies ran out)."""


class _Oracle:
    name = "oracle"

    def reply(self, turn: Turn) -> str:
        # Duck-typed: an env of another package may have one too.
        oracle = getattr(turn.env.unwrapped, "oracle_action", None)
        if not callable(oracle):
            raise ValueError(f"{type(turn.env.unwrapped).__name__} has no oracle_action(): --policy oracle needs one")
        return cast(str, oracle())


class _Random:
    name = "random"

    def reply(self, turn: Turn) -> str:
        space = turn.env.action_space
        space.seed(turn.seed * 1009 + turn.turn)  # each turn its own draw, the same in every run
        return cast(str, space.sample())


class _Callable:
    def __init__(self, function: Callable[[list[dict[str, str]]], str]) -> None:
        self.function = function
        self.name = getattr(function, "__name__", type(function).__name__)

    def reply(self, turn: Turn) -> str:
        reply = self.function([dict(m) for m in turn.messages])
        if not isinstance(reply, str):
            raise TypeError(f"policy {self.name} returned {type(reply).__name__}, not the reply as a str")
        return reply


class RecordedPolicy:
    """Replies read from a file; its lines are the run's episodes, in order."""

    def __init__(self, path: str) -> None:
        self.recorded: list[RecordedEpisode] = RecordedReplies.read(path)
        self.name = f"file:{path}"

    def reply(self, turn: Turn) -> str | Reply:
        recorded = self.recorded[turn.episode]
        if turn.turn < len(recorded.replies):
            return recorded.replies[turn.turn]
        if recorded.failure is not None:
            raise openai_api.PolicyError(f"the recorded episode failed: {recorded.failure}")
        return Reply(None, recorded.stop_reason or "policy_exhausted")


class OpenAIPolicy:
    """A model behind an OpenAI-compatible endpoint, called once per turn with the whole
    conversation. `model` None asks the server's `/models` (one model served: that one).

    `api` "chat" (the default) sends the messages and the server applies the model's chat
    template; "completions" renders them here with `tokenizer`'s chat template (a path or hub
    id, default the served model's name, which `vllm serve PATH` reports as PATH; needs
    transformers) and sends the text: for a server without a chat template of its own."""

    def __init__(
        self,
        url: str,
        *,
        model: str | None = None,
        api: str = "chat",
        tokenizer: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout_s: float = 300.0,
        retries: int = 3,
    ) -> None:
        if api not in openai_api.API_PATHS:
            raise ValueError(f"api (--api) must be one of {', '.join(openai_api.API_PATHS)}, got {api!r}")
        if tokenizer is not None and api != "completions":
            raise ValueError("tokenizer (--tokenizer) renders the prompt of api='completions'; drop it for chat")
        self.base = openai_api.api_base(url)
        self.api, self.tokenizer = api, tokenizer
        self.temperature, self.max_tokens, self.timeout_s, self.retries = temperature, max_tokens, timeout_s, retries
        self._model = model
        self._reached = False
        self._template: Any = None
        self.name = f"openai:{self.base}"
        self._contact = threading.Lock()

    concurrent = True
    """Turns of several episodes are sent at once, each from its own thread: a server batches
    concurrent requests (vLLM's continuous batching), so one at a time would leave it idle."""
    default_concurrency = 8

    @property
    def model(self) -> str:
        """The served model: `model` as given, else the one the server lists. The first call
        also checks that the server answers (see `_first_contact`)."""
        with self._contact:  # the first turns of a batch arrive together: one contact
            if self._model is None or not self._reached:
                listing = self._first_contact()
                self._model = openai_api.only_model(listing, self.base) if self._model is None else self._model
            if self.api == "completions" and self._template is None:
                self._template = _chat_template(self.tokenizer or self._model)
        return self._model

    def _first_contact(self) -> Any:
        """`GET {base}/models`, once, before the first request. A server that never answered is
        a wrong URL or a server not started: a ValueError, which stops the run, instead of a
        PolicyError per episode that would retry with growing pauses on every task (a down
        server cost 14 s per task at the default 3 retries: five hours for GSM8K's test split)
        and end in a table of infrastructure failures. Once it has answered, a failure is one
        episode's infrastructure failure, as before."""
        try:
            listing = openai_api.call_json(f"{self.base}/models", None, timeout_s=self.timeout_s, retries=self.retries)
        except openai_api.PolicyError as error:
            raise ValueError(
                f"openai:{self.base}: its model list could not be read ({error}): start the server (e.g. "
                f"vllm serve MODEL --port 8000), fix the URL, or set ${openai_api.API_KEY_ENV} if it needs a key"
            ) from None
        self._reached = True
        return listing

    def reply(self, turn: Turn) -> Reply:
        model = self.model
        url = f"{self.base}/{openai_api.API_PATHS[self.api]}"
        sampling: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": turn.seed}
        if self.api == "chat":
            body = openai_api.chat_request(model, turn.messages, **sampling)
        else:
            prompt = self._template.apply_chat_template(
                [dict(m) for m in turn.messages], tokenize=False, add_generation_prompt=True
            )
            body = openai_api.completions_request(model, prompt, **sampling)
        answer = openai_api.read_reply(
            openai_api.call_json(url, body, timeout_s=self.timeout_s, retries=self.retries), url, self.api
        )
        return Reply(answer.text, answer.finish_reason)


def _chat_template(tokenizer: str) -> Any:
    """The tokenizer whose chat template renders a completions prompt."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ImportError(
            "--api completions renders the chat here with the model's tokenizer, which needs transformers: "
            'pip install transformers (or the train extra, pip install -e ".[train]"); or use --api chat'
        ) from None
    loaded = AutoTokenizer.from_pretrained(tokenizer)
    if not getattr(loaded, "chat_template", None):
        raise ValueError(
            f"{tokenizer}'s tokenizer has no chat template to render the prompt: name one with --tokenizer"
        )
    return loaded


def policy_from_spec(spec: Any, **options: Any) -> Policy:
    """A policy from what `evaluate` or `--policy` is given: a Policy, a callable
    `messages -> reply`, or a name (`oracle`, `random`, `file:PATH`, `openai:URL`,
    `model:PATH`); `options` go to the openai or model policy's constructor."""
    if hasattr(spec, "reply") and hasattr(spec, "name"):
        return cast(Policy, spec)
    if callable(spec):
        return _Callable(spec)
    if not isinstance(spec, str):
        raise TypeError(f"policy must be a name or a callable messages -> reply, got {type(spec).__name__}")
    if spec == "oracle":
        return _Oracle()
    if spec == "random":
        return _Random()
    if spec.startswith("file:"):
        return RecordedPolicy(spec.removeprefix("file:"))
    if spec.startswith("openai:"):
        return OpenAIPolicy(spec.removeprefix("openai:"), **options)
    if spec.startswith("model:"):
        return _model_policy(spec.removeprefix("model:"), options)
    raise ValueError(
        f"unknown policy {spec!r}: use 'oracle', 'random', 'file:COMPLETIONS.jsonl' (or an earlier run's "
        "trajectories), 'openai:URL' (an OpenAI-compatible server), 'model:PATH' (a local model), or in Python "
        "a callable messages -> reply"
    )


def _model_policy(model: str, options: dict[str, Any]) -> Policy:
    """`model:PATH`: rlenvs_train runs the model (torch and transformers, the train extra)."""
    try:
        from rlenvs_train.model_policy import ModelPolicy
    except ImportError as error:
        raise ImportError(
            f"--policy model:{model} runs the model in this process, which needs the train extra "
            f'({error.name or error} is missing): pip install -e ".[train]" (or serve the model with vllm serve '
            "and use --policy openai:URL)"
        ) from None
    return cast(Policy, ModelPolicy(model, **options))
