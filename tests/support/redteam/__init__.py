"""Red-team corpora: replies a policy in training could find, and the reward a correct
verifier gives them.

A GRPO policy is paid for whatever the verifier pays for, so every class of wrong verdict
that was found (by red-teaming or on real model outputs) is kept as a case, and
`tests/project/test_redteam.py` replays all of them on every run. Per family (`math`, `code`,
`terminal`, `spreadsheet`):

- the cases, data: `tests/data/redteam/<family>.jsonl`, one JSON object a line with the
  fields of `Case` (`load_cases`); a new case is one more line;
- `replay(case) -> float` in the module of that name here: poses `case.task` with the
  family's real verifier or env and plays `case.replies` through it, returning the reward
  the episode earned.

A case names its class (`kind`), so the corpus can be read as a list of what was found.
Both directions belong here: a reply that wins without doing the task (reward 0) and a
correct reply that a wrong verdict would refuse (reward 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).resolve().parents[2] / "data" / "redteam"
"""The corpus files, `<family>.jsonl`."""


@dataclass(frozen=True)
class Case:
    kind: str
    """The class of wrong verdict this case pins, e.g. "mixed-number", "hidden-test-leak"."""
    task: Mapping[str, Any]
    """What the family's `replay` needs to pose the task (a gold answer, an env id and row, ...)."""
    replies: tuple[str, ...]
    """The policy's replies, one per turn."""
    reward: float
    """The reward a correct verifier gives the episode."""
    why: str
    """One line: why that is the right reward."""


def load_cases(family: str) -> list[Case]:
    """The cases of `family`'s corpus file, in its order."""
    cases = []
    with (CORPORA / f"{family}.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            record = json.loads(line)
            if set(record) != {"kind", "task", "replies", "reward", "why"}:
                raise ValueError(f"{family}.jsonl line {number}: the fields are kind, task, replies, reward, why")
            cases.append(
                Case(record["kind"], record["task"], tuple(record["replies"]), record["reward"], record["why"])
            )
    return cases
