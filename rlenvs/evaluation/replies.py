"""Replies recorded elsewhere, for `--policy file:PATH`: a model's completions, or the
trajectories of an earlier `rlenvs eval` run, re-scored without the model.

One episode a line, keyed by task and sample:
- completions: `{"task_id": ..., "completion": "..."}` (or `"task_index"` for `"task_id"`,
  `"completions": [...]` for one reply per turn, and `"sample": k` for the k-th attempt, 0
  when absent);
- trajectories (`rlenvs eval --trajectories` and `rlenvs-train eval --output` write them):
  `{"task_id", "option", "sample", "messages", ...}`, whose assistant messages are the
  replies, turn by turn, played on the task of `option` (a procedural env's task index).
Two lines for the same task and sample are an error: which one to score would be a guess.
A trajectory replays exactly: the replies its env judged, then the same end where its player
ended it (a token budget) or failed (an infrastructure failure stays one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlenvs.data import DataFormatError, read_rows

POLICY_SIDE_STOPS = frozenset({"max_episode_tokens", "max_turns"})
"""Stop reasons of an episode the player ended, not the env (a token budget, a turn cap): a
replay ends the same way when the recorded replies run out."""


@dataclass(frozen=True)
class RecordedEpisode:
    option: dict[str, Any]
    """reset's task option: {"task_id": ...} or {"task_index": ...}."""
    sample: int
    replies: tuple[str, ...]
    """The replies the env was given, in order."""
    stop_reason: str | None = None
    """A trajectory's stop reason, where its player ended it (`POLICY_SIDE_STOPS`)."""
    failure: str | None = None
    """A trajectory's infrastructure failure: its replay fails the same way, not as a wrong answer."""


class RecordedReplies:
    @staticmethod
    def read(path: str | Path) -> list[RecordedEpisode]:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"completions file not found: {path}")
        episodes: list[RecordedEpisode] = []
        seen: dict[tuple[str, Any, int], str] = {}
        for row, location in read_rows(path):
            where = str(location)
            option = _task_option(row, where)
            sample = row.get("sample", 0)
            if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
                raise DataFormatError(f"{where}: 'sample' must be an int >= 0, got {sample!r}")
            key = (*next(iter(option.items())), sample)
            if key in seen:
                raise DataFormatError(f"{where}: {key[0]}={key[1]!r} sample {sample} is already on {seen[key]}")
            seen[key] = where
            stop = row.get("stop_reason")
            failure = row.get("failure")
            episodes.append(
                RecordedEpisode(
                    option,
                    sample,
                    _replies(row, where),
                    stop_reason=stop if stop in POLICY_SIDE_STOPS else None,
                    failure=str(failure) if failure else None,
                )
            )
        return episodes


def _task_option(row: dict, where: str) -> dict[str, Any]:
    option = row.get("option")
    if isinstance(option, dict) and len(option) == 1 and next(iter(option)) in ("task_id", "task_index"):
        return dict(option)  # a trajectory line: the reset option its episode was played with
    if "task_id" in row:
        return {"task_id": row["task_id"]}
    if "task_index" in row:
        return {"task_index": row["task_index"]}
    raise DataFormatError(f"{where}: each line needs 'task_id' or 'task_index' to say which task it answers")


def _replies(row: dict, where: str) -> tuple[str, ...]:
    if "completion" in row:
        replies = [row["completion"]]
    elif "completions" in row and isinstance(row["completions"], list):
        replies = row["completions"]
    elif "messages" in row and isinstance(row["messages"], list):
        replies = [m.get("content") for m in row["messages"] if isinstance(m, dict) and m.get("role") == "assistant"]
        if isinstance(row.get("rewards"), list):
            # A trajectory: one reward per reply the env judged. A reply past them was cut by the
            # player's token budget and never reached the env; replayed, it would be judged.
            replies = replies[: len(row["rewards"])]
    else:
        raise DataFormatError(
            f"{where}: each line needs 'completion' (a string), 'completions' (a list of strings) or 'messages' "
            "(a trajectory of rlenvs eval --trajectories)"
        )
    if not all(isinstance(r, str) for r in replies):
        raise DataFormatError(f"{where}: completions must be strings")
    return tuple(replies)
