"""`rlenvs-train`: one config in, a GRPO run out. What `rlenvs_train.cli` calls.

    from rlenvs_train.config import load_config
    from rlenvs_train.train import train

    run = train(load_config("examples/quickstart.yaml"))
    print(run.reward_gain)

The run, in order, everything under `trainer.output_dir`:
1. The config is validated (schema and machine: env id, model path, data files, packages)
   before anything heavy loads, and saved as `config.yaml`.
2. The model: `trainer.policy.model.path`, or for "tiny" a random model built into
   `tiny-model/` (the offline quickstart: no download).
3. An optional SFT warm-up (`trainer.sft_warmup.episodes > 0`) with TRL's `SFTTrainer` on
   the env's oracle conversations (`rlenvs.integrations.sft`), one example per assistant turn with the
   loss on that turn only, saved to `sft-model/`: a model that never writes the answer
   format earns no reward for GRPO to climb (`rlenvs_train.sft_warmup`).
4. GRPO with TRL's `GRPOTrainer`, its rollouts played by `rlenvs_train.grpo`'s rollout
   function (multi-turn, token in / token out) on the train tasks: `data.train_data`
   Parquet files from `rlenvs export` (checked against the env), else
   `data.num_train_tasks` tasks drawn from the env with the seed.
5. Metrics (`rlenvs_train.run_metrics`): every logged step goes to `metrics.json` (rewritten
   whole, atomically) and the reward curve to `reward.png`; checkpoints every `trainer.save_steps` in `checkpoint-N/`.
   With `data.heldout_tasks: N`, N problems are set aside before anything trains, apart by
   content from every training episode (GRPO's and the SFT warm-up's), and the policy's
   greedy accuracy on them is measured at the start of GRPO, every `save_steps` and at the
   end (`rlenvs_train.heldout`): the figure that tells learning from memorising. It goes to `metrics.json` ("heldout"), `reward.png` and
   the run's closing lines.

The console (`rlenvs_train.console`) shows one line per event and GRPO step and the progress bars; `verbose=True`
(`--verbose`) adds the trainers' own per-step metric dicts, the third-party warnings that
are known and harmless here (TRL's vLLM version range, its experimental `rollout_func`
notice, library FutureWarnings), and transformers' and datasets' own progress bars and
warnings.

Interrupting (Ctrl-C, SIGTERM) stops after the current step, saves a checkpoint and the
metrics, and `resume=True` (`--resume`) continues from the last checkpoint, with the run's own
config.yaml (`rlenvs_train.resume`) and to its own last step; a finished run is not resumed.
A folder with checkpoints is never trained into again without `resume`: that would mix two runs.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlenvs.files import atomic_folder
from rlenvs_train.backends.kinds import KINDS
from rlenvs_train.config import TrainConfig, dump_config, validate
from rlenvs_train.console import console_output, hide_tied_missing_keys, quiet_progress, stop_on_signals
from rlenvs_train.env_workers import connect_ray, pool_kwargs
from rlenvs_train.heldout import (
    HeldoutAccuracy,
    HeldoutTasks,
    accuracy_line,
    draw_heldout,
)
from rlenvs_train.resume import RUN_CONFIG, differences, finished_problem, resolved_by_run_config, saved_config
from rlenvs_train.run_metrics import CURVE_FILE, METRICS_FILE, RunMetrics
from rlenvs_train.sft_warmup import device_args, sft_warmup

__all__ = ["RunInputError", "TrainResult", "console_line", "grpo_args", "reward_gain", "train", "world_size"]

TINY_MODEL = "tiny"
SCALE_REWARDS = {"grpo": "group", "dr_grpo": "none"}
"""`algorithm.advantage_estimator` -> TRL's `scale_rewards`: divide by the group's std, or not."""


class RunInputError(ValueError):
    """The run cannot start as configured (placement, device, output folder, task data);
    raised before any model loads. Errors after that are not input errors and keep their
    type and traceback."""


@dataclass(frozen=True)
class TrainResult:
    output_dir: Path
    model_dir: Path
    """Where the trained policy was saved: `final-model/` under the output folder, or the
    checkpoint an interrupted run saved."""
    steps: int
    rewards: tuple[float, ...]
    """Mean env reward of each logged GRPO step, in order."""
    interrupted: bool
    heldout: tuple[dict[str, Any], ...] = ()
    """The held-out measurements (`data.heldout_tasks`), in step order: `step`, `accuracy`,
    `correct`, `tasks`; the first at step 0, before any GRPO update."""

    @property
    def reward_gain(self) -> float:
        return reward_gain(self.rewards)


def reward_gain(rewards: tuple[float, ...] | list[float]) -> float:
    """Mean reward over the last fifth of the steps minus the mean over the first fifth:
    the quickstart's measure of learning (one step's mean is too noisy to compare)."""
    if len(rewards) < 2:
        return math.nan
    fifth = max(1, len(rewards) // 5)
    return statistics.fmean(rewards[-fifth:]) - statistics.fmean(rewards[:fifth])


def world_size() -> int:
    """Processes in this run: `accelerate launch` / torchrun set WORLD_SIZE; 1 otherwise."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def train(
    config: TrainConfig, *, resume: bool = False, log: Callable[[str], None] | None = None, verbose: bool = False
) -> TrainResult:
    """Run `config` (see the module docstring); `log` gets one line per event and step
    (default: the console, above the progress bar)."""
    log = log or console_line
    # Everything that can be wrong with the input is found before the first minute of work.
    # The run's own config, as `rlenvs-train --resume` got it from run_config, was loaded and
    # checked there, against the schema, the machine and the run's config.yaml.
    resolved = resume and resolved_by_run_config(config)
    if not resolved:
        validate(config)
    output_dir = Path(config.trainer.output_dir)
    try:
        _check_placement(config)
        device_args(config.trainer.bf16)
        checkpoints = _checkpoints(output_dir)
        _check_output_dir(output_dir, resume, checkpoints)
        if resume:
            _check_resumable(config, output_dir, checkpoints, compare=not resolved)
    except (ValueError, TypeError, FileNotFoundError, FileExistsError) as error:
        raise RunInputError(str(error)) from error

    with console_output(verbose):
        try:
            datasets = task_datasets(config, output_dir)
        except (ValueError, TypeError, FileNotFoundError, FileExistsError) as error:
            raise RunInputError(str(error)) from error
        output_dir.mkdir(parents=True, exist_ok=True)
        if not (resume and (output_dir / RUN_CONFIG).is_file()):  # a resumed run keeps the config it started with
            dump_config(config, output_dir / RUN_CONFIG)
        log(f"rlenvs-train: {config.data.env} {dict(config.data.env_kwargs)} -> {output_dir}")
        base_model = _base_model(config, output_dir, log)
        model_path = base_model
        if config.trainer.sft_warmup.episodes > 0:
            model_path = sft_warmup(config, model_path, output_dir, log, verbose, heldout=datasets[2])
        return _grpo(config, datasets, base_model, model_path, output_dir, resume, log, verbose)


