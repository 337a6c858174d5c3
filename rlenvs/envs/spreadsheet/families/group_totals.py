"""The group-totals family: totals and averages per group with SUMIF, SUMIFS and AVERAGEIF.

| level | asks | example (task id) |
|---|---|---|
| 1 | the total per region or sales rep, into a summary table beside the data that lists them | `Sales!G2:G6`: `=SUMIF($B$2:$B$9,F2,$D$2:$D$9)` (L1/0) |
| 2 | totals and averages per category on a second sheet, maybe of the rows with one value in a second column | `Summary!B2:C6` over `Status = "Pending"`: SUMIFS and SUMIFS/COUNTIFS (L2/0); SUMIF and AVERAGEIF (L2/2) |

Why the verdict holds: every target is a formula cell recomputed by `truth_group` on data
whose numbers the check scales (see `formula_cells`). The changes move the rows of the data
table and the order of the summary's listing, and cycle the categories of the rows among
rows with the same condition value, so every category keeps its counted rows (`CycleRows`):
`=D4+D6+D9` for one region, or a criterion typed in instead of read from the listing, scores
0, while every group keeps a row and an honest answer stays unambiguous."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any, TypeVar

import numpy as np

from rlenvs.core.draw import draw_chance, draw_from, draw_int, draw_sample
from rlenvs.core.names import people
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.formula_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _block,
    _column_task,
    _columns,
    _get,
    _num,
    _ref,
    _sheet_rows,
    _span,
    _text,
)
from rlenvs.envs.spreadsheet.families.formula_pools import DEPARTMENTS, PRODUCT_CATEGORIES, _money
from rlenvs.envs.spreadsheet.families.rounding import _built
from rlenvs.envs.spreadsheet.perturb import CycleRows
from rlenvs.envs.spreadsheet.tasks import Scenario
from rlenvs.workbook.cells import column_letters

T = TypeVar("T")


def _cover(rng: np.random.Generator, groups: Sequence[T], n: int, least: int = 1) -> list[T]:
    """n draws from `groups` in random order, each group at least `least` times."""
    draws = [group for group in groups for _ in range(least)]
    draws += [draw_from(rng, groups) for _ in range(n - len(draws))]
    return [draws[int(i)] for i in rng.permutation(len(draws))]


REGIONS = (
    ("North", "South", "East", "West", "Central"),
    ("EMEA", "APAC", "LATAM", "North America", "Nordics"),
)


EXPENSE_CATEGORIES = ("Hardware", "Meals", "Office Supplies", "Software", "Training", "Travel")


def truth_group(
    sheets: Sheets,
    *,
    sheet: str,
    rows: int,
    key: int,
    value: int,
    listing: tuple[int, int],
    out_sheet: str,
    total_col: int,
    average_col: int = 0,
    condition: tuple[int, str] | None = None,
    fixed: tuple[tuple[str, Any], ...] = (),
) -> dict[str, Any]:
    """Per group listed in `out_sheet` (`listing`: its column and how many, from row 2): the
    total of column `value` over the rows whose column `key` is the group (and whose
    `condition` column holds its text), and where `average_col` is set the average of those
    rows. The groups are read from the sheet, not fixed, because the check reorders the
    listing (a criterion typed into the formula instead of read from the listing fails)."""
    result: dict[str, Any] = dict(fixed)
    list_col, count = listing
    groups = [_get(sheets, out_sheet, row, list_col) for row in range(2, count + 2)]
    selected: dict[Any, list[float]] = {group: [] for group in groups}
    for row in range(2, rows + 2):
        group = _get(sheets, sheet, row, key)
        if group not in selected:
            continue
        if condition is not None and _get(sheets, sheet, row, condition[0]) != condition[1]:
            continue
        selected[group].append(_num(_get(sheets, sheet, row, value)))
    for i, group in enumerate(groups):
        result[_ref(out_sheet, total_col, i + 2)] = math.fsum(selected[group])
        if average_col:
            result[_ref(out_sheet, average_col, i + 2)] = math.fsum(selected[group]) / len(selected[group])
    return result


def group_totals(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _built(lambda: _group_beside(rng))
    return _built(lambda: _group_summary(rng))


def _group_beside(rng: np.random.Generator) -> Scenario:
    """Level 1: the data in A:D and a summary table in F:G listing the groups (regions or
    sales reps); the agent writes the total per group with SUMIF."""
    n = draw_int(rng, 8, 40)
    regions = draw_sample(rng, draw_from(rng, REGIONS), draw_int(rng, 3, 5))
    reps = people(rng, draw_int(rng, 3, 6))
    by_region = draw_chance(rng, 60)
    first = draw_int(rng, 1000, 8000)
    if by_region:
        label, key, groups = "Region", 2, sorted(regions)
        region_of = _cover(rng, regions, n, 2 if 2 * len(regions) <= n else 1)
        rep_of = [draw_from(rng, reps) for _ in range(n)]
    else:
        label, key, groups = "Sales Rep", 3, sorted(reps)
        region_of = [draw_from(rng, regions) for _ in range(n)]
        rep_of = _cover(rng, reps, n)
    header = ["Order ID", "Region", "Sales Rep", "Amount"]
    table: list[list[object]] = [[*header, None, label]]
    for i in range(n):
        row = [f"SO-{first + i}", region_of[i], rep_of[i], _money(rng, 45, 4800)]
        table.append([*row, None, groups[i]] if i < len(groups) else row)
    last, k = n + 1, len(groups)
    result = "Total Amount"
    fixed = (("Sales!G1", result),)
    truth = partial(
        truth_group,
        sheet="Sales",
        rows=n,
        key=key,
        value=4,
        listing=(6, len(groups)),
        out_sheet="Sales",
        total_col=7,
        fixed=fixed,
    )
    sheets = {"Sales": _sheet_rows(None, table)}
    letter = column_letters(key)
    instruction = (
        f"The Sales sheet lists {n} orders ({_span(n)}) with the columns {_columns(header)}. "
        f'Sales!F2:F{k + 1} lists each {label.lower()}. Write the header "{result}" in Sales!G1 and, '
        f"in Sales!G2:G{k + 1}, the total Amount of the orders of the {label.lower()} named in "
        f"column F of the same row. {FORMULAS} {SUBMIT}"
    )
    formula = f"=SUMIF(${letter}$2:${letter}${last},F2,$D$2:$D${last})"
    return _column_task(
        instruction,
        sheets,
        truth,
        sheet="Sales",
        column="G",
        header=result,
        formula=formula,
        last=k + 1,
        inputs=(f"Sales!D2:D{last}",),
        changes=(
            CycleRows(f"Sales!A2:D{last}"),
            CycleRows(f"Sales!{letter}2:{letter}{last}"),
            CycleRows(f"Sales!F2:F{k + 1}"),
        ),
    )


GROUP_L2_THEMES = (
    # sheet, columns (the value summed is always E), group column,
    # ((a condition column, its values), ...), range of the values
    ("Expenses", ("Employee", "Department", "Category", "Status", "Amount"), 3,
     ((4, ("Approved", "Pending", "Rejected")),), (12, 2400)),
    ("Sales", ("Order ID", "Region", "Category", "Channel", "Revenue"), 3,
     ((2, REGIONS[0]), (4, ("Online", "Retail", "Wholesale"))), (25, 6200)),
)  # fmt: skip


def _group_summary(rng: np.random.Generator) -> Scenario:
    """Level 2: totals and averages per category on a second sheet, Summary, which lists
    the categories; in half the tasks only the rows with one value in a second column
    count (SUMIFS; the average as SUMIFS/COUNTIFS or AVERAGEIFS)."""
    sheet, header, key, conditions, (low, high) = draw_from(rng, GROUP_L2_THEMES)
    n = draw_int(rng, 12, 40)
    pool = EXPENSE_CATEGORIES if sheet == "Expenses" else PRODUCT_CATEGORIES
    groups = sorted(draw_sample(rng, pool, draw_int(rng, 3, 5)))
    filtered = draw_chance(rng, 50)
    ccol, choices = draw_from(rng, conditions)
    cvalues = draw_sample(rng, choices, min(len(choices), draw_int(rng, 3, 4)))
    wanted = cvalues[0]
    names = people(rng, draw_int(rng, 4, 8))
    first = draw_int(rng, 1000, 8000)
    # each group gets a counted row first (the wanted condition value), then random rows
    keys = _cover(rng, groups, n, 1)
    marked = dict.fromkeys(groups, False)
    rows = []
    for i, group in enumerate(keys):
        cells: list[Any] = [None] * 5
        cells[key - 1] = group
        cells[4] = _money(rng, low, high)
        for col, values in conditions:
            cells[col - 1] = draw_from(rng, values)
        if not marked[group]:
            cells[ccol - 1], marked[group] = wanted, True
        elif i % 4 == 1:
            cells[ccol - 1] = cvalues[1]  # some rows the condition leaves out
        if sheet == "Expenses":
            cells[0], cells[1] = draw_from(rng, names), draw_from(rng, DEPARTMENTS)
        else:
            cells[0] = f"SO-{first + i}"
        rows.append(cells)
    last, k = n + 1, len(groups)
    value = column_letters(5)
    fixed = (("Summary!B1", "Total"), ("Summary!C1", "Average"))
    condition = (ccol, wanted) if filtered else None
    truth = partial(
        truth_group,
        sheet=sheet,
        rows=n,
        key=key,
        value=5,
        listing=(1, k),
        out_sheet="Summary",
        total_col=2,
        average_col=3,
        condition=condition,
        fixed=fixed,
    )
    sheets = {
        sheet: _sheet_rows(header, rows),
        "Summary": _sheet_rows(["Category"], [[group] for group in groups]),
    }
    keys_range = f"{sheet}!${column_letters(key)}$2:${column_letters(key)}${last}"
    values_range = f"{sheet}!${value}$2:${value}${last}"
    if filtered:
        cond_range = f"{sheet}!${column_letters(ccol)}$2:${column_letters(ccol)}${last}"
        counted = f' Count only the rows whose {header[ccol - 1]} is "{wanted}".'
        criteria = f'{keys_range},Summary!A2,{cond_range},"{wanted}"'
        total = f"=SUMIFS({values_range},{criteria})"
        average = f"=SUMIFS({values_range},{criteria})/COUNTIFS({criteria})"
    else:
        counted = ""
        total = f"=SUMIF({keys_range},Summary!A2,{values_range})"
        average = f"=AVERAGEIF({keys_range},Summary!A2,{values_range})"
    instruction = (
        f"The {sheet} sheet has {n} rows ({_span(n)}) with the columns {_columns(header)}. The "
        f'Summary sheet lists categories in Summary!A2:A{k + 1}. Write the headers "Total" in '
        f'Summary!B1 and "Average" in Summary!C1; in Summary!B2:B{k + 1} compute the total '
        f"{header[4]} of each category's rows and in Summary!C2:C{k + 1} their average {header[4]}."
        f"{counted} {FORMULAS} {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth(sheets),
        solution=(
            _block(
                f"SET Summary!B1 {_text('Total')}",
                f"SET Summary!C1 {_text('Average')}",
                f"SET Summary!B2 {total}",
                f"SET Summary!C2 {average}",
                f"FILL Summary!B2 Summary!B3:B{k + 1}",
                f"FILL Summary!C2 Summary!C3:C{k + 1}",
            ),
        ),
        formula_cells=tuple(f"Summary!{col}{row}" for row in range(2, k + 2) for col in "BC"),
        inputs=(f"{sheet}!E2:E{last}",),
        changes=(
            CycleRows(f"{sheet}!A2:E{last}"),  # rows move: a hand-picked set of cells reads other rows
            # categories reassigned (among rows of one condition value, so each keeps its counted rows)
            CycleRows(f"{sheet}!{column_letters(key)}2:{column_letters(key)}{last}", within=column_letters(ccol)),
            CycleRows(f"Summary!A2:A{k + 1}"),  # the listing reordered: a typed criterion is another row's
        ),
        truth=truth,
    )


FAMILY = Family(
    name="group-totals",
    summary="Totals and averages per group with SUMIF, SUMIFS and AVERAGEIF.",
    levels={
        1: "the total per region or sales rep, into a summary table beside the data",
        2: "totals and averages per category on a Summary sheet, maybe only rows meeting a second condition",
    },
    generate=group_totals,
)
