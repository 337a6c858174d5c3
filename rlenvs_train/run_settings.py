"""Evaluating a model as its run trained it: the run's config.yaml read for its final model,
env, env kwargs and caps. One reading for `rlenvs-train eval --config` and
`rlenvs eval --config`, so the two commands cannot disagree about what "as trained" means.

Why the env kwargs come whole: a model learns under its run's system prompt. The quickstart
trains with `system_prompt: null`; evaluated under the env's default prompt it scored 0%,
and 95.2% under its own. Flags still win, key by key (`--env-arg level=2`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FINAL_MODEL = "final-model"
"""The folder beside a run's config.yaml that a finished run saved its model to."""


@dataclass(frozen=True)
class RunEvalSettings:
    """What an eval of a run's model plays with, flags over the run's config."""

    env: str
    env_kwargs: dict[str, Any]
    max_turns: int | None
    """The engine's cap on model turns (None: the env's own limit)."""
    max_tokens_per_turn: int
    max_episode_tokens: int

    def described(self) -> str:
        """One line for the console: what the eval took from the run."""
        return (
            f"env {self.env}, env_kwargs {self.env_kwargs}, max_turns {self.max_turns}, "
            f"max_tokens_per_turn {self.max_tokens_per_turn}, max_episode_tokens {self.max_episode_tokens}"
        )


def run_eval_settings(
    config: str,
    *,
    env: str | None = None,
    env_args: Mapping[str, Any] | None = None,
    max_turns: int | None = None,
    max_tokens_per_turn: int | None = None,
    max_episode_tokens: int | None = None,
) -> RunEvalSettings:
    """The run at `config` (its config.yaml) as an eval plays it; each argument given wins over
    the run's. Another env than the run's starts from no env kwargs (the run's are its env's).
    The model is apart (`final_model`): an eval may play the run's env with another policy."""
    from rlenvs_train.config import load_config

    run = load_config(config)
    chosen_env = env or run.data.env
    kwargs = dict(run.data.env_kwargs) if chosen_env == run.data.env else {}
    kwargs.update(env_args or {})
    trainer = run.trainer
    return RunEvalSettings(
        env=chosen_env,
        env_kwargs=kwargs,
        max_turns=max_turns if max_turns is not None else trainer.max_turns,
        max_tokens_per_turn=max_tokens_per_turn if max_tokens_per_turn is not None else trainer.max_tokens_per_turn,
        max_episode_tokens=max_episode_tokens if max_episode_tokens is not None else trainer.max_episode_tokens,
    )


def final_model(config: str) -> str:
    """The final model beside a run's config.yaml, which must exist (a run still training has
    only checkpoints: evaluate one of those by its path)."""
    model = Path(config).expanduser().parent / FINAL_MODEL
    if not (model / "config.json").is_file():
        raise FileNotFoundError(
            f"{model} is not there (a run that has not finished, or a config outside its run's folder): pass the "
            "model to evaluate, e.g. the run's last checkpoint-N"
        )
    return str(model)
