"""rlenvs_train.evaluate: a model played through the rollout engine on a real env, scored.

The model is the tiny random Qwen2 of rlenvs_train.tiny, run by the hf backend: it writes
noise and scores about 0, which is enough to check the output file, the metrics and
determinism. Whether success is counted is checked with `OracleModel`, a backend standing in
for a model that replies with the env's oracle answer (tokenised), so every episode must
succeed; the engine, env pool and envs around it are the real ones. How env failures are
counted is checked with `ScriptedModel` on `CRASHING`, Arithmetic whose step raises on the
reply CRASH (tests/rlenvs_train/test_grpo.py trains with both).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.evaluation.tasks import choose_task_indices
from rlenvs_train.backends.base import Generation, SamplingParams
from rlenvs_train.backends.hf import HFBackend
from rlenvs_train.chat import ChatTemplate
from rlenvs_train.evaluate import RECORD_FIELDS, EvalResult, evaluate, pass_at_k
from rlenvs_train.grpo import _task_indices
from rlenvs_train.tiny import build_tiny_model

ARITHMETIC = "rlenvs/Arithmetic-v1"
LEVEL1 = {"level": 1}
CRASHING = "rlenvs-test/CrashingArithmetic-v0"
"""Arithmetic whose step raises on the reply CRASH: `EnvPool` ends that episode as `env_error`."""
CRASH, RIGHT, WRONG = "CRASH", "right", "wrong"
"""`ScriptedModel`'s replies: the env fails, the task's answer, an answer no level-1 task has."""
WRONG_ANSWER = "\\boxed{-1}"
TURN = 16
"""max_tokens_per_turn for the tiny model: short turns keep the module fast on two cores."""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import AutoTokenizer

    path = build_tiny_model(tmp_path_factory.mktemp("tiny"))
    return path, AutoTokenizer.from_pretrained(path)


SAMPLED = {
    "episodes": 3,
    "k": 2,
    "env_kwargs": {"level": 1, "max_turns": 2},  # noise gets a format reminder and a second turn
    "max_tokens_per_turn": TURN,
    "max_episode_tokens": 128,
    "batch_size": 4,  # 6 episodes: a full batch and a partial one
    "seed": 0,
}


@pytest.fixture(scope="module")
def sampled(tiny, tmp_path_factory) -> tuple[EvalResult, Path]:
    """The tiny model (by path, backend "hf") on 3 tasks, 2 samples each, written to a file."""
    output = tmp_path_factory.mktemp("eval") / "out" / "arithmetic.jsonl"  # out/ does not exist yet
    return evaluate(str(tiny[0]), ARITHMETIC, output=output, **SAMPLED), output


def read_jsonl(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


class Recording:
    """A real backend, with every generation it returned kept."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.generations: list[Generation] = []

    def generate(self, prompts, params: SamplingParams) -> list[Generation]:
        out = self.inner.generate(prompts, params)
        self.generations += out
        return out


class CrashOnReply(gym.Wrapper):
    """An env whose machinery fails on the reply CRASH (its step raises), and plays on otherwise."""

    def step(self, action):
        if action == CRASH:
            raise RuntimeError("the env's machinery failed")
        return self.env.step(action)


if CRASHING not in gym.registry:
    gym.register(CRASHING, entry_point=lambda **kwargs: CrashOnReply(gym.make(ARITHMETIC, **kwargs)))


class OracleModel:
    """Stands in for a model that knows the answers: for the prompt of each task it may be
    asked, the env's `oracle_action()` as tokens (closed by the end-of-turn token). Only the
    first `correct` prompts of each call get it; the rest answer \\boxed{-1}, which no
    level-1 task has (its answers are 0..18)."""

    def __init__(self, tokenizer, env_id, env_kwargs, indices, *, correct: int | None = None) -> None:
        self.chat = ChatTemplate(tokenizer)
        self.eos = tokenizer.eos_token_id
        self.correct = correct
        self.replies: dict[tuple[int, ...], list[int]] = {}
        env = gym.make(env_id, **env_kwargs)
        for index in indices:
            _, info = env.reset(options={"task_index": index})
            prompt = tuple(self.chat.prompt_ids(info["messages"]))
            self.replies[prompt] = self.chat.encode(env.unwrapped.oracle_action())
        env.close()
        self.calls = 0

    def generate(self, prompts, params: SamplingParams) -> list[Generation]:
        self.calls += 1
        out = []
        for position, prompt in enumerate(prompts):
            ids = (self.reply(position, prompt) + [self.eos])[: params.max_tokens]
            finish = "stop" if ids[-1] in params.stop_token_ids else "length"
            out.append(Generation(tuple(ids), (0.0,) * len(ids), finish))
        return out

    def reply(self, position: int, prompt: list[int]) -> list[int]:
        right = self.correct is None or position < self.correct
        return self.replies[tuple(prompt)] if right else self.chat.encode(WRONG_ANSWER)