def console_line(line: str) -> None:
    """Print `line` above the trainer's progress bar rather than onto it (tqdm.write)."""
    from tqdm.auto import tqdm

    tqdm.write(line)


def _check_placement(config: TrainConfig) -> None:
    """The placement in the config is what was launched: one process per policy GPU."""
    placement = config.trainer.placement
    expected = placement.num_nodes * placement.policy_num_gpus_per_node
    if world_size() != expected:
        raise ValueError(
            f"trainer.placement asks for {expected} training processes (num_nodes {placement.num_nodes} x "
            f"policy_num_gpus_per_node {placement.policy_num_gpus_per_node}) but this run has {world_size()}: "
            f"launch it with `accelerate launch --num_processes {expected} -m rlenvs_train.cli ...` (on several "
            "nodes, with --num_machines and --machine_rank), or set the placement to match"
        )
    if world_size() > 1 and (config.trainer.policy.model.path == TINY_MODEL or config.trainer.sft_warmup.episodes):
        raise ValueError(
            "the tiny model and the SFT warm-up run in one process only: with several processes set "
            "trainer.policy.model.path to a real model and trainer.sft_warmup.episodes=0 (warm up in a one-process "
            "run first and point model.path at its sft-model/)"
        )
    if world_size() > 1 and config.data.heldout_tasks:
        raise ValueError(
            "data.heldout_tasks measures greedy accuracy in the training process, in one-process runs only: with "
            f"{world_size()} processes set it to 0 and evaluate checkpoints with `rlenvs-train eval` instead"
        )


