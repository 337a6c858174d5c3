"""TRL glue: train on an rlenvs env with TRL's `GRPOTrainer` (trl >= 1.16).

    from trl import GRPOConfig, GRPOTrainer
    from rlenvs_train.grpo import env_dataset, env_reward, make_rollout_func

    kwargs = {"level": 1, "max_turns": 2}
    trainer = GRPOTrainer(
        model="/path/to/model",
        reward_funcs=[env_reward],
        args=GRPOConfig(..., use_vllm=True, vllm_mode="colocate"),
        train_dataset=env_dataset("rlenvs/Arithmetic-v1", num_tasks=1000, make_kwargs=kwargs),
        rollout_func=make_rollout_func("rlenvs/Arithmetic-v1", make_kwargs=kwargs, backend="vllm"),
    )
    trainer.train()

Each rollout is a whole multi-turn episode played by `rlenvs_train.rollout.RolloutEngine`
(token in, token out; env tokens get `env_mask = 0`, which TRL folds into its loss mask).
The env's return reaches the reward functions as the `env_reward` column, with
`env_success`, `env_turns`, `env_stop_reason` and `env_task_id` beside it; `env_reward`
below is the ready-made reward function that passes it through.

How a prompt finds its task. TRL calls `rollout_func(prompts, trainer)` with the prompts
only: the other columns of the rows stay out of reach until the reward functions. So the
rollout function maps each prompt back to its row through the trainer's own data set: on its
first call it indexes the `train_dataset` and `eval_dataset` rows (or the `dataset` given to
`make_rollout_func`) by their prompt, and resets each episode with that row's `task_index`
(else its `task_id`). Every copy of a prompt, so every member of a GRPO group, therefore
plays one task. Rows with identical prompts are played as the first such row's task: the
model cannot tell them apart, and in rlenvs envs the prompt determines the task (level-1
Arithmetic poses "What is 3 + 4?" under many task ids, all with the answer 7). Each episode's
reset is checked against the prompt it was sampled for, so a data set built with other
`make_kwargs` (another level, system prompt, split) fails with a clear error instead of
training on rewards for the wrong task.

Env failures are not rewards. An episode whose env call failed (stop_reason `env_timeout`,
`env_lost` or `env_error`: the machinery failed, not the model) has reward 0, which would
train a right answer as wrong. So the rollout function leaves it out of GRPO: its `env_mask`
is all 0 (TRL multiplies it into the loss mask: its tokens carry no loss and count in no
token-count denominator; docs/training.md goes through the loss types), and its `env_scored`
column is False, for which every reward function returns None (`scored_only`; `env_reward`
is one). TRL turns a row whose reward functions all returned None into NaN, leaves it out of
its group's mean and std, and gives it advantage 0: the others' advantages are computed over
the episodes that finished. A group with fewer than `MIN_FINISHED_PER_GROUP` finished
episodes has nothing to compare, so all of it is left out the same way. Each generation
batch logs, through the trainer's metrics, `env/infra_failed` (the share of its episodes the
env failed), one `env/infra_failed/<stop_reason>` per failure and `env/left_out` (the share
left out of the loss). The rollout function refuses a trainer with a reward function not
wrapped in `scored_only`: that one would score the failed episodes and put them back into
the mean.

`as_environment_factory` offers the other route, TRL's own tool loop; see its docstring for
what that costs.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

import rlenvs  # noqa: F401 - registers the env ids
from rlenvs.core.checks import check_int
from rlenvs.core.task import INFINITE_DRAW_RANGE, task_source
from rlenvs.vector import ENV_FAILURES, EnvPool
from rlenvs_train.backends.base import Backend
from rlenvs_train.backends.kinds import BACKENDS, KINDS, BackendKind
from rlenvs_train.rollout import SCHEDULES, Episode, RolloutEngine

__all__ = [
    "EXTRA_COLUMNS",
    "MIN_FINISHED_PER_GROUP",
    "TASK_ID",
    "TASK_INDEX",
    "EnvRolloutFunc",
    "RlenvsToolEnv",
    "as_environment_factory",
    "check_reward_funcs",
    "check_rollout_output",
    "env_dataset",
    "env_reward",
    "make_rollout_func",
    "scored_episodes",
    "scored_only",
]

TASK_INDEX = "task_index"
"""Data set column: the task's index in the env's task source (reset `options["task_index"]`)."""
TASK_ID = "task_id"
"""Data set column: the task's stable id (reset `options["task_id"]`), used when a row has no index."""
EXTRA_COLUMNS = ("env_reward", "env_success", "env_turns", "env_stop_reason", "env_task_id", "env_scored")
"""What the rollout function returns beside TRL's required keys and `env_mask`, one value per
rollout; TRL hands them to every reward function as keyword arguments. `env_scored` is False
for the episodes left out of the loss (see the module docstring)."""
MIN_FINISHED_PER_GROUP = 2
"""The fewest finished episodes (not failed by the env) a GRPO group needs to be trained on: an
advantage compares an episode with the others of its group, and one alone has none (TRL would
give it advantage 0, yet count its tokens in the loss's denominators)."""
SCORED_ONLY_MARK = "__rlenvs_scored_only__"
"""The attribute `scored_only` sets on the reward functions it wraps."""