class ScriptedModel(OracleModel):
    """Replies to the prompt at position p of each call as `script[p]` says: RIGHT (the task's
    answer), WRONG or CRASH (on which `CRASHING` fails). Played on `CRASHING`."""

    def __init__(self, tokenizer, env_kwargs, indices, script) -> None:
        super().__init__(tokenizer, CRASHING, env_kwargs, indices)
        self.script = list(script)

    def reply(self, position: int, prompt: list[int]) -> list[int]:
        kind = self.script[position]
        if kind == RIGHT:
            return self.replies[tuple(prompt)]
        return self.chat.encode(WRONG_ANSWER if kind == WRONG else CRASH)


# --- the output file ------------------------------------------------------------------------


@pytest.mark.slow
def test_output_file_has_one_complete_line_per_episode(sampled, tiny):
    result, output = sampled
    lines = read_jsonl(output)
    assert lines == result.records == [t.to_json() for t in result.trajectories]
    assert len(lines) == result.samples == 6
    assert all(tuple(line) == RECORD_FIELDS for line in lines)
    assert [line["sample"] for line in lines] == [0, 1] * 3
    indices = _task_indices(3, None, 0)  # a procedural env: distinct indices drawn with the seed
    assert [line["option"]["task_index"] for line in lines] == [i for i in indices for _ in range(2)]
    assert [p.name for p in output.parent.iterdir()] == [output.name]  # no temporary file left behind

    env = gym.make(ARITHMETIC, **SAMPLED["env_kwargs"])
    for line in lines:
        _, info = env.reset(options={"task_index": line["option"]["task_index"]})
        assert line["task_id"] == info["task_id"] == f"arithmetic/L1/{line['option']['task_index']}"
        posed = info["messages"]
        assert line["messages"][: len(posed)] == posed
        replies = [m for m in line["messages"][len(posed) :] if m["role"] == "assistant"]
        assert len(replies) == line["turns"] >= 1
        assert isinstance(line["reward"], float) and isinstance(line["success"], bool)
        assert line["success"] is False or line["reward"] == 1.0
        assert line["rewards"] and sum(line["rewards"]) == line["reward"] and len(line["infos"]) == len(line["rewards"])
        assert len(line["finish_reasons"]) == line["turns"] and set(line["finish_reasons"]) <= {"stop", "length"}
        assert isinstance(line["stop_reason"], str) and line["failure"] is None
    env.close()


@pytest.mark.slow
def test_assistant_turns_are_the_models_decoded_tokens(sampled, tiny):
    """The same eval through a Backend instance that records what it generated: the same
    records (the path and the instance are one run), and every assistant message is one of
    the generations decoded, less its stop token."""
    path, tokenizer = tiny
    recording = Recording(HFBackend(str(path)))
    replay = evaluate(recording, ARITHMETIC, tokenizer=tokenizer, **SAMPLED)
    assert replay.records == sampled[0].records
    replies = [m["content"] for r in replay.records for m in r["messages"] if m["role"] == "assistant"]
    assert len(recording.generations) == len(replies) == sum(r["turns"] for r in replay.records)
    stops = set(ChatTemplate(tokenizer).stop_token_ids())
    decoded = {
        tokenizer.decode(g.token_ids[:-1] if g.token_ids[-1] in stops else g.token_ids) for g in recording.generations
    }
    assert set(replies) <= decoded
    assert any(r["turns"] == 2 for r in replay.records)  # the multi-turn path ran


@pytest.mark.slow
def test_rlenvs_eval_rescores_the_output_file_without_the_model(sampled):
    """The output is `rlenvs eval`'s trajectory format: `--policy file:OUT.jsonl` replays each
    line's replies on its task (a procedural env's task index) and pays what the engine paid."""
    import rlenvs.evaluation

    result, output = sampled
    rescored = rlenvs.evaluation.evaluate(ARITHMETIC, f"file:{output}", env_kwargs=SAMPLED["env_kwargs"])
    assert [t.to_json() | {"seconds": {}, "seed": 0} for t in rescored.trajectories] == [
        line | {"finish_reasons": [None] * line["turns"], "seed": 0} for line in result.records
    ]


