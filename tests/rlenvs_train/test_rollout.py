"""rlenvs_train.rollout with the hf backend on real multi-turn envs, and its two helpers
(rlenvs_train.chat, rlenvs_train.backends.hf).

The model is the tiny random Qwen2 of rlenvs_train.tiny: it writes noise, which is what
multi-turn envs answer with format reminders, so episodes run several turns. Every
episode is checked against the model and the tokenizer independently of the engine:
re-scoring `prompt_ids + completion_ids` in one forward pass reproduces the sampled
logprobs (token in, token out), the env-masked runs decode to exactly the ChatML text of
the env messages, and the whole sequence decodes to the chat template's rendering of the
transcript.
"""

from __future__ import annotations

import copy
import threading
import time

import gymnasium as gym
import pytest
import torch

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.core.env import Judgement
from rlenvs.envs.math.arithmetic import ArithmeticEnv
from rlenvs.vector import ENV_ERROR, ENV_TIMEOUT, EnvPool
from rlenvs_train.backends.base import SamplingParams
from rlenvs_train.backends.hf import HFBackend
from rlenvs_train.chat import ChatTemplate
from rlenvs_train.rollout import (
    AUTO_ENV_SHARE,
    AUTO_STRAGGLE,
    MAX_EPISODE_TOKENS,
    MAX_TURNS,
    Episode,
    RolloutEngine,
    RunStats,
)
from rlenvs_train.tiny import build_tiny_model

TURN = 16
"""max_tokens_per_turn everywhere: short turns keep the module fast on two cores."""
IM_END = "<|im_end|>"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = build_tiny_model(tmp_path_factory.mktemp("tiny"))
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    return model, tokenizer, path


@pytest.fixture(scope="module")
def backend(tiny):
    return HFBackend(tiny[0])


def engine(tiny, backend, **kwargs) -> RolloutEngine:
    kwargs = {"max_tokens_per_turn": TURN, "seed": 0, **kwargs}
    return RolloutEngine(backend, tiny[1], **kwargs)


# --- independent checks of one episode -------------------------------------------------------


def runs(mask: list[int]) -> list[tuple[int, int, int]]:
    """(value, start, end) of each run of equal values."""
    out, start = [], 0
    for k in range(1, len(mask) + 1):
        if k == len(mask) or mask[k] != mask[start]:
            out.append((mask[start], start, k))
            start = k
    return out


