"""The conditional-label family: text labels from IF conditions on numbers.

| level | asks | example (task id) |
|---|---|---|
| 1 | one of two labels by a threshold, "at least" or "more than" | `=IF(B2>=60,"Pass","Fail")` (L1/0) |
| 2 | three tiers with nested IF, or IF with AND / OR over two or three columns | OR of two pass marks (L2/0); Gold/Silver/Bronze (L2/2); Sales >= Quota AND Rating >= 3.5 (L2/3) |

Why the verdict holds: every label is a formula cell recomputed by `truth_label` on the
changed data (see `formula_cells`). Labels are drawn with several values close to their
thresholds, and the check puts values exactly on and just across every threshold a rule
states, with every other row moved so that its label (or its branch of the rule) changes
(`OnThreshold`): an IF branch chosen per row, or `>` where "at least" is asked, scores 0,
while labels keep their meaning."""

from __future__ import annotations

import math
from collections.abc import Sequence
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
    _column_task,
    _columns,
    _get,
    _num,
    _ref,
    _sheet_rows,
    _span,
)
from rlenvs.envs.spreadsheet.families.formula_pools import PRODUCTS
from rlenvs.envs.spreadsheet.perturb import OnThreshold, Test
from rlenvs.envs.spreadsheet.tasks import Scenario
from rlenvs.workbook.cells import column_letters


def _near(rng: np.random.Generator, point: float, low_pct: int, high_pct: int) -> float:
    """A value a few per cent (low_pct to high_pct, as tenths of a per cent) above or below
    `point`: data close to a threshold, so that changed data flip some labels."""
    offset = draw_int(rng, low_pct, high_pct) / 1000
    return point * (1 + offset if draw_chance(rng, 50) else 1 - offset)


COMPANIES = (
    "Acme Logistics", "Blue Harbor Foods", "Cedar Interiors", "Delta Dental Group",
    "Evergreen Books", "Foxglove Florists", "Granite Peak Outfitters", "Harbor Lights Cafe",
    "Ironwood Builders", "Juniper Health", "Keystone Print", "Lakeside Motors",
    "Maple Street Bakery", "Northwind Traders", "Oakridge Pharmacy", "Pioneer Solar",
    "Quarry Hill Winery", "Riverbend Vets", "Summit Fitness", "Tidewater Marine",
    "Union Square Optics", "Valley Fresh Produce", "Willow Creek Dairy", "Yellowstone Tours",
    "Zephyr Cycles",
)  # fmt: skip


def truth_label(
    sheets: Sheets,
    *,
    sheet: str,
    rows: int,
    out: int,
    rule: str,
    params: tuple[Any, ...],
    fixed: tuple[tuple[str, Any], ...] = (),
) -> dict[str, Any]:
    """Column `out` = the label `rule` gives each row (see `_label`)."""
    result: dict[str, Any] = dict(fixed)
    for row in range(2, rows + 2):
        values = [_get(sheets, sheet, row, col) for col in range(1, out)]
        result[_ref(sheet, out, row)] = _label(rule, params, values)
    return result


def _label(rule: str, params: tuple[Any, ...], values: Sequence[Any]) -> str:
    """The label of one row, `values` its cells from column A.

    two: params (column, threshold, strict, high label, low label): high when the value is
        at least (strict: more than) the threshold.
    tiers: params (column, lower, upper, labels top to bottom): top at or above `upper`,
        middle at or above `lower`, else bottom.
    and: params (sales column, quota column, rating column, minimum rating): "Yes" when
        sales >= quota and rating >= minimum.
    or: params (exam column, exam pass, coursework column, coursework pass): "Review" when
        exam < its pass mark or coursework < its pass mark, else "OK"."""

    def at(col: int) -> float:
        return _num(values[col - 1]) if col - 1 < len(values) else 0.0

    if rule == "two":
        col, threshold, strict, high, low = params
        return high if (at(col) > threshold if strict else at(col) >= threshold) else low
    if rule == "tiers":
        col, lower, upper, (top, middle, bottom) = params
        return top if at(col) >= upper else middle if at(col) >= lower else bottom
    if rule == "and":
        sales, quota, rating, minimum = params
        return "Yes" if at(sales) >= at(quota) and at(rating) >= minimum else "No"
    exam, exam_pass, coursework, coursework_pass = params
    return "Review" if at(exam) < exam_pass or at(coursework) < coursework_pass else "OK"


