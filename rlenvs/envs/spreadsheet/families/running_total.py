"""The running-total family: cumulative sums down a column.

| level | asks | example (task id) |
|---|---|---|
| 1 | a cumulative sum down a column | `=SUM($B$2:B2)` (L1/0) |
| 2 | a running total that restarts at each store, or a bank balance from debits and credits | `=IF(A3=A2,D2+C3,C3)` (L2/0); `=E2+D3-C3` from an opening balance (L2/1) |

Why the verdict holds: every target is a formula cell recomputed by `truth_running` or
`truth_balance` on data whose numbers the check scales (see `formula_cells`). The changes
move what a formula that did the task's work by hand would rely on: where each store's run
of months starts (`Runs`) and which side of a statement a transaction is on
(`SwapColumns`)."""

from __future__ import annotations

import datetime as dt
import math
from functools import partial
from typing import Any

import numpy as np

from rlenvs.core.draw import draw_chance, draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.formula_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _block,
    _column_task,
    _get,
    _num,
    _ref,
    _sheet_rows,
    _span,
    _text,
)
from rlenvs.envs.spreadsheet.families.formula_pools import CITIES, _money
from rlenvs.envs.spreadsheet.families.rounding import _built
from rlenvs.envs.spreadsheet.perturb import Runs, SwapColumns
from rlenvs.envs.spreadsheet.tasks import Scenario

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def truth_running(
    sheets: Sheets,
    *,
    sheet: str,
    rows: int,
    value: int,
    out: int,
    group: int = 0,
    fixed: tuple[tuple[str, Any], ...] = (),
) -> dict[str, Any]:
    """Column `out` = the sum of column `value` from row 2 down to this row, added in that
    order; with `group`, the sum restarts where that column's text changes."""
    result: dict[str, Any] = dict(fixed)
    stretch: list[float] = []
    previous = None
    for row in range(2, rows + 2):
        key = _get(sheets, sheet, row, group) if group else None
        if group and key != previous:
            stretch = []
        stretch.append(_num(_get(sheets, sheet, row, value)))
        previous = key
        result[_ref(sheet, out, row)] = math.fsum(stretch)
    return result