@pytest.mark.slow
def test_greedy_eval_is_deterministic_and_matches_transformers_generate(tiny):
    path, tokenizer = tiny
    kwargs = {"episodes": 2, "env_kwargs": LEVEL1, "max_tokens_per_turn": 12, "seed": 3}
    first = evaluate(str(path), ARITHMETIC, **kwargs)
    assert first.temperature == 0.0 and first.k == 1  # k=1: greedy by default
    assert evaluate(str(path), ARITHMETIC, **kwargs).records == first.records

    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    # A transformers model object is run by the hf backend as it is.
    assert evaluate(model, ARITHMETIC, tokenizer=str(path), **kwargs).records == first.records
    eos = tokenizer.eos_token_id
    for record in first.records:
        prompt = [m for m in record["messages"] if m["role"] != "assistant"]
        text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        ids = tokenizer.encode(text, add_special_tokens=False)
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]), max_new_tokens=12, do_sample=False, eos_token_id=eos, pad_token_id=eos
            )
        new = out[0, len(ids) :].tolist()
        new = new[: new.index(eos)] if eos in new else new
        assert record["messages"][-1] == {"role": "assistant", "content": tokenizer.decode(new)}


# --- metrics --------------------------------------------------------------------------------


def test_metrics_agree_with_the_records(sampled):
    result = sampled[0]
    records = result.records
    assert (result.episodes, result.samples, result.k, result.samples_per_task) == (3, 6, 2, 2)
    assert result.temperature == 1.0  # several samples per task: sampled, not greedy
    assert result.mean_reward == pytest.approx(sum(r["reward"] for r in records) / 6)
    assert result.success_rate == pytest.approx(sum(r["success"] for r in records) / 6)
    by_task = {}
    for r in records:
        by_task.setdefault(r["option"]["task_index"], []).append(r["success"])
    assert result.pass_at_k == pytest.approx(sum(any(s) for s in by_task.values()) / 3)  # n == k: any success
    assert 0.0 <= result.mean_reward <= 1.0 and 0.0 <= result.success_rate <= result.pass_at_k <= 1.0
    assert 1.0 <= result.mean_turns <= 2.0 and result.mean_turns == sum(r["turns"] for r in records) / 6
    assert sum(result.stop_reasons.values()) == 6
    assert result.stop_reasons == {r: sum(x["stop_reason"] == r for x in records) for r in result.stop_reasons}
    assert result.wall_s > 0
    assert json.loads(json.dumps(result.metrics()))["pass@2"] == result.pass_at_k

    table = result.table().splitlines()
    assert len(table) == 3 and all(line.startswith("|") and line.endswith("|") for line in table)
    assert "pass@2" in table[0] and "success rate" in table[0] and set(table[1]) <= {"|", "-"}
    assert len({len(line) for line in table}) == 1


@pytest.mark.slow
def test_the_oracle_succeeds_on_every_episode(tiny):
    _, tokenizer = tiny
    oracle = OracleModel(tokenizer, ARITHMETIC, LEVEL1, _task_indices(4, None, 0))
    result = evaluate(
        oracle, ARITHMETIC, tokenizer=tokenizer, episodes=4, k=2, env_kwargs=LEVEL1, max_tokens_per_turn=64
    )
    assert (result.success_rate, result.pass_at_k, result.mean_reward, result.mean_turns) == (1.0, 1.0, 1.0, 1.0)
    assert result.stop_reasons == {"answered": 8} and all(r["success"] for r in result.records)