# --- the data set ---------------------------------------------------------------------------


def env_dataset(
    env_id: str,
    *,
    num_tasks: int | None = None,
    make_kwargs: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> Any:
    """A train data set of `num_tasks` of the env's tasks, one row per task: `prompt` (the
    chat the env poses after reset on that task: `info["messages"]`), `task_index` and
    `task_id`. TRL repeats each row `num_generations` times into a GRPO group, and the
    rollout function resets every copy on the row's task (see the module docstring).

    `num_tasks`: how many rows; None takes every task of a sized source (a data file), and a
    procedural env, which never runs out, needs a number. `seed`: None takes tasks
    0..num_tasks-1 in order; an int draws `num_tasks` distinct tasks at random with it.
    `make_kwargs` must be those the rollout function makes its envs with."""
    from datasets import Dataset

    make_kwargs = dict(make_kwargs or {})
    check_int("num_tasks", num_tasks, at_least=1, or_none="every task of a sized source")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an int or None (tasks 0..num_tasks-1 in order), got {seed!r}")
    env = gym.make(env_id, **make_kwargs)
    try:
        source = task_source(env, env_id, "env_dataset")
        size = len(source) if source.sized else None
        if num_tasks is None:
            if size is None:
                raise ValueError(f"{env_id} generates tasks without end: pass num_tasks=N")
            num_tasks = size
        if size is not None and num_tasks > size:
            raise ValueError(f"num_tasks={num_tasks} but {env_id} has {size} tasks with make_kwargs={make_kwargs}")
        indices = _task_indices(num_tasks, size, seed)
        prompts, task_ids = [], []
        for index in indices:
            observation, info = env.reset(options={TASK_INDEX: index})
            messages = info.get("messages") or [{"role": "user", "content": observation}]
            prompts.append([{"role": str(m["role"]), "content": str(m["content"])} for m in messages])
            task_ids.append(str(info.get("task_id", index)))
    finally:
        env.close()
    return Dataset.from_dict({"prompt": prompts, TASK_INDEX: indices, TASK_ID: task_ids})


def _task_indices(num_tasks: int, size: int | None, seed: int | None) -> list[int]:
    if seed is None:
        return list(range(num_tasks))
    rng = np.random.default_rng(seed)
    if size is not None:
        return [int(i) for i in rng.choice(size, size=num_tasks, replace=False)]
    drawn: dict[int, None] = {}
    while len(drawn) < num_tasks:
        drawn.update((int(i), None) for i in rng.integers(INFINITE_DRAW_RANGE, size=num_tasks - len(drawn)))
    return list(drawn)


# --- the reward function --------------------------------------------------------------------


def scored_only(reward_func: Callable[..., Any]) -> Callable[..., Any]:
    """`reward_func` (a TRL reward function, sync or async), returning None for each rollout
    whose `env_scored` column is False: the episodes the env failed to play, and the groups
    with too few finished ones. TRL leaves a rollout for which every reward function returned
    None out of its group's mean and std, so every reward function beside rollouts of
    `make_rollout_func` must be wrapped in this (the rollout function checks). It gets
    `env_scored` like any other column."""
    if inspect.iscoroutinefunction(reward_func):

        @functools.wraps(reward_func)
        async def scored_async(*args: Any, env_scored: Sequence[bool], **kwargs: Any) -> list[float | None]:
            return _blank_unscored(await reward_func(*args, env_scored=env_scored, **kwargs), env_scored)

        wrapper: Callable[..., Any] = scored_async
    else:

        @functools.wraps(reward_func)
        def scored(*args: Any, env_scored: Sequence[bool], **kwargs: Any) -> list[float | None]:
            return _blank_unscored(reward_func(*args, env_scored=env_scored, **kwargs), env_scored)

        wrapper = scored
    setattr(wrapper, SCORED_ONLY_MARK, True)
    return wrapper


def _blank_unscored(rewards: Sequence[float | None], env_scored: Sequence[bool]) -> list[float | None]:
    if len(rewards) != len(env_scored):
        raise ValueError(f"a reward function returned {len(rewards)} rewards for {len(env_scored)} rollouts")
    return [reward if scored else None for reward, scored in zip(rewards, env_scored)]


@scored_only
def env_reward(completions: Sequence[Any], env_reward: Sequence[float], **kwargs: Any) -> list[float]:
    """TRL reward function: each rollout's env return (the sum of its turn rewards), which the
    rollout function returned as the `env_reward` column; None for a rollout left out of the
    loss (`scored_only`). Add shaping rewards beside it as further reward functions, wrapped
    in `scored_only`; they get the same `env_*` columns."""
    if len(env_reward) != len(completions):
        raise ValueError(f"{len(env_reward)} env rewards for {len(completions)} completions")
    return [float(r) for r in env_reward]


def check_reward_funcs(reward_funcs: Sequence[Any], names: Sequence[str]) -> None:
    """Raise unless every reward function is wrapped in `scored_only`: one that scores the
    episodes the env failed to play would put them back into their group's mean and std."""
    unwrapped = [name for func, name in zip(reward_funcs, names) if not getattr(func, SCORED_ONLY_MARK, False)]
    if unwrapped:
        raise ValueError(
            f"reward function(s) {unwrapped} would score the episodes the env failed to play "
            f"({', '.join(ENV_FAILURES)}), which rlenvs rollouts leave out of the loss: wrap each in "
            "rlenvs_train.grpo.scored_only (env_reward is). A reward model (nn.Module) cannot be wrapped: "
            "score with a function instead"
        )


def scored_episodes(stop_reasons: Sequence[str | None], group_size: int, min_finished: int) -> list[bool]:
    """Which episodes of a generation batch (all ranks, in TRL's order: each run of `group_size`
    is one GRPO group) count in the loss: those the env did not fail (stop_reason not in
    `ENV_FAILURES`), in groups with at least `min_finished` such episodes."""
    check_int("group_size", group_size, at_least=1)
    if len(stop_reasons) % group_size:
        raise ValueError(
            f"{len(stop_reasons)} episodes do not split into GRPO groups of {group_size}: a rollout_func call gets "
            "each prompt num_generations times over all ranks, as TRL sends them"
        )
    scored: list[bool] = []
    for start in range(0, len(stop_reasons), group_size):
        finished = [reason not in ENV_FAILURES for reason in stop_reasons[start : start + group_size]]
        kept = sum(finished) >= min_finished
        scored += [done and kept for done in finished]
    return scored


def log_env_outcomes(
    log_metric: Callable[[str, float], None], stop_reasons: Sequence[str | None], scored: Sequence[bool]
) -> None:
    """Log a generation batch's env failures as shares of its episodes (see the module
    docstring), every failure reason every time, so each metric is one unbroken series."""
    total = len(stop_reasons)
    failed = [reason for reason in stop_reasons if reason in ENV_FAILURES]
    log_metric("env/infra_failed", len(failed) / total)
    for reason in ENV_FAILURES:
        log_metric(f"env/infra_failed/{reason}", failed.count(reason) / total)
    log_metric("env/left_out", scored.count(False) / total)


# --- the rollout function -------------------------------------------------------------------


def make_rollout_func(env_id: str, **options: Any) -> EnvRolloutFunc:
    """A `rollout_func` for `GRPOTrainer` that plays one episode of `env_id` per prompt;
    `options` are `EnvRolloutFunc`'s keywords (backend, make_kwargs, token limits, ...)."""
    return EnvRolloutFunc(env_id, **options)


class EnvRolloutFunc:
    """A `rollout_func` for `GRPOTrainer` that plays one episode of `env_id` per prompt.

    Its env pool and backend are built on the first call, from the trainer it is called
    with, and kept between calls. `episodes` holds the last call's `Episode`s (transcripts,
    infos) for inspection; `close()` (also run at garbage collection) shuts the pool down.

    `backend`: "hf" samples from the trainer's live policy with transformers (CPU, tests,
    small models); "vllm" shares TRL's colocated engine (`GRPOConfig(use_vllm=True,
    vllm_mode="colocate")`), into which TRL pushes the policy's weights before each call;
    "vllm-server" talks to `trl vllm-serve` (`vllm_mode="server"`); or any `Backend`
    instance, used as it is (its weights are then yours to keep current). `schedule`: the
    engine's (`rlenvs_train.rollout`): "auto" (default: rounds until a call shows continuous
    would pay), "rounds" or "continuous" (vLLM backends).

    `max_episode_tokens`: the cap on an episode's completion, model and env tokens together;
    None is the trainer's `max_completion_length`. `max_tokens_per_turn`: None is the
    same. `max_turns`: stop episodes after this many model turns; None leaves it to the env.
    Temperature, top_p, top_k and `chat_template_kwargs` come from the trainer's args.
    `seed`: None derives one from `args.seed` and the process index, so ranks sample apart.
    `dataset`: the rows whose prompts the trainer will send (built by `env_dataset`); None
    reads the trainer's `train_dataset` and `eval_dataset`. `pool_kwargs` go to `EnvPool`
    (e.g. `executor="process"` for CPU-bound verifiers, `step_timeout_s`)."""

    def __init__(
        self,
        env_id: str,
        *,
        backend: str | Backend = "hf",
        schedule: str = "auto",
        make_kwargs: Mapping[str, Any] | None = None,
        max_tokens_per_turn: int | None = None,
        max_episode_tokens: int | None = None,
        max_turns: int | None = None,
        seed: int | None = None,
        dataset: Any = None,
        pool_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(env_id, str) or not env_id:
            raise TypeError(f"env_id must be a registered env id such as 'rlenvs/GSM8K-v1', got {env_id!r}")
        if isinstance(backend, str):
            if backend not in BACKENDS:
                raise ValueError(f"backend must be one of {list(BACKENDS)} or a Backend instance, got {backend!r}")
        elif not callable(getattr(backend, "generate", None)):
            raise TypeError(
                f"backend must be one of {list(BACKENDS)} or have generate(prompts, params) "
                f"(rlenvs_train.backends.base.Backend), got {backend!r}"
            )
        check_int("max_tokens_per_turn", max_tokens_per_turn, at_least=1, or_none="no limit")
        check_int("max_episode_tokens", max_episode_tokens, at_least=1, or_none="no limit")
        check_int("max_turns", max_turns, at_least=1, or_none="no limit")
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {list(SCHEDULES)}, got {schedule!r}")
        self.kind: BackendKind | None = KINDS[backend] if isinstance(backend, str) else None
        if schedule == "continuous" and self.kind is not None and not self.kind.streams:
            streaming = ", ".join(repr(kind.name) for kind in KINDS.values() if kind.streams)
            raise ValueError(
                f"schedule='continuous' needs a streaming backend ({streaming}); {backend!r} runs in rounds: "
                "use schedule='auto' (or 'rounds') with it"
            )
        self.env_id = env_id
        self.schedule = schedule
        self.backend_spec = backend
        self.make_kwargs = dict(make_kwargs or {})
        self.max_tokens_per_turn = max_tokens_per_turn
        self.max_episode_tokens = max_episode_tokens
        self.max_turns = max_turns
        self.seed = seed
        self.dataset = dataset
        self.pool_kwargs = dict(pool_kwargs or {})
        self.episodes: list[Episode] = []
        self.engine: RolloutEngine | None = None
        self._trainer_ref: Callable[[], Any] | None = None
        self._tasks: dict[str, dict[str, Any]] | None = None
        self._pool: EnvPool | None = None
        self._finalizer: weakref.finalize | None = None
        if self.kind is not None:
            self.kind.prepare()

    def __repr__(self) -> str:
        backend = self.backend_spec if isinstance(self.backend_spec, str) else type(self.backend_spec).__name__
        return f"EnvRolloutFunc({self.env_id!r}, backend={backend!r}, make_kwargs={self.make_kwargs!r})"

    # --- the call TRL makes -----------------------------------------------------------------

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, list[Any]]:
        prompts = list(prompts)
        if not prompts:
            raise ValueError("rollout_func got no prompts")
        self._bind(trainer)
        tasks = [self._task_for(prompt, trainer) for prompt in prompts]
        pool = self._pool_for(len(prompts))
        assert self.engine is not None
        if self.kind is None:  # a Backend of the caller's, used as it is
            episodes = self.engine.run(pool, tasks)
        else:
            with self.kind.during_rollout(trainer, self.engine):
                episodes = self.engine.run(pool, tasks)
        self.episodes = episodes
        for prompt, episode in zip(prompts, episodes):
            self._check_prompt(prompt, episode)
        output = rollout_output(episodes, self._scored(episodes, trainer))
        check_rollout_output(output, len(prompts))
        return output

    def close(self) -> None:
        """Shut the env pool down (the next call makes a new one)."""
        if self._finalizer is not None:
            self._finalizer()
        self._pool = self._finalizer = None

    def _scored(self, episodes: Sequence[Episode], trainer: Any) -> list[bool]:
        """Which of this rank's episodes count in the loss (`scored_episodes`), logged per batch.

        A GRPO group may straddle ranks (TRL splits the generation batch across them without
        regard to groups), so the stop reasons of every rank's episodes are gathered, in rank
        order: TRL gathers the rewards in the same order and groups them by runs of
        `num_generations`. In evaluation every finished episode counts: nothing is trained, and
        the logged reward should cover every episode that reached a verdict."""
        from accelerate.utils import gather_object

        training = trainer.model.training
        stop_reasons = gather_object([episode.stop_reason for episode in episodes])
        scored = scored_episodes(
            stop_reasons,
            trainer.num_generations if training else trainer.num_generations_eval,
            MIN_FINISHED_PER_GROUP if training else 1,
        )
        log_env_outcomes(trainer._log_metric, stop_reasons, scored)
        start = trainer.accelerator.process_index * len(episodes)
        return scored[start : start + len(episodes)]

    # --- set-up -----------------------------------------------------------------------------

    def _bind(self, trainer: Any) -> None:
        """Build the engine (and a vLLM backend) for this trainer, once."""
        if self._trainer_ref is not None and self._trainer_ref() is trainer:
            return
        check_reward_funcs(trainer.reward_funcs, trainer.reward_func_names)
        args = trainer.args
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        unsupported = {
            "min_p": getattr(args, "min_p", None) not in (None, 0.0),
            "repetition_penalty": getattr(args, "repetition_penalty", 1.0) != 1.0,
            "generation_kwargs": bool(getattr(args, "generation_kwargs", None)),
        }
        for name, set_ in unsupported.items():
            if set_:  # sampling the rollouts would not do: the logprobs would describe another distribution
                raise ValueError(
                    f"GRPOConfig({name}={getattr(args, name)!r}) is not applied by rlenvs rollouts, which sample "
                    f"with temperature, top_p and top_k only: leave {name} at its default"
                )
        max_completion = int(args.max_completion_length)
        episode_tokens = self.max_episode_tokens or max_completion
        seed = self.seed
        if seed is None:  # distinct per rank: two ranks with copies of one prompt must not sample alike
            seed = int(args.seed) + (int(getattr(trainer.accelerator, "process_index", 0)) << 32)
        self.engine = RolloutEngine(
            self._backend(trainer),
            tokenizer,
            max_tokens_per_turn=self.max_tokens_per_turn or episode_tokens,
            max_episode_tokens=episode_tokens,
            max_turns=self.max_turns,
            temperature=float(args.temperature),
            top_p=float(args.top_p if args.top_p is not None else 1.0),
            top_k=max(int(args.top_k or 0), 0),  # TRL: 0 (or None, -1) is no top-k
            seed=seed,
            chat_template_kwargs=getattr(args, "chat_template_kwargs", None) or {},
            schedule=self.schedule,
        )
        self._tasks = None
        self._trainer_ref = weakref.ref(trainer)

    def _backend(self, trainer: Any) -> Any:
        return self.backend_spec if self.kind is None else self.kind.for_trainer(trainer)

    def _pool_for(self, size: int) -> EnvPool:
        if self._pool is None or self._pool.num_envs < size:
            self.close()
            self._pool = EnvPool(self.env_id, size, make_kwargs=self.make_kwargs, **self.pool_kwargs)
            self._finalizer = weakref.finalize(self, self._pool.close)
        return self._pool

    # --- prompts to tasks -------------------------------------------------------------------

    def _task_for(self, prompt: Any, trainer: Any) -> dict[str, Any]:
        key = prompt_key(prompt)
        if self._tasks is None or key not in self._tasks:
            self._tasks = self._index_tasks(trainer)  # (re)read: the trainer may have been given new data
        try:
            return dict(self._tasks[key])
        except KeyError:
            raise ValueError(
                f"rollout_func got a prompt that is in no data set row with a {TASK_INDEX!r} or {TASK_ID!r} "
                f"column, so it cannot tell which task to play: {_short(prompt)}. Build the train/eval data "
                f"with rlenvs_train.grpo.env_dataset({self.env_id!r}, ...), or pass dataset= to make_rollout_func "
                "when the trainer gets its data elsewhere (e.g. trainer.evaluate(eval_dataset=...))"
            ) from None

    def _index_tasks(self, trainer: Any) -> dict[str, dict[str, Any]]:
        if self.dataset is not None:
            datasets = [self.dataset]
        else:
            datasets = [getattr(trainer, "train_dataset", None)]
            evals = getattr(trainer, "eval_dataset", None)
            datasets += list(evals.values()) if isinstance(evals, Mapping) else [evals]
        tasks: dict[str, dict[str, Any]] = {}
        for data in datasets:
            if data is None:
                continue
            columns = list(getattr(data, "column_names", None) or [])
            refs = [c for c in (TASK_INDEX, TASK_ID) if c in columns]
            if "prompt" not in columns or not refs:
                continue
            if not hasattr(data, "__len__"):
                raise TypeError(
                    f"cannot index the prompts of a {type(data).__name__} (a streaming data set): pass "
                    "dataset=<the rows as a datasets.Dataset> to make_rollout_func"
                )
            table = data.select_columns(["prompt", *refs]).to_dict()
            for k, prompt in enumerate(table["prompt"]):
                option = _task_option({ref: table[ref][k] for ref in refs})
                if option is not None:
                    tasks.setdefault(prompt_key(prompt), option)  # identical prompts: the first row's task
        return tasks

    def _check_prompt(self, prompt: Any, episode: Episode) -> None:
        first_reply = next((k for k, m in enumerate(episode.transcript) if m["role"] == "assistant"), None)
        posed: Any = episode.transcript[:first_reply]  # the reset's messages
        if isinstance(prompt, str):
            same = bool(posed) and posed[-1]["content"] == prompt
        else:
            same = prompt_key(posed) == prompt_key(prompt)
        if not same:
            raise ValueError(
                f"{self.env_id} with make_kwargs={self.make_kwargs} posed task {episode.task_id!r} as "
                f"{_short(posed)}, but the data set row reads {_short(prompt)}: build the data set with the same "
                "env id and make_kwargs as the rollout function"
            )


def _task_option(refs: Mapping[str, Any]) -> dict[str, Any] | None:
    index = refs.get(TASK_INDEX)
    if index is not None and not (isinstance(index, float) and math.isnan(index)):
        return {TASK_INDEX: int(index)}
    task_id = refs.get(TASK_ID)
    return {TASK_ID: str(task_id)} if task_id is not None else None


def prompt_key(prompt: Any) -> str:
    """How a prompt is recognised: its text, or its messages' roles and contents (other keys,
    which a data set's schema may add as None, are ignored)."""
    if isinstance(prompt, str):
        return prompt
    return json.dumps(
        [[m.get("role"), m.get("content")] for m in prompt], ensure_ascii=False, sort_keys=True, default=str
    )


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def rollout_output(episodes: Sequence[Episode], scored: Sequence[bool]) -> dict[str, list[Any]]:
    """The dict TRL's `GRPOTrainer` takes from a `rollout_func`, one entry per episode. An
    episode that is not `scored` keeps its tokens (TRL needs them to build the batch) under an
    `env_mask` of 0s: none of them is trained on."""
    if len(scored) != len(episodes):
        raise ValueError(f"{len(scored)} scored flags for {len(episodes)} episodes")
    return {
        "prompt_ids": [list(e.prompt_ids) for e in episodes],
        "completion_ids": [list(e.completion_ids) for e in episodes],
        "logprobs": [list(e.logprobs) for e in episodes],
        "env_mask": [list(e.env_mask) if s else [0] * len(e.env_mask) for e, s in zip(episodes, scored)],
        "env_reward": [float(e.reward) for e in episodes],
        "env_success": [e.info.get("correct") is True for e in episodes],
        "env_turns": [int(e.turns) for e in episodes],
        "env_stop_reason": [str(e.stop_reason) for e in episodes],
        "env_task_id": [e.task_id for e in episodes],
        "env_scored": [bool(s) for s in scored],
    }


def check_rollout_output(output: Mapping[str, Any], num_prompts: int) -> None:
    """Raise a clear error unless `output` holds exactly one rollout per prompt.

    TRL 1.16 copies a rollout's extra columns onto its rows only where the list is long
    enough and stays silent otherwise, so a short column surfaces later as a bare KeyError
    in some reward function; a ragged row fails deeper still. Wrap any rollout_func with this."""
    missing = [key for key in ("prompt_ids", "completion_ids", "logprobs") if key not in output]
    if missing:
        raise ValueError(f"rollout_func output lacks {missing}: TRL's GRPOTrainer requires them")
    for key, values in output.items():
        if isinstance(values, (list, tuple)) and len(values) != num_prompts:
            raise ValueError(
                f"rollout_func returned {len(values)} values of {key!r} for {num_prompts} prompts: TRL needs one "
                "rollout per prompt, in order (the prompts arrive already repeated num_generations times, so do not "
                "repeat them again, and do not drop failed episodes: mask them, as rollout_output does)"
            )
    for k, completion in enumerate(output["completion_ids"]):
        if not completion:
            raise ValueError(f"rollout {k} has no completion tokens: TRL needs at least one per rollout")
        for key in ("logprobs", "env_mask"):
            if key in output and len(output[key][k]) != len(completion):
                raise ValueError(f"rollout {k} has {len(output[key][k])} {key} for {len(completion)} completion tokens")


# --- TRL's own tool loop --------------------------------------------------------------------


def as_environment_factory(env_id: str, **make_kwargs: Any) -> Callable[[], RlenvsToolEnv]:
    """An `environment_factory` for `GRPOTrainer`: each call makes an `RlenvsToolEnv`
    wrapping a fresh `gym.make(env_id, **make_kwargs)`, for users who prefer TRL's built-in
    tool loop to `make_rollout_func`.

        trainer = GRPOTrainer(model, args=config, train_dataset=env_dataset(env_id, num_tasks=500),
                              environment_factory=as_environment_factory(env_id))

    TRL calls `reset(**row)` with each data set row (an `env_dataset` row names its task),
    offers the model one tool, `submit(reply)`, which steps the env with the reply and
    returns its answer, and scores each rollout with `get_reward()`, the env's return.

    What that route costs, against `make_rollout_func`:
    - The model must call a tool. The chat template must support tool calling (TRL refuses
      one that does not, such as plain ChatML), the model must have learnt the template's
      tool-call format, and a reply written as plain text is never judged (reward 0). The
      env's prompt does not mention the tool; TRL adds its schema to the prompt.
    - The env sees the tool argument, not the reply, and answers as a `tool` message, not as
      the user: multi-turn envs whose feedback reads as a user turn (format reminders) lose
      that framing.
    - Steps run in the trainer's process, one tool call after another, without the
      `EnvPool`'s concurrency, per-step timeout or recovery from a hung or crashed env.
    - TRL renders and parses text between turns (`parse_response`, then the tool result
      through the chat template), where the rollout engine appends token deltas and never
      re-tokenises what was sampled.
    - Turns are bounded by `max_tool_calling_iterations` as well as the env's `max_turns`,
      and the reward functions get no `env_*` columns: the env's reward arrives only through
      `get_reward` (logged under this class's name).
    """
    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"env_id must be a registered env id such as 'rlenvs/GSM8K-v1', got {env_id!r}")
    gym.spec(env_id)  # an unknown id fails here, not inside the trainer
    return functools.partial(RlenvsToolEnv, env_id, make_kwargs)


