"""The row-formula family: a computed column, one formula per row, filled down.

| level | asks | example (task id) |
|---|---|---|
| 1 | the product of two columns, into a new column with its header | `Inventory!E2:E21` = Units in Stock × Unit Cost, `=C2*D2` filled down (L1/0) |
| 2 | several columns and a rule, rounded with ROUND | 8% off from 25 units: `=ROUND(C2*D2*IF(D2>=25,0.92,1),2)` (L2/0); discount column and a tax rate in H2: `=ROUND(C2*D2*(1-E2)*(1+$H$2),2)` (L2/2); overtime above 38 hours at 1.5× (L2/1) |

Why the verdict holds: every target is a formula cell, and the env's check scales the
numbers of `inputs` and recomputes `truth` (`truth_row_product`, `truth_row_net`) on the
changed data, so values typed in from a calculator score 0 (see `formula_cells`). Level 2's
changes put quantities and hours exactly on and just across the threshold a rule states
(`OnThreshold`), so an IF branch chosen per row, or `>` where "at least" is asked, scores 0;
the tax rule's zero discounts move to other rows (`CycleRows`). Amounts are drawn so that
none sits on a rounding tie (`rounding`)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from rlenvs.core.draw import draw_chance, draw_from, draw_int
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
from rlenvs.envs.spreadsheet.families.formula_pools import DEPARTMENTS, PRODUCTS, _catalog, _codes, _money
from rlenvs.envs.spreadsheet.families.rounding import _built, excel_round, near_tie
from rlenvs.envs.spreadsheet.perturb import Change, CycleRows, OnThreshold
from rlenvs.envs.spreadsheet.tasks import Scenario
from rlenvs.workbook.cells import column_letters


def truth_row_product(
    sheets: Sheets, *, sheet: str, rows: int, a: int, b: int, out: int, fixed: tuple[tuple[str, Any], ...] = ()
) -> dict[str, Any]:
    """Column `out` = column a × column b, on every data row."""
    result: dict[str, Any] = dict(fixed)
    for row in range(2, rows + 2):
        result[_ref(sheet, out, row)] = _num(_get(sheets, sheet, row, a)) * _num(_get(sheets, sheet, row, b))
    return result


def truth_row_net(
    sheets: Sheets,
    *,
    sheet: str,
    rows: int,
    rule: str,
    params: tuple[float, ...],
    out: int,
    fixed: tuple[tuple[str, Any], ...] = (),
) -> dict[str, Any]:
    """The rounded amounts of the level-2 rules (see `_net_raw`), from columns C, D (and E
    and H2 for the tax rule)."""
    result: dict[str, Any] = dict(fixed)
    tax = _num(_get(sheets, sheet, 2, 8)) if rule == "tax" else 0.0
    for row in range(2, rows + 2):
        c, d = _num(_get(sheets, sheet, row, 3)), _num(_get(sheets, sheet, row, 4))
        e = _num(_get(sheets, sheet, row, 5)) if rule == "tax" else 0.0
        result[_ref(sheet, out, row)] = excel_round(_net_raw(rule, params, c, d, e, tax), 2)
    return result


def _net_raw(rule: str, params: tuple[float, ...], c: float, d: float, e: float = 0.0, tax: float = 0.0) -> float:
    """The amount before ROUND, in the reference formula's order of operations.

    tax: C price, D quantity, E discount, `tax` the rate in H2.
    volume: C price, D quantity; params (minimum quantity, price multiplier at or above it).
    overtime: C hours, D hourly rate; params (regular hours, overtime factor)."""
    if rule == "tax":
        return c * d * (1 - e) * (1 + tax)
    if rule == "volume":
        minimum, multiplier = params
        return c * d * (multiplier if d >= minimum else 1)
    regular, factor = params
    return regular * d + (c - regular) * d * factor if c > regular else c * d


ROW_L1_THEMES = ("orders", "payroll", "inventory")


def row_formula(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _built(lambda: _row_product(rng))
    return _built(lambda: _row_net(rng, draw_from(rng, ("tax", "volume", "overtime"))))


def _row_product(rng: np.random.Generator) -> Scenario:
    """Level 1: a new column, the product of two columns, with its header."""
    n = draw_int(rng, 8, 40)
    theme = draw_from(rng, ROW_L1_THEMES)
    if theme == "orders":
        sheet, result, what = "Orders", "Revenue", "each order's revenue, Unit Price × Quantity"
        catalog = _catalog(rng, draw_int(rng, 4, 9))
        first = draw_int(rng, 1000, 8000)
        header = ["Order ID", "Product", "Unit Price", "Quantity"]
        rows = []
        for i in range(n):
            name, price = draw_from(rng, catalog)
            rows.append([f"SO-{first + i}", name, price, draw_int(rng, 1, 24)])
    elif theme == "payroll":
        sheet, result, what = "Payroll", "Gross Pay", "each employee's pay for the week, Hours × Hourly Rate"
        header = ["Employee", "Department", "Hours", "Hourly Rate"]
        rows = [
            [name, draw_from(rng, DEPARTMENTS), draw_int(rng, 32, 180) / 4, _money(rng, 16.5, 72)]
            for name in people(rng, n)
        ]
    else:
        sheet, result, what = "Inventory", "Stock Value", "the value of each item's stock, Units in Stock × Unit Cost"
        header = ["SKU", "Item", "Units in Stock", "Unit Cost"]
        catalog = _catalog(rng, min(n, len(PRODUCTS)))
        n = len(catalog)
        codes = _codes(rng, n, "SKU")
        rows = [
            [code, name, draw_int(rng, 5, 480), round(price * 0.55, 2)]
            for code, (name, price) in zip(codes, catalog, strict=True)
        ]
    last = n + 1
    fixed = ((f"{sheet}!E1", result),)
    truth = partial(truth_row_product, sheet=sheet, rows=n, a=3, b=4, out=5, fixed=fixed)
    sheets = {sheet: _sheet_rows(header, rows)}
    instruction = (
        f"The {sheet} sheet has {n} rows of data ({_span(n)}) with the columns {_columns(header)}. "
        f'Write the header "{result}" in {sheet}!E1 and, in {sheet}!E2:E{last}, compute {what}. '
        f"{FORMULAS} {SUBMIT}"
    )
    return _column_task(
        instruction,
        sheets,
        truth,
        sheet=sheet,
        column="E",
        header=result,
        formula="=C2*D2",
        last=last,
        inputs=(f"{sheet}!C2:D{last}",),
    )


def _row_net(rng: np.random.Generator, rule: str) -> Scenario:
    """Level 2: one rounded amount per row from three columns or a rule: a discount column
    and a tax rate kept in a cell (absolute reference), a volume discount (IF), or overtime
    paid at time and a half (IF)."""
    n = draw_int(rng, 8, 40)
    params: tuple[float, ...] = ()
    extra: list[tuple[str, Any]] = []
    if rule == "overtime":
        sheet, result, out = "Payroll", "Gross Pay", 5
        header: list[str | None] = ["Employee", "Department", "Hours", "Hourly Rate"]
        regular, factor = draw_from(rng, ((40, 1.5), (38, 1.5), (40, 2)))
        params = (regular, factor)
        rows = []
        for i, name in enumerate(people(rng, n)):
            while True:  # a row whose pay is not a rounding tie
                over = i % 3 == 0 or draw_chance(rng, 30)
                hours = (regular * 4 + draw_int(rng, 1, 40)) / 4 if over else draw_int(rng, 80, regular * 4) / 4
                rate = _money(rng, 16.5, 72)
                if not near_tie(_net_raw(rule, params, hours, rate)):
                    break
            rows.append([name, draw_from(rng, DEPARTMENTS), hours, rate])
        formula = f"=ROUND(IF(C2>{regular},{regular}*D2+(C2-{regular})*D2*{factor:g},C2*D2),2)"
        what = (
            f"each employee's gross pay for the week: hours up to {regular} are paid at the "
            f"Hourly Rate, hours above {regular} at {factor:g} times the Hourly Rate"
        )
        inputs: tuple[str, ...] = (f"{sheet}!C2:D{n + 1}",)
        changes: tuple[Change, ...] = (OnThreshold(f"{sheet}!C2:C{n + 1}", tests=(("C", ">", regular),)),)
    else:
        sheet, out = "Orders", (6 if rule == "tax" else 5)
        result = "Total" if rule == "tax" else "Net Amount"
        catalog = _catalog(rng, draw_int(rng, 5, 10))
        first = draw_int(rng, 1000, 8000)
        header = ["Order ID", "Product", "Unit Price", "Quantity"]
        tax = 0.0
        if rule == "tax":
            header.append("Discount")
            tax = draw_from(rng, (0.05, 0.06, 0.07, 0.08, 0.0825, 0.1, 0.2))
            extra = [("Tax Rate", tax)]
        else:
            minimum: float = draw_from(rng, (10, 12, 20, 25))
            percent = draw_from(rng, (5, 8, 10, 12, 15))
            params = (minimum, (100 - percent) / 100)
        rows = []
        for i in range(n):
            while True:
                name, price = draw_from(rng, catalog)
                quantity = draw_int(rng, 1, 40)
                discount = draw_from(rng, (0, 0, 0.05, 0.1, 0.15, 0.2)) if rule == "tax" else 0
                if not near_tie(_net_raw(rule, params, price, quantity, discount, tax)):
                    break
            row = [f"SO-{first + i}", name, price, quantity] + ([discount] if rule == "tax" else [])
            rows.append(row)
        if rule == "tax":
            formula = "=ROUND(C2*D2*(1-E2)*(1+$H$2),2)"
            what = (
                "each order's total: Unit Price × Quantity, less the Discount (a fraction: 0.1 is "
                "10% off), plus the tax at the rate in Orders!H2"
            )
            inputs = (f"{sheet}!C2:E{n + 1}", f"{sheet}!H2")
            changes = (CycleRows(f"{sheet}!E2:E{n + 1}"),)  # the zero discounts move
        else:
            minimum, multiplier = params
            formula = f"=ROUND(C2*D2*IF(D2>={minimum:g},{multiplier:g},1),2)"
            what = (
                f"each order's net amount: Unit Price × Quantity, with {percent}% off for orders of "
                f"at least {minimum:g} units"
            )
            inputs = (f"{sheet}!C2:D{n + 1}",)
            changes = (OnThreshold(f"{sheet}!D2:D{n + 1}", tests=(("D", ">=", minimum),)),)
    last = n + 1
    header_rows = [list(row) for row in rows]
    if extra:
        # the settings block beside the data: G is empty, H1 the label, H2 the rate
        header = header + [None, None, extra[0][0]]
        header_rows[0] = header_rows[0] + [None, None, extra[0][1]]
    letter = column_letters(out)
    fixed = ((f"{sheet}!{letter}1", result),)
    truth = partial(truth_row_net, sheet=sheet, rows=n, rule=rule, params=params, out=out, fixed=fixed)
    sheets = {sheet: _sheet_rows(header, header_rows)}
    columns = [h for h in header if h is not None and h != "Tax Rate"]
    setting = " The tax rate is in Orders!H2 (label in H1)." if rule == "tax" else ""
    instruction = (
        f"The {sheet} sheet has {n} rows of data ({_span(n)}) with the columns {_columns(columns)}."
        f'{setting} Write the header "{result}" in {sheet}!{letter}1 and, in '
        f"{sheet}!{letter}2:{letter}{last}, compute {what}, rounded to 2 decimals with ROUND. "
        f"{FORMULAS} {SUBMIT}"
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
        inputs=inputs,
        changes=changes,
        decimals=2,
    )


FAMILY = Family(
    name="row-formula",
    summary="A computed column, one formula per row, filled down.",
    levels={
        1: "the product of two columns (revenue, pay, stock value) with its header",
        2: "several columns and a rule (discount and a tax rate in a cell, a volume discount, overtime), ROUNDed",
    },
    generate=row_formula,
)