@pytest.mark.slow
def test_a_sized_source_is_played_whole_or_n_distinct_tasks_as_rlenvs_eval_chooses_them(tiny, tmp_path):
    _, tokenizer = tiny
    data = tmp_path / "four.jsonl"
    data.write_text("".join(json.dumps({"question": f"{i} + 1?", "answer": f"#### {i + 1}"}) + "\n" for i in range(4)))
    kwargs = {"data_files": str(data)}
    whole = evaluate(
        OracleModel(tokenizer, "rlenvs/GSM8K-v1", kwargs, [0, 1, 2, 3]), "rlenvs/GSM8K-v1", tokenizer=tokenizer,
        env_kwargs=kwargs, max_tokens_per_turn=64,
    )  # fmt: skip
    assert [r["option"]["task_index"] for r in whole.records] == [0, 1, 2, 3]
    assert whole.success_rate == whole.pass_at_k == 1.0
    drawn = choose_task_indices(4, 3, 5, "")
    assert drawn == sorted(drawn) and len(set(drawn)) == 3  # the draw rlenvs eval makes
    some = evaluate(
        OracleModel(tokenizer, "rlenvs/GSM8K-v1", kwargs, drawn), "rlenvs/GSM8K-v1", tokenizer=tokenizer,
        env_kwargs=kwargs, episodes=3, seed=5, max_tokens_per_turn=64,
    )  # fmt: skip
    assert [r["option"]["task_index"] for r in some.records] == drawn and some.success_rate == 1.0
    with pytest.raises(ValueError, match="more than the 4 tasks"):
        evaluate(str(tiny[0]), "rlenvs/GSM8K-v1", env_kwargs=kwargs, episodes=5)
    with pytest.raises(ValueError, match="procedural"):
        evaluate(str(tiny[0]), ARITHMETIC, env_kwargs=LEVEL1)


@pytest.mark.slow
def test_task_indices_play_exactly_those_tasks(tiny):
    """What a run's held-out measurement relies on: the given tasks, in order, none drawn."""
    _, tokenizer = tiny
    chosen = [41, 7, 123456]
    oracle = OracleModel(tokenizer, ARITHMETIC, LEVEL1, chosen)
    result = evaluate(oracle, ARITHMETIC, tokenizer=tokenizer, task_indices=chosen, env_kwargs=LEVEL1)
    assert [r["option"]["task_index"] for r in result.records] == chosen
    assert result.episodes == 3 and result.success_rate == 1.0


@pytest.mark.slow
def test_pass_at_k_from_more_samples_than_k(tiny):
    """n=4 samples per task, one right (the first of each call of 4: one task's samples):
    pass@2 = 1 - C(3, 2) / C(4, 2) = 0.5."""
    _, tokenizer = tiny
    oracle = OracleModel(tokenizer, ARITHMETIC, LEVEL1, _task_indices(3, None, 0), correct=1)
    result = evaluate(
        oracle, ARITHMETIC, tokenizer=tokenizer, episodes=3, k=2, samples_per_task=4, env_kwargs=LEVEL1, batch_size=4
    )
    assert (result.samples, result.samples_per_task) == (12, 4)
    assert [r["success"] for r in result.records] == [True, False, False, False] * 3
    assert result.success_rate == 0.25
    assert result.pass_at_k == pytest.approx(0.5) == pytest.approx(pass_at_k(4, 1, 2))


def humaneval_pass_at_k(n: int, c: int, k: int) -> float:
    """The HumanEval paper's numerically stable form, to check the exact one against."""
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (1, 0, 1, 0.0),
        (1, 1, 1, 1.0),
        (2, 0, 2, 0.0),
        (2, 1, 2, 1.0),  # n == k: any success
        (5, 2, 1, 0.4),  # k == 1: c / n
        (5, 2, 2, 1 - 3 / 10),
        (10, 3, 5, 1 - 21 / 252),
        (4, 2, 3, 1.0),  # n - c < k: every draw holds a success
        (200, 1, 10, 10 / 200),
        (200, 0, 100, 0.0),
    ],
)
def test_pass_at_k_formula(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)
    assert pass_at_k(n, c, k) == pytest.approx(humaneval_pass_at_k(n, c, k), abs=1e-12)


@pytest.mark.parametrize(("n", "c", "k"), [(2, 0, 3), (2, 3, 2), (2, 0, 0), (2, -1, 1), (0, 0, 0)])
def test_pass_at_k_rejects_impossible_counts(n, c, k):
    with pytest.raises(ValueError, match="pass_at_k needs"):
        pass_at_k(n, c, k)
    with pytest.raises(TypeError):
        pass_at_k(2, True, 1)
    assert math.isclose(pass_at_k(3, 1, 1), 1 / 3)