class RlenvsToolEnv:
    """One rlenvs env behind TRL's environment contract (see `as_environment_factory`).

    TRL exposes every public method but `reset` and `get_reward` as a tool, so this class
    has exactly one: `submit`."""

    def __init__(self, env_id: str, make_kwargs: Mapping[str, Any] | None = None) -> None:
        self._env = gym.make(env_id, **dict(make_kwargs or {}))
        self._finalizer = weakref.finalize(self, self._env.close)
        self._reward = 0.0
        self._turns = 0
        self._stop_reason: str | None = None
        self._task_id: str | None = None

    @property
    def env(self) -> gym.Env:
        return self._env

    @property
    def stop_reason(self) -> str | None:
        """Why the episode ended; None while it goes on (or before the first reset)."""
        return self._stop_reason

    @property
    def task_id(self) -> str | None:
        return self._task_id

    @property
    def turns(self) -> int:
        return self._turns

    def reset(self, **row: Any) -> str | None:
        """Start an episode on the row's task (`task_index` or `task_id`, as `env_dataset`
        writes them) and return None: the row's prompt already poses it. A row without a task
        (TRL's placeholder rows when there is no data set) draws one, and the env's question
        is returned for TRL to append to the (empty) prompt."""
        option = _task_option(row)
        observation, info = self._env.reset(options=option)
        self._reward, self._turns, self._stop_reason = 0.0, 0, None
        self._task_id = info.get("task_id")
        return None if option is not None else observation

    def submit(self, reply: str) -> str:
        """Submit your reply to the task and get the environment's response.

        Args:
            reply: Your complete reply to the task, written in the format the task asks for.

        Returns:
            The environment's response: feedback to act on, or word that the episode is over.
        """
        if self._stop_reason is not None:
            return f"The episode is over ({self._stop_reason}); further replies are not judged."
        if self._task_id is None:
            raise RuntimeError("RlenvsToolEnv.submit before reset: TRL resets each environment before generating")
        observation, reward, terminated, truncated, info = self._env.step(str(reply))
        self._reward += float(reward)
        self._turns += 1
        if terminated or truncated:
            self._stop_reason = str(info.get("stop_reason") or ("terminated" if terminated else "truncated"))
            return f"The episode is over ({self._stop_reason})."
        return observation

    def get_reward(self) -> float:
        """The episode's return: the sum of the env's rewards so far (0 if never submitted)."""
        return self._reward
