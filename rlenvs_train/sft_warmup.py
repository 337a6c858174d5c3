"""The SFT warm-up of a run (`trainer.sft_warmup.episodes > 0`): TRL's `SFTTrainer` on the env's
oracle conversations (`rlenvs.integrations.sft`), one example per assistant turn with the loss
on that turn only, saved to `sft-model/`, so that a model that never writes the answer format
has some reward for GRPO to climb from; and the device arguments both trainers take."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlenvs.files import atomic_folder
from rlenvs_train.config import TrainConfig
from rlenvs_train.console import quiet_progress
from rlenvs_train.heldout import (
    HeldoutTasks,
)

SFT_MODEL_DIR = "sft-model"
"""Where the warmed-up model is saved, under the run's output folder."""


def sft_examples(conversations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Prompt-completion examples, one per assistant turn: the chat so far as the prompt and
    that turn as the completion (TRL then puts the loss on the completion only)."""
    examples = []
    for conversation in conversations:
        messages = conversation["messages"]
        for i, message in enumerate(messages):
            if message["role"] == "assistant":
                examples.append({"prompt": messages[:i], "completion": [message]})
    return examples


def sft_warmup(
    config: TrainConfig,
    model_path: str,
    output_dir: Path,
    log: Callable[[str], None],
    verbose: bool = False,
    heldout: HeldoutTasks | None = None,
) -> str:
    folder = output_dir / SFT_MODEL_DIR
    if (folder / "config.json").exists():
        log(f"SFT warm-up: reusing {folder}")
        return str(folder)
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from rlenvs.integrations.sft import oracle_conversations

    t, warmup = config.trainer, config.trainer.sft_warmup
    # Seeds far from the GRPO task draw's, so the warm-up does not pre-solve the train tasks.
    conversations = oracle_conversations(
        config.data.env, warmup.episodes, seed=t.seed + 1_000_000, env_kwargs=dict(config.data.env_kwargs)
    )
    apart = ""
    if heldout is not None:  # the held-out problems are apart from every training task, the warm-up's too
        kept = [c for c in conversations if not heldout.excludes_episode(c["messages"])]
        apart = f" ({len(conversations) - len(kept)} episodes posing a held-out problem left out)"
        conversations = kept
    examples = sft_examples(conversations)
    if not examples:
        raise RuntimeError(f"SFT warm-up: the oracle of {config.data.env} solved none of {warmup.episodes} episodes")
    log(
        f"SFT warm-up: {len(examples)} oracle turns from {len(conversations)} episodes{apart}, {warmup.epochs} epoch{'s' if warmup.epochs != 1 else ''}"
    )
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    trainer = SFTTrainer(
        model=model_path,
        train_dataset=Dataset.from_list(examples),
        processing_class=tokenizer,
        args=SFTConfig(
            output_dir=str(output_dir / ".sft-run"),
            per_device_train_batch_size=warmup.batch_size,
            num_train_epochs=warmup.epochs,
            learning_rate=warmup.learning_rate,
            lr_scheduler_type="linear",
            completion_only_loss=True,
            logging_steps=max(1, len(examples) // warmup.batch_size // 4),
            save_strategy="no",
            report_to="none",
            seed=t.seed,
            **device_args(t.bf16),
        ),
    )
    quiet_progress(trainer, verbose)
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    if losses:
        log(f"SFT warm-up: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    with atomic_folder(folder) as staging:
        trainer.save_model(str(staging))
        tokenizer.save_pretrained(str(staging))
    shutil.rmtree(output_dir / ".sft-run", ignore_errors=True)
    return str(folder)


def device_args(bf16: bool | None) -> dict[str, Any]:
    """`use_cpu` without a GPU; bf16 where asked, or (None) where the GPU supports it."""
    import torch

    gpu = torch.cuda.is_available()
    if bf16 is None:
        bf16 = gpu and torch.cuda.is_bf16_supported()
    if bf16 and not gpu:
        raise ValueError(
            "trainer.bf16: true needs a GPU with bf16; this machine has none: set trainer.bf16=false or null"
        )
    return {"use_cpu": not gpu, "bf16": bool(bf16)}