def truth_balance(sheets: Sheets, *, sheet: str, rows: int, fixed: tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    """E3 down: the balance after each transaction, previous balance + Credit (D) − Debit
    (C), starting from the opening balance in E2."""
    result: dict[str, Any] = dict(fixed)
    balance = _num(_get(sheets, sheet, 2, 5))
    for row in range(3, rows + 3):
        balance = balance + _num(_get(sheets, sheet, row, 4)) - _num(_get(sheets, sheet, row, 3))
        result[_ref(sheet, 5, row)] = balance
    return result


RUNNING_THEMES = (
    # sheet, label header, labels kind, value header, value range
    ("Sales", "Date", "days", "Sales", (350, 4200)),
    ("Signups", "Week", "weeks", "New Signups", (20, 480)),
    ("Revenue", "Month", "months", "Revenue", (18000, 95000)),
)


DEBITS = ("Rent", "Groceries", "Electricity bill", "Phone bill", "Card payment", "Insurance", "Gym membership",
          "Restaurant", "Fuel", "Internet")  # fmt: skip


CREDITS = ("Salary", "Refund", "Transfer from savings", "Interest", "Freelance invoice")


def _labels(rng: np.random.Generator, kind: str, n: int) -> list[Any]:
    """n consecutive period labels: dates of one stretch of days, weeks, or months."""
    if kind == "days":
        first_day = dt.date(2024, draw_int(rng, 1, 10), draw_int(rng, 1, 28))
        return [first_day + dt.timedelta(days=i) for i in range(n)]
    if kind == "weeks":
        first_week = draw_int(rng, 1, 12)
        return [f"Week {first_week + i}" for i in range(n)]
    start = draw_int(rng, 0, 11)
    year = draw_int(rng, 2019, 2022)
    return [f"{MONTHS[(start + i) % 12]} {year + (start + i) // 12}" for i in range(n)]


def running_total(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _built(lambda: _running_plain(rng))
    return _built(lambda: draw_from(rng, (_running_balance, _running_groups))(rng))


def _running_plain(rng: np.random.Generator) -> Scenario:
    """Level 1: the cumulative total of one column, down the rows."""
    sheet, label, kind, value_name, (low, high) = draw_from(rng, RUNNING_THEMES)
    n = draw_int(rng, 8, 40)
    values = [draw_int(rng, low, high) if kind == "weeks" else _money(rng, low, high) for _ in range(n)]
    rows = [[period, v] for period, v in zip(_labels(rng, kind, n), values, strict=True)]
    last, result = n + 1, "Running Total"
    fixed = ((f"{sheet}!C1", result),)
    truth = partial(truth_running, sheet=sheet, rows=n, value=2, out=3, fixed=fixed)
    sheets = {sheet: _sheet_rows((label, value_name), rows)}
    instruction = (
        f"The {sheet} sheet lists {n} rows ({_span(n)}) with the columns {label} and {value_name}, "
        f'oldest first. Write the header "{result}" in {sheet}!C1 and, in {sheet}!C2:C{last}, the '
        f"running total of {value_name}: on each row, the sum of {value_name} from row 2 down to "
        f"that row. {FORMULAS} {SUBMIT}"
    )
    return _column_task(
        instruction,
        sheets,
        truth,
        sheet=sheet,
        column="C",
        header=result,
        formula="=SUM($B$2:B2)",
        last=last,
        inputs=(f"{sheet}!B2:B{last}",),
    )


def _running_balance(rng: np.random.Generator) -> Scenario:
    """Level 2: a bank statement: each transaction is a Debit (money out) or a Credit
    (money in); the balance after it is the previous balance + Credit − Debit, from the
    opening balance on row 2."""
    n = draw_int(rng, 8, 38)
    start = dt.date(draw_int(rng, 2022, 2024), draw_int(rng, 1, 11), 1)
    dates = sorted(start + dt.timedelta(days=draw_int(rng, 0, 55)) for _ in range(n))
    opening = _money(rng, 800, 6500)
    rows: list[list[Any]] = [[dates[0], "Opening balance", None, None, opening]]
    for date in dates:
        if draw_chance(rng, 30):
            credit = draw_from(rng, CREDITS)
            rows.append(
                [date, credit, None, _money(rng, 900, 4200) if credit == "Salary" else _money(rng, 15, 900), None]
            )
        else:
            rows.append([date, draw_from(rng, DEBITS), _money(rng, 8, 1400), None, None])
    sheet, result, last = "Account", "Balance", n + 2
    truth = partial(truth_balance, sheet=sheet, rows=n)
    sheets = {sheet: _sheet_rows(("Date", "Description", "Debit", "Credit", result), rows)}
    instruction = (
        f"The Account sheet is a bank statement: row 2 holds the opening balance in Account!E2, and "
        f"rows 3-{last} list {n} transactions with the columns Date, Description, Debit (money out) "
        f"and Credit (money in); each row has one of the two. In Account!E3:E{last}, compute the "
        f"balance after each transaction: the balance of the row above + Credit − Debit. "
        f"{FORMULAS} {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth(sheets),
        solution=(_block("SET E3 =E2+D3-C3", f"FILL E3 E4:E{last}"),),
        formula_cells=tuple(f"{sheet}!E{row}" for row in range(3, last + 1)),
        inputs=(f"{sheet}!C3:D{last}", f"{sheet}!E2"),
        changes=(SwapColumns(f"{sheet}!C3:D{last}"),),
        truth=truth,
    )


def _running_groups(rng: np.random.Generator) -> Scenario:
    """Level 2: year-to-date sales per store: the data is sorted by store, then month, and
    the running total starts again at each store's first row."""
    stores = draw_sample(rng, CITIES, draw_int(rng, 2, 5))
    months = draw_int(rng, max(3, -(-8 // len(stores))), min(11, 40 // len(stores)))  # 11: a run can grow
    rows = [[store, MONTHS[m], _money(rng, 9000, 85000)] for store in stores for m in range(months)]
    n, sheet, result = len(rows), "Stores", "Year to Date"
    last = n + 1
    fixed = ((f"{sheet}!D1", result),)
    truth = partial(truth_running, sheet=sheet, rows=n, value=3, out=4, group=1, fixed=fixed)
    sheets = {sheet: _sheet_rows(("Store", "Month", "Sales"), rows)}
    instruction = (
        f"The Stores sheet lists monthly Sales for {len(stores)} stores ({_span(n)}; columns Store, "
        f"Month and Sales), sorted by store and then by month from January. Write the header "
        f'"{result}" in Stores!D1 and, in Stores!D2:D{last}, each store\'s running total of Sales '
        f"since January: the sum of that store's Sales from its first row down to this row, "
        f"starting again at each new store. {FORMULAS} {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth(sheets),
        solution=(
            _block(f"SET D1 {_text(result)}", "SET D2 =C2", "SET D3 =IF(A3=A2,D2+C3,C3)", f"FILL D3 D4:D{last}"),
        ),
        formula_cells=tuple(f"{sheet}!D{row}" for row in range(2, last + 1)),
        inputs=(f"{sheet}!C2:C{last}",),
        changes=(Runs(f"{sheet}!A2:B{last}", labels=MONTHS),),
        truth=truth,
    )


FAMILY = Family(
    name="running-total",
    summary="Cumulative sums down a column.",
    levels={
        1: "a plain running total",
        2: "a bank balance from debits and credits, or a running total that restarts per store",
    },
    generate=running_total,
)