LABEL_THEMES = (
    # sheet, label header, name kind, value header, thresholds, (high, low), result header,
    # integer values, largest value
    ("Sales", "Sales Rep", "people", "Monthly Sales", (20000, 25000, 30000, 50000), ("High", "Low"), "Performance",
     False, math.inf),
    ("Inventory", "Item", "products", "Units Sold", (100, 150, 200, 250), ("High", "Low"), "Demand", True, math.inf),
    ("Grades", "Student", "people", "Score", (50, 60, 65, 70), ("Pass", "Fail"), "Result", True, 100),
    ("Accounts", "Customer", "companies", "Overdue Amount", (1000, 2500, 5000), ("Chase", "Wait"), "Action", False,
     math.inf),
)  # fmt: skip


def _names(rng: np.random.Generator, kind: str, n: int) -> list[str]:
    if kind == "people":
        return people(rng, n)
    pool = COMPANIES if kind == "companies" else tuple(name for name, _, _ in PRODUCTS)
    return draw_sample(rng, pool, n)


def _around(rng: np.random.Generator, thresholds: Sequence[float], integer: bool, low: float, high: float) -> float:
    """A value for a labelled row: one time in two within a few per cent of a threshold
    (so that changed data flip some labels), else anywhere in [low, high]."""
    if draw_chance(rng, 50):
        value = _near(rng, draw_from(rng, thresholds), 5, 60)
    else:
        value = low + (high - low) * draw_int(rng, 0, 1000) / 1000
    return float(round(value)) if integer else round(value, 2)


def _spread(values: Sequence[float], thresholds: Sequence[float], least: int) -> bool:
    """Whether at least `least` values lie within 4% of each threshold: each flips its label
    in about half of the env's changed copies of the data."""
    return all(sum(abs(v / t - 1) <= 0.04 for v in values) >= least for t in thresholds)


