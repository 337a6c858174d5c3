"""The YAML config of `rlenvs-train`: a tree of frozen dataclasses, dotted overrides, and
validation that reports every mistake at once.

    config = load_config("examples/gsm8k-grpo.yaml", ["trainer.epochs=5", "trainer.learning_rate=1e-6"])
    validate(config)              # the schema again plus what needs the machine (env ids, files, packages)
    load_config(path, overrides, check_machine=True)   # both in one pass, as rlenvs-train does
    dump_config(config, f"{config.trainer.output_dir}/config.yaml")

Why it looks like this:

- The schema is the dataclasses below and nothing else: field names, types and defaults are
  read with `dataclasses.fields`, and each field's rule (range, choices, "is a path") sits in
  its `metadata`, next to the field. Adding a knob is adding one field.
- Nothing heavy is imported here (no torch, transformers, trl), so a typo in a config fails in
  a fraction of a second, before minutes of model loading.
- A run with five mistakes should take one try to fix, not five: every problem is collected
  and `ConfigError` lists them all, one per line, each naming the dotted key, the bad value
  and the fix.
- The schema checks (`load_config`, `config_from_dict`) are pure; `check_environment` asks
  the machine (registered env ids, files, installed packages) and is kept apart so a config
  can be checked on a laptop and run on a cluster.
- PyYAML follows YAML 1.1, which reads `1e-6` (no dot) as a string: float fields accept any
  string that `float()` reads, so `learning_rate: 1e-6` means what it says.
"""

from __future__ import annotations

from rlenvs_train.config.loading import (
    config_from_dict,
    config_to_dict,
    dump_config,
    free_mapping_keys,
    load_config,
    validate,
)
from rlenvs_train.config.machine import check_environment
from rlenvs_train.config.schema import (
    AlgorithmConfig,
    ConfigError,
    DataConfig,
    EnvWorkersConfig,
    InferenceConfig,
    ModelConfig,
    PlacementConfig,
    PolicyConfig,
    RayWorkersConfig,
    SFTWarmupConfig,
    TrainConfig,
    TrainerConfig,
)

__all__ = [
    "AlgorithmConfig",
    "ConfigError",
    "DataConfig",
    "EnvWorkersConfig",
    "InferenceConfig",
    "ModelConfig",
    "PlacementConfig",
    "PolicyConfig",
    "RayWorkersConfig",
    "SFTWarmupConfig",
    "TrainConfig",
    "TrainerConfig",
    "check_environment",
    "config_from_dict",
    "config_to_dict",
    "dump_config",
    "free_mapping_keys",
    "load_config",
    "validate",
]