@pytest.mark.slow
def test_env_failures_are_counted_apart_from_wrong_answers(tiny):
    """Task 0 is answered right, crashed on and answered wrong; task 1 is crashed on three
    times. The rates are over the two finished episodes, not all six."""
    _, tokenizer = tiny
    one_turn = {"level": 1, "max_turns": 1}
    indices = _task_indices(2, None, 0)
    script = [RIGHT, CRASH, WRONG, CRASH, CRASH, CRASH]
    model = ScriptedModel(tokenizer, one_turn, indices, script)
    result = evaluate(
        model, CRASHING, tokenizer=tokenizer, episodes=2, samples_per_task=3, env_kwargs=one_turn, batch_size=6
    )
    records = result.records
    assert [r["stop_reason"] for r in records] == ["answered", "env_error", "answered", *["env_error"] * 3]
    assert [r["success"] for r in records] == [True, None, False, None, None, None]  # a failure has no verdict
    assert [r["failure"] is not None for r in records] == [r["stop_reason"] == "env_error" for r in records]
    assert all("machinery failed" in r["failure"] for r in records if r["failure"] is not None)
    assert result.samples == 6 and result.finished == 2 and result.env_failures == {"env_error": 4}
    assert (result.mean_reward, result.success_rate, result.mean_turns) == (0.5, 0.5, 1.0)
    assert (result.pass_at_k, result.pass_at_k_tasks) == (0.5, 1)  # task 1 has no finished sample
    metrics = json.loads(json.dumps(result.metrics()))
    assert metrics["env_failures"] == {"env_error": 4} and metrics["pass@1_tasks"] == 1
    shown = table_cells(result)
    assert (shown["finished"], shown["env failures"], shown["success rate"]) == ("2", "env_error 4", "50.0%")

    crashed = evaluate(
        ScriptedModel(tokenizer, one_turn, indices, [CRASH] * 2),
        CRASHING,
        tokenizer=tokenizer,
        episodes=2,
        env_kwargs=one_turn,
    )
    assert crashed.finished == crashed.pass_at_k_tasks == 0 and crashed.env_failures == {"env_error": 2}
    assert crashed.mean_reward is crashed.success_rate is crashed.pass_at_k is crashed.mean_turns is None
    shown = table_cells(crashed)
    assert [shown[column] for column in ("mean reward", "success rate", "pass@1", "mean turns")] == ["-"] * 4


def table_cells(result: EvalResult) -> dict[str, str]:
    """The one-row table's cells by column name."""
    header, _, row = (line.split("|")[1:-1] for line in result.table().splitlines())
    return dict(zip((h.strip() for h in header), (v.strip() for v in row)))


# --- an interrupted eval ----------------------------------------------------------------------


class CrashesOnSecondCall(OracleModel):
    def generate(self, prompts, params):
        if self.calls == 1:
            raise RuntimeError("the model crashed")
        return super().generate(prompts, params)


@pytest.mark.slow
def test_an_interrupted_eval_leaves_the_batches_done(tiny, tmp_path):
    _, tokenizer = tiny
    output = tmp_path / "eval.jsonl"
    output.write_text("a stale line from an earlier run\n")
    model = CrashesOnSecondCall(tokenizer, ARITHMETIC, LEVEL1, _task_indices(4, None, 0))
    with pytest.raises(RuntimeError, match="crashed"):
        evaluate(model, ARITHMETIC, tokenizer=tokenizer, episodes=4, env_kwargs=LEVEL1, batch_size=2, output=output)
    lines = read_jsonl(output)
    assert [line["option"]["task_index"] for line in lines] == _task_indices(4, None, 0)[:2]
    assert all(line["success"] for line in lines)
    assert [p.name for p in tmp_path.iterdir()] == [output.name]


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"env_id": "rlenvs/NoSuchEnv-v0"}, ValueError, "rlenvs list"),
        ({"episodes": 0}, ValueError, "episodes must be an int >= 1"),
        ({"k": 0}, ValueError, "k must be an int >= 1"),
        ({"k": 3, "samples_per_task": 2}, ValueError, "at least k=3"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"temperature": -1.0}, ValueError, "temperature"),
        ({"backend": "tgi"}, ValueError, "hf, vllm, vllm-server"),
        ({"server_url": "http://localhost:8000"}, ValueError, "vllm-server"),
        pytest.param(
            {"env_id": "rlenvs/GSM8K-v1", "episodes": 10**7},
            ValueError,
            "more than the 7473 tasks",
            marks=pytest.mark.full_data,
        ),
        ({"model": 42}, TypeError, "local folder or hub id"),
        ({"episodes": None}, ValueError, "procedural"),
        ({"task_indices": [1, 2]}, ValueError, "not both"),
        ({"episodes": None, "task_indices": []}, ValueError, "non-empty list of ints"),
        ({"episodes": None, "task_indices": [3, -1]}, ValueError, "non-empty list of ints"),
    ],
)
@pytest.mark.slow
def test_bad_arguments(tiny, kwargs, error, match):
    arguments = {"model": str(tiny[0]), "env_id": ARITHMETIC, "episodes": 1, **kwargs}
    with pytest.raises(error, match=match):
        evaluate(arguments.pop("model"), arguments.pop("env_id"), **arguments)


