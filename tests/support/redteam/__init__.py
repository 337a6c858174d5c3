"""Red-team corpora: replies a policy in training could find, and the reward a correct
verifier gives them.

A GRPO policy is paid for whatever the verifier pays for, so every class of wrong verdict
that was found (by red-teaming or on real model outputs) is kept here as cases, and
`tests/project/test_redteam.py` replays all of them on every run. One module per family (`math`,
`code`, `terminal`, `spreadsheet`), each with:

- `CASES`: a list of `Case`;
- `replay(case) -> float`: poses `case.task` with the family's real verifier or env and
  plays `case.replies` through it, returning the reward the episode earned.

A case names its class (`kind`), so the corpus can be read as a list of what was found.
Both directions belong here: a reply that wins without doing the task (reward 0) and a
correct reply that a wrong verdict would refuse (reward 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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
