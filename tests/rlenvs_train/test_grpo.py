"""rlenvs_train.grpo: TRL's GRPOTrainer training on rlenvs episodes, on CPU.

Two GRPO steps through the real `GRPOTrainer` on level-1 Arithmetic with the tiny random
Qwen2 of `rlenvs_train.tiny`, once with the hf backend (the trainer's live model) and once
with vLLM in TRL's colocate mode. A probe reward function records what TRL hands the reward
functions: the `env_*` columns of the rollout function, and the prompts, so the test can
check that every GRPO group played one task. The model writes noise, so the env reward is
mostly 0; a scrambling reward gives the groups non-zero advantages, so the two steps really
move the weights (and the vLLM run can check that TRL's weight sync reached its engine).

Env failures: one GRPO step on an env whose step raises on some replies (tests/rlenvs_train/test_evaluate.py's
`CRASHING`, replies scripted by position) checks what TRL trained on: no loss weight on the
failed episodes, advantages over the finished ones, a group with one finished left out whole,
and the failure metrics in the trainer's logs.

The vLLM run goes in a child process (this file run as a script): TRL's colocate mode sets
RANK/WORLD_SIZE, starts a torch.distributed group and vLLM's global parallel state, none of
which can be undone in-process, and other test modules build vLLM engines of their own.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

ENV = "rlenvs/Arithmetic-v1"
KWARGS = {"level": 1, "max_turns": 2}
NUM_GENERATIONS = 2
BATCH = 4
"""Two GRPO groups of two per step."""
STEPS = 2


# --- one GRPO run, shared by the in-process hf test and the vLLM child process ----------------


def grpo_config(output_dir: Path, **overrides: Any) -> Any:
    from trl import GRPOConfig

    settings = {
        "output_dir": str(output_dir),
        "use_cpu": True,
        "bf16": False,
        "per_device_train_batch_size": BATCH,
        "num_generations": NUM_GENERATIONS,
        "max_steps": STEPS,
        "max_completion_length": 96,
        "learning_rate": 1e-3,  # large, so two steps move the policy measurably
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "seed": 0,
        "dataloader_num_workers": 0,
    }
    settings.update(overrides)
    return GRPOConfig(**settings)


def scramble(completion_ids: list[list[int]], **kwargs: Any) -> list[float]:
    """Arbitrary, but differs between samples (lengths don't: the noise fills every turn), so
    groups get non-zero advantages and the two steps have gradients."""
    return [sum(ids) % 101 / 100 for ids in completion_ids]


def train(
    tiny_path: Path,
    output_dir: Path,
    backend: str,
    pool_kwargs: dict[str, Any] | None = None,
    schedule: str = "rounds",
    **config: Any,
) -> tuple[Any, Any, dict[str, Any]]:
    """Two GRPO steps; returns the trainer, the rollout function and what the run recorded.
    `pool_kwargs` go to the rollouts' EnvPool (where the envs run), `schedule` to the engine."""
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    from rlenvs_train.grpo import env_dataset, env_reward, make_rollout_func, scored_only

    dataset = env_dataset(ENV, num_tasks=16, make_kwargs=KWARGS, seed=0)
    calls: list[dict[str, Any]] = []

    @scored_only
    def probe(
        prompts,
        completions,
        env_reward,
        env_success,
        env_turns,
        env_stop_reason,
        env_task_id,
        env_scored,
        task_id,
        **kwargs,
    ):
        calls.append(
            {
                "prompts": [json.dumps(p) for p in prompts],
                "env_reward": list(env_reward),
                "env_success": list(env_success),
                "env_turns": list(env_turns),
                "env_stop_reason": list(env_stop_reason),
                "env_task_id": list(env_task_id),
                "env_scored": list(env_scored),
                "task_id": list(task_id),
                "n": len(completions),
            }
        )
        return [0.0] * len(completions)

    rollout = make_rollout_func(
        ENV, make_kwargs=KWARGS, backend=backend, max_tokens_per_turn=16, pool_kwargs=pool_kwargs, schedule=schedule
    )
    trainer = GRPOTrainer(
        model=str(tiny_path),
        reward_funcs=[env_reward, scored_only(scramble), probe],
        args=grpo_config(output_dir, **config),
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(tiny_path),
        rollout_func=rollout,
    )
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.train()
    moved = max((p.detach() - before[name]).abs().max().item() for name, p in trainer.model.named_parameters())
    record = {
        "global_step": trainer.state.global_step,
        "log_history": trainer.state.log_history,
        "calls": calls,
        "moved": moved,
        "dataset": {row["task_id"]: json.dumps(row["prompt"]) for row in dataset},
        "last_episodes": [
            {"reward": e.reward, "turns": e.turns, "stop_reason": e.stop_reason, "task_id": e.task_id}
            for e in rollout.episodes
        ],
    }
    return trainer, rollout, record


def check_run(record: dict[str, Any]) -> None:
    """What both backends must show: two finite-loss steps whose reward functions got the env's columns."""
    assert record["global_step"] == STEPS
    steps = [entry for entry in record["log_history"] if "loss" in entry]
    assert len(steps) == STEPS, record["log_history"]
    assert all(math.isfinite(entry["loss"]) for entry in steps), steps
    assert record["moved"] > 0, "two steps with non-zero advantages should change the weights"

    calls = record["calls"]
    assert len(calls) == STEPS  # one reward call per generation batch
    for call, logged in zip(calls, steps):
        assert call["n"] == BATCH
        columns = ("env_reward", "env_success", "env_turns", "env_stop_reason", "env_task_id", "env_scored")
        for column in (*columns, "task_id"):
            assert len(call[column]) == BATCH, column
        assert all(call["env_scored"]) and logged["env/infra_failed"] == logged["env/left_out"] == 0.0
        assert all(r in (0.0, 1.0) for r in call["env_reward"])
        assert all(isinstance(s, bool) for s in call["env_success"])
        assert all(s == (r == 1.0) for s, r in zip(call["env_success"], call["env_reward"]))
        assert all(1 <= t <= KWARGS["max_turns"] for t in call["env_turns"])
        assert set(call["env_stop_reason"]) <= {"answered", "max_turns", "max_episode_tokens"}
        # The env reward is what TRL scored with: its logged mean is the probe's mean.
        assert math.isclose(logged["rewards/env_reward/mean"], sum(call["env_reward"]) / BATCH, abs_tol=1e-6)
        # Every GRPO group (consecutive num_generations rows) is one data set row, one prompt, one task.
        for start in range(0, BATCH, NUM_GENERATIONS):
            group = slice(start, start + NUM_GENERATIONS)
            assert len(set(call["prompts"][group])) == 1
            assert len(set(call["task_id"][group])) == 1
            assert len(set(call["env_task_id"][group])) == 1
            # The env played a task that poses this prompt (identical prompts share the first row's task).
            assert record["dataset"][call["env_task_id"][start]] == call["prompts"][start]
        assert len(set(call["prompts"])) == BATCH // NUM_GENERATIONS, "the sampler should draw distinct rows"
    last = calls[-1]
    assert [e["reward"] for e in record["last_episodes"]] == last["env_reward"]
    assert [e["turns"] for e in record["last_episodes"]] == last["env_turns"]


def vllm_child(tiny_path: Path, output_dir: Path, result_path: Path) -> None:
    """The vLLM colocate run (in its own process; see the module docstring), on the
    continuous schedule: the round one's vLLM path is the backend's `generate`, tested in
    tests/rlenvs_train/backends/test_vllm.py, and the glue around the engine is the same for both."""
    import torch

    from rlenvs_train.backends.base import SamplingParams

    trainer, rollout, record = train(
        tiny_path,
        output_dir,
        "vllm",
        schedule="continuous",
        use_vllm=True,
        vllm_mode="colocate",
        vllm_gpu_memory_utilization=0.1,
        vllm_max_model_length=256,
    )
    backend = rollout.engine.backend
    record["backend"] = type(backend).__name__
    record["schedule"] = rollout.engine.schedule
    record["shares_trl_engine"] = backend.llm is trainer.vllm_generation.llm

    # TRL syncs before each generation; sync the weights of the last step now and check that the
    # engine samples from them: its logprobs match the trained policy re-scoring the same tokens
    # (vLLM's CPU backend runs in bfloat16), and the weights moved far more than that tolerance.
    trainer.vllm_generation.sync_weights()
    prompts = [[1, 2, 3, 4, 5], [9, 8, 7]]
    generations = backend.generate(prompts, SamplingParams(max_tokens=16, temperature=1.0, seed=1))
    from transformers import AutoModelForCausalLM

    initial = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32).eval()
    trained = trainer.model.eval()
    engine_vs_trained, initial_vs_trained = [], []
    for prompt, generation in zip(prompts, generations):
        ids = torch.tensor([prompt + list(generation.token_ids)])
        picked = torch.tensor(generation.token_ids)[:, None]
        with torch.no_grad():
            new = torch.log_softmax(trained(ids).logits[0, len(prompt) - 1 : -1].float(), -1).gather(-1, picked)[:, 0]
            old = torch.log_softmax(initial(ids).logits[0, len(prompt) - 1 : -1].float(), -1).gather(-1, picked)[:, 0]
        engine_vs_trained.append((new - torch.tensor(generation.logprobs)).abs().max().item())
        initial_vs_trained.append((new - old).abs().max().item())
    record["engine_vs_trained"] = max(engine_vs_trained)
    record["initial_vs_trained"] = max(initial_vs_trained)
    result_path.write_text(json.dumps(record, default=str))


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "vllm-colocate":
        raise SystemExit(
            "usage: python tests/rlenvs_train/test_grpo.py vllm-colocate TINY_MODEL_DIR OUTPUT_DIR RESULT_JSON"
        )
    vllm_child(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
    sys.exit(0)


# --- the tests ---------------------------------------------------------------------------------

import asyncio
import statistics

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401
from rlenvs_train.grpo import (
    EXTRA_COLUMNS,
    MIN_FINISHED_PER_GROUP,
    RlenvsToolEnv,
    as_environment_factory,
    check_reward_funcs,
    check_rollout_output,
    env_dataset,
    env_reward,
    make_rollout_func,
    scored_episodes,
    scored_only,
)
from rlenvs_train.tiny import build_tiny_model
from tests.rlenvs_train.test_evaluate import CRASH, CRASHING, RIGHT, WRONG, ScriptedModel


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


def reset_accelerate() -> None:
    """Drop the accelerate singletons a trainer leaves in the process, for later modules' trainers."""
    from accelerate.state import AcceleratorState, GradientState

    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()


@pytest.fixture(scope="module")
def hf_run(tiny_path, tmp_path_factory):
    run = train(tiny_path, tmp_path_factory.mktemp("grpo-hf"), "hf")
    yield run
    run[1].close()
    reset_accelerate()


def test_env_dataset_rows_carry_their_task():
    dataset = env_dataset(ENV, num_tasks=6, make_kwargs=KWARGS, seed=0)
    assert dataset.column_names == ["prompt", "task_index", "task_id"]
    assert len(dataset) == 6 and len(set(dataset["task_id"])) == 6
    env = gym.make(ENV, **KWARGS)
    try:
        for row in dataset:
            for option in ({"task_index": row["task_index"]}, {"task_id": row["task_id"]}):
                _, info = env.reset(options=option)
                assert info["task_id"] == row["task_id"]
                assert info["messages"] == row["prompt"]  # system prompt and question, as a chat
    finally:
        env.close()
    assert env_dataset(ENV, num_tasks=3, make_kwargs=KWARGS)["task_index"] == [0, 1, 2]
    assert env_dataset(ENV, num_tasks=6, make_kwargs=KWARGS, seed=0)["task_id"] == dataset["task_id"]
    assert env_dataset(ENV, num_tasks=6, make_kwargs=KWARGS, seed=1)["task_id"] != dataset["task_id"]


def test_env_dataset_errors():
    with pytest.raises(ValueError, match="generates tasks without end: pass num_tasks"):
        env_dataset(ENV, make_kwargs=KWARGS)
    with pytest.raises(ValueError, match="num_tasks must be an int >= 1"):
        env_dataset(ENV, num_tasks=0)
    with pytest.raises(TypeError, match="not an rlenvs TextEnv"):
        env_dataset("CartPole-v1", num_tasks=2)


def test_env_reward_passes_the_column_through():
    assert env_reward(["a", "b"], env_reward=[1, 0.5], env_turns=[1, 2], env_scored=[True, True]) == [1.0, 0.5]
    assert env_reward(["a", "b"], env_reward=[1, 0.0], env_scored=[True, False]) == [1.0, None]
    with pytest.raises(ValueError, match="2 env rewards for 3 completions"):
        env_reward(["a", "b", "c"], env_reward=[1.0, 0.0], env_scored=[True] * 3)


def test_scored_episodes_leave_out_env_failures_and_thin_groups():
    reasons = ["answered", "env_error", "max_turns", "env_timeout", "env_lost", "answered"]
    assert scored_episodes(reasons, 3, MIN_FINISHED_PER_GROUP) == [True, False, True, False, False, False]
    assert scored_episodes(reasons, 3, 1) == [True, False, True, False, False, True]  # evaluation: no group rule
    assert scored_episodes(reasons, 6, MIN_FINISHED_PER_GROUP) == [True, False, True, False, False, True]
    with pytest.raises(ValueError, match="6 episodes do not split into GRPO groups of 4"):
        scored_episodes(reasons, 4, MIN_FINISHED_PER_GROUP)


def test_every_reward_function_must_leave_out_the_unscored():
    def shaping(completions, **kwargs):
        return [0.5] * len(completions)

    async def judged(completions, **kwargs):
        return [0.25] * len(completions)

    wrapped, judged_wrapped = scored_only(shaping), scored_only(judged)
    check_reward_funcs([env_reward, wrapped, judged_wrapped], ["env_reward", "shaping", "judged"])
    with pytest.raises(ValueError, match=r"\['shaping'\] would score the episodes the env failed to play"):
        check_reward_funcs([env_reward, shaping], ["env_reward", "shaping"])
    assert wrapped.__name__ == "shaping"  # TRL logs a reward function under its __name__
    assert wrapped(["a", "b"], env_scored=[False, True]) == [None, 0.5]
    assert asyncio.run(judged_wrapped(["a", "b"], env_scored=[True, False])) == [0.25, None]
    with pytest.raises(ValueError, match="returned 2 rewards for 3 rollouts"):
        wrapped(["a", "b"], env_scored=[True] * 3)


def test_too_few_rollouts_is_a_clear_error():
    good = {
        "prompt_ids": [[1, 2]] * 4,
        "completion_ids": [[3, 4]] * 4,
        "logprobs": [[-0.1, -0.2]] * 4,
        "env_mask": [[1, 1]] * 4,
        "env_reward": [0.0] * 4,
    }
    check_rollout_output(good, 4)
    short = {**good, "env_reward": [0.0] * 3}
    with pytest.raises(ValueError, match=r"3 values of 'env_reward' for 4 prompts: TRL needs one rollout per prompt"):
        check_rollout_output(short, 4)
    with pytest.raises(ValueError, match="2 values of 'prompt_ids' for 4 prompts"):
        check_rollout_output({k: v[:2] for k, v in good.items()}, 4)
    with pytest.raises(ValueError, match=r"lacks \['logprobs'\]"):
        check_rollout_output({k: v for k, v in good.items() if k != "logprobs"}, 4)
    with pytest.raises(ValueError, match="rollout 1 has 1 env_mask for 2 completion tokens"):
        check_rollout_output({**good, "env_mask": [[1, 1], [1], [1, 1], [1, 1]]}, 4)
    with pytest.raises(ValueError, match="rollout 0 has no completion tokens"):
        check_rollout_output({**good, "completion_ids": [[], [3, 4], [3, 4], [3, 4]]}, 4)


def test_make_rollout_func_checks_its_arguments():
    with pytest.raises(ValueError, match="backend must be one of"):
        make_rollout_func(ENV, backend="tgi")
    with pytest.raises(TypeError, match="have generate"):
        make_rollout_func(ENV, backend=object())
    with pytest.raises(ValueError, match="max_turns must be an int >= 1"):
        make_rollout_func(ENV, max_turns=0)


@pytest.mark.slow  # GRPO steps of a real (tiny) model
def test_two_grpo_steps_with_the_hf_backend(hf_run):
    trainer, rollout, record = hf_run
    check_run(record)
    assert rollout.engine.backend.model is trainer.model  # samples from the live policy, not a copy
    assert set(EXTRA_COLUMNS) <= set(record["calls"][0])


@pytest.mark.slow  # GRPO steps of a real (tiny) model
def test_rollout_func_names_prompts_it_cannot_place(hf_run):
    trainer, rollout, _ = hf_run
    stranger = [{"role": "user", "content": "What is 40 + 2?"}]
    with pytest.raises(ValueError, match="in no data set row with a 'task_index' or 'task_id' column"):
        rollout([stranger] * 2, trainer)
    # A data set built with other make_kwargs poses other prompts for the same task ids.
    level2 = make_rollout_func(ENV, make_kwargs={"level": 2, "max_turns": 2}, backend="hf", max_tokens_per_turn=4)
    try:
        with pytest.raises(ValueError, match="build the data set with the same env id and make_kwargs"):
            level2([trainer.train_dataset[0]["prompt"]] * 2, trainer)
    finally:
        level2.close()
    # Given rows explicitly, any prompt among them is played, whatever the trainer was built with.
    rows = env_dataset(ENV, num_tasks=2, make_kwargs=KWARGS, seed=7)
    explicit = make_rollout_func(ENV, make_kwargs=KWARGS, dataset=rows, max_tokens_per_turn=4, max_episode_tokens=8)
    try:
        out = explicit([rows[1]["prompt"]] * 4, trainer)  # two GRPO groups, as TRL sends them
    finally:
        explicit.close()
    assert len(out["completion_ids"]) == 4 and set(out["env_task_id"]) == {rows[1]["task_id"]}
    assert all(len(c) <= 8 for c in out["completion_ids"])


FAILING_SCRIPT = [RIGHT, WRONG, CRASH, RIGHT, CRASH, CRASH]
"""Replies of one generation batch of two groups of three: the first group has two finished
episodes (rewards 1 and 0) and an env failure; the second one finished episode, so none to
compare it with."""


@pytest.mark.slow  # a GRPO step of a real (tiny) model
def test_env_failures_are_left_out_of_the_grpo_loss(tiny_path, tmp_path):
    """One step of TRL's trainer on rollouts whose env fails on CRASH: what it trained on."""
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    one_turn = {"level": 1, "max_turns": 1}
    dataset = env_dataset(CRASHING, num_tasks=4, make_kwargs=one_turn, seed=0)
    columns: dict[str, list] = {}

    @scored_only
    def record(completions, env_stop_reason, env_scored, **kwargs):
        columns.update(env_stop_reason=list(env_stop_reason), env_scored=list(env_scored))
        return [0.5] * len(completions)  # blanked where not scored, else it would shift the baseline

    rollout = make_rollout_func(
        CRASHING,
        make_kwargs=one_turn,
        backend=ScriptedModel(tokenizer, one_turn, dataset["task_index"], FAILING_SCRIPT),
        max_tokens_per_turn=32,
    )
    trainer = GRPOTrainer(
        model=str(tiny_path),
        reward_funcs=[env_reward, record],
        args=grpo_config(tmp_path, per_device_train_batch_size=6, num_generations=3, max_steps=1),
        train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    try:
        trainer.train()
    finally:
        rollout.close()
        reset_accelerate()
    assert columns["env_stop_reason"] == ["answered", "answered", "env_error", "answered", "env_error", "env_error"]
    assert columns["env_scored"] == [True, True, False, False, False, False]
    # TRL scored the failed and the lone finished episode NaN (every reward function gave None) ...
    assert [r if math.isfinite(r) else None for r in trainer._logs["rewards"]["env_reward"]] == [1, 0, *[None] * 4]
    # ... so the first group's advantages are over its two finished episodes, the rest 0.
    finished = statistics.stdev([1.0, 0.0]) + 1e-4  # TRL's scale: the group's std (Bessel) + 1e-4
    expected = [0.5 / finished, -0.5 / finished, 0.0, 0.0, 0.0, 0.0]
    assert list(trainer._logs["advantages"]) == pytest.approx(expected, abs=1e-5)
    # What the step trained on (its rows shuffled): loss weight on the two scored episodes only.
    batch = trainer._buffered_inputs[0]
    weights = (batch["completion_mask"] * batch["tool_mask"]).sum(dim=1)
    trained = weights > 0
    assert trained.sum() == 2 and set(batch["advantages"][~trained].tolist()) == {0.0}
    assert sorted(batch["advantages"][trained].tolist()) == pytest.approx(sorted(expected[:2]), abs=1e-5)
    scored_tokens = sum(len(episode.completion_ids) for episode in rollout.episodes[:2])
    assert batch["num_items_in_batch"] == weights.sum() == scored_tokens  # the loss's denominator (dapo)
    (logged,) = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert math.isfinite(logged["loss"]) and logged["reward"] == pytest.approx(1.0)  # env 0.5 + record 0.5
    assert logged["env/infra_failed"] == logged["env/infra_failed/env_error"] == 0.5
    assert logged["env/infra_failed/env_timeout"] == logged["env/infra_failed/env_lost"] == 0.0
    assert logged["env/left_out"] == pytest.approx(4 / 6)


@pytest.mark.vllm
@pytest.mark.slow
def test_two_grpo_steps_with_vllm_colocate(tiny_path, tmp_path):
    result = tmp_path / "result.json"
    child = subprocess.run(
        [sys.executable, __file__, "vllm-colocate", str(tiny_path), str(tmp_path / "out"), str(result)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-6000:]
    record = json.loads(result.read_text())
    check_run(record)
    assert record["backend"] == "VLLMBackend" and record["shares_trl_engine"]
    assert record["schedule"] == "continuous"
    assert record["engine_vs_trained"] < 0.1, record  # bfloat16 engine vs float32 policy
    assert record["initial_vs_trained"] > 5 * record["engine_vs_trained"], record  # stale weights would show


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_environment_factory_contract():
    factory = as_environment_factory(ENV, **KWARGS)
    env = factory()
    assert isinstance(env, RlenvsToolEnv)
    # TRL exposes every public function of the class but reset and get_reward as a tool.
    import inspect

    public = [n for n, _ in inspect.getmembers(type(env), predicate=inspect.isfunction) if not n.startswith("_")]
    assert sorted(public) == ["get_reward", "reset", "submit"]
    from transformers.utils import get_json_schema

    schema = get_json_schema(env.submit)
    assert schema["function"]["name"] == "submit"
    assert list(schema["function"]["parameters"]["properties"]) == ["reply"]

    row = env_dataset(ENV, num_tasks=1, make_kwargs=KWARGS, seed=3)[0]
    assert env.reset(**row) is None  # the row's prompt already poses the task
    assert env.task_id == row["task_id"]
    feedback = env.submit("no idea")
    assert "boxed" in feedback and env.get_reward() == 0.0 and env.stop_reason is None
    assert env.submit(env.env.unwrapped.oracle_action()) == "The episode is over (answered)."
    assert env.get_reward() == 1.0 and env.turns == 2
    assert "episode is over" in env.submit("\\boxed{0}") and env.get_reward() == 1.0

    # TRL's placeholder rows (no data set): the env draws a task and returns its question.
    question = env.reset(prompt=[{"role": "user", "content": ""}])
    assert question.startswith("What is") and env.get_reward() == 0.0 and env.stop_reason is None
    with pytest.raises(gym.error.Error):
        as_environment_factory("rlenvs/NoSuchEnv-v0")


@pytest.mark.slow  # GRPO steps of a real (tiny) model
def test_environment_factory_in_grpo_trainer(tiny_path, tmp_path):
    """TRL's own tool loop accepts the factory: it resets one env per rollout on the row's task
    and scores with get_reward. (The random model never writes a tool call, so rewards are 0.)"""
    from transformers import AutoTokenizer
    from trl import GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    tokenizer.chat_template = qwen2_5_chat_template  # TRL needs a template that renders tool calls
    dataset = env_dataset(ENV, num_tasks=8, make_kwargs=KWARGS, seed=0)
    trainer = GRPOTrainer(
        model=str(tiny_path),
        args=grpo_config(tmp_path, max_steps=1, max_completion_length=16),
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=as_environment_factory(ENV, **KWARGS),
    )
    assert [tool.__name__ for tool in trainer.tools] == ["submit"]
    assert trainer.reward_func_names == ["RlenvsToolEnv"]
    try:
        trainer.train()
    finally:
        reset_accelerate()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert trainer.state.global_step == 1 and losses and all(math.isfinite(x) for x in losses)
    task_ids = [env.task_id for env in trainer.environments]
    assert len(task_ids) == BATCH and set(task_ids) <= set(dataset["task_id"])
    for start in range(0, BATCH, NUM_GENERATIONS):
        assert len(set(task_ids[start : start + NUM_GENERATIONS])) == 1