def _check_output_dir(output_dir: Path, resume: bool, checkpoints: list[Path]) -> None:
    if resume and not checkpoints:
        raise FileNotFoundError(
            f"--resume: no checkpoint-N folder in {output_dir} to continue from; start the run without --resume"
        )
    if not resume and checkpoints:
        raise FileExistsError(
            f"{output_dir} already holds a run's checkpoints ({checkpoints[-1].name}): pass --resume to continue "
            f"it, or set trainer.output_dir to another folder"
        )


def _check_resumable(config: TrainConfig, output_dir: Path, checkpoints: list[Path], *, compare: bool) -> None:
    """A resumed run is the run in `output_dir` as it was configured (checked when `compare`:
    a config `run_config` did not give), and not yet over (`rlenvs_train.resume`)."""
    saved = output_dir / RUN_CONFIG
    if compare and saved.is_file():
        changed = differences(saved_config(saved, config.trainer.output_dir), config)
        if changed:
            shown = ", ".join(f"{key} {old!r} (given {new!r})" for key, (old, new) in changed.items())
            raise ValueError(
                f"resume=True continues the run in {output_dir} as its {RUN_CONFIG} says, and this config differs: "
                f"{shown}; pass the run's config (load_config({str(saved)!r}))"
            )
    problem = finished_problem(output_dir, config, checkpoints[-1] if checkpoints else None)
    if problem:
        raise ValueError(problem)


def _checkpoints(output_dir: Path) -> list[Path]:
    found = [p for p in output_dir.glob("checkpoint-*") if p.is_dir() and p.name.split("-")[-1].isdigit()]
    return sorted(found, key=lambda p: int(p.name.split("-")[-1]))


# --- the model ---------------------------------------------------------------------------------


def _base_model(config: TrainConfig, output_dir: Path, log: Callable[[str], None]) -> str:
    path = config.trainer.policy.model.path
    if path != TINY_MODEL:
        return path
    from rlenvs_train.tiny import build_tiny_model

    folder = output_dir / "tiny-model"
    if not (folder / "config.json").exists():
        with atomic_folder(folder) as staging:
            build_tiny_model(staging, seed=config.trainer.seed)
        log(f"built a tiny random model in {folder}")
    return str(folder)


# --- GRPO --------------------------------------------------------------------------------------


def grpo_args(
    config: TrainConfig, output_dir: Path | str, *, processes: int | None = None, validation: bool = False
) -> Any:
    """TRL's `GRPOConfig` for `config`. One GRPO step takes `train_batch_size` tasks times
    `num_generations` episodes, split over `processes` (default: `world_size()`) in
    micro-batches of `micro_batch_size`; the gradient is accumulated over the rest."""
    from trl import GRPOConfig

    t, inference = config.trainer, config.inference
    processes = world_size() if processes is None else processes
    episodes = t.train_batch_size * t.num_generations
    if episodes % (t.micro_batch_size * processes):
        raise ValueError(
            f"a step's {episodes} episodes (train_batch_size {t.train_batch_size} x num_generations "
            f"{t.num_generations}) do not split into micro-batches of {t.micro_batch_size} on {processes} processes: "
            f"make train_batch_size x num_generations a multiple of micro_batch_size x {processes}"
        )
    args: dict[str, Any] = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": t.micro_batch_size,
        "gradient_accumulation_steps": episodes // (t.micro_batch_size * processes),
        "num_generations": t.num_generations,
        "num_train_epochs": t.epochs,
        "max_steps": t.max_steps if t.max_steps is not None else -1,
        "learning_rate": t.learning_rate,
        "lr_scheduler_type": "constant",
        "beta": t.algorithm.beta,
        "loss_type": t.algorithm.loss_type,
        "scale_rewards": SCALE_REWARDS[t.algorithm.advantage_estimator],
        "temperature": t.temperature,
        "top_k": 0,
        "max_completion_length": t.max_episode_tokens,
        "seed": t.seed,
        "logging_steps": t.logging_steps,
        "save_strategy": "steps",
        "save_steps": t.save_steps,
        "report_to": [] if config.logger == "none" else [config.logger],
        "dataloader_num_workers": 0,
        **device_args(t.bf16),
    }
    if validation:  # the validation tasks' mean reward every save_steps, at the training temperature
        args.update(eval_strategy="steps", eval_steps=t.save_steps, per_device_eval_batch_size=t.micro_batch_size)
    args.update(KINDS[inference.backend].trl_args(inference))
    if t.strategy == "fsdp2":
        args.update(fsdp=True, fsdp_config={"version": 2})
    return GRPOConfig(**args)


