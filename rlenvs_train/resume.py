"""What `--resume` continues: the run in `trainer.output_dir` as its own `config.yaml` says,
to its own `max_steps`, and never a finished run.

A run's folder keeps the config it was started with (`config.yaml`). Resuming under another
config mixes two runs: `rlenvs-train --resume` after `rlenvs-train trainer.max_steps=40` read
the quickstart's defaults, trained to step 60 and rewrote config.yaml; on a finished run it
trained a step past the end and overwrote `final-model`. So:

- `run_config` gives the run's own config for the command line's: the command locates the
  run (`trainer.output_dir`); values its config file or the quickstart's defaults hold are
  replaced by the run's, with one line naming each; a KEY=VALUE override that would change
  the run is refused (it asks for something `--resume` will not do).
- `finished_problem` says why a run cannot be resumed because it is over: its `final-model`
  is saved, or its last checkpoint is at its last step.
- `resolved_by_run_config` tells `train` that the config it was given is the one
  `run_config` returned, so the run's config.yaml is read and checked against the machine
  once (by `run_config`), not again by `train`, which checks any other config it is given.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlenvs_train.config import ConfigError, TrainConfig, config_to_dict, free_mapping_keys, load_config

RUN_CONFIG = "config.yaml"
"""The config a run keeps beside its checkpoints (`rlenvs_train.train` writes it first)."""
FINAL_MODEL = "final-model"

_RESOLVED: dict[Path, TrainConfig] = {}
"""Run folder -> the config `run_config` last returned for it (read from its config.yaml and
checked against the machine), for `resolved_by_run_config`."""


def run_config(command: TrainConfig, overrides: Sequence[str], log: Callable[[str], None]) -> TrainConfig:
    """The config `--resume` continues with: the run's own `config.yaml` in the output folder
    `command` names. Raises ConfigError when an explicit override (other than
    trainer.output_dir, which finds the run) would change the run, or the saved config no
    longer loads. A folder without config.yaml (or without the folder) is left to the
    checks of `train`, which say there is nothing to resume."""
    output_dir = command.trainer.output_dir
    path = Path(output_dir) / RUN_CONFIG
    if not path.is_file():
        return command
    saved = saved_config(path, output_dir, check_machine=True)
    _RESOLVED[Path(output_dir).resolve()] = saved
    changed = differences(saved, command)
    explicit = {_key(item) for item in overrides} - {"trainer.output_dir"}
    refused = [key for key in changed if key in explicit]
    if refused:
        wanted = ", ".join(f"{key}={_shown(changed[key][1])} (the run's: {_shown(changed[key][0])})" for key in refused)
        raise ConfigError(
            [
                f"--resume continues the run in {output_dir} as its {RUN_CONFIG} says, and these overrides would "
                f"change it: {wanted}. Drop them; to train past the run's end, start a new run from its final model "
                f"once it is finished: --config {path} trainer.policy.model.path={Path(output_dir) / FINAL_MODEL} "
                "trainer.output_dir=<a new folder>"
            ],
            f"command line for {path}",
        )
    if changed:
        kept = ", ".join(f"{key} {_shown(old)} (not {_shown(new)})" for key, (old, new) in changed.items())
        log(f"rlenvs-train: --resume continues {output_dir} with its own {RUN_CONFIG}: {kept}")
    return saved


def resolved_by_run_config(config: TrainConfig) -> bool:
    """True when `config` is the very object `run_config` returned for its output folder: the
    run's own config.yaml, loaded against the schema and the machine, so `train` need neither
    validate it again nor read the file to compare. Any other config (one built in Python, or
    loaded again) is False and gets `train`'s own checks."""
    return _RESOLVED.get(Path(config.trainer.output_dir).resolve()) is config


def saved_config(path: Path, output_dir: str, *, check_machine: bool = False) -> TrainConfig:
    """The config saved at `path`, with the output folder it was found in (the run may have
    been moved, or started from another working folder with a relative output_dir)."""
    saved = load_config(path, check_machine=check_machine)
    return dataclasses.replace(saved, trainer=dataclasses.replace(saved.trainer, output_dir=output_dir))


def differences(run: TrainConfig, other: TrainConfig) -> dict[str, tuple[Any, Any]]:
    """Dotted key -> (the run's value, the other's) for every leaf that differs."""
    flat_run, flat_other = _flatten(config_to_dict(run)), _flatten(config_to_dict(other))
    return {
        key: (flat_run.get(key), flat_other.get(key))
        for key in sorted(flat_run.keys() | flat_other.keys())
        if flat_run.get(key) != flat_other.get(key)
    }


def finished_problem(output_dir: Path, config: TrainConfig, last_checkpoint: Path | None) -> str | None:
    """Why the run in `output_dir` is over (None while it is not): its final model is saved,
    or its last checkpoint reached the step the run ends at (`max_steps`, or TRL's count for
    `epochs`, which the checkpoint's trainer_state.json records)."""
    step, last = None, config.trainer.max_steps
    if last_checkpoint is not None:
        state_file = last_checkpoint / "trainer_state.json"
        if state_file.is_file():
            state = json.loads(state_file.read_text(encoding="utf-8"))
            step = state.get("global_step")
            last = last if last is not None else state.get("max_steps")
    at_end = step is not None and last is not None and step >= last
    if not (output_dir / FINAL_MODEL).exists() and not at_end:
        return None
    where = f"at step {step} of {last}" if step is not None else "its final model saved"
    return (
        f"--resume: the run in {output_dir} is finished ({where}; {output_dir / FINAL_MODEL} is its model), so there "
        f"is nothing to continue and nothing was written. To train further, start a new run from its model: "
        f"rlenvs-train --config {output_dir / RUN_CONFIG} trainer.policy.model.path={output_dir / FINAL_MODEL} "
        "trainer.output_dir=<a new folder>"
    )


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Leaves of the config's sections by dotted key; env_kwargs and other free mappings are
    leaves too (a changed kwarg shows as the whole mapping)."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and not _is_free_mapping(dotted):
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _is_free_mapping(dotted: str) -> bool:
    return dotted in free_mapping_keys()


def _key(override: str) -> str:
    """The dotted key an override sets, cut to the free mapping it edits
    (data.env_kwargs.level=2 changes data.env_kwargs)."""
    key = override.partition("=")[0].strip()
    for free in free_mapping_keys():
        if key.startswith(free + "."):
            return free
    return key


def _shown(value: Any) -> str:
    return "null" if value is None else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
