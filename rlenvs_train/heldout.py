"""Held-out tasks: what a run learned, measured on problems it never trained on.

A training curve only says that the policy earns more on its own training tasks, which a
model can do by memorising them: the old quickstart's mean reward rose from 0.37 to 0.64 on
its 32 tasks while its greedy accuracy on other level-1 problems fell from 54% to 17%. So a
run with `data.heldout_tasks: N` sets N problems aside before anything is trained and
measures the policy's greedy accuracy on them at the start of GRPO (the model it starts
from), every `trainer.save_steps` steps, and at the end.

Apart means apart by content, not by task index. A procedural env poses the same problem
under many indices (level-1 Arithmetic has 155 distinct problems, "What is 3 + 4?" among
them, each under many indices), so tasks set aside by index would reappear in training
under other indices. Here a task is its prompt, the chat the env poses after reset: the
held-out set is N distinct prompts drawn with a seed of its own, and every training
episode that poses one of them is left out: GRPO's train and validation rows (rows from
`data.train_data` files too) and the SFT warm-up's oracle episodes alike.

What this measures on a small problem space is whether the model learned the task or a
table of answers. Measured on level-1 Arithmetic with the tiny model (37 problems held out
by content, greedy): an SFT warm-up of about 2,000 oracle episodes for 4 epochs answers 1 of
them; for 8 epochs, 23 of 37 (it has learned some addition, not only its examples); GRPO
from either start, at learning rates from 2e-5 to 3e-4, on 32 tasks or on a stream of
fresh ones, raised the accuracy on its own problems but never on these. What GRPO does carry
over is a behaviour that works on every problem: the quickstart's Arithmetic-Tool-v1 start
answers 12 to 15 of 40 in its head (seed 0; the figure depends on the CPU), and GRPO, by
teaching it to call the calculator, takes that to 40 of 40 (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "HELDOUT_SEED_OFFSET",
    "HeldoutAccuracy",
    "HeldoutTasks",
    "accuracy_line",
    "draw_heldout",
    "entry_text",
    "prompt_key",
]

HELDOUT_SEED_OFFSET = 2_000_000
"""The held-out draw's seed is the run's seed plus this: far from the train draw's (the
run's seed) and the SFT warm-up's (seed + 1,000,000), so changing one draw moves no other."""
DRAWS_PER_TASK = 8
"""How many indices the draw tries per held-out task before it concludes that the env has
fewer distinct problems than asked for (level-1 Arithmetic needs about 1.3 per task for 40)."""


def prompt_key(prompt: Sequence[Mapping[str, Any]]) -> str:
    """A task's content as posed: its prompt messages, as canonical JSON."""
    return json.dumps([{"role": str(m["role"]), "content": str(m["content"])} for m in prompt], sort_keys=True)


@dataclass(frozen=True)
class HeldoutTasks:
    """N tasks with distinct prompts, and those prompts (what training rows must not pose)."""

    task_indices: tuple[int, ...]
    prompts: frozenset[str]

    def __len__(self) -> int:
        return len(self.task_indices)

    def excludes(self, prompt: Sequence[Mapping[str, Any]]) -> bool:
        return prompt_key(prompt) in self.prompts

    def excludes_episode(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Whether an episode's messages (an SFT conversation) pose a held-out problem: its
        prompt is what came before the first assistant turn."""
        first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
        return self.excludes(messages[:first])


def draw_heldout(env_id: str, num_tasks: int, *, env_kwargs: Mapping[str, Any], seed: int) -> HeldoutTasks:
    """`num_tasks` tasks of `env_id` with distinct prompts, drawn with `seed + HELDOUT_SEED_OFFSET`.
    Raises ValueError when the env yields fewer distinct prompts than that in its draws."""
    from rlenvs_train.grpo import TASK_INDEX, env_dataset

    rows = env_dataset(
        env_id,
        num_tasks=_draw_size(env_id, num_tasks, env_kwargs),
        make_kwargs=env_kwargs,
        seed=seed + HELDOUT_SEED_OFFSET,
    )
    chosen: dict[str, int] = {}
    for row in rows:
        key = prompt_key(row["prompt"])
        if key not in chosen:
            chosen[key] = int(row[TASK_INDEX])
            if len(chosen) == num_tasks:
                return HeldoutTasks(tuple(chosen.values()), frozenset(chosen))
    raise ValueError(
        f"data.heldout_tasks={num_tasks} but {env_id} {dict(env_kwargs)} posed only {len(chosen)} distinct problems in "
        f"{len(rows)} draws: set data.heldout_tasks to at most about a quarter of them, so training keeps most"
    )


def _draw_size(env_id: str, num_tasks: int, env_kwargs: Mapping[str, Any]) -> int:
    """How many tasks to draw: DRAWS_PER_TASK per held-out task, or every task of a smaller data set."""
    import gymnasium as gym

    from rlenvs.core.task import task_source

    env = gym.make(env_id, **env_kwargs)
    try:
        source = task_source(env, env_id, "data.heldout_tasks")
        wanted = num_tasks * DRAWS_PER_TASK
        return min(wanted, len(source)) if source.sized else wanted
    finally:
        env.close()


class HeldoutAccuracy:
    """Measures the policy's greedy accuracy on the held-out tasks, with the run's env kwargs
    and token caps, so that it scores what a rollout of the policy would at temperature 0."""

    def __init__(self, config: Any, heldout: HeldoutTasks, tokenizer: Any) -> None:
        self.config, self.heldout, self.tokenizer = config, heldout, tokenizer

    def measure(self, model: Any, step: int) -> dict[str, Any]:
        """One measurement of `model` (a transformers model, used where it is) as a metrics entry."""
        from rlenvs_train.evaluate import evaluate

        t = self.config.trainer
        result = evaluate(
            model,
            self.config.data.env,
            task_indices=list(self.heldout.task_indices),
            env_kwargs=dict(self.config.data.env_kwargs),
            max_turns=t.max_turns,
            max_tokens_per_turn=t.max_tokens_per_turn,
            max_episode_tokens=t.max_episode_tokens,
            temperature=0.0,
            seed=t.seed,
            tokenizer=self.tokenizer,
        )
        correct = sum(bool(record["success"]) for record in result.records)
        # An episode the env failed to play (env_timeout, env_lost, env_error) is no wrong
        # answer: the accuracy is over the finished ones, the failures counted beside it.
        return {
            "step": step,
            "accuracy": result.success_rate,
            "correct": correct,
            "finished": result.finished,
            "env_failures": sum(result.env_failures.values()),
            "tasks": len(self.heldout),
        }


def entry_text(entry: Mapping[str, Any]) -> str:
    """One measurement as "54.0% (27/50)", with the episodes the env failed to play, if any."""
    accuracy = "n/a" if entry["accuracy"] is None else f"{100 * entry['accuracy']:.1f}%"
    failures = f", {entry['env_failures']} env failures" if entry.get("env_failures") else ""
    return f"{accuracy} ({entry['correct']}/{entry.get('finished', entry['tasks'])}{failures})"


def accuracy_line(entries: Sequence[Mapping[str, Any]]) -> str:
    """The closing line: held-out greedy accuracy at the start and at the end of GRPO."""
    first, last = entries[0], entries[-1]
    gain = (
        ""
        if first["accuracy"] is None or last["accuracy"] is None
        else f" ({100 * (last['accuracy'] - first['accuracy']):+.1f} points)"
    )
    return (
        f"held-out greedy accuracy ({first['tasks']} problems no training episode posed): {entry_text(first)} "
        f"at step {first['step']} -> {entry_text(last)} at step {last['step']}{gain}"
    )
