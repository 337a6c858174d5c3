"""The model card of a run names its base model (rlenvs_train.model_card).

One real GRPO step through TRL's `GRPOTrainer` on the tiny random model, saving a
checkpoint, so the card is the one TRL writes; TRL alone names no base model for a local
folder ("a fine-tuned version of [None](https://huggingface.co/None)").
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,  # one real GRPO step
    pytest.mark.skipif(
        not all(importlib.util.find_spec(name) for name in ("torch", "transformers", "trl", "datasets")),
        reason="needs pip install -e '.[train]'",
    ),
]
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def length_reward(completions, **kwargs) -> list[float]:
    return [len(str(c)) % 7 / 7 for c in completions]


@pytest.fixture(scope="module")
def trl_card(tmp_path_factory) -> tuple[Path, Path, str]:
    """(TRL's card as written, the card after the callback, the tiny model's folder)."""
    from accelerate.state import AcceleratorState, GradientState
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from rlenvs_train.model_card import ModelCardCallback
    from rlenvs_train.tiny import build_tiny_model

    root = tmp_path_factory.mktemp("card")
    tiny = str(build_tiny_model(root / "tiny-model"))
    output = root / "run"
    as_written = root / "trl-README.md"

    class KeepTrlCard(TrainerCallback):  # runs before the card callback: TRL's own card, for comparison
        def on_save(self, args, state, control, **kwargs):
            shutil.copy(Path(args.output_dir) / "README.md", as_written)

    trainer = GRPOTrainer(
        model=tiny,
        reward_funcs=[length_reward],
        args=GRPOConfig(
            output_dir=str(output),
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=2,
            num_generations=2,
            max_steps=1,
            max_completion_length=4,
            save_strategy="steps",
            save_steps=1,
            report_to="none",
            logging_steps=1,
            dataloader_num_workers=0,
            seed=0,
        ),
        train_dataset=Dataset.from_dict({"prompt": [[{"role": "user", "content": "What is 1 + 1?"}]] * 2}),
        processing_class=AutoTokenizer.from_pretrained(tiny),
        callbacks=[KeepTrlCard(), ModelCardCallback(tiny, model_path=str(output / "final-model"))],
    )
    trainer.train()
    AcceleratorState._reset_state(reset_partial_state=True)  # for later modules' trainers
    GradientState._reset_state()
    return as_written, output / "README.md", tiny


def test_the_card_names_the_tiny_random_model(trl_card) -> None:
    as_written, card, tiny = trl_card
    assert "fine-tuned version of [None](https://huggingface.co/None)" in as_written.read_text()  # TRL alone
    text = card.read_text()
    assert "[None]" not in text and 'model="None"' not in text
    assert "This model is a fine-tuned version of rlenvs_train.tiny's random model (" in text
    assert f"`{tiny}`" in text and "seed 0" in text
    assert f'model="{Path(tiny).parent / "run" / "final-model"}"' in text
    assert "base_model:" not in text.split("---")[1]  # no hub id to link to


def test_a_hub_base_with_a_warm_start_is_linked_and_named(trl_card, tmp_path) -> None:
    from huggingface_hub import ModelCard

    from rlenvs_train.model_card import name_base_model

    as_written, _, _ = trl_card
    card = tmp_path / "README.md"
    shutil.copy(as_written, card)
    name_base_model(card, "Qwen/Qwen2.5-0.5B-Instruct", start="runs/gsm8k/sft-model")
    text = card.read_text()
    assert (
        "fine-tuned version of [Qwen/Qwen2.5-0.5B-Instruct](https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct), "
        "after supervised fine-tuning on the env's oracle episodes (`runs/gsm8k/sft-model`)"
    ) in text
    assert ModelCard.load(card).data.base_model == "Qwen/Qwen2.5-0.5B-Instruct"
    local = tmp_path / "my-model"
    local.mkdir()
    shutil.copy(as_written, card)
    name_base_model(card, str(local))
    assert f"fine-tuned version of the local model `{local.resolve()}`" in card.read_text()
