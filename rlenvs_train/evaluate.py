"""Evaluate a model on an rlenvs env with the rollout engine: rewards, success, pass@k.

    from rlenvs_train.evaluate import evaluate

    result = evaluate("/path/to/model", "rlenvs/Arithmetic-v1", episodes=200, k=4,
                      env_kwargs={"level": 2}, output="arith-l2.jsonl")
    print(result.table())

Each of `episodes` distinct tasks is played `samples_per_task` times (default `k`) by
`rlenvs_train.rollout.RolloutEngine`, `batch_size` episodes at a time through one `EnvPool`:
the same token-in, token-out multi-turn loop that training samples with, so an eval scores
exactly what the policy would produce in a rollout.

Which tasks, each once, as `rlenvs eval` chooses them (`rlenvs.evaluation.tasks`): a sized
task source (a data file) is played whole, in order, when `episodes` is None, or `episodes`
distinct tasks drawn with `seed`; a procedural env, which never runs out, needs `episodes`
and gets distinct indices drawn with `seed` (`rlenvs_train.grpo._task_indices`, the draw
`env_dataset` makes).

Success is the env's own verdict: an episode succeeds when its last step's info says
`correct is True` (what `rlenvs eval` counts and what training reports as `env_success`).
An episode the model ran out of room or turns on (`max_episode_tokens`, `max_turns`) fails.
pass@k is the unbiased estimator of the HumanEval paper (Chen et al. 2021),
`1 - C(n - c, k) / C(n, k)` for a task with `c` successes in `n` samples, averaged over
tasks; with `n == k` it is the share of tasks with at least one success.

Env failures are not wrong answers. An episode the env failed to play (stop_reason
`env_timeout`, `env_lost` or `env_error`: the machinery failed, not the model) has no
verdict, so every rate is over the episodes that finished (`EvalResult.finished`), the
failures are counted apart by reason (`EvalResult.env_failures`, the table's "env failures"
column), and the records keep them with their stop_reason and error. pass@k takes, for each
task, its finished samples as n and leaves out a task with fewer than k of them
(`EvalResult.pass_at_k_tasks` says over how many tasks it is). A rate over no episode is None.

Sampling: `temperature=None` is greedy (0.0) when each task is sampled once and 1.0
otherwise (k samples of one greedy policy would be k copies). `seed` fixes both the task
draw and the sampling, so a run repeats exactly with the same arguments.

`output`: a JSONL file, one line per episode in the trajectory format of `rlenvs eval`
(`rlenvs.evaluation.Trajectory`: the task's reset option, sample, messages, each step's
reward and info, each turn's finish reason, verdict, stop reason, failure; no per-episode
`seconds`, since a batch's episodes share each generation call: `wall_s` is the run's),
rewritten atomically after each batch (a temporary file beside it, fsync, `os.replace`): an
interrupted eval leaves a complete file of the batches done so far, never a half-written line.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

import rlenvs  # noqa: F401 - registers the env ids
from rlenvs.core.checks import check_int
from rlenvs.core.registration import check_env_id
from rlenvs.core.task import task_source
from rlenvs.evaluation.result import Trajectory, json_safe
from rlenvs.evaluation.stats import pass_at_k
from rlenvs.evaluation.tasks import choose_task_indices
from rlenvs.files import atomic_path
from rlenvs.vector import ENV_FAILURES, EnvPool
from rlenvs_train.backends.base import Backend
from rlenvs_train.backends.kinds import BACKENDS, KINDS
from rlenvs_train.extras import vllm_install_hint
from rlenvs_train.grpo import TASK_INDEX, _task_indices
from rlenvs_train.model_path import checked_model_path
from rlenvs_train.rollout import Episode, RolloutEngine

__all__ = ["BACKENDS", "RECORD_FIELDS", "EvalResult", "evaluate", "pass_at_k"]

RECORD_FIELDS = tuple(field.name for field in dataclasses.fields(Trajectory))
"""The keys of each line of the `output` file, in order: `rlenvs eval --trajectories`'s, so
`rlenvs eval --policy file:OUT.jsonl` re-scores a model's episodes without the model."""
DEFAULT_MAX_TOKENS_PER_TURN = 256
DEFAULT_MAX_EPISODE_TOKENS = 1024
"""`evaluate`'s token caps, which `rlenvs-train eval` also falls back to without a run's config."""


