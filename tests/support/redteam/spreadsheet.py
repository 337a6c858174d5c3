"""The spreadsheet red-team corpus: replies to Spreadsheet-v1 tasks that a policy could find,
and the reward a correct verifier gives them (replayed by tests/project/test_redteam.py).

The classes it pins:

- formulas that do the task's work by hand and are right only on the starting data: a
  group's cells added by hand (`=D4+D6+D9`) or its orders listed by ID, a lookup's row
  found by hand (`=Prices!C5`, or through INDIRECT or OFFSET), a key or criterion typed
  into the formula instead of read from the row or the listing, an IF branch, a restart, a
  debit or credit, a blank or an anniversary decided per row, a cleaning step left out
  where a row did not need it, a total by MONTH alone. The formula check must move what
  each relies on (`rlenvs.envs.spreadsheet.perturb`): reward 0;
- comparisons at a task's threshold: `>` where "at least" is asked, `>=` for "more than",
  `<=` for "below", `<` EOMONTH for a whole month, on tasks whose starting data has no
  value on the threshold (the check puts some there): reward 0;
- honest alternatives to the reference formula (SUMPRODUCT, SUMIFS over whole columns,
  INDEX/MATCH, XLOOKUP, SUMIF as a lookup, IFS, nested IF, MIN/MAX, a tie-breaking rank
  where scores are distinct, ...), which the check must not fail: reward 1;
- INDIRECT and OFFSET, with OFFSET anchored on the formula's own cell (a place, not a
  cycle): reward 1 where honest;
- values computed from RAND, RANDBETWEEN, NOW or TODAY, which change at every
  recalculation: refused wherever a value is judged (reward 0), while one no judged cell
  reads does not matter (reward 1);
- a leading apostrophe (`'Revenue`, as in Excel) and single quotes (`'Stock Value'`) mean
  text without the quotes: reward 1.

From the second red-team pass (each a wrong verdict before its fix):

- cleaned texts typed into a table and fetched by a case-blind VLOOKUP (the check brings in
  texts the task never showed), digits read at the places of one phone shape with the rest
  typed, an input column rewritten by the agent into a convenient shape (a workbook whose
  data cells were changed scores 0; before Spreadsheet-v1 the verdict wrote the data back,
  and a correct formula beside an overwritten input cell scored 1), labels typed on rows scaling never moves across the threshold
  (dressed as formulas that read only the header), a typed tax rate, a quantity of 1 or a
  code left in its row by the shuffle, RAND read only on changed data: reward 0;
- whole years as days/365.25, whole months as days/30.4375, a month as 31 days, ROUND left
  out where the task asks to round, EOMONTH/EDATE over a range (#VALUE! in Excel): reward 0;
- honest replies the verdict refused: DATEDIF day counts (the check put End before Start),
  actions and SUBMIT in two fenced blocks, typographic quotes around a header, SUBTOTAL,
  AGGREGATE, LOOKUP, N, QUOTIENT, ADDRESS, CHAR, RANK.AVG, DATEVALUE and TEXT(B2,"00"):
  reward 1. (FILTER and LET, which the engine does not have, are not among them.)

From the third red-team pass (each a wrong verdict before its fix, but for the guards
beside them that held already: ROUNDUP, a blank found by LEN, actions over two blocks and a
draft before the final block):

- labels and IF branches typed per row that switch to the other answer wherever the data
  differ (where every row's label changed in every copy, "changed" meant "the other
  label"), also through a typed helper table or a column's SUM; answers typed into a table
  and fetched by a first name or a phone's last digits; whole years as (days+a)/365.25 or
  /365.2425 for any offset a; ROUNDDOWN, TRUNC or ROUNDUP where ROUND is asked; a 0 taken
  for a blank: reward 0;
- honest replies the engine refused: the left lookup through CHOOSE({1,2},...), ROW of
  INDIRECT over the formula's own row, CLEAN, XMATCH, MROUND, SEQUENCE inside CONCAT, a
  range ending in INDEX, Excel 365's `@`, criteria with a date as en-US text; and replies
  read wrongly: a prose plan in a fence, a plan repeated as the final block, actions over
  two blocks: reward 1.

Each case is written for one task id, as the policy would have written it for that task's
data; `task["crc"]` is the CRC-32 of the task's prompt, so that a change of the generated
task fails the replay (write the case again) instead of testing something else.
"""

from __future__ import annotations

import zlib
from typing import Any

import gymnasium as gym

import rlenvs  # noqa: F401  (registers the envs)
from tests.support.redteam import Case

_ENVS: dict[int, Any] = {}


REPLAY_SEEDS = (0, 1, 2)
"""The episode seeds every case is played with: the verdict's changed copies of the data
are drawn from the episode's seed, so a case must earn its reward on each."""


def replay(case: Case) -> float:
    """Pose the task with the real env (`rlenvs/Spreadsheet-v1` at the task's level, two
    perturbation rounds as by default), play the replies once per seed of `REPLAY_SEEDS`,
    and return the episode's reward: the one reward all seeds gave, else the first that
    differs from the case's (so a verdict that depends on the seed fails the replay)."""
    rewards = [_episode(case, seed) for seed in REPLAY_SEEDS]
    return next((reward for reward in rewards if reward != case.reward), rewards[0])


def _episode(case: Case, seed: int) -> float:
    task_id = case.task["id"]
    level = int(task_id.split("/")[2][1:])
    if level not in _ENVS:
        _ENVS[level] = gym.make("rlenvs/Spreadsheet-v1", level=level).unwrapped
    env = _ENVS[level]
    observation, _ = env.reset(seed=seed, options={"task_id": task_id})
    if zlib.crc32(observation.encode()) != case.task["crc"]:
        raise AssertionError(
            f"{task_id} is not the task this case was written for (its prompt changed): write the case again"
        )
    for reply in (*case.replies, "SUBMIT"):
        _, reward, terminated, truncated, _ = env.step(reply)
        if terminated or truncated:
            return reward
    raise AssertionError(f"{task_id}: the episode did not end after SUBMIT")
