"""The model card of a run names the model it was trained from.

TRL's `GRPOTrainer` writes a model card (README.md) into the output folder with every
checkpoint. It names the base model only when the model's `_name_or_path` is a hub id: for
a local folder, which is every rlenvs-train run that starts from the tiny random model or
from an SFT warm-up's `sft-model/`, the card says "a fine-tuned version of
[None](https://huggingface.co/None)" and its usage snippet loads `model="None"`. A reader of
the card, or of the hub page it becomes, cannot tell what was trained.

`ModelCardCallback` rewrites that card after each save (`on_save` runs right after TRL's
`_save_checkpoint` wrote it): the base model in words (the tiny random model with its folder
and seed, a local folder, or a hub id with its link), the warm start if there was one, the
hub id in the card's metadata where there is one, and the trained model's folder in the
usage snippet.

    trainer = GRPOTrainer(..., callbacks=[ModelCardCallback(base_model_path, start=grpo_start_path,
                                                            model_path=final_model_dir)])
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

CARD = "README.md"
TINY_MARKER = "rlenvs_tiny.json"
"""Written by `rlenvs_train.tiny.build_tiny_model` beside the weights: how a tiny model is told."""
_TRL_SENTENCE = re.compile(r"This model is a fine-tuned version of \[[^\]]*\]\([^)]*\)")
_NO_MODEL = 'model="None"'


def describe_base_model(base_model: str, start: str | None = None) -> str:
    """What the run started from, in words for the card.

    `base_model`: the model the run was configured with, resolved: a hub id, or a local
    folder (a folder made by `rlenvs_train.tiny` is named as that random model). `start`: the
    folder GRPO started from when it is not `base_model` (the SFT warm-up's `sft-model/`)."""
    folder = Path(base_model).expanduser()
    if (folder / TINY_MARKER).is_file():
        seed = json.loads((folder / TINY_MARKER).read_text()).get("seed")
        what = (
            f"rlenvs_train.tiny's random model (a tiny Qwen2 with random weights, seed {seed}, built locally by "
            f"`rlenvs_train.tiny.build_tiny_model` into `{folder}`; it knows nothing before training)"
        )
    elif folder.is_dir():
        what = f"the local model `{folder.resolve()}`"
    else:
        what = f"[{base_model}](https://huggingface.co/{base_model})"
    if start is not None and Path(start).expanduser().resolve() != folder.resolve():
        what += f", after supervised fine-tuning on the env's oracle episodes (`{start}`)"
    return what


def name_base_model(
    card_path: str | os.PathLike[str], base_model: str, *, start: str | None = None, model_path: str | None = None
) -> None:
    """Rewrite the model card at `card_path` (TRL's) to name the base model; see the module
    docstring. A card in another wording than TRL's gets the sentence after its title."""
    from huggingface_hub import ModelCard

    card = ModelCard.load(Path(card_path))
    sentence = f"This model is a fine-tuned version of {describe_base_model(base_model, start)}"
    text, count = _TRL_SENTENCE.subn(lambda _: sentence, card.text, count=1)
    if not count:
        lines = text.splitlines()
        title = next((i for i, line in enumerate(lines) if line.startswith("# ")), -1)
        lines.insert(title + 1, f"\n{sentence}.")
        text = "\n".join(lines) + "\n"
    if model_path is not None:
        text = text.replace(_NO_MODEL, f"model={json.dumps(str(model_path))}")
    card.text = text
    if not Path(base_model).expanduser().is_dir():
        card.data.base_model = base_model  # the hub id: what the hub links the model to
    card.save(card_path)


class ModelCardCallback(TrainerCallback):
    """Names the base model in the card TRL writes into the output folder at every save."""

    def __init__(self, base_model: str, *, start: str | None = None, model_path: str | None = None) -> None:
        self.base_model = base_model
        self.start = start
        self.model_path = model_path

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        card = Path(args.output_dir) / CARD
        if state.is_world_process_zero and card.is_file():  # TRL writes it on the main process only
            name_base_model(card, self.base_model, start=self.start, model_path=self.model_path)