@dataclass(frozen=True)
class EvalResult:
    """What `evaluate` measured. Rates are fractions in [0, 1], over the `finished` episodes
    (None if none finished); `records` are the output file's lines (one dict per episode,
    env failures included, tasks in order, each task's samples together)."""

    env_id: str
    episodes: int
    """Distinct tasks played."""
    samples: int
    """Episodes played: `episodes * samples_per_task`."""
    k: int
    samples_per_task: int
    temperature: float
    seed: int
    finished: int
    """Episodes the env played to the end (not failed by it); the rates are over these."""
    env_failures: Counter[str]
    """Episodes the env failed to play, by stop_reason (`env_timeout`, `env_lost`, `env_error`)."""
    mean_reward: float | None
    success_rate: float | None
    """The share of the finished samples that succeeded (the env's `info["correct"] is True`)."""
    pass_at_k: float | None
    """The unbiased pass@k (see `pass_at_k`) of each task's finished samples, averaged over
    the `pass_at_k_tasks` tasks with at least k of them."""
    pass_at_k_tasks: int
    mean_turns: float | None
    """Model turns per finished episode."""
    stop_reasons: Counter[str]
    """Every episode's, env failures included."""
    wall_s: float
    """Seconds spent playing the episodes (model and env loading not included)."""
    output: Path | None = None
    records: list[dict[str, Any]] = field(default_factory=list, repr=False, compare=False)

    @property
    def trajectories(self) -> list[Trajectory]:
        """The records as `rlenvs.evaluation.Trajectory` objects, as `rlenvs.evaluate` gives them."""
        return [Trajectory.from_json(record) for record in self.records]

    def metrics(self) -> dict[str, Any]:
        """The numbers as a JSON-ready dict (no records)."""
        return {
            "env_id": self.env_id,
            "episodes": self.episodes,
            "samples": self.samples,
            "k": self.k,
            "samples_per_task": self.samples_per_task,
            "temperature": self.temperature,
            "seed": self.seed,
            "finished": self.finished,
            "env_failures": dict(self.env_failures.most_common()),
            "mean_reward": self.mean_reward,
            "success_rate": self.success_rate,
            f"pass@{self.k}": self.pass_at_k,
            f"pass@{self.k}_tasks": self.pass_at_k_tasks,
            "mean_turns": self.mean_turns,
            "stop_reasons": dict(self.stop_reasons.most_common()),
            "wall_s": self.wall_s,
        }

    def table(self) -> str:
        """A one-row Markdown table, in the style of `rlenvs.scripted.Summary.table`."""
        header = (
            "episodes",
            "samples",
            "finished",
            "env failures",
            "mean reward",
            "success rate",
            f"pass@{self.k}",
            "mean turns",
            "wall time",
            "stop reasons",
        )
        values = (
            str(self.episodes),
            str(self.samples),
            str(self.finished),
            _counts(self.env_failures),
            _shown(self.mean_reward, "{:.4f}"),
            _shown(self.success_rate, "{:.1%}"),
            _shown(self.pass_at_k, "{:.1%}"),
            _shown(self.mean_turns, "{:.2f}"),
            f"{self.wall_s:.2f} s",
            _counts(self.stop_reasons),
        )
        widths = [max(len(h), len(v)) for h, v in zip(header, values)]

        def row(cells):
            return "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths)) + " |"

        return "\n".join([row(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", row(values)])


def _shown(value: float | None, form: str) -> str:
    return "-" if value is None else form.format(value)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{reason} {count}" for reason, count in counter.most_common()) or "-"


def evaluate(
    model: Any,
    env_id: str,
    *,
    episodes: int | None = None,
    task_indices: Sequence[int] | None = None,
    k: int = 1,
    samples_per_task: int | None = None,
    max_turns: int | None = None,
    backend: str = "hf",
    env_kwargs: Mapping[str, Any] | None = None,
    max_tokens_per_turn: int = DEFAULT_MAX_TOKENS_PER_TURN,
    max_episode_tokens: int | None = DEFAULT_MAX_EPISODE_TOKENS,
    temperature: float | None = None,
    seed: int = 0,
    output: str | os.PathLike[str] | None = None,
    batch_size: int = 64,
    tokenizer: Any = None,
    server_url: str | None = None,
    backend_kwargs: Mapping[str, Any] | None = None,
    pool_kwargs: Mapping[str, Any] | None = None,
    chat_template_kwargs: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> EvalResult:
    """Play `episodes` tasks of `env_id`, each `samples_per_task` times, and measure them
    (see the module docstring). `task_indices` plays exactly those tasks instead (give one of
    the two): e.g. a run's held-out tasks (`rlenvs_train.heldout`).

    `model`: a local folder or hub id, loaded by `backend`: "hf" (transformers, on cuda if
    there is one, else cpu), "vllm" (`VLLMBackend.from_model`) or "vllm-server" (a running
    server at `server_url`, default `http://localhost:8000`; `model` then only names the
    tokenizer). Or a `Backend` instance, or a transformers model object (run by `HFBackend`),
    used as they are; `backend` is then ignored and `tokenizer` is required.
    `tokenizer`: a tokenizer with a chat template, or a path to load one from; default the
    model's own. `backend_kwargs` go to the backend's constructor (`HFBackend(device=...,
    max_batch_size=...)`, `vllm.LLM(max_model_len=...)`, `VLLMServerBackend(model=...)`).
    `k`: pass@k's k. `samples_per_task`: n of the estimator, at least k (default k).
    `max_turns`: stop episodes after this many model turns (the engine's cap); the env's
    own turn budget is an env kwarg (`env_kwargs={"max_turns": 3}`).
    `max_tokens_per_turn`, `max_episode_tokens`: the engine's token caps (the latter on
    model and env tokens after the prompt; None for no cap).
    `batch_size`: episodes played at once (the pool's size and one backend call per turn).
    `pool_kwargs` go to `EnvPool` (e.g. `executor="process"`, `step_timeout_s`).
    `chat_template_kwargs` go to every chat-template call (e.g. `enable_thinking=False`).
    `progress`: show a progress bar of episodes.
    """
    # --- everything is checked before anything is loaded ---------------------------------
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(
            f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)} (or pass a Backend as model)"
        )
    if episodes is not None and task_indices is not None:
        raise ValueError(
            "give episodes=N (tasks drawn as the module docstring says) or task_indices=[...], not both "
            "(neither: every task of a sized split once)"
        )
    if task_indices is not None:
        task_indices = list(task_indices)
        if not task_indices or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in task_indices):
            raise ValueError(f"task_indices must be a non-empty list of ints >= 0, got {task_indices!r}")
    elif episodes is not None:
        check_int("episodes", episodes, at_least=1)
    check_int("k", k, at_least=1)
    n = k if samples_per_task is None else samples_per_task
    check_int("samples_per_task", n, at_least=1)
    if n < k:
        raise ValueError(f"samples_per_task must be at least k={k} (pass@k draws k of them), got {n}")
    check_int("batch_size", batch_size, at_least=1)
    check_int("max_tokens_per_turn", max_tokens_per_turn, at_least=1)
    for name, value in (("max_episode_tokens", max_episode_tokens), ("max_turns", max_turns)):
        if value is not None:
            check_int(name, value, at_least=1, or_none="no limit")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")
    if temperature is None:
        temperature = 0.0 if n == 1 else 1.0
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature >= 0:
        raise ValueError(
            f"temperature must be a number >= 0 (0: greedy) or None (the default rule), got {temperature!r}"
        )
    temperature = float(temperature)
    env_kwargs = _check_kwargs("env_kwargs", env_kwargs)
    backend_kwargs = _check_kwargs("backend_kwargs", backend_kwargs)
    pool_kwargs = _check_kwargs("pool_kwargs", pool_kwargs)
    _check_env_id(env_id)

    built = _is_backend(model) or _is_hf_model(model)
    if built:
        if tokenizer is None:
            raise ValueError(
                f"model is an already-built {type(model).__name__}: pass tokenizer= (its tokenizer, or a path to it), "
                "which the engine needs for the chat template"
            )
    elif isinstance(model, (str, os.PathLike)):
        model = checked_model_path(os.fspath(model))
    else:
        raise TypeError(
            "model must be a local folder or hub id, a rlenvs_train Backend (generate(prompts, params)) or a "
            f"transformers model, got {type(model).__name__}"
        )
    if server_url is not None and (built or KINDS[backend].colocated):
        served = " or ".join(repr(kind.name) for kind in KINDS.values() if not kind.colocated)
        raise ValueError(f"server_url is for backend={served} only")
    if not built and KINDS[backend].needs_vllm and importlib.util.find_spec("vllm") is None:
        raise ImportError(
            f"backend={backend!r} needs vLLM, which is not installed: {vllm_install_hint()}, or use backend='hf'"
        )
    if isinstance(tokenizer, os.PathLike):
        tokenizer = os.fspath(tokenizer)
    if isinstance(tokenizer, str):
        tokenizer = checked_model_path(tokenizer, what="tokenizer")
    out_path = None if output is None else Path(output).expanduser()
    if out_path is not None and out_path.is_dir():
        raise IsADirectoryError(f"output must be a file path for the JSONL lines, got the folder {out_path}")

    plan = _Plan(
        model=model,
        env_id=env_id,
        episodes=episodes,
        task_indices=None if task_indices is None else list(task_indices),
        samples_per_task=n,
        max_turns=max_turns,
        backend=backend,
        env_kwargs=env_kwargs,
        max_tokens_per_turn=max_tokens_per_turn,
        max_episode_tokens=max_episode_tokens,
        temperature=temperature,
        seed=seed,
        output=out_path,
        batch_size=batch_size,
        tokenizer=tokenizer,
        server_url=server_url,
        backend_kwargs=backend_kwargs,
        pool_kwargs=pool_kwargs,
    )
    indices = plan.task_indices or _tasks(env_id, plan.env_kwargs, plan.episodes, seed)
    engine = _engine(plan, chat_template_kwargs)
    records, wall_s = _play(plan, engine, indices, progress)
    return EvalResult(
        env_id=env_id,
        episodes=len(indices),
        samples=len(records),
        k=k,
        samples_per_task=plan.samples_per_task,
        temperature=plan.temperature,
        seed=seed,
        **_measure(records, indices, k),
        stop_reasons=Counter(str(r["stop_reason"]) for r in records),
        wall_s=wall_s,
        output=plan.output,
        records=records,
    )


# --- the jobs of an evaluation after the checks: load the model, play -------------------------


@dataclass(frozen=True)
class _Plan:
    """`evaluate`'s arguments, checked and with their defaults resolved: what loading and playing read."""

    model: Any
    env_id: str
    episodes: int | None
    task_indices: list[int] | None
    samples_per_task: int
    max_turns: int | None
    backend: str
    env_kwargs: dict[str, Any]
    max_tokens_per_turn: int
    max_episode_tokens: int | None
    temperature: float
    seed: int
    output: Path | None
    batch_size: int
    tokenizer: Any
    server_url: str | None
    backend_kwargs: dict[str, Any]
    pool_kwargs: dict[str, Any]


def _engine(plan: _Plan, chat_template_kwargs: Mapping[str, Any] | None) -> RolloutEngine:
    """The tokenizer and the backend loaded, in the engine that plays the episodes."""
    tokenizer = plan.tokenizer
    if tokenizer is None or isinstance(tokenizer, str):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(tokenizer if isinstance(tokenizer, str) else plan.model)
    model = plan.model
    generator = (
        model
        if _is_backend(model)
        else _build_backend(model, plan.backend, plan.seed, plan.server_url, plan.backend_kwargs)
    )
    return RolloutEngine(
        generator,
        tokenizer,
        max_tokens_per_turn=plan.max_tokens_per_turn,
        max_episode_tokens=plan.max_episode_tokens,
        max_turns=plan.max_turns,
        temperature=plan.temperature,
        seed=plan.seed,
        chat_template_kwargs=chat_template_kwargs,
    )


def _play(
    plan: _Plan, engine: RolloutEngine, indices: Sequence[int], progress: bool
) -> tuple[list[dict[str, Any]], float]:
    """Every (task, sample) played in batches of `plan.batch_size`, each batch's records written
    to the output file as it ends (an interrupted run keeps them); the records and the wall time."""
    out_path = plan.output
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        _publish(out_path, [])  # an earlier run's file would pass for this one's if this one stops early
    plays = [(task, sample) for task in range(len(indices)) for sample in range(plan.samples_per_task)]
    records: list[dict[str, Any]] = []
    lines: list[str] = []
    bar = _progress_bar(len(plays)) if progress else None
    started = time.perf_counter()
    batch_size = plan.batch_size
    try:
        with EnvPool(plan.env_id, min(batch_size, len(plays)), make_kwargs=plan.env_kwargs, **plan.pool_kwargs) as pool:
            for start in range(0, len(plays), batch_size):
                batch = plays[start : start + batch_size]
                played = engine.run(pool, [{TASK_INDEX: indices[task]} for task, _ in batch])
                new = [
                    _record(indices[task], sample, plan.seed, episode) for (task, sample), episode in zip(batch, played)
                ]
                records += new
                if out_path is not None:
                    lines += [_json_line(record) for record in new]
                    _publish(out_path, lines)
                if bar is not None:
                    bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
    return records, time.perf_counter() - started


def _measure(records: Sequence[dict[str, Any]], indices: Sequence[int], k: int) -> dict[str, Any]:
    """`EvalResult`'s rates over the episodes the env finished, and its failures by reason
    (see the module docstring)."""
    finished = [r for r in records if r["stop_reason"] not in ENV_FAILURES]
    outcomes: dict[int, list[bool]] = defaultdict(list)
    for record in finished:
        outcomes[record["option"][TASK_INDEX]].append(record["success"])
    measured = [outcomes[i] for i in indices if len(outcomes[i]) >= k]
    return {
        "finished": len(finished),
        "env_failures": Counter(str(r["stop_reason"]) for r in records if r["stop_reason"] in ENV_FAILURES),
        "mean_reward": _mean([r["reward"] for r in finished]),
        "success_rate": _mean([r["success"] for r in finished]),
        "pass_at_k": _mean([pass_at_k(len(task), sum(task), k) for task in measured]),
        "pass_at_k_tasks": len(measured),
        "mean_turns": _mean([r["turns"] for r in finished]),
    }


def _mean(values: Sequence[float]) -> float | None:
    """The mean; None for no values (a rate over no finished episode is not 0)."""
    return sum(values) / len(values) if values else None


# --- checks ---------------------------------------------------------------------------------


def _check_kwargs(name: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise TypeError(f"{name} must be a dict of keyword arguments, got {value!r}")
    return dict(value)


def _check_env_id(env_id: Any) -> None:
    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"env_id must be a registered env id such as 'rlenvs/Arithmetic-v1', got {env_id!r}")
    check_env_id(env_id)  # an unknown id in the words every rlenvs command uses


def _is_backend(model: Any) -> bool:
    # A transformers model has a generate() too, but not the backend's (prompts, params) one.
    return callable(getattr(model, "generate", None)) and not _is_hf_model(model)


def _is_hf_model(model: Any) -> bool:
    return hasattr(model, "config") and callable(getattr(model, "parameters", None))


def _tasks(env_id: str, env_kwargs: dict[str, Any], episodes: int | None, seed: int) -> list[int]:
    """The task indices to play, each once (see the module docstring)."""
    env = gym.make(env_id, **env_kwargs)
    try:
        source = task_source(env, env_id, "evaluate")
        if source.sized:
            what = f"{env_id} with env_kwargs={env_kwargs}"
            return choose_task_indices(len(source), episodes, seed, what)
        if episodes is None:
            raise ValueError(
                f"{env_id} is procedural (an unbounded task generator): there is no 'every task' to play; pass "
                "episodes=N (--episodes N) to draw N distinct tasks"
            )
        return _task_indices(episodes, None, seed)
    finally:
        env.close()


# --- building the backend -------------------------------------------------------------------


def _build_backend(model: Any, backend: str, seed: int, server_url: str | None, kwargs: dict[str, Any]) -> Backend:
    kind = KINDS["hf"] if _is_hf_model(model) else KINDS[backend]  # a transformers model is hf's to run
    return kind.for_model(model, seed=seed, server_url=server_url, kwargs=kwargs)


# --- records and the output file ------------------------------------------------------------


def _record(task_index: int, sample: int, seed: int, episode: Episode) -> dict[str, Any]:
    """An episode as a trajectory line. The env failing it is a failure, not a wrong answer:
    no verdict (`success` None), the reason and error in `failure`."""
    failed = episode.stop_reason in ENV_FAILURES
    correct = episode.info.get("correct") if episode.step_infos else None
    trajectory = Trajectory(
        task_id=str(task_index if episode.task_id is None else episode.task_id),
        option={TASK_INDEX: int(task_index)},
        sample=sample,
        seed=seed,
        messages=[{"role": str(m["role"]), "content": str(m["content"])} for m in episode.transcript],
        rewards=list(episode.turn_rewards),
        infos=[json_safe({k: v for k, v in info.items() if k != "messages"}) for info in episode.step_infos],
        reward=float(episode.reward),
        correct=None if correct is None else bool(correct),
        success=None if failed else correct is True,
        stop_reason=str(episode.stop_reason),
        failure=f"{episode.stop_reason}: {episode.error or ''}".rstrip(": ") if failed else None,
        turns=episode.turns,
        finish_reasons=list(episode.finish_reasons),
    )
    return trajectory.to_json()


def _json_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def _publish(path: Path, lines: Sequence[str]) -> None:
    """Replace `path` with exactly `lines`, atomically: readers see the old file or the new
    one, and a crash leaves one of them whole. Rewriting everything each batch costs O(lines)
    per batch, which is small next to generating the batch."""
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8") as file:
        file.writelines(lines)


def _progress_bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="episode", dynamic_ncols=True)
