"""Oracle trajectories as chat data for supervised fine-tuning.

`rlenvs sft-data ENV_ID --episodes N --output FILE.jsonl` plays N episodes with the env's
`oracle_action()` (the gold reply for the current state) and writes each whole
conversation as one JSON line. On a sized task source (a data file: GSM8K, MATH, HumanEval)
the N episodes pose N distinct tasks, drawn as `rlenvs eval` draws them
(`rlenvs.evaluation.tasks.choose_task_indices`); a procedural source (Arithmetic) or an env
without a task source gets one seeded reset per episode, seeds `seed, seed+1, ...`:

    {"messages": [...], "env_id": ..., "task_id": ..., "total_reward": ..., "turns": ...}

`messages` is the chat a model would have seen and said: the env's messages at reset
(`info["messages"]`: system prompt if any, then the problem), then for each turn the
oracle's reply as an `assistant` message followed by the env's answer to it (`info["messages"]`
of the step: tool output, feedback), so a multi-turn env (GSM8K-Tool-v1 with
`oracle_uses_calculator=True`) gives user/assistant turns in order. A conversation ends
with the assistant's last reply: the env says nothing after an episode ends.

Why this exists: RL from a base model that never produces the answer format (`\\boxed{}`,
a tool call) gets zero reward everywhere and learns nothing; a short SFT warm-up on these
conversations teaches the format first. Only episodes where the oracle reaches the env's
maximum reward (`reward_range[1]`) are kept, so the data never teaches a wrong answer;
an oracle that falls short (a data row whose gold solution the verifier rejects) is
counted as skipped, not written.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rlenvs.core.checks import check_int
from rlenvs.core.env import MAX_STEPS_WITHOUT_TURN_LIMIT, chat_messages
from rlenvs.evaluation.tasks import choose_task_indices, source_size
from rlenvs.files import atomic_path
from rlenvs.integrations.parquet import make_env

__all__ = ["oracle_conversations", "write_jsonl"]


def oracle_conversations(
    env_id: str,
    episodes: int,
    *,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Play `episodes` oracle episodes and return those that reach the env's maximum reward
    as `{"messages", "env_id", "task_id", "total_reward", "turns"}` dicts (so
    `episodes - len(result)` were skipped).

    Episode i is reset with seed `seed + i`. On a sized task source (a data file) it also
    gets `options={"task_index": ...}`: `episodes` distinct tasks drawn with `seed` as
    `rlenvs eval` draws them, in increasing index order, so a split's problems are covered
    without repeats (seeded resets alone draw with replacement: 1,319 episodes pose only ~839
    of GSM8K test's 1,319 problems); the per-episode seed still seeds an env that samples.
    Asking for more episodes than the split has tasks is a ValueError that says to lower
    `episodes`: a repeated task is a duplicate line (the oracle's reply depends on the task),
    which weights that problem twice in the SFT loss, never more data. A procedural source,
    or an env without a task source (a foreign gymnasium env), keeps seeded resets only.

    One env is made and reset for every episode: making an env can load a data file or
    start a sandbox, which would dominate the cost of thousands of short episodes. Raises
    ValueError for an env without an oracle or without a finite maximum reward."""
    check_int("episodes (--episodes)", episodes, at_least=1, meaning="how many oracle episodes to play")
    check_int("seed (--seed)", seed, at_least=0, meaning="episode i is reset with seed + i")
    env = make_env(env_id, env_kwargs)
    try:
        unwrapped = env.unwrapped
        if not callable(getattr(unwrapped, "oracle_action", None)):
            raise ValueError(_no_oracle(env_id, type(unwrapped).__name__))
        reward_range = getattr(unwrapped, "reward_range", None)
        best = reward_range[1] if reward_range is not None else math.inf
        if not math.isfinite(best):
            raise ValueError(
                f"{env_id} declares no finite maximum reward (reward_range={reward_range}): sft-data keeps the "
                "episodes whose oracle reaches it; give the env a reward_range"
            )
        options = _task_options(env, env_id, episodes, seed, env_kwargs or {})
        records = []
        for episode, option in enumerate(options):
            record = _play(env, env_id, seed + episode, option)
            if math.isclose(record["total_reward"], best, rel_tol=1e-9, abs_tol=1e-9) or record["total_reward"] > best:
                records.append(record)
        return records
    finally:
        env.close()


def _task_options(
    env: Any, env_id: str, episodes: int, seed: int, env_kwargs: Mapping[str, Any]
) -> list[dict[str, int] | None]:
    """Each episode's reset options: distinct `task_index`es on a sized source; None (a
    seeded draw) on a procedural one or an env without a task source."""
    try:
        size = source_size(env, env_id)
    except TypeError:  # not an rlenvs TextEnv: its reset cannot pick a task, only take a seed
        size = None
    if size is None:
        return [None] * episodes
    if episodes > size:
        split = env_kwargs.get("split")
        what = env_id if split is None else f"{env_id} split={split}"
        raise ValueError(
            f"--episodes {episodes} is more than the {size} task{'s' if size != 1 else ''} of {what}: lower "
            f"--episodes (trainer.sft_warmup.episodes in an rlenvs-train config) to {size} or fewer; each task's "
            "oracle conversation is written once, as a repeat would only duplicate a line"
        )
    return [{"task_index": index} for index in choose_task_indices(size, episodes, seed, env_id)]


def _no_oracle(env_id: str, class_name: str) -> str:
    return (
        f"{env_id} ({class_name}) has no oracle: sft-data plays the env's oracle_action(), the gold reply for "
        "the current state; use an env that implements it (every rlenvs env does, see `rlenvs list`)"
    )


def _play(env: Any, env_id: str, seed: int, options: dict[str, int] | None) -> dict[str, Any]:
    observation, info = env.reset(seed=seed, options=options)
    task_id = str(info.get("task_id", ""))
    messages = chat_messages(info, observation)
    limit = info.get("max_turns") or MAX_STEPS_WITHOUT_TURN_LIMIT
    total, turns, done = 0.0, 0, False
    while not done:
        if turns >= limit:
            raise RuntimeError(
                f"{env_id} episode (seed {seed}) did not end within {limit} oracle steps: its oracle never "
                "finishes the task, or the env ignores its own max_turns"
            )
        try:
            reply = env.unwrapped.oracle_action()
        except NotImplementedError:
            raise ValueError(_no_oracle(env_id, type(env.unwrapped).__name__)) from None
        observation, reward, terminated, truncated, info = env.step(reply)
        messages.append({"role": "assistant", "content": reply})
        total += float(reward)
        turns += 1
        done = terminated or truncated
        if not done:
            messages.extend(chat_messages(info, observation))
        # After the last step the env has nothing more to say to a model (rlenvs envs send
        # ""); anything a foreign env sends then is dropped so the chat ends with the reply.
    return {"messages": messages, "env_id": env_id, "task_id": task_id, "total_reward": total, "turns": turns}


def write_jsonl(records: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write one JSON object per line to `path`, atomically: into a temporary file beside it,
    moved into place once complete, so an interrupted run leaves the old file or none, never
    a truncated one that a trainer would read as a smaller data set. Returns the path."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"--output {str(path)!r} is a folder: pass a file name such as {path / 'sft.jsonl'}")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"--output {str(path)!r}: folder {str(path.parent)!r} does not exist; create it first")
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8") as output:
        output.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    return path
