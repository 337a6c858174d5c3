"""The date-diff family: formulas over date columns.

| level | asks | example (task id) |
|---|---|---|
| 1 | days between two date columns, maybe less the payment terms or times a daily rate (formulas) | `Invoices` days late: `=DAYS(E2,C2)-D2` (L1/0) |
| 2 | whole years or months (DATEDIF), or monthly totals by YEAR and MONTH (formulas) | `Staff` years of service to the report date in F2: `=DATEDIF(C2,$F$2,"Y")` (L2/0) |

Why the verdict holds: each task judges a new column of formulas whose `truth` recomputes it
from the sheets row by row, for whatever the check puts in `inputs` (numbers scaled, dates
moved by up to 40 days): a day count typed in fails. The changes put hire dates on and
beside the report date's anniversary in years where days/365.25 miscounts (the report date
with a 29 February in its past year in one copy and none in the other, and the hires on and
a day after one anniversary the same years back in both, so that no average year with an
offset counts right) and every other hire a year away where its count came out unchanged,
end dates on and beside the start's day of the month in months where days/30.4375
miscounts, order dates on every month end and the 1st after it and a year away (a total by
MONTH alone, or a month of 31 days, fails), end dates kept after their starts in the day
counts, and the order of a summary's periods.

Choices that keep the judged values unambiguous:

- DATEDIF dates use days 1 to 28, away from the month-end cases where spreadsheet programs
  disagree; `truth` still follows Excel's rule (whole months, then whole years) for any date,
  and start and end lie more than 80 days apart, so the moved end never precedes the start;
  where a day count's end could (a one-day rental), the check keeps it after the start.
- Most years-of-service hires fall within five weeks of the report date's day of the year,
  so that moving dates by 40 days changes some counts (a typed-in count does not survive).
- Dates reach `truth` as `datetime.date` or as serial numbers (days since 1899-12-30) alike."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rlenvs.core.draw import coin, draw_distinct, draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.drawn_tables import _date
from rlenvs.envs.spreadsheet.families.table_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _cell,
    _is_number,
    _letter,
    _ref,
    _reply,
    _rows,
    _span,
)
from rlenvs.envs.spreadsheet.families.table_pools import COMPANIES, DEPARTMENTS, PLANS, PROJECTS, _person
from rlenvs.envs.spreadsheet.perturb import Change, CycleRows, DateEdges, InOrder, LeapPhase, OtherCount, SameDay
from rlenvs.envs.spreadsheet.tasks import Scenario

EPOCH = dt.date(1899, 12, 30)
"""Day 0 of spreadsheet serial dates: serial 45292 is 2024-01-01."""


SHIFT_DAYS = 40
"""How far the env's check moves each input date (either way): DATEDIF's start and end are
drawn more than twice that apart, so that the moved end never comes before the start (where
DATEDIF is an error, not a number)."""


def _serial(value: Any) -> float:
    """A date as its serial number (2024-01-01 -> 45292); numbers pass through."""
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        return float((value - EPOCH).days)
    if _is_number(value):
        return float(value)
    raise ValueError(f"not a date: {value!r}")


def _as_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return EPOCH + dt.timedelta(days=int(_serial(value)))


def _whole(value: float) -> int | float:
    """An integral float as an int, so expected day counts read as 12, not 12.0."""
    return int(value) if float(value).is_integer() else value


def _datedif(start: Any, end: Any, unit: str) -> int:
    """DATEDIF(start, end, "M" or "Y"): whole months (the day of month of the end reached)
    or whole years between two dates, end not before start."""
    a, b = _as_date(start), _as_date(end)
    months = (b.year - a.year) * 12 + b.month - a.month - (b.day < a.day)
    return months if unit == "M" else months // 12


def date_diff(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return draw_from(rng, (_project_days, _invoice_days, _rental_days))(rng)
    return draw_from(rng, (_tenure_years, _subscription_months, _monthly_totals))(rng)


def _dates_scenario(
    instruction: str,
    sheet: str,
    headers: Sequence[str | None],
    table: Sequence[Sequence[Any]],
    truth: Callable[[Sheets], Mapping[str, Any]],
    formulas: Sequence[tuple[int, str]],
    inputs: Sequence[int],
    extra_inputs: Sequence[str] = (),
    changes: Sequence[Change] = (),
) -> Scenario:
    """A table with new formula columns: `formulas` are (column, formula of row 2), filled
    down; `inputs` the columns (numbers and dates) the formulas read; `changes` what else the
    check changes (see `perturb`)."""
    n = len(table)
    last = n + 1
    lines, cells = [], []
    for col, formula in formulas:
        letter = _letter(col)
        lines += [f"SET {letter}2 {formula}", f"FILL {letter}2 {letter}3:{letter}{last}"]
        cells += [_ref(sheet, col, row) for row in range(2, last + 1)]
    sheets = {sheet: _rows(headers, table)}
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth({sheet: [list(row) for row in sheets[sheet]]}),
        solution=(_reply(*lines),),
        formula_cells=tuple(cells),
        inputs=(*(_span(sheet, col, 2, col, last) for col in inputs), *extra_inputs),
        changes=tuple(changes),
        truth=truth,
    )


def _project_days(rng: np.random.Generator) -> Scenario:
    """Level 1: duration in days of each task, End minus Start. Nothing numeric feeds it."""
    n = draw_int(rng, 8, 40)
    steps = ("Site survey", "Permit application", "Design review", "Procurement", "Foundation", "Framing",
             "Wiring", "Plumbing", "Inspection", "Landscaping", "Handover", "Snagging")  # fmt: skip
    table = []
    for _ in range(n):
        start = _date(rng, 2023, 2024)
        table.append(
            [
                f"{draw_from(rng, PROJECTS)}: {draw_from(rng, steps)}",
                _person(rng),
                start,
                start + dt.timedelta(days=draw_int(rng, 1, 120)),
            ]
        )
    headers = ["Task", "Owner", "Start", "End", "Days"]
    truth = functools.partial(_days_truth, sheet="Projects", n=n, start=2, end=3, minus=-1, times=-1, days=4, charge=-1)
    instruction = (
        f"The sheet Projects lists {n} tasks (A2:D{n + 1}) with their Start (column C) and End "
        f'(column D) dates; E1 holds the header "Days". In E2:E{n + 1}, give each task\'s number '
        f"of days from Start to End (End minus Start, a number). {FORMULAS} {SUBMIT}"
    )
    return _dates_scenario(
        instruction,
        "Projects",
        headers,
        table,
        truth,
        [(4, "=DAYS(D2,C2)")],
        [2, 3],
        changes=(InOrder(f"Projects!D2:D{n + 1}", after="C"),),
    )


def _invoice_days(rng: np.random.Generator) -> Scenario:
    """Level 1: days late = Paid minus Invoiced minus the payment terms (negative: early)."""
    n = draw_int(rng, 8, 40)
    customers = draw_sample(rng, COMPANIES, draw_int(rng, 4, 8))
    first = draw_int(rng, 2000, 9000)
    table = []
    for row in range(n):
        invoiced, terms = _date(rng, 2023, 2024), draw_from(rng, (14, 30, 45, 60))
        paid = invoiced + dt.timedelta(days=terms + draw_int(rng, -12, 40))
        table.append([f"INV-{first + row}", draw_from(rng, customers), invoiced, terms, paid])
    headers = ["Invoice", "Customer", "Invoiced", "Terms (days)", "Paid", "Days Late"]
    truth = functools.partial(_days_truth, sheet="Invoices", n=n, start=2, end=4, minus=3, times=-1, days=5, charge=-1)
    instruction = (
        f"The sheet Invoices lists {n} invoices (A2:E{n + 1}): the date each was issued "
        f"(Invoiced, column C), its payment terms in days (column D) and the date it was Paid "
        f'(column E). F1 holds the header "Days Late". In F2:F{n + 1}, give how many days after '
        f"its due date (Invoiced plus Terms) each invoice was paid: Paid minus Invoiced minus "
        f"Terms, negative when it was paid early. {FORMULAS} {SUBMIT}"
    )
    return _dates_scenario(
        instruction,
        "Invoices",
        headers,
        table,
        truth,
        [(5, "=DAYS(E2,C2)-D2")],
        [3, 2, 4],
        changes=(InOrder(f"Invoices!E2:E{n + 1}", after="C"),),
    )


def _rental_days(rng: np.random.Generator) -> Scenario:
    """Level 1: rental days (Returned minus Out) and the charge, days times the daily rate."""
    n = draw_int(rng, 8, 40)
    items = ("Cargo Van", "Carpet Cleaner", "Concrete Mixer", "Floor Sander", "Pressure Washer", "Scaffold Tower", "Tile Cutter", "Trailer")  # fmt: skip
    rates = {item: draw_int(rng, 1_500, 12_000) / 100 for item in items}
    first = draw_int(rng, 100, 900)
    table = []
    for row in range(n):
        item, out = draw_from(rng, items), _date(rng, 2024, 2024)
        table.append([f"R-{first + row}", item, out, out + dt.timedelta(days=draw_int(rng, 1, 21)), rates[item]])
    headers = ["Rental", "Item", "Out", "Returned", "Daily Rate", "Days", "Charge"]
    truth = functools.partial(_days_truth, sheet="Rentals", n=n, start=2, end=3, minus=-1, times=4, days=5, charge=6)
    instruction = (
        f"The sheet Rentals lists {n} equipment rentals (A2:E{n + 1}) with the dates the item went "
        f'Out (column C) and was Returned (column D) and its Daily Rate (column E). F1 holds "Days" '
        f'and G1 "Charge". In F2:F{n + 1} give the days rented (Returned minus Out) and in '
        f"G2:G{n + 1} the charge, days rented times the daily rate. {FORMULAS} {SUBMIT}"
    )
    return _dates_scenario(
        instruction,
        "Rentals",
        headers,
        table,
        truth,
        [(5, "=D2-C2"), (6, "=F2*E2")],
        [4, 2, 3],
        changes=(InOrder(f"Rentals!D2:D{n + 1}", after="C"),),
    )


def _days_truth(
    sheets: Sheets, *, sheet: str, n: int, start: int, end: int, minus: int, times: int, days: int, charge: int
) -> dict[str, Any]:
    """Per row: end minus start in days, less column `minus` (>= 0), into column `days`; and
    where `charge` >= 0, those days times column `times` into column `charge`."""
    expected: dict[str, Any] = {}
    for row in range(2, n + 2):
        count = _serial(_cell(sheets, sheet, row, end)) - _serial(_cell(sheets, sheet, row, start))
        if minus >= 0:
            count -= _cell(sheets, sheet, row, minus)
        expected[_ref(sheet, days, row)] = _whole(count)
        if charge >= 0:
            expected[_ref(sheet, charge, row)] = count * _cell(sheets, sheet, row, times)
    return expected


def _tenure_years(rng: np.random.Generator) -> Scenario:
    """Level 2: whole years of service up to a report date in a cell (DATEDIF "Y"). A row hired
    later in the year than the report date has one year less than the years' difference.
    Most staff joined within five weeks of the report date's day of the year (intakes come
    at the same season), so that the anniversary rule matters and the env's moving of dates
    by up to 40 days changes some counts: a typed-in count does not survive it."""
    n = draw_int(rng, 8, 40)
    report = dt.date(draw_int(rng, 2024, 2025), draw_int(rng, 1, 11), draw_int(rng, 1, 28))

    def hire() -> dt.date:
        year = draw_int(rng, 2004, report.year - 1)
        if draw_int(rng, 0, 3) == 0:
            return _date(rng, year, year)
        near = report.replace(year=year) + dt.timedelta(days=draw_int(rng, 1, 35) * (1 if coin(rng) else -1))
        return near.replace(day=min(near.day, 28))

    while True:
        hired = [hire() for _ in range(n)]
        apart = all((report - d).days > 2 * SHIFT_DAYS for d in hired)
        if apart and any((d.month, d.day) > (report.month, report.day) for d in hired):
            break
    names = draw_distinct(lambda: _person(rng), n)
    departments = draw_sample(rng, DEPARTMENTS, 5)
    table: list[list[Any]] = [[name, draw_from(rng, departments), day] for name, day in zip(names, hired, strict=True)]
    table[0] += [None, None, report]
    headers = ["Name", "Department", "Hired", "Years of Service", None, "Report Date"]
    truth = functools.partial(
        _datedif_truth, sheet="Staff", n=n, start=2, end=-1, end_cell=(2, 5), unit="Y", result=3, times=-1, product=-1
    )
    instruction = (
        f"The sheet Staff lists {n} employees (A2:C{n + 1}) with the date each was Hired (column C); "
        f'F2 holds the report date (header in F1). D1 holds the header "Years of Service". In '
        f"D2:D{n + 1}, give each employee's whole years of service from Hired to the report date: "
        f"years completed, not counting a year whose anniversary falls after the report date (as "
        f'DATEDIF(...,"Y") counts). {FORMULAS} {SUBMIT}'
    )
    hired_area = f"Staff!C2:C{n + 1}"
    anniversaries = (
        LeapPhase("Staff!F2"),
        SameDay(hired_area, unit="Y", cell="Staff!F2"),
        OtherCount(hired_area, unit="Y", cell="Staff!F2"),
    )
    return _dates_scenario(
        instruction, "Staff", headers, table, truth, [(3, '=DATEDIF(C2,$F$2,"Y")')], [2], ("Staff!F2",), anniversaries
    )


def _subscription_months(rng: np.random.Generator) -> Scenario:
    """Level 2: whole months between Start and End (DATEDIF "M") and what was billed, months
    times the monthly fee."""
    n = draw_int(rng, 8, 40)
    fees = {plan: draw_from(rng, (499, 799, 999, 1299, 1499, 1999, 2499)) / 100 for plan in PLANS}
    table: list[list[Any]] = []  # rows of cell values: [customer, plan, start, end, fee]
    while True:
        table = []
        for _ in range(n):
            start = _date(rng, 2021, 2023)
            end = start + dt.timedelta(days=draw_int(rng, 2 * SHIFT_DAYS + 4, 900))
            end = end.replace(day=min(end.day, 28))
            plan = draw_from(rng, PLANS)
            table.append([_person(rng), plan, start, end, fees[plan]])
        if any(row[3].day < row[2].day for row in table):
            break
    headers = ["Customer", "Plan", "Start", "End", "Monthly Fee", "Months", "Billed"]
    truth = functools.partial(
        _datedif_truth,
        sheet="Subscriptions",
        n=n,
        start=2,
        end=3,
        end_cell=None,
        unit="M",
        result=5,
        times=4,
        product=6,
    )
    instruction = (
        f"The sheet Subscriptions lists {n} subscriptions (A2:E{n + 1}) with their Start and End "
        f'dates (columns C and D) and Monthly Fee (column E). F1 holds "Months" and G1 "Billed". '
        f"In F2:F{n + 1} give the whole months from Start to End (a month counts once its day of "
        f'month is reached, as DATEDIF(...,"M") counts: 15 Jan to 14 Mar is 1) and in G2:G{n + 1} '
        f"the amount billed, months times the monthly fee. {FORMULAS} {SUBMIT}"
    )
    formulas = [(5, '=DATEDIF(C2,D2,"M")'), (6, "=F2*E2")]
    ends = f"Subscriptions!D2:D{n + 1}"
    monthiversaries = (SameDay(ends, unit="M", against="C"), OtherCount(ends, unit="M", against="C"))
    return _dates_scenario(
        instruction, "Subscriptions", headers, table, truth, formulas, [4, 2, 3], (), monthiversaries
    )


def _datedif_truth(
    sheets: Sheets,
    *,
    sheet: str,
    n: int,
    start: int,
    end: int,
    end_cell: tuple[int, int] | None,
    unit: str,
    result: int,
    times: int,
    product: int,
) -> dict[str, Any]:
    """Per row: DATEDIF(start, end, unit) into column `result`, the end from column `end` or
    from one cell (row, column); where `product` >= 0, that times column `times` into it."""
    expected: dict[str, Any] = {}
    for row in range(2, n + 2):
        finish = _cell(sheets, sheet, *end_cell) if end_cell else _cell(sheets, sheet, row, end)
        whole = _datedif(_cell(sheets, sheet, row, start), finish, unit)
        expected[_ref(sheet, result, row)] = whole
        if product >= 0:
            expected[_ref(sheet, product, row)] = whole * _cell(sheets, sheet, row, times)
    return expected


def _monthly_totals(rng: np.random.Generator) -> Scenario:
    """Level 2: the total of each (year, month) of a sales log, on a summary sheet. The months
    cross a year end so that MONTH alone is not enough."""
    n = draw_int(rng, 8, 40)
    months = draw_int(rng, 3, 8)
    first = dt.date(draw_int(rng, 2023, 2024), draw_int(rng, 13 - months + 1, 12), 1)
    periods = []
    for k in range(months):
        index = first.month - 1 + k
        periods.append((first.year + index // 12, index % 12 + 1))
    customers = draw_sample(rng, COMPANIES, 6)
    start_serial = int(_serial(first))
    end = dt.date(periods[-1][0] + periods[-1][1] // 12, periods[-1][1] % 12 + 1, 1)
    table: list[list[Any]] = []  # rows of cell values: [order, date, customer, amount]
    for i in range(n):
        day = EPOCH + dt.timedelta(days=draw_int(rng, start_serial, int(_serial(end)) - 1))
        table.append([f"SO-{5000 + i}", day, draw_from(rng, customers), draw_int(rng, 2_000, 480_000) / 100])
    table.sort(key=lambda row: row[1])
    for index, row in enumerate(table):
        row[0] = f"SO-{5000 + index}"
    summary = [[year, month, None] for year, month in periods]
    sheets = {
        "Sales": _rows(["Order", "Date", "Customer", "Amount"], table),
        "Summary": _rows(["Year", "Month", "Total"], summary),
    }
    last, out = n + 1, months + 1
    truth = functools.partial(_monthly_truth, n=n, months=months)
    formula = f"=SUMPRODUCT((YEAR(Sales!$B$2:$B${last})=A2)*(MONTH(Sales!$B$2:$B${last})=B2)*Sales!$D$2:$D${last})"
    instruction = (
        f"The sheet Sales logs {n} orders (A2:D{last}) with their Date (column B) and Amount "
        f"(column D). The sheet Summary lists a Year (column A) and Month number (column B) in rows "
        f"2 to {out}. In Summary!C2:C{out}, give the total Amount of the orders dated in that year "
        f"and month (0 when there are none). {FORMULAS} {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth({name: [list(row) for row in rows] for name, rows in sheets.items()}),
        solution=(_reply(f"SET Summary!C2 {formula}", f"FILL Summary!C2 Summary!C3:C{out}"),),
        formula_cells=tuple(f"Summary!C{row}" for row in range(2, out + 1)),
        inputs=(f"Sales!D2:D{last}", f"Sales!B2:B{last}"),
        changes=(DateEdges(f"Sales!B2:B{last}"), CycleRows(f"Summary!A2:B{out}")),
        truth=truth,
    )


def _monthly_truth(sheets: Sheets, *, n: int, months: int) -> dict[str, Any]:
    """Summary!C: the sum of Sales!D over the rows whose Sales!B date is in (A, B)."""
    totals: dict[tuple[int, int], float] = {}
    for row in range(2, n + 2):
        day, amount = _as_date(_cell(sheets, "Sales", row, 1)), _cell(sheets, "Sales", row, 3)
        if _is_number(amount):
            totals[(day.year, day.month)] = totals.get((day.year, day.month), 0) + amount
    expected: dict[str, Any] = {}
    for row in range(2, months + 2):
        period = (_cell(sheets, "Summary", row, 0), _cell(sheets, "Summary", row, 1))
        expected[f"Summary!C{row}"] = totals.get(period, 0)
    return expected


FAMILY = Family(
    "date-diff",
    "Formulas over date columns.",
    {
        1: "days between two dates, maybe less payment terms or times a daily rate",
        2: "whole years or months (DATEDIF), or monthly totals by YEAR and MONTH",
    },
    date_diff,
)
