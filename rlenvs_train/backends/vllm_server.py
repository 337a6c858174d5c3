"""The `vllm-server` backend: vLLM's OpenAI-compatible server, called over HTTP with token ids.

    trl vllm-serve --model PATH                                   # or:
    vllm serve PATH --logprobs-mode processed_logprobs

    backend = VLLMServerBackend("http://localhost:8000")
    backend = VLLMServerBackend.from_trainer(trainer)              # TRL's vllm_mode="server" settings

Each prompt is one `POST /v1/completions` with the prompt as token ids, `logprobs=0` and vLLM's
`return_token_ids` (sent in parallel, up to `max_concurrency` at a time; the server batches
them). `submit` / `collect` (the continuous schedule's `StreamingBackend`) send one request
as soon as it is submitted, on a thread pool kept for the backend's life, and hand back those
that have answered. Every process of a multi-GPU run can call the server directly, which
TRL's own client does from the main process only. The log-probabilities are those the server computes: start it
with `--logprobs-mode processed_logprobs` (`trl vllm-serve` does) so that they are the ones of
the distribution sampled from. Only the standard library is used; vLLM need not be installed
on the client.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from .base import Generation, SamplingParams
from .vllm import PROCESSED_LOGPROBS, check_finish_reason, request_seed

__all__ = ["VLLMServerBackend", "VLLMServerError"]

START_HINT = "start one with `trl vllm-serve --model PATH` or `vllm serve PATH --logprobs-mode processed_logprobs`"


class VLLMServerError(RuntimeError):
    """The server answered with an HTTP error; `status` is its code, the message is the server's."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class VLLMServerBackend:
    """Generates with a vLLM OpenAI-compatible server at `base_url` (see the module docstring).

    `model`: the served model name to ask for (default: the first one `/v1/models` lists).
    `timeout`: seconds one request may take. `max_concurrency`: requests in flight at once.
    `connect_timeout`: how long the first call waits for a server that is still starting.
    `rank` is folded into per-prompt seeds (`request_seed`) so that the processes of a
    multi-process run, each calling the server with the same seed, don't repeat each other.
    `api_key`: the server's `--api-key`, if it has one. Thread-safe."""

    def __init__(
        self,
        base_url: str = "http://localhost:8000",
        model: str | None = None,
        *,
        timeout: float = 600.0,
        max_concurrency: int = 64,
        connect_timeout: float = 0.0,
        rank: int = 0,
        api_key: str | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        url = base_url.rstrip("/").removesuffix("/v1")  # an OpenAI-client style base URL works too
        if "://" not in url:
            url = "http://" + url
        self.base_url = url
        self.model = model
        self.timeout = float(timeout)
        self.max_concurrency = int(max_concurrency)
        self.connect_timeout = float(connect_timeout)
        self.rank = int(rank)
        self.api_key = api_key
        self.max_model_len: int | None = None
        self.logprobs_mode: str | None = None
        """The server's `--logprobs-mode`, once known: it is reported only by servers started with
        `VLLM_SERVER_DEV_MODE=1` (as `trl vllm-serve` does); None otherwise."""
        self._ready = False
        self._lock = threading.Lock()
        self._streaming: ThreadPoolExecutor | None = None
        self._streamed: dict[Future[Generation], int] = {}
        """Each streamed request in flight, and its key."""

    @classmethod
    def from_trainer(cls, trainer: Any, **kwargs: Any) -> VLLMServerBackend:
        """A backend for the server a TRL `GRPOTrainer` built with `use_vllm=True,
        vllm_mode="server"` talks to (`vllm_server_base_url`, or `vllm_server_host` and
        `vllm_server_port`), waiting up to `vllm_server_timeout` for it, with this process's
        index as `rank`. TRL pushes the weights into the server from the main process before
        each `rollout_func` call. `kwargs` go to the constructor."""
        args = trainer.args
        base_url = getattr(args, "vllm_server_base_url", None) or (
            f"http://{getattr(args, 'vllm_server_host', 'localhost')}:{getattr(args, 'vllm_server_port', 8000)}"
        )
        kwargs.setdefault("connect_timeout", float(getattr(args, "vllm_server_timeout", 0.0) or 0.0))
        kwargs.setdefault("rank", getattr(getattr(trainer, "accelerator", None), "process_index", 0))
        return cls(base_url, **kwargs)

    def connect(self) -> None:
        """Reach the server (waiting up to `connect_timeout`), learn its model, context length
        and, where it reports it, its logprobs mode; warn if that is not processed_logprobs.
        `generate` does this on its first call."""
        with self._lock:
            if self._ready:
                return
            deadline = time.monotonic() + self.connect_timeout
            while True:
                try:
                    models = self._request("GET", "/v1/models")
                    break
                except ConnectionError:
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(1.0)
            served = models.get("data") or []
            if not served:
                raise VLLMServerError(f"the vLLM server at {self.base_url} serves no model")
            entry = next((m for m in served if m.get("id") == self.model), None)
            if entry is None and self.model is not None:
                names = ", ".join(str(m.get("id")) for m in served)
                raise VLLMServerError(f"the vLLM server at {self.base_url} serves {names}, not {self.model!r}")
            entry = entry or served[0]
            self.model = entry["id"]
            self.max_model_len = entry.get("max_model_len")
            self.logprobs_mode = self._server_logprobs_mode()
            if self.logprobs_mode is not None and self.logprobs_mode != PROCESSED_LOGPROBS:
                warnings.warn(
                    f"the vLLM server at {self.base_url} runs with --logprobs-mode {self.logprobs_mode}: "
                    "Generation.logprobs will not be those of the distribution sampled from unless temperature "
                    "is 1 and top_p/top_k don't truncate, which biases an importance-sampling correction; restart "
                    f"it with --logprobs-mode {PROCESSED_LOGPROBS}",
                    stacklevel=3,
                )
            self._ready = True

    def generate(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> list[Generation]:
        """One `Generation` per prompt, in order: one request per prompt, in parallel."""
        batch = [[int(t) for t in prompt] for prompt in prompts]
        if not batch:
            return []
        self.connect()
        if len(batch) == 1:
            return [self._generate_one(0, batch[0], params)]
        pool = ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(batch)), thread_name_prefix="vllm-server")
        try:
            futures = [pool.submit(self._generate_one, i, prompt, params) for i, prompt in enumerate(batch)]
            return [future.result() for future in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # on an error, send no more requests

    # --- streaming (StreamingBackend) -----------------------------------------------------------

    COLLECT_WAIT_S = 0.005
    """How long `collect` waits for an answer when none is in: short, so that the engine's
    thread soon gets back to the env steps that return meanwhile."""

    def submit(self, key: int, prompt: Sequence[int], params: SamplingParams) -> None:
        """Send `prompt` now (see `base.StreamingBackend`); its seed is that of position `key`."""
        self.connect()
        if self._streaming is None:
            self._streaming = ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="vllm-stream")
        future = self._streaming.submit(self._generate_one, key, [int(t) for t in prompt], params)
        self._streamed[future] = key

    def collect(self) -> list[tuple[int, Generation]]:
        """The requests that have answered (waiting up to `COLLECT_WAIT_S` for one); a request
        that failed raises its error here."""
        if not self._streamed:
            return []
        done, _ = wait(self._streamed, timeout=self.COLLECT_WAIT_S, return_when=FIRST_COMPLETED)
        return [(self._streamed.pop(future), future.result()) for future in done]

    def in_flight(self) -> int:
        return len(self._streamed)

    def abort(self) -> None:
        """Forget the requests in flight (those already sent run to their end on the server)."""
        for future in self._streamed:
            future.cancel()
        self._streamed.clear()

    def close(self) -> None:
        """Stop the streaming threads (after the requests they are waiting on)."""
        self.abort()
        if self._streaming is not None:
            self._streaming.shutdown(wait=True, cancel_futures=True)
            self._streaming = None

    def _generate_one(self, index: int, prompt: list[int], params: SamplingParams) -> Generation:
        max_tokens = params.max_tokens
        if self.max_model_len is not None and len(prompt) < self.max_model_len:
            # The server rejects max_tokens > max_model_len; the in-process engine stops at the context
            # length with finish_reason "length". Do the same here.
            max_tokens = min(max_tokens, self.max_model_len - len(prompt))
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "top_k": params.top_k,  # 0: no limit
            # Sent explicitly so that the server's defaults (from the model's generation_config.json,
            # e.g. repetition_penalty 1.05) don't change the distribution sampled from.
            "min_p": 0.0,
            "repetition_penalty": 1.0,
            "frequency_penalty": 0.0,
            "presence_penalty": 0.0,
            "stop_token_ids": list(params.stop_token_ids),
            "ignore_eos": True,  # stop only at stop_token_ids, as the in-process backend
            "logprobs": 0,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,  # no detokenizing for the logprobs' "tokens"
            "n": 1,
            "stream": False,
        }
        seed = request_seed(params.seed, self.rank, index)
        if seed is not None:
            body["seed"] = seed
        response = self._request("POST", "/v1/completions", body)
        try:
            choice = response["choices"][0]
            token_ids = tuple(int(t) for t in choice["token_ids"])
            logprobs = choice["logprobs"]["token_logprobs"]
            finish_reason = choice["finish_reason"]
        except (KeyError, IndexError, TypeError) as error:
            raise VLLMServerError(
                f"unexpected answer from {self.base_url}/v1/completions (is it a vLLM server? it must return "
                f"token_ids, which vLLM does for return_token_ids): {json.dumps(response)[:500]}"
            ) from error
        if len(logprobs) != len(token_ids) or any(lp is None for lp in logprobs):
            raise VLLMServerError(
                f"the vLLM server returned {len(logprobs)} logprobs ({sum(lp is None for lp in logprobs)} missing) "
                f"for {len(token_ids)} tokens"
            )
        return Generation(
            token_ids=token_ids,
            logprobs=tuple(float(lp) for lp in logprobs),
            finish_reason=check_finish_reason(finish_reason),
        )

    def _server_logprobs_mode(self) -> str | None:
        try:
            info = self._request("GET", "/server_info?config_format=json")
        except VLLMServerError:  # 404 unless the server runs with VLLM_SERVER_DEV_MODE=1
            return None
        try:
            mode = info["vllm_config"]["model_config"]["logprobs_mode"]
        except (KeyError, TypeError):
            return None
        return None if mode is None else str(mode)

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        url = self.base_url + path
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as error:
            raise VLLMServerError(
                f"the vLLM server at {self.base_url} answered {method} {path.split('?')[0]} with HTTP {error.code}: "
                f"{_error_message(error)}",
                status=error.code,
            ) from None
        except TimeoutError as error:  # socket.timeout is TimeoutError
            raise TimeoutError(
                f"the vLLM server at {self.base_url} did not answer {method} {path.split('?')[0]} within "
                f"{self.timeout:g} s (raise `timeout`)"
            ) from error
        except (urllib.error.URLError, ConnectionError) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, TimeoutError):
                raise TimeoutError(
                    f"the vLLM server at {self.base_url} did not answer {method} {path.split('?')[0]} within "
                    f"{self.timeout:g} s (raise `timeout`)"
                ) from error
            raise ConnectionError(
                f"no vLLM server answers at {self.base_url} ({reason}): {START_HINT}, "
                "or pass the base_url it listens on"
            ) from error


def _error_message(error: urllib.error.HTTPError) -> str:
    try:
        text = error.read().decode(errors="replace")
    except Exception:
        return str(error.reason)
    try:
        payload = json.loads(text)
    except ValueError:
        return text.strip()[:1000] or str(error.reason)
    if isinstance(payload, dict):
        inner = payload.get("error")
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if payload.get("message"):
            return str(payload["message"])
        if payload.get("detail"):
            return str(payload["detail"])
    return text.strip()[:1000]