def conditional_label(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _label_two(rng)
    return draw_from(rng, (_label_tiers, _label_and, _label_or))(rng)


def _label_scenario(
    sheet: str,
    header: Sequence[str],
    rows: list[list[Any]],
    result: str,
    rule: str,
    params: tuple[Any, ...],
    formula: str,
    what: str,
    inputs: str,
    tests: tuple[Test, ...],
    combine: str = "and",
) -> Scenario:
    """The shared frame of the label tasks: the label column right of the data, its header,
    FILL down; `inputs` the letters of the numeric columns ("B:D"); `tests` the conditions
    the rule states, where the check puts values on and across each threshold
    (`perturb.OnThreshold`)."""
    n = len(rows)
    out = len(header) + 1
    letter, last = column_letters(out), n + 1
    fixed = ((f"{sheet}!{letter}1", result),)
    truth = partial(truth_label, sheet=sheet, rows=n, out=out, rule=rule, params=params, fixed=fixed)
    sheets = {sheet: _sheet_rows(header, rows)}
    instruction = (
        f"The {sheet} sheet lists {n} rows ({_span(n)}) with the columns {_columns(header)}. Write "
        f'the header "{result}" in {sheet}!{letter}1 and, in {sheet}!{letter}2:{letter}{last}, '
        f"{what} {FORMULAS} {SUBMIT}"
    )
    return _column_task(
        instruction,
        sheets,
        truth,
        sheet=sheet,
        column=letter,
        header=result,
        formula=formula,
        last=last,
        inputs=(f"{sheet}!{inputs[0]}2:{inputs[-1]}{last}",),
        changes=(
            OnThreshold(
                f"{sheet}!{inputs[0]}2:{inputs[-1]}{last}",
                tests=tests,
                combine=combine,
                label=_label,
                label_args=(rule, params),
            ),
        ),
    )


def _label_two(rng: np.random.Generator) -> Scenario:
    """Level 1: "High"/"Low" (or Pass/Fail, Chase/Wait) by one threshold, "at least" or
    "more than"; where the rule is "at least", a value may sit exactly on the threshold."""
    sheet, label, kind, value_name, thresholds, (high, low), result, integer, top = draw_from(rng, LABEL_THEMES)
    threshold = draw_from(rng, thresholds)
    strict = draw_chance(rng, 40)
    pool_size = len(COMPANIES) if kind == "companies" else len(PRODUCTS) if kind == "products" else 40
    n = draw_int(rng, 8, pool_size)
    while True:
        values = [_around(rng, (threshold,), integer, threshold * 0.3, min(threshold * 1.9, top)) for _ in range(n)]
        if not strict and draw_chance(rng, 50):
            values[draw_int(rng, 0, n - 1)] = float(threshold)
        labels = [v > threshold if strict else v >= threshold for v in values]
        if _spread(values, (threshold,), 3) and 2 <= sum(labels) <= n - 2:
            break
    values = [int(v) if integer else v for v in values]
    rows = [[name, v] for name, v in zip(_names(rng, kind, n), values, strict=True)]
    sign, words = (">", "more than") if strict else (">=", "at least")
    formula = f'=IF(B2{sign}{threshold},"{high}","{low}")'
    what = f'"{high}" if the {value_name} is {words} {threshold}, else "{low}".'
    return _label_scenario(
        sheet,
        (label, value_name),
        rows,
        result,
        "two",
        (2, threshold, strict, high, low),
        formula,
        what,
        "B:B",
        (("B", ">" if strict else ">=", threshold),),
    )


TIER_THEMES = (
    # sheet, label header, name kind, value header, (lower, upper) choices, labels, result
    # header, largest value (the values are whole numbers where it is finite)
    ("Customers", "Customer", "companies", "Annual Spend", ((5000, 20000), (10000, 40000), (2500, 10000)),
     ("Gold", "Silver", "Bronze"), "Tier", math.inf),
    ("Reviews", "Employee", "people", "Review Score", ((60, 85), (50, 80), (70, 90)),
     ("Exceeds", "Meets", "Below"), "Rating", 100),
)  # fmt: skip


def _label_tiers(rng: np.random.Generator) -> Scenario:
    """Level 2: three tiers by two thresholds, nested IF."""
    sheet, label, kind, value_name, choices, (top, middle, bottom), result, top_value = draw_from(rng, TIER_THEMES)
    lower, upper = draw_from(rng, choices)
    integer = math.isfinite(top_value)
    n = draw_int(rng, 8, len(COMPANIES) if kind == "companies" else 40)
    while True:
        values = [_around(rng, (lower, upper), integer, lower * 0.3, min(upper * 1.6, top_value)) for _ in range(n)]
        tiers = {_label("tiers", (2, lower, upper, (top, middle, bottom)), [None, v]) for v in values}
        if _spread(values, (lower, upper), 2) and len(tiers) == 3:
            break
    values = [int(v) if integer else v for v in values]
    rows = [[name, v] for name, v in zip(_names(rng, kind, n), values, strict=True)]
    formula = f'=IF(B2>={upper},"{top}",IF(B2>={lower},"{middle}","{bottom}"))'
    what = (
        f'"{top}" if the {value_name} is at least {upper}, "{middle}" if it is at least {lower} '
        f'(and below {upper}), else "{bottom}".'
    )
    return _label_scenario(
        sheet,
        (label, value_name),
        rows,
        result,
        "tiers",
        (2, lower, upper, (top, middle, bottom)),
        formula,
        what,
        "B:B",
        (("B", ">=", upper), ("B", ">=", lower)),
    )


def _label_and(rng: np.random.Generator) -> Scenario:
    """Level 2: a bonus only for reps who met their own quota (a column) AND have a
    customer rating of at least 4: IF with AND over three columns."""
    n = draw_int(rng, 8, 40)
    minimum = draw_from(rng, (4, 4.5, 3.5))
    while True:
        rows: list[list[Any]] = []  # [name, sales, quota, rating]: a sheet's row of cell values
        for name in people(rng, n):
            quota = draw_int(rng, 8, 40) * 1000
            sales = round(_near(rng, quota, 0, 80) if draw_chance(rng, 60) else quota * draw_int(rng, 50, 160) / 100, 2)
            rating = round(_near(rng, minimum, 10, 60), 1) if draw_chance(rng, 50) else draw_int(rng, 20, 50) / 10
            rows.append([name, sales, quota, rating])
        labels = [_label("and", (2, 3, 4, minimum), row) for row in rows]
        near_quota = sum(abs(r[1] / r[2] - 1) <= 0.04 for r in rows)
        near_rating = sum(abs(r[3] / minimum - 1) <= 0.04 for r in rows)
        if 2 <= labels.count("Yes") <= n - 2 and near_quota >= 2 and near_rating >= 1:
            break
    formula = f'=IF(AND(B2>=C2,D2>={minimum:g}),"Yes","No")'
    what = f'"Yes" if the rep\'s Sales are at least their Quota and their Rating is at least {minimum:g}, else "No".'
    return _label_scenario(
        "Bonus",
        ("Sales Rep", "Sales", "Quota", "Rating"),
        rows,
        "Bonus",
        "and",
        (2, 3, 4, minimum),
        formula,
        what,
        "B:D",
        (("B", ">=", "C"), ("D", ">=", minimum)),
    )


def _label_or(rng: np.random.Generator) -> Scenario:
    """Level 2: a student needs a review if the exam OR the coursework is under its pass
    mark: IF with OR over two columns."""
    n = draw_int(rng, 8, 40)
    exam_pass, coursework_pass = draw_from(rng, ((50, 40), (40, 40), (50, 50), (45, 35)))
    while True:
        rows: list[list[Any]] = []  # [name, exam, coursework]: a sheet's row of cell values
        for name in people(rng, n):
            exam = round(_near(rng, exam_pass, 10, 80)) if draw_chance(rng, 40) else draw_int(rng, 15, 98)
            coursework = round(_near(rng, coursework_pass, 10, 80)) if draw_chance(rng, 40) else draw_int(rng, 20, 100)
            rows.append([name, int(exam), int(coursework)])
        labels = [_label("or", (2, exam_pass, 3, coursework_pass), row) for row in rows]
        near = sum(abs(r[1] / exam_pass - 1) <= 0.06 or abs(r[2] / coursework_pass - 1) <= 0.06 for r in rows)
        if 2 <= labels.count("Review") <= n - 2 and near >= 2:
            break
    formula = f'=IF(OR(B2<{exam_pass},C2<{coursework_pass}),"Review","OK")'
    what = (
        f'"Review" if the Exam score is below {exam_pass} or the Coursework score is below '
        f'{coursework_pass}, else "OK".'
    )
    return _label_scenario(
        "Grades",
        ("Student", "Exam", "Coursework"),
        rows,
        "Status",
        "or",
        (2, exam_pass, 3, coursework_pass),
        formula,
        what,
        "B:C",
        (("B", "<", exam_pass), ("C", "<", coursework_pass)),
        "or",
    )


FAMILY = Family(
    name="conditional-label",
    summary="Text labels from IF conditions on numbers.",
    levels={
        1: "one of two labels by a threshold, at least or more than",
        2: "three tiers with nested IF, or IF with AND / OR over two or three columns",
    },
    generate=conditional_label,
)