def task_datasets(config: TrainConfig, output_dir: Path) -> tuple[Any, Any, HeldoutTasks | None]:
    """The GRPO prompts for training and (or None) validation, as rows with `prompt`,
    `task_index` and `task_id`, and (or None) the held-out tasks of `data.heldout_tasks`,
    whose problems no train or validation row poses (`rlenvs_train.heldout`).

    - `data.train_data` / `data.val_data`: Parquet files from `rlenvs export`, each row
      checked to still pose the task it was exported with.
    - Otherwise `data.num_train_tasks` tasks drawn from the env with the run's seed; with
      `data.num_val_tasks` the two sets are drawn apart (`rlenvs export` draws them, into
      `tasks/` of the run's folder, so a run's tasks are on disk beside it)."""
    train, validation = _train_and_validation(config, output_dir)
    if not config.data.heldout_tasks:
        return train, validation, None
    heldout = draw_heldout(
        config.data.env, config.data.heldout_tasks, env_kwargs=dict(config.data.env_kwargs), seed=config.trainer.seed
    )
    train = train.filter(lambda row: not heldout.excludes(row["prompt"]))
    if not len(train):
        raise ValueError(
            f"every train task poses one of the data.heldout_tasks={len(heldout)} held-out problems: draw more "
            "train tasks (data.num_train_tasks) or hold out fewer"
        )
    if validation is not None:
        validation = validation.filter(lambda row: not heldout.excludes(row["prompt"]))
    return train, validation, heldout


def _train_and_validation(config: TrainConfig, output_dir: Path) -> tuple[Any, Any]:
    from rlenvs.integrations.parquet import export_env
    from rlenvs_train.grpo import env_dataset

    data, seed = config.data, config.trainer.seed
    kwargs = dict(data.env_kwargs)
    if data.train_data:
        if data.num_val_tasks:
            raise ValueError(
                "data.num_val_tasks draws validation tasks from the env, apart from the train tasks, which needs the "
                "train tasks drawn here too; with data.train_data give the validation tasks as data.val_data "
                "(`rlenvs export ... --num-val N` or --val-split writes validation.parquet)"
            )
        train = _exported_rows(config, data.train_data, "data.train_data")
    elif data.num_val_tasks:
        files = export_env(
            data.env,
            output_dir / "tasks",
            env_kwargs=kwargs,
            num_train=data.num_train_tasks,
            num_val=data.num_val_tasks,
            seed=seed,
        )
        return _exported_rows(config, [files["train"]], "train tasks"), _exported_rows(
            config, [files["validation"]], "validation tasks"
        )
    else:
        train = env_dataset(data.env, num_tasks=data.num_train_tasks, make_kwargs=kwargs, seed=seed)
    validation = _exported_rows(config, data.val_data, "data.val_data") if data.val_data else None
    return train, validation


