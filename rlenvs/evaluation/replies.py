"""Replies recorded elsewhere, for `--policy file:PATH`: a model's completions, or the
trajectories of an earlier `rlenvs eval` run, re-scored without the model.

One episode a line, keyed by task and sample:
- completions: `{"task_id": ..., "completion": "..."}` (or `"task_index"` for `"task_id"`,
  `"completions": [...]` for one reply per turn, and `"sample": k` for the k-th attempt, 0
  when absent);
- trajectories (`--trajectories` writes them): `{"task_id", "sample", "messages", ...}`, whose
  assistant messages are the replies, turn by turn.
Two lines for the same task and sample are an error: which one to score would be a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlenvs.data import DataFormatError, read_rows


@dataclass(frozen=True)
class RecordedEpisode:
    option: dict[str, Any]
    """reset's task option: {"task_id": ...} or {"task_index": ...}."""
    sample: int
    replies: tuple[str, ...]


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
            episodes.append(RecordedEpisode(option, sample, _replies(row, where)))
        return episodes


def _task_option(row: dict, where: str) -> dict[str, Any]:
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
    else:
        raise DataFormatError(
            f"{where}: each line needs 'completion' (a string), 'completions' (a list of strings) or 'messages' "
            "(a trajectory of rlenvs eval --trajectories)"
        )
    if not all(isinstance(r, str) for r in replies):
        raise DataFormatError(f"{where}: completions must be strings")
    return tuple(replies)