@pytest.mark.parametrize("backend", ["hf", "vllm", "vllm-server"])
@pytest.mark.parametrize("missing", ["no-such-model", "./models/nope", "/no/such/model"])
def test_a_missing_model_path_is_reported_before_loading(tmp_path, backend, missing):
    """Every backend name passes validation (vllm included) and reaches the path check."""
    model = tmp_path / missing if missing == "no-such-model" else missing
    with pytest.raises(FileNotFoundError, match="does not exist"):
        evaluate(model, ARITHMETIC, episodes=1, backend=backend)


@pytest.mark.slow
def test_vllm_backend_without_vllm_installed(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # how Python marks a module that cannot be imported
    with pytest.raises(ImportError, match="pip install"):
        evaluate(str(tiny[0]), ARITHMETIC, episodes=1, backend="vllm")


@pytest.mark.slow
def test_a_backend_instance_needs_its_tokenizer(tiny):
    oracle = OracleModel(tiny[1], ARITHMETIC, LEVEL1, [])
    with pytest.raises(ValueError, match="tokenizer="):
        evaluate(oracle, ARITHMETIC, episodes=1)


def test_eval_with_a_runs_config_plays_as_the_run_trained(tiny, tmp_path, capsys):
    """`rlenvs-train eval --config RUN/config.yaml`: the run's final model, env, env kwargs and
    token caps. The quickstart trains with system_prompt null; evaluated under the env's
    default prompt its model scored 0% (issue 42), so the run's own prompt (none) is used.
    Flags still win: --env-arg over one kwarg, --max-tokens-per-turn over the run's cap."""
    from rlenvs_train.cli import main, quickstart_config_path
    from rlenvs_train.config import dump_config, load_config

    run = tmp_path / "run"
    config = load_config(quickstart_config_path(), [f"trainer.output_dir={run}"])
    dump_config(config, run / "config.yaml")
    assert main(["eval", "--config", str(run / "config.yaml"), "--episodes", "1"]) == 2
    assert "final-model is not there" in capsys.readouterr().err
    (run / "final-model").symlink_to(tiny[0], target_is_directory=True)

    out = tmp_path / "as-trained.jsonl"
    assert main(["eval", "--config", str(run / "config.yaml"), "--episodes", "2", "--output", str(out)]) == 0
    assert "max_tokens_per_turn 16, max_episode_tokens 64" in capsys.readouterr().out
    kwargs = dict(config.data.env_kwargs)
    assert kwargs["system_prompt"] is None and config.trainer.max_tokens_per_turn == TURN
    for line in read_jsonl(out):
        _, info = gym.make(config.data.env, **kwargs).reset(options={"task_index": line["option"]["task_index"]})
        assert line["messages"][0]["role"] == "user" and line["messages"][: len(info["messages"])] == info["messages"]
        replies = [m["content"] for m in line["messages"] if m["role"] == "assistant"]
        assert all(len(tiny[1](reply, add_special_tokens=False).input_ids) <= TURN for reply in replies)

    out = tmp_path / "flags.jsonl"
    flags = ["--env-arg", "system_prompt=Answer.", "--max-tokens-per-turn", "3", "--output", str(out)]
    assert main(["eval", "--config", str(run / "config.yaml"), "--episodes", "1", *flags]) == 0
    (line,) = read_jsonl(out)
    assert line["messages"][0] == {"role": "system", "content": "Answer."}
    replies = [m["content"] for m in line["messages"] if m["role"] == "assistant"]
    assert all(len(tiny[1](reply, add_special_tokens=False).input_ids) <= 3 for reply in replies)

    # Without a run's config: the flags, and evaluate's defaults for what they leave out.
    out = tmp_path / "flags-only.jsonl"
    flags = ["--model", str(tiny[0]), "--env", ARITHMETIC, "--env-arg", "level=1", "--max-tokens-per-turn", "2"]
    assert main(["eval", *flags, "--episodes", "2", "--output", str(out)]) == 0
    lines = read_jsonl(out)
    assert len(lines) == 2 and lines[0]["messages"][0]["role"] == "system"  # the env's default prompt
    replies = [m["content"] for line in lines for m in line["messages"] if m["role"] == "assistant"]
    assert all(len(tiny[1](reply, add_special_tokens=False).input_ids) <= 2 for reply in replies)