def check_episode(
    episode: Episode, tiny, prompt_messages, *, temperature: float = 1.0, atol: float = 1e-4, stops=()
) -> None:
    """`atol`: how far the sampled logprobs may be from the re-scored ones (1e-4 for the hf
    backend, the same model; vLLM's kernels differ from transformers' by up to ~1e-3).
    `stops`: the stop tokens besides EOS the engine was given (a reply ends before them too)."""
    model, tokenizer, _ = tiny
    eos = tokenizer.eos_token_id
    n = len(episode.completion_ids)
    assert len(episode.env_mask) == len(episode.logprobs) == n > 0
    assert set(episode.env_mask) <= {0, 1}

    # Token in, token out: one forward pass over the whole episode at the sampling temperature.
    ids = episode.prompt_ids + episode.completion_ids
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, len(episode.prompt_ids) - 1 : -1].float()
    rescored = torch.log_softmax(logits / temperature, dim=-1).gather(-1, torch.tensor(episode.completion_ids)[:, None])
    mask = torch.tensor(episode.env_mask, dtype=torch.bool)
    sampled = torch.tensor(episode.logprobs)
    torch.testing.assert_close(sampled[mask], rescored[:, 0][mask], atol=atol, rtol=0)
    assert torch.all(sampled[~mask] == 0.0) and torch.all(sampled[mask] < 0.0)

    # Model runs and env runs alternate, starting and ending with the model.
    segments = runs(episode.env_mask)
    assert [value for value, _, _ in segments] == [1, 0] * (len(segments) // 2) + [1]
    model_runs = [episode.completion_ids[a:b] for value, a, b in segments if value == 1]
    env_runs = [episode.completion_ids[a:b] for value, a, b in segments if value == 0]
    assert len(model_runs) == episode.turns and all(1 <= len(r) <= TURN for r in model_runs)

    # The transcript: the prompt, then each reply as decoded from its tokens, each env message.
    assert episode.transcript[: len(prompt_messages)] == prompt_messages
    rest = episode.transcript[len(prompt_messages) :]
    assert [m["role"] for m in rest] == (["assistant", "user"] * episode.turns)[: 2 * episode.turns - 1]
    assert len(env_runs) == episode.turns - 1
    for k, tokens in enumerate(model_runs):
        stopped, closed = tokens[-1] in (eos, *stops), tokens[-1] == eos
        assert rest[2 * k]["content"] == tokenizer.decode(tokens[:-1] if stopped else tokens)
        if k < len(env_runs):  # the ChatML delta, with <|im_end|> only if the model did not write it
            expected = (
                "" if closed else IM_END
            ) + f"\n<|im_start|>user\n{rest[2 * k + 1]['content']}{IM_END}\n<|im_start|>assistant\n"
            assert tokenizer.decode(env_runs[k]) == expected

    # Prompt and completion render back to the transcript through the chat template (a reply
    # cut at another stop token keeps that token in the ids only, so this holds for EOS alone).
    rendered = tokenizer.apply_chat_template(episode.transcript, tokenize=False)
    assert rendered.endswith(IM_END + "\n")
    ends_closed = episode.completion_ids[-1] == eos
    if not set(episode.completion_ids) & set(stops):
        assert tokenizer.decode(ids) == rendered[: -len(IM_END + "\n")] + (IM_END if ends_closed else "")
    assert tokenizer.decode(episode.prompt_ids) == tokenizer.apply_chat_template(
        prompt_messages, tokenize=False, add_generation_prompt=True
    )
    assert len(episode.turn_rewards) <= episode.turns and episode.reward == sum(episode.turn_rewards)


def reset_messages(env_id: str, kwargs: dict, options=None, seed=None) -> list[dict]:
    env = gym.make(env_id, **kwargs)
    try:
        return env.reset(seed=seed, options=options)[1]["messages"]
    finally:
        env.close()


# --- the engine on real multi-turn envs ---------------------------------------------------------


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_gsm8k_multi_turn_group(tiny, backend):
    kwargs = {"split": "test", "max_turns": 3}
    group = [{"task_index": 5}] * 4  # one GRPO group: the same task four times
    with EnvPool("rlenvs/GSM8K-v1", 4, make_kwargs=kwargs) as pool:
        episodes = engine(tiny, backend).run(pool, group)
    prompt = reset_messages("rlenvs/GSM8K-v1", kwargs, {"task_index": 5})
    assert [e.index for e in episodes] == [0, 1, 2, 3]
    assert len({e.task_id for e in episodes}) == 1 and len({tuple(e.prompt_ids) for e in episodes}) == 1
    assert len({tuple(e.completion_ids) for e in episodes}) == 4  # sampled, not copied
    for episode in episodes:
        check_episode(episode, tiny, prompt)
        assert episode.stop_reason in ("answered", "max_turns")
        assert 1 <= episode.turns <= 3 and len(episode.turn_rewards) == episode.turns
        assert episode.reward in (0.0, 1.0) and episode.turn_rewards[:-1] == [0.0] * (episode.turns - 1)
        assert (episode.stop_reason == "max_turns") == (episode.turns == 3 and episode.info["parsed_answer"] is None)
    assert max(e.turns for e in episodes) >= 2, "the seed should give at least one multi-turn episode"


def test_arithmetic_groups_at_a_lower_temperature(tiny, backend):
    kwargs = {"level": 1, "max_turns": 3}
    tasks = [{"task_index": 0}] * 3 + [{"task_index": 1}] * 3  # two GRPO groups of three
    with EnvPool("rlenvs/Arithmetic-v1", 6, make_kwargs=kwargs) as pool:
        episodes = engine(tiny, backend, temperature=0.7, seed=3).run(pool, tasks)
    prompts = [reset_messages("rlenvs/Arithmetic-v1", kwargs, t) for t in tasks]
    assert len({e.task_id for e in episodes[:3]}) == 1 and len({e.task_id for e in episodes[3:]}) == 1
    assert episodes[0].task_id != episodes[3].task_id
    for episode, prompt in zip(episodes, prompts):
        check_episode(episode, tiny, prompt, temperature=0.7)
        assert episode.stop_reason in ("answered", "max_turns") and 0.0 <= episode.reward <= 1.0
    assert max(e.turns for e in episodes) >= 2


def test_same_seed_same_episodes_and_engine_max_turns(tiny, backend):
    kwargs = {"level": 1, "max_turns": 3}
    with EnvPool("rlenvs/Arithmetic-v1", 3, make_kwargs=kwargs) as pool:
        first = engine(tiny, backend, seed=7).run(pool, [{"task_index": 2}] * 3)
        again = engine(tiny, backend, seed=7).run(pool, [{"task_index": 2}] * 3)
        capped = engine(tiny, backend, seed=7, max_turns=1).run(pool, [{"task_index": 2}] * 3)
    assert [e.completion_ids for e in first] == [e.completion_ids for e in again]
    for full, one in zip(first, capped):
        assert one.turns == 1 and len(one.turn_rewards) == 1
        assert one.completion_ids == full.completion_ids[: len(one.completion_ids)]
        assert one.stop_reason == (full.stop_reason if full.turns == 1 else MAX_TURNS)


def test_max_episode_tokens_cuts_the_turn_that_reaches_it(tiny, backend):
    kwargs = {"level": 1, "max_turns": 3}
    tasks = [{"task_index": 4}] * 4
    with EnvPool("rlenvs/Arithmetic-v1", 4, make_kwargs=kwargs) as pool:
        free = engine(tiny, backend, seed=11).run(pool, tasks)
        long = next(e for e in free if e.turns >= 2)
        second_turn = runs(long.env_mask)[2][1]  # where the second model turn starts
        budget = second_turn + 3
        cut = engine(tiny, backend, seed=11, max_episode_tokens=budget).run(pool, tasks)
        tiny_budget = engine(tiny, backend, seed=11, max_episode_tokens=5).run(pool, tasks)
    prompt = reset_messages("rlenvs/Arithmetic-v1", kwargs, tasks[0])
    for episode in cut + tiny_budget:
        check_episode(episode, tiny, prompt)
    assert all(len(e.completion_ids) <= budget for e in cut)
    short = cut[long.index]
    # Same seed, same draws: the first turn and the env message as before, the second turn cut.
    assert short.completion_ids[:second_turn] == long.completion_ids[:second_turn]
    assert short.stop_reason == MAX_EPISODE_TOKENS and short.turns == 2 and len(short.completion_ids) == budget
    assert short.turn_rewards == long.turn_rewards[:1]  # the cut turn never reached the env
    assert len(short.transcript) == len(prompt) + 3 and short.transcript[-1]["role"] == "assistant"
    eos = tiny[1].eos_token_id
    for episode in tiny_budget:  # the first turn is cut at 5 tokens unless the model stopped sooner
        assert len(episode.completion_ids) <= 5 and episode.turns == 1
        if episode.completion_ids[-1] != eos:
            assert episode.stop_reason == MAX_EPISODE_TOKENS and episode.turn_rewards == []
            assert len(episode.completion_ids) == 5


def test_env_message_that_would_exhaust_the_budget_is_left_out(tiny, backend):
    kwargs = {"level": 1, "max_turns": 3}
    tasks = [{"task_index": 4}] * 4
    with EnvPool("rlenvs/Arithmetic-v1", 4, make_kwargs=kwargs) as pool:
        free = engine(tiny, backend, seed=11).run(pool, tasks)
        long = next(e for e in free if e.turns >= 2)
        first_turn = runs(long.env_mask)[0][2]
        episodes = engine(tiny, backend, seed=11, max_episode_tokens=first_turn + 5).run(pool, tasks)
    short = episodes[long.index]
    assert short.stop_reason == MAX_EPISODE_TOKENS and short.turns == 1
    assert short.completion_ids == long.completion_ids[:first_turn] and set(short.env_mask) == {1}
    assert short.turn_rewards == long.turn_rewards[:1]
    assert short.transcript[-1]["role"] == "assistant"


@pytest.fixture(scope="module")
def eos_prone(tiny):
    """The tiny model with a bias towards <|im_end|> in its output layer, so that it often
    ends its own turns: the path where the env delta must not repeat the end-of-turn token."""
    model, tokenizer, path = tiny
    model = copy.deepcopy(model)
    head = torch.nn.Linear(model.config.hidden_size, model.config.vocab_size, bias=True)
    with torch.no_grad():
        head.weight.copy_(model.get_input_embeddings().weight)
        head.bias.zero_()
        head.bias[tokenizer.eos_token_id] = 4.0
    model.lm_head = head
    return model, tokenizer, path


def test_turns_the_model_ends_itself(eos_prone):
    kwargs = {"split": "test", "max_turns": 3}
    with EnvPool("rlenvs/GSM8K-v1", 4, make_kwargs=kwargs) as pool:
        episodes = engine(eos_prone, HFBackend(eos_prone[0]), seed=1).run(pool, [{"task_index": 9}] * 4)
    prompt = reset_messages("rlenvs/GSM8K-v1", kwargs, {"task_index": 9})
    eos = eos_prone[1].eos_token_id
    closed_then_env = 0
    for episode in episodes:
        check_episode(episode, eos_prone, prompt)
        segments = runs(episode.env_mask)
        closed_then_env += sum(episode.completion_ids[end - 1] == eos for value, _, end in segments[:-1] if value == 1)
    assert closed_then_env >= 1, "the seed should give a turn the model closed itself, followed by an env message"


# --- envs that fail mid-batch ------------------------------------------------------------------

RAISE_SEED, HANG_SEED = 1001, 1002
RELEASE = threading.Event()


class FaultyArithmeticEnv(ArithmeticEnv):
    """Arithmetic-v1 whose first reply always gets a second turn; on that second turn the
    episode reset with RAISE_SEED raises and the one with HANG_SEED hangs."""

    def reset(self, *, seed=None, options=None):
        self.fault_seed = seed
        return super().reset(seed=seed, options=options)

    def judge(self, task, reply):
        if self.turn == 1:
            return Judgement(0.0, resolved=False, correct=False, feedback="Not yet: try again.")
        if self.fault_seed == RAISE_SEED:
            raise RuntimeError("scripted failure on turn 2")
        if self.fault_seed == HANG_SEED:
            RELEASE.wait(30)
        return super().judge(task, reply)


@pytest.fixture
def release_hung_steps():
    RELEASE.clear()
    yield
    RELEASE.set()


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_env_that_raises_or_hangs_ends_only_its_episode(tiny, backend, release_hung_steps):
    seeds = [1, RAISE_SEED, HANG_SEED, 2]
    start = time.monotonic()
    with EnvPool(FaultyArithmeticEnv, 4, make_kwargs={"max_turns": 3}, step_timeout_s=2.0) as pool:
        episodes = engine(tiny, backend).run(pool, [None] * 4, seeds=seeds)
    assert time.monotonic() - start < 25
    fine, raised, hung, fine_too = episodes
    assert raised.stop_reason == ENV_ERROR and "scripted failure" in raised.error
    assert hung.stop_reason == ENV_TIMEOUT and "step_timeout_s" in hung.error
    for failed in (raised, hung):
        assert failed.turns == 2 and failed.turn_rewards == [0.0, 0.0] and failed.reward == 0.0
    for episode in (fine, fine_too):
        assert episode.stop_reason in ("answered", "max_turns") and episode.turns >= 2 and episode.error is None
    for episode, seed in zip(episodes, seeds):
        prompt = reset_messages("rlenvs/Arithmetic-v1", {"max_turns": 3}, seed=seed)
        check_episode(episode, tiny, prompt)


def test_engine_checks_its_arguments(tiny, backend):
    with pytest.raises(ValueError, match="max_episode_tokens"):
        engine(tiny, backend, max_episode_tokens=0)
    with pytest.raises(ValueError, match="max_tokens"):
        engine(tiny, backend, max_tokens_per_turn=0)
    with pytest.raises(TypeError, match="generate"):
        RolloutEngine(object(), tiny[1], max_tokens_per_turn=4)
    with EnvPool("rlenvs/Arithmetic-v1", 2) as pool, pytest.raises(ValueError, match="at least 3 envs"):
        engine(tiny, backend).run(pool, [None] * 3)
    assert engine(tiny, backend).run(None, []) == []
    assert engine(tiny, backend).schedule == "auto"
    with pytest.raises(ValueError, match="schedule='continuous' needs a backend that streams"):
        engine(tiny, backend, schedule="continuous")
    with pytest.raises(ValueError, match="schedule must be one of"):
        engine(tiny, backend, schedule="async")


SLOW_STEP_S = 0.25
"""Well above 10% of a round's generation, even on a loaded machine (16 tokens x 3 episodes)."""


class SlowArithmeticEnv(ArithmeticEnv):
    """Arithmetic-v1 whose steps are slow, as a sandboxed or remote env's are."""

    def step(self, action):
        time.sleep(SLOW_STEP_S)
        return super().step(action)


def test_auto_runs_rounds_on_a_backend_that_does_not_stream_and_reports_each_run(tiny, backend):
    auto = engine(tiny, backend)
    assert auto.schedule == "auto" and auto.last_run is None
    with EnvPool(SlowArithmeticEnv, 3, make_kwargs={"level": 1, "max_turns": 3}) as pool:
        for _ in range(2):
            episodes = auto.run(pool, [None] * 3, seeds=[1, 2, 3])
            stats = auto.last_run
            assert stats is not None and stats.schedule == "rounds"
            assert stats.prefers_continuous()  # slow steps: on vLLM it would go continuous
    turns = [[end - start for value, start, end in runs(e.env_mask) if value] for e in episodes]
    assert [len(t) for t in turns] == [e.turns for e in episodes]
    rounds = max(e.turns for e in episodes)
    assert stats.round_tokens == sum(max(t[k] for t in turns if len(t) > k) for k in range(rounds))
    assert stats.chain_tokens == max(map(sum, turns))
    assert SLOW_STEP_S * rounds <= stats.env_wait_s < stats.wall_s


def test_run_stats_say_when_continuous_pays():
    def stats(env_share: float, round_tokens: int, chain_tokens: int) -> RunStats:
        return RunStats("rounds", 2.0, env_share * 2.0, round_tokens, chain_tokens)

    assert not stats(0.0, 96, 96).prefers_continuous()  # free env, replies of one length
    assert not stats(AUTO_ENV_SHARE * 0.9, 96, 96).prefers_continuous()
    assert stats(AUTO_ENV_SHARE, 96, 96).prefers_continuous()
    assert stats(0.0, round(96 * AUTO_STRAGGLE), 96).prefers_continuous()
    assert stats(0.0, 100, 96).straggle == pytest.approx(100 / 96)
    empty = RunStats("rounds", 0.0, 0.0, 0, 0)
    assert (empty.env_share, empty.straggle, empty.prefers_continuous()) == (0.0, 1.0, False)


# --- the chat-template delta -----------------------------------------------------------------


def test_chatml_delta_closes_the_turn_once(tiny):
    tokenizer = tiny[1]
    chat = ChatTemplate(tokenizer)
    eos = tokenizer.eos_token_id
    assert chat.end_of_turn_id == eos and chat.stop_token_ids() == (eos,)
    message = [{"role": "user", "content": "Try again."}]
    assert chat.delta_text(message) == "<|im_end|>\n<|im_start|>user\nTry again.<|im_end|>\n<|im_start|>assistant\n"
    after_stop = chat.delta_ids(message, [5, 6, eos], "stop")
    after_cut = chat.delta_ids(message, [5, 6, 7], "length")
    assert after_cut == [eos, *after_stop]
    assert tokenizer.decode(after_stop).startswith("\n<|im_start|>user\n")
    tool = chat.delta_text([{"role": "tool", "content": "42"}])
    assert tool == "<|im_end|>\n<|im_start|>tool\n42<|im_end|>\n<|im_start|>assistant\n"
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 7 + 9?"}]
    expected = tokenizer.apply_chat_template(messages, add_generation_prompt=True)["input_ids"]
    assert chat.prompt_ids(messages) == list(expected)
    assert chat.reply_text([5, 6, eos], "stop") == tokenizer.decode([5, 6])
    assert chat.reply_text([5, 6, eos], "length") == tokenizer.decode([5, 6, eos])


LLAMA3_LIKE = (
    "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n"
    "{{ m['content'] | trim }}<|eot_id|>{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)
QWEN3_LIKE = (  # a past assistant turn loses its (empty) think block once a user message follows it
    "{% set ns = namespace(last=0) %}{% for m in messages %}{% if m['role'] == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}"
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['role'] == 'assistant' and loop.index0 > ns.last %}<think>\n\n</think>\n\n{% endif %}"
    "{{ m['content'] }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_delta_with_other_templates(tiny):
    tokenizer = copy.deepcopy(tiny[1])
    tokenizer.chat_template = LLAMA3_LIKE
    message = [{"role": "user", "content": "Try again. "}]
    assert ChatTemplate(tokenizer).delta_text(message) == (
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nTry again.<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    tokenizer.chat_template = QWEN3_LIKE
    chat = ChatTemplate(tokenizer)
    assert chat.end_of_turn_id == tokenizer.eos_token_id
    assert chat.delta_text(message) == "<|im_end|>\n<|im_start|>user\nTry again. <|im_end|>\n<|im_start|>assistant\n"


def test_tokenizer_without_a_chat_template(tiny):
    tokenizer = copy.deepcopy(tiny[1])
    tokenizer.chat_template = None
    with pytest.raises(ValueError, match="no chat template"):
        ChatTemplate(tokenizer)
    tokenizer.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'user' %}{{ m['content'] }}{% endif %}{% endfor %}"
    )
    with pytest.raises(ValueError, match="past assistant turn"):
        ChatTemplate(tokenizer)


# --- the hf backend -------------------------------------------------------------------------


def test_hf_backend_sampling(tiny, backend):
    model, tokenizer, _ = tiny
    prompts = [tokenizer.encode("What is 7 + 9?"), tokenizer.encode("def add(a, b):\n    return a + b\n# and more")]
    params = SamplingParams(max_tokens=8, temperature=0.9, seed=5)
    first, again = backend.generate(prompts, params), backend.generate(prompts, params)
    assert first == again and first != backend.generate(prompts, SamplingParams(max_tokens=8, temperature=0.9, seed=6))
    assert all(len(g.token_ids) == 8 and g.finish_reason == "length" for g in first)

    # Greedy: batched with left padding equals one prompt at a time; logprobs are the raw ones.
    greedy = SamplingParams(max_tokens=6, temperature=0.0)
    batched = backend.generate(prompts, greedy)
    for generation, prompt in zip(batched, prompts):
        alone = backend.generate([prompt], greedy)[0]
        assert generation.token_ids == alone.token_ids
        torch.testing.assert_close(torch.tensor(generation.logprobs), torch.tensor(alone.logprobs), atol=1e-5, rtol=0)
    for prompt, generation in zip(prompts, batched):
        with torch.no_grad():
            logits = model(torch.tensor([prompt + list(generation.token_ids)])).logits[0, len(prompt) - 1 : -1]
        logp = torch.log_softmax(logits.float(), dim=-1)
        assert list(generation.token_ids) == logp.argmax(-1).tolist()
        torch.testing.assert_close(torch.tensor(generation.logprobs), logp.max(-1).values, atol=1e-4, rtol=0)

    # Truncation: top_k=1 or a tiny top_p leave one token, drawn with probability one.
    for params in (SamplingParams(max_tokens=6, top_k=1, seed=1), SamplingParams(max_tokens=6, top_p=1e-6, seed=1)):
        out = backend.generate(prompts, params)
        assert [g.token_ids for g in out] == [g.token_ids for g in batched]
        assert all(lp == 0.0 for g in out for lp in g.logprobs)

    # A stop token ends the turn and is kept as its last token.
    stop = batched[0].token_ids[2]
    cut = backend.generate(prompts[:1], SamplingParams(max_tokens=6, temperature=0.0, stop_token_ids=(stop,)))[0]
    assert cut.token_ids == batched[0].token_ids[: batched[0].token_ids.index(stop) + 1] and cut.finish_reason == "stop"


def test_hf_backend_loads_a_path_and_keeps_a_models_mode(tiny, backend):
    loaded = HFBackend(tiny[2], max_batch_size=1)
    assert loaded.pad_token_id == tiny[1].pad_token_id and loaded.device == torch.device("cpu")
    prompts = [tiny[1].encode("What is 7 + 9?"), tiny[1].encode("Solve for x: 3x + 4 = 19.")]
    greedy = SamplingParams(max_tokens=4, temperature=0.0)
    assert [g.token_ids for g in loaded.generate(prompts, greedy)] == [
        g.token_ids for g in backend.generate(prompts, greedy)
    ]
    model = copy.deepcopy(tiny[0]).train()  # e.g. the trainer's policy, mid-training
    HFBackend(model).generate(prompts, greedy)
    assert model.training
    with pytest.raises(ValueError, match="empty"):
        backend.generate([[]], SamplingParams(max_tokens=2))
