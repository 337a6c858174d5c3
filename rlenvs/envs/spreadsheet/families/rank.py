"""The rank family: rank rows by a score with formulas.

| level | asks | example (task id) |
|---|---|---|
| 1 | RANK by a score, 1 for the highest (or the lowest time or error rate), no ties (formulas) | `Exams`: `=RANK(C2,$C$2:$C$31)` (L1/0) |
| 2 | ties sharing a rank as RANK does, or ranks within a group (formulas) | `Pickers` within each Shift: `=COUNTIFS($B$2:$B$22,B2,$C$2:$C$22,"<"&C2)+1` (L2/0) |

Why the verdict holds: the ranks are a new column of formulas, recomputed by `_rank_truth`
from the sheets row by row on the check's changed data. The changes move the scores along a
cycle and the groups of a rank within groups (`CycleRows`), with ties in a rank about ties
(`Ties`) and none where a rank promises none (`Distinct`): a rank typed in (or a constant
dressed as a formula) fails."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.drawn_tables import Column, _headers, _table
from rlenvs.envs.spreadsheet.families.table_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _column,
    _is_number,
    _ref,
    _reply,
    _rows,
)
from rlenvs.envs.spreadsheet.families.table_pools import REGIONS
from rlenvs.envs.spreadsheet.perturb import Change, CycleRows, Distinct, Ties
from rlenvs.envs.spreadsheet.tasks import Scenario

CLASSES = ("7A", "7B", "8A", "8B", "9A", "9B")


CLUBS = ("Harbour Harriers", "Hill Runners", "Park Striders", "River Road", "Valley AC")


# A score table: (sheet, (name, group, score) columns, whether the lowest score ranks 1, the
# score column of level 2's tables with ties).
RankTable = tuple[str, tuple[Column, Column, Column], bool, Column]


RANK_TABLES: tuple[RankTable, ...] = (
    ("Reps", (("Rep", "person", None), ("Region", "pick", REGIONS), ("Revenue", "money", (1_500_000, 45_000_000))), False, ("Deals Won", "int", (5, 30, 1))),
    ("Exams", (("Student", "person", None), ("Class", "pick", CLASSES), ("Score", "int", (0, 100, 1))), False, ("Score", "int", (12, 30, 1))),
    ("Results", (("Runner", "person", None), ("Club", "pick", CLUBS), ("Time (min)", "money", (3_600, 7_500))), True, ("Time (min)", "int", (36, 52, 1))),
    ("Pickers", (("Picker", "person", None), ("Shift", "pick", ("Early", "Late", "Night")), ("Error Rate (%)", "money", (5, 480))), True, ("Errors", "int", (0, 12, 1))),
)  # fmt: skip


def rank(rng: np.random.Generator, level: int) -> Scenario:
    """Level 1: RANK over distinct scores. Level 2: scores with ties, which share the better
    rank and skip the next ones as RANK does, or ranks within each group (COUNTIFS)."""
    sheet, columns, lowest_first, tied = draw_from(rng, RANK_TABLES)
    n = draw_int(rng, 8, 40)
    within = level >= 2 and coin(rng)
    if level >= 2 and not within:
        columns = (columns[0], columns[1], tied)
    while True:
        table = _table(rng, columns, n, distinct=level == 1 or within)
        scores = [row[2] for row in table]
        groups = {row[1] for row in table}
        if level == 1 or (within and len(groups) > 1) or (not within and len(set(scores)) < n):
            break
    headers = [*_headers(columns), "Rank"]
    last = n + 1
    score, name, group = headers[2], headers[0].lower(), headers[1]
    best = "lowest" if lowest_first else "highest"
    truth = functools.partial(
        _rank_truth, sheet=sheet, n=n, score=2, group=1 if within else -1, target=3, ascending=lowest_first
    )
    order = ",1" if lowest_first else ""
    if within:
        rule = (
            f"rank each {name} by {score} (column C) among the {name}s of the same {group} "
            f"(column B) only: 1 for the {best} {score} within the {group}, 2 for the next, and so on"
        )
        compare = "<" if lowest_first else ">"
        formula = f'=COUNTIFS($B$2:$B${last},B2,$C$2:$C${last},"{compare}"&C2)+1'
    else:
        rule = f"rank each {name} by {score} (column C) among all {n} rows: 1 for the {best} {score}, 2 for the next, and so on"
        if level >= 2:
            rule += ". Equal scores share the same rank and the ranks after them are skipped, as RANK does (for example 1, 2, 2, 4)"
        formula = f"=RANK(C2,$C$2:$C${last}{order})"
    instruction = (
        f'The sheet {sheet} lists {n} {name}s (A2:C{last}); D1 holds the header "Rank". In '
        f"D2:D{last}, {rule}. {FORMULAS} {SUBMIT}"
    )
    sheets = {sheet: _rows(headers, table)}
    inputs = (f"{sheet}!C2:C{last}",)
    score_area = f"{sheet}!C2:C{last}"
    changes: tuple[Change, ...]
    # the scores move along a cycle, so every row meets another score (a rank typed on a row
    # that scaling leaves first or last fails)
    if within:  # rows move, so a group typed into the formula is some other row's
        changes = (
            CycleRows(f"{sheet}!A2:C{last}"),
            CycleRows(f"{sheet}!B2:B{last}"),
            CycleRows(score_area),
            Distinct(score_area),
        )
    else:  # ties where the task is about ties, none where it promises none
        changes = (
            (CycleRows(score_area), Ties(score_area)) if level >= 2 else (CycleRows(score_area), Distinct(score_area))
        )
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth({sheet: [list(row) for row in sheets[sheet]]}),
        solution=(_reply(f"SET D2 {formula}", f"FILL D2 D3:D{last}"),),
        formula_cells=tuple(f"{sheet}!D{row}" for row in range(2, last + 1)),
        inputs=inputs,
        changes=changes,
        truth=truth,
    )


def _rank_truth(
    sheets: Sheets, *, sheet: str, n: int, score: int, group: int, target: int, ascending: bool
) -> dict[str, Any]:
    """RANK (group < 0): one more than the number of scores better than the row's. Within a
    group: the same, counting only rows of the row's group (text compared ignoring case)."""
    scores = _column(sheets, sheet, score, n)
    groups = [str(g).casefold() for g in _column(sheets, sheet, group, n)] if group >= 0 else [""] * n
    expected: dict[str, Any] = {}
    for row, (value, name) in enumerate(zip(scores, groups, strict=True)):
        better = sum(
            1
            for other, other_group in zip(scores, groups, strict=True)
            if _is_number(other) and other_group == name and (other < value if ascending else other > value)
        )
        expected[_ref(sheet, target, row + 2)] = better + 1
    return expected


FAMILY = Family(
    "rank",
    "Rank rows by a score with formulas.",
    {
        1: "RANK over distinct scores, highest (or lowest time) first",
        2: "ties sharing a rank as RANK does, or ranks within a group (COUNTIFS)",
    },
    rank,
)
