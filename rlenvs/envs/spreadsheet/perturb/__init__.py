"""How the formula check changes a task's data, and why each change is there.

Where a task asks for formulas, the env judges the agent's workbook on the starting data and
again on changed copies of it (`env.SpreadsheetEnv.verify`): each copy's data go into the
agent's workbook, it is recalculated, and every formula cell must equal `truth` of the
copy. A formula that hard-codes what it was asked to find (a cell, a row choice, a group, a
key, a comparison) is right on the starting data, so the copies must move exactly what such
a formula relies on, and nothing that would make an honest formula's answer ambiguous.

A task names the ranges its copies change in two ways:

- `inputs`: the data the targets are computed from. Numbers are scaled by 0.5-1.5 (whole
  numbers stay whole, signs stay), dates moved by up to 40 days either way, texts shuffled
  within their column. This alone catches a value typed in, or a constant dressed as a
  formula.
- `changes`: steps run after that, for what scaling does not move (`Change` subclasses):
  - `CycleRows`: the rows of an area move along one cycle through all of them (and
    `CycleColumns` the columns). Every row moves and no set of rows maps onto itself, so a
    hand-picked sum (`=D4+D6+D9` for one region), a hand-found row of a lookup table
    (`=Prices!C5`), a criterion copied from a listing (`"East"` instead of `F2`) or a blank
    found by eye read other data; what holds row by row (a key is unique, every group has a
    row, every value has its own label) stays true.
  - `OnThreshold`: values put exactly on a threshold the task states, and just across it
    from where they were, so that `>` where "at least" is asked (or `>=` for "more than")
    fails; and half the other rows' labels changed, half kept with other values, the halves
    swapping between an episode's copies, so that a label or IF branch chosen by hand per
    row fails, also where it switches to the other label whenever the data differ.
  - `Runs`: contiguous runs of one key get other lengths, so a running total that restarts
    on hand-picked rows fails.
  - `SwapColumns`: some rows' value changes column (a debit becomes a credit).
  - `Ties`, `Distinct`: a score column gets ties where the task is about ties, and none
    where it promises none (a rank must have one answer).
  - `SameDay`: dates put on an anniversary (the same day of the month, or of the year, as
    a reference date) and the days beside it, where whole months or years are counted, in
    years (months) where a count by average lengths (days/365.25, days/30.4375) is wrong;
    `LeapPhase` first moves a report date into one phase of the leap cycle in the even
    copies and the other in the odd ones (with a 29 February in its past year, and
    without), and for years the hires on and a day after the anniversary are the same
    years back in both, so that an average year with an offset, `(days+0.25)/365.25`, is
    wrong in one of them; `OtherCount` then moves every other date whose count came out as
    its row's starting one by a year (a month).
  - `InOrder`: end dates kept after their row's start date, as the data has them (moved
    independently, some ends fell before their starts, where DATEDIF is #NUM!).
  - `DateEdges`: dates put on the first and last day of their month, and a year away, where
    totals are grouped by year and month.
  - `Blanks`: more blanks where a row's group changed, a real 0 among the values (a blank
    equals 0 in a spreadsheet, so `IF(D2=0,...)` fills it), and a blank whose average rounds
    up in the even copies and down in the odd ones, so that ROUNDDOWN, TRUNC or ROUNDUP
    where ROUND is asked fails.
  - `Remap`: each text through a family's function (messy text made messy again in every
    way the cleaning handles, so that a cleaning step left out on rows that did not need it
    fails; a phone written in another shape the data allows, one with every character the
    row's starting shape lacked).
  - `FreshTexts`: texts the task never showed (new names, codes, emails), so that cleaned
    texts typed into a table and fetched by a case-blind lookup fail.

Every step is deterministic given its random generator (the verdict seeds one per task,
episode seed and round: `verdict.changed_data`) and the copy it makes (`Copy`: the round,
and a key shared by the episode's copies, from which the steps that plan across copies
draw their plan), touches only its own area, and keeps the kinds of values (whole numbers
stay whole). The env writes every cell of `written_areas(...)` into the agent's workbook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import Area, parse_area
from rlenvs.envs.spreadsheet.perturb.base import Change, Copy, Sheets, _cycle  # noqa: F401  (the tests read it)
from rlenvs.envs.spreadsheet.perturb.blanks import Blanks
from rlenvs.envs.spreadsheet.perturb.dates import (
    DateEdges,
    InOrder,
    LeapPhase,
    OtherCount,
    SameDay,
)
from rlenvs.envs.spreadsheet.perturb.numbers import Distinct, OnThreshold, Test, Ties
from rlenvs.envs.spreadsheet.perturb.rows import (
    CycleColumns,
    CycleRows,
    Runs,
    SwapColumns,
)
from rlenvs.envs.spreadsheet.perturb.scale import scale_inputs
from rlenvs.envs.spreadsheet.perturb.texts import FreshTexts, Remap


def perturb(
    sheets: Mapping[str, Sequence[Sequence[Any]]],
    inputs: Sequence[str],
    rng: np.random.Generator,
    changes: Sequence[Change] = (),
    copy: Copy | None = None,
) -> Sheets:
    """A changed copy of the sheets: `inputs` scaled, moved and shuffled, then each of
    `changes` in order. `copy` says which copy of an episode it is (`Copy`: the steps
    that plan across copies follow it); without it the copy stands alone. The sheets given
    are not modified."""
    changed = {name: [list(row) for row in rows] for name, rows in sheets.items()}
    scale_inputs(changed, inputs, rng)
    for change in changes:
        if copy is None:
            change.apply(changed, sheets, rng)
        else:
            change.apply_to_copy(changed, sheets, rng, copy)
    return changed


def written_areas(inputs: Sequence[str], changes: Sequence[Change]) -> list[Area]:
    """Every area a changed copy may differ in, each once: what the env writes into the
    agent's workbook (a column that is an input and the area of two steps is written once)."""
    return [parse_area(text) for text in dict.fromkeys((*inputs, *(change.area for change in changes)))]


__all__ = [
    "Blanks",
    "Change",
    "Copy",
    "CycleColumns",
    "CycleRows",
    "DateEdges",
    "Distinct",
    "FreshTexts",
    "InOrder",
    "LeapPhase",
    "OnThreshold",
    "OtherCount",
    "Remap",
    "Runs",
    "SameDay",
    "Sheets",
    "SwapColumns",
    "Test",
    "Ties",
    "perturb",
    "scale_inputs",
    "written_areas",
]