def _exported_rows(config: TrainConfig, files: Any, key: str) -> Any:
    from datasets import Dataset

    from rlenvs.integrations.parquet import read_exported, rebuild_check
    from rlenvs_train.grpo import TASK_ID, TASK_INDEX

    tasks = read_exported([str(f) for f in files], env_id=config.data.env)
    kwargs = json.dumps(dict(config.data.env_kwargs), sort_keys=True)
    mismatched = sorted({json.dumps(task.env_kwargs, sort_keys=True) for task in tasks} - {kwargs})
    if mismatched:
        raise ValueError(
            f"{key} was exported with env kwargs {', '.join(mismatched)} but data.env_kwargs is {kwargs}: the "
            "rollouts would pose other tasks; set data.env_kwargs to match"
        )
    rebuild_check(tasks)
    return Dataset.from_dict(
        {
            "prompt": [t.prompt for t in tasks],
            TASK_INDEX: [t.task_index for t in tasks],
            TASK_ID: [t.task_id for t in tasks],
        }
    )


def _grpo(
    config: TrainConfig,
    datasets: tuple[Any, Any, HeldoutTasks | None],
    base_model: str,
    model_path: str,
    output_dir: Path,
    resume: bool,
    log: Callable[[str], None],
    verbose: bool = False,
) -> TrainResult:
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    from rlenvs_train.grpo import env_reward, make_rollout_func
    from rlenvs_train.model_card import ModelCardCallback

    t = config.trainer
    dataset, validation, heldout = datasets
    connect_ray(config.env_workers)
    rollout = make_rollout_func(
        config.data.env,
        pool_kwargs=pool_kwargs(config.env_workers),
        backend=config.inference.backend,
        schedule=config.inference.schedule,
        make_kwargs=dict(config.data.env_kwargs),
        max_tokens_per_turn=t.max_tokens_per_turn,
        max_episode_tokens=t.max_episode_tokens,
        max_turns=t.max_turns,
    )  # it finds each prompt's task in the trainer's train_dataset and eval_dataset
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    measure = None if heldout is None else HeldoutAccuracy(config, heldout, tokenizer)
    metrics = RunMetrics(output_dir, log, measure, t.save_steps)
    card = ModelCardCallback(base_model, start=model_path, model_path=str(output_dir / "final-model"))
    trainer = GRPOTrainer(
        model=model_path,
        reward_funcs=[env_reward],  # None for the episodes the env failed to play: out of the loss
        args=grpo_args(config, output_dir, validation=validation is not None),
        train_dataset=dataset,
        eval_dataset=validation,
        processing_class=tokenizer,
        rollout_func=rollout,
        callbacks=[metrics.callback(), card],
    )
    quiet_progress(trainer, verbose)
    if resume:
        metrics.load()
        hide_tied_missing_keys(trainer.model)
    apart = f", {len(heldout)} held-out problems apart from them" if heldout is not None else ""
    log(f"GRPO: {len(dataset)} tasks x {t.num_generations} generations, {t.train_batch_size} tasks per step{apart}")
    try:
        with stop_on_signals(metrics):
            trainer.train(resume_from_checkpoint=True if resume else None)
            if not metrics.stop_requested:
                metrics.measure_heldout(trainer.model, trainer.state.global_step)
    finally:
        rollout.close()
        metrics.save()
    rewards = tuple(metrics.rewards())
    if metrics.stop_requested:  # the checkpoint the stop saved is the model; no run is final yet
        model_dir = _checkpoints(output_dir)[-1]
        note = " (interrupted: --resume continues)"
    else:
        model_dir, note = output_dir / "final-model", ""
        if trainer.accelerator.is_main_process:
            with atomic_folder(model_dir) as staging:
                trainer.save_model(str(staging))
                if trainer.processing_class is not None:  # always: train() passes the tokenizer
                    trainer.processing_class.save_pretrained(str(staging))
    log(
        f"GRPO: {trainer.state.global_step} steps; mean training reward first fifth -> last fifth: "
        f"{reward_gain(rewards):+.3f}; model in {model_dir}{note}"
    )
    if len(metrics.heldout) >= 2:
        log(accuracy_line(metrics.heldout))
    log(f"metrics: {output_dir / METRICS_FILE}; curve: {output_dir / CURVE_FILE}")
    return TrainResult(
        output_dir, model_dir, trainer.state.global_step, rewards, metrics.stop_requested, tuple(metrics.heldout)
    )
