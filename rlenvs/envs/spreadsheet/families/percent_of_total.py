"""The percent-of-total family: each row's share of a total, in per cent, with an absolute
reference to the total.

| level | asks | example (task id) |
|---|---|---|
| 1 | each row's per cent of a total row that is there | `=B2/$B$24*100` (L1/0) |
| 2 | a Total row to write, then per cents ROUNDed to 1 decimal, maybe of a per-row total of two columns | `Total` / `=SUM(B2:B20)` in row 21, `=ROUND(B2/$B$21*100,1)` (L2/0); Domestic + Export first (L2/1) |

Per cents are asked for as numbers of per cent (12.3, not 0.123): answers are compared at
two decimals, where 0.123 and 0.1234 would look alike.

Why the verdict holds: every target is a formula cell, and the check scales the numbers of
`inputs` and recomputes `truth_share` on the changed data, so values typed in from a
calculator score 0 (see `formula_cells`). The data are drawn so that no expected number sits
on a rounding tie (`rounding`)."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from rlenvs.core.draw import draw_chance, draw_from, draw_int, draw_sample
from rlenvs.core.names import people
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.formula_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _block,
    _columns,
    _get,
    _num,
    _ref,
    _sheet_rows,
    _span,
    _text,
)
from rlenvs.envs.spreadsheet.families.formula_pools import CITIES, DEPARTMENTS, PRODUCTS, _money
from rlenvs.envs.spreadsheet.families.rounding import _built, excel_round, near_tie
from rlenvs.envs.spreadsheet.tasks import Scenario


def truth_share(
    sheets: Sheets,
    *,
    sheet: str,
    rows: int,
    value: int,
    out: int,
    digits: int = -1,
    total_row: tuple[int, ...] = (),
    row_total: tuple[int, int, int] | None = None,
    fixed: tuple[tuple[str, Any], ...] = (),
) -> dict[str, Any]:
    """Column `out` = each row's `value` as a per cent of the column's total (ROUND to
    `digits` where that is not -1). `row_total` (a, b, into): first column `into` = a + b
    on every row. `total_row`: the columns whose totals the agent writes in the row under
    the data."""
    result: dict[str, Any] = dict(fixed)
    if row_total is not None:
        a, b, into = row_total
        for row in range(2, rows + 2):
            result[_ref(sheet, into, row)] = _num(_get(sheets, sheet, row, a)) + _num(_get(sheets, sheet, row, b))

    def cell(row: int, col: int) -> float:
        return (
            result[_ref(sheet, col, row)]
            if row_total is not None and col == row_total[2]
            else _num(_get(sheets, sheet, row, col))
        )

    totals = {col: math.fsum(cell(row, col) for row in range(2, rows + 2)) for col in {value, *total_row}}
    for col in total_row:
        result[_ref(sheet, col, rows + 2)] = totals[col]
    for row in range(2, rows + 2):
        share = cell(row, value) / totals[value] * 100
        result[_ref(sheet, out, row)] = share if digits < 0 else excel_round(share, digits)
    return result


SHARE_THEMES = (
    # label header, value header(s), pool (None: people), range of values
    ("Product", ("Revenue",), tuple(name for name, _, _ in PRODUCTS), (800, 48000)),
    ("Store", ("Sales",), CITIES, (12000, 260000)),
    ("Department", ("Budget",), DEPARTMENTS, (40000, 900000)),
    ("Sales Rep", ("Revenue",), None, (5000, 120000)),
)


CHANNEL_PAIRS = (("Online", "In Store"), ("Domestic", "Export"), ("Q1", "Q2"), ("Subscriptions", "Services"))


def percent_of_total(rng: np.random.Generator, level: int) -> Scenario:
    return _built(lambda: _share(rng, level))


def _share(rng: np.random.Generator, level: int) -> Scenario | None:
    """Level 1: the total row is there (a SUM formula); each row's per cent of it needs an
    absolute reference. Level 2: the agent writes the Total row itself, and the per cents
    rounded to 1 decimal; in half the tasks the data has two columns whose per-row sum the
    agent first writes in a Total column."""
    label, (value_name,), pool, (low, high) = draw_from(rng, SHARE_THEMES)
    n = draw_int(rng, 8, 40) if pool is None else draw_int(rng, 8, len(pool))
    labels = people(rng, n) if pool is None else draw_sample(rng, pool, n)
    two = level == 2 and draw_chance(rng, 50)
    sheet = "Sales" if value_name != "Budget" else "Budgets"
    last, below = n + 1, n + 2
    if two:
        left, right = draw_from(rng, CHANNEL_PAIRS)
        header = [label, left, right]
        rows = [[name, _money(rng, low / 2, high / 2), _money(rng, low / 3, high / 2)] for name in labels]
    else:
        header = [label, value_name]
        rows = [[name, _money(rng, low, high)] for name in labels]
    if level == 1:
        result = "Share (%)"
        fixed: tuple[tuple[str, str], ...] = ((f"{sheet}!C1", result),)
        rows.append(["Total", f"=SUM(B2:B{last})"])
        truth = partial(truth_share, sheet=sheet, rows=n, value=2, out=3, fixed=fixed)
        instruction = (
            f"The {sheet} sheet lists {n} rows ({_span(n)}) with the columns {_columns(header)}; "
            f'row {below} holds their total. Write the header "{result}" in {sheet}!C1 and, in '
            f"{sheet}!C2:C{last}, each row's {value_name} as a percentage of the total, as a number "
            f"of per cent (25 for a quarter, not 0.25 and not text). {FORMULAS} {SUBMIT}"
        )
        actions = [f"SET C1 {_text(result)}", f"SET C2 =B2/$B${below}*100", f"FILL C2 C3:C{last}"]
        targets = [f"{sheet}!C{row}" for row in range(2, below)]
    elif not two:
        result = "Share (%)"
        fixed = ((f"{sheet}!A{below}", "Total"), (f"{sheet}!C1", result))
        truth = partial(truth_share, sheet=sheet, rows=n, value=2, out=3, digits=1, total_row=(2,), fixed=fixed)
        instruction = (
            f"The {sheet} sheet lists {n} rows ({_span(n)}) with the columns {_columns(header)}. "
            f'Add a total row under the data: the text "Total" in {sheet}!A{below} and the total '
            f'{value_name} in {sheet}!B{below}. Then write the header "{result}" in {sheet}!C1 and, '
            f"in {sheet}!C2:C{last}, each row's {value_name} as a percentage of that total, rounded "
            f"to 1 decimal with ROUND, as a number of per cent (12.3 for 12.3%, not 0.123 and not "
            f"text). {FORMULAS} {SUBMIT}"
        )
        actions = [
            f"SET A{below} {_text('Total')}", f"SET B{below} =SUM(B2:B{last})", f"SET C1 {_text(result)}",
            f"SET C2 =ROUND(B2/$B${below}*100,1)", f"FILL C2 C3:C{last}",
        ]  # fmt: skip
        targets = [f"{sheet}!B{below}", *(f"{sheet}!C{row}" for row in range(2, below))]
    else:
        result = "Share (%)"
        fixed = ((f"{sheet}!A{below}", "Total"), (f"{sheet}!D1", "Total"), (f"{sheet}!E1", result))
        truth = partial(
            truth_share,
            sheet=sheet,
            rows=n,
            value=4,
            out=5,
            digits=1,
            total_row=(2, 3, 4),
            row_total=(2, 3, 4),
            fixed=fixed,
        )
        instruction = (
            f"The {sheet} sheet lists {n} rows ({_span(n)}) with the columns {_columns(header)}. "
            f'Write the header "Total" in {sheet}!D1 and, in {sheet}!D2:D{last}, each row\'s '
            f'{header[1]} + {header[2]}. Add a total row under the data: the text "Total" in '
            f"{sheet}!A{below} and the column totals in {sheet}!B{below}:D{below}. Then write the "
            f'header "{result}" in {sheet}!E1 and, in {sheet}!E2:E{last}, each row\'s Total as a '
            f"percentage of the grand total in D{below}, rounded to 1 decimal with ROUND, as a number "
            f"of per cent (12.3 for 12.3%, not 0.123 and not text). {FORMULAS} {SUBMIT}"
        )
        actions = [
            f"SET D1 {_text('Total')}", "SET D2 =B2+C2", f"FILL D2 D3:D{last}", f"SET A{below} {_text('Total')}",
            f"SET B{below} =SUM(B2:B{last})", f"FILL B{below} C{below}:D{below}", f"SET E1 {_text(result)}",
            f"SET E2 =ROUND(D2/$D${below}*100,1)", f"FILL E2 E3:E{last}",
        ]  # fmt: skip
        targets = [
            *(f"{sheet}!D{row}" for row in range(2, last + 1)), *(f"{sheet}!{c}{below}" for c in "BCD"),
            *(f"{sheet}!E{row}" for row in range(2, last + 1)),
        ]  # fmt: skip
    sheets = {sheet: _sheet_rows(header, rows)}
    expected = truth(sheets)
    if level == 2:  # the per cents before ROUND must not sit on a tie at 1 decimal
        raw = truth_share(sheets, **{**truth.keywords, "digits": -1})
        if any(near_tie(raw[t], 1) for t in targets if t.startswith(f"{sheet}!{'E' if two else 'C'}")):
            return None
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=expected,
        solution=(_block(*actions),),
        formula_cells=tuple(targets),
        inputs=(f"{sheet}!B2:{'C' if two else 'B'}{last}",),
        truth=truth,
        decimals={t: 1 for t in targets if t.startswith(f"{sheet}!{'E' if two else 'C'}")} if level == 2 else {},
    )


FAMILY = Family(
    name="percent-of-total",
    summary="Each row's share of a total, in per cent: an absolute reference to the total.",
    levels={
        1: "each row's per cent of a total row that is given",
        2: "a total row to write, per cents ROUNDed to 1 decimal, maybe of a per-row total of two columns",
    },
    generate=percent_of_total,
)
