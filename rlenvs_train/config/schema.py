"""The schema of `rlenvs-train`'s config: frozen dataclasses whose fields carry their own rules
(range, choices, "is a path") in their metadata (`_rule`), and the rules between fields
(`cross_field_problems`). Adding a knob is adding one field here; rlenvs_train.config.loading
reads the YAML into these classes and reports every problem at once."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlenvs_train.backends.kinds import BACKENDS, KINDS
from rlenvs_train.rollout import SCHEDULES

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
    """Oracle episodes (`rlenvs.integrations.sft.oracle_conversations`): on a data-backed env
    that many distinct tasks, at most as many as its split has; on a procedural env seeded draws."""
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
    """Ray actors for the rollout envs (env_workers.kind "ray"): rlenvs.vector.ray_actors."""

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


def judgeable(bad: set[str], *keys: str) -> bool:
    """True when none of `keys` (dotted) nor a section above one is in `bad`, the keys whose
    value had a problem. A bad value's place holds its default, so a check on it (a rule
    between fields, a look at the machine) would judge the default, not what the user wrote."""
    return not any(key == b or key.startswith(b + ".") for key in keys for b in bad)


def cross_field_problems(config: TrainConfig, bad: set[str]) -> list[str]:
    """Rules between fields. A rule is skipped when one of its fields already has a problem
    (`judgeable`)."""
    problems: list[str] = []
    t, inf = config.trainer, config.inference
    ok = functools.partial(judgeable, bad)

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
