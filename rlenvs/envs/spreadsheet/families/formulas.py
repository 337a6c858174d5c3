"""Spreadsheet task families whose answers are formulas: per-row columns, group totals,
lookups, shares of a total, running totals and IF labels.

Each family builds a small workbook of realistic data (orders, payroll, expenses, price
lists, bank statements, grades; 8-40 rows) and names exactly which cells to fill and which
header to write. Every computed target is a formula cell: the env scales each number of
the task's `inputs` by 0.5-1.5 (kept to two decimals, whole numbers kept whole), runs the
task's `changes` (`perturb`), recalculates the agent's workbook and compares it with `truth`
of the changed data, so values typed in from a calculator score 0 and only formulas that
follow the data score 1. The inputs are always numbers the targets are computed from, never
a column no target reads. Header cells are judged too, as text, but are not formula cells.

The changes move what a formula that did the task's work by hand would rely on: the rows of
data tables and lookup tables and the order of a summary's listing (`CycleRows`), the
categories of the rows (cycled among rows with the same condition value, so every category
keeps its counted rows), a rate grid's columns, where each store's run of months starts
(`Runs`), which side of a statement a transaction is on (`SwapColumns`), and values exactly
on and just across every threshold a rule states, with every other row moved so that its
label (or its branch of the rule) changes (`OnThreshold`). So `=D4+D6+D9` for one
region, `=Prices!C5` for one order, a criterion typed in instead of read from the listing,
an IF branch chosen per row, or `>` where "at least" is asked all score 0. None of them can
make an honest answer ambiguous: keys stay unique, every group keeps a row, labels keep
their meaning.

| family | level | asks | example (task id) |
|---|---|---|---|
| row-formula | 1 | the product of two columns, into a new column with its header | `Inventory!E2:E21` = Units in Stock × Unit Cost, `=C2*D2` filled down (L1/0) |
| row-formula | 2 | several columns and a rule, rounded with ROUND | 8% off from 25 units: `=ROUND(C2*D2*IF(D2>=25,0.92,1),2)` (L2/0); discount column and a tax rate in H2: `=ROUND(C2*D2*(1-E2)*(1+$H$2),2)` (L2/2); overtime above 38 hours at 1.5× (L2/1) |
| group-totals | 1 | the total per region or sales rep, into a summary table beside the data that lists them | `Sales!G2:G6`: `=SUMIF($B$2:$B$9,F2,$D$2:$D$9)` (L1/0) |
| group-totals | 2 | totals and averages per category on a second sheet, maybe of the rows with one value in a second column | `Summary!B2:C6` over `Status = "Pending"`: SUMIFS and SUMIFS/COUNTIFS (L2/0); SUMIF and AVERAGEIF (L2/2) |
| lookup | 1 | a unit price by product code from an unsorted `Prices` sheet | `=VLOOKUP(B2,Prices!$A$2:$C$11,3,FALSE)` (L1/0) |
| lookup | 2 | Quantity × a price whose key column is right of it, or Packages × a rate from a two-way grid | `=C2*INDEX(Catalog!$C$2:$C$12,MATCH(B2,Catalog!$D$2:$D$12,0))` (L2/0); destination × size grid with two MATCHes (L2/6) |
| percent-of-total | 1 | each row's per cent of a total row that is there | `=B2/$B$24*100` (L1/0) |
| percent-of-total | 2 | a Total row to write, then per cents ROUNDed to 1 decimal, maybe of a per-row total of two columns | `Total` / `=SUM(B2:B20)` in row 21, `=ROUND(B2/$B$21*100,1)` (L2/0); Domestic + Export first (L2/1) |
| running-total | 1 | a cumulative sum down a column | `=SUM($B$2:B2)` (L1/0) |
| running-total | 2 | a running total that restarts at each store, or a bank balance from debits and credits | `=IF(A3=A2,D2+C3,C3)` (L2/0); `=E2+D3-C3` from an opening balance (L2/1) |
| conditional-label | 1 | one of two labels by a threshold, "at least" or "more than" | `=IF(B2>=60,"Pass","Fail")` (L1/0) |
| conditional-label | 2 | three tiers with nested IF, or IF with AND / OR over two or three columns | OR of two pass marks (L2/0); Gold/Silver/Bronze (L2/2); Sales >= Quota AND Rating >= 3.5 (L2/3) |

Task ids are `spreadsheet/{family}/L{level}/{index}`. Per cents are asked for as numbers
of per cent (12.3, not 0.123): answers are compared at two decimals, where 0.123 and 0.1234
would look alike.

Every generator draws its data from the `rng` it is given (`task_rng` of the task id) and
describes the task three ways that must agree: the instruction, the reference `solution`
(actions with FILL, as a person would write them) and `truth`, a module-level function
(bound with `functools.partial` to plain parameters) that recomputes every target from the
sheets' values in plain Python, reading the same cells the formulas read: sums exactly
rounded (`math.fsum`, as the engine's SUM family adds), products in the reference
formula's order, ROUND on 15 significant digits half away from zero (`excel_round`). The
starting data are drawn so that no expected number sits on a rounding tie (x.xx5 where
two decimals are compared, or where ROUND cuts); labels are drawn with several values close
to their thresholds, so that changed data flip some of them.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from functools import partial
from typing import Any, TypeVar

import numpy as np

from rlenvs.core.draw import draw_chance, draw_from, draw_int, draw_sample
from rlenvs.core.names import people
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.perturb import Change, CycleColumns, CycleRows, OnThreshold, Runs, SwapColumns, Test
from rlenvs.envs.spreadsheet.tasks import Scenario
from rlenvs.workbook.cells import column_letters

T = TypeVar("T")
Sheets = Mapping[str, Sequence[Sequence[Any]]]

FORMULAS = "Use formulas, not typed values: the data will change."
SUBMIT = "Reply SUBMIT when done."

# --- drawing -------------------------------------------------------------------------------


def _money(rng: np.random.Generator, low: float, high: float) -> float:
    """An amount with cents in [low, high]."""
    return draw_int(rng, round(low * 100), round(high * 100)) / 100


def _price(rng: np.random.Generator, low: float, high: float) -> float:
    """A shelf price: whole units with a usual ending (.99, .49, .00, ...)."""
    return draw_int(rng, int(low), int(high)) + draw_from(rng, (0.99, 0.49, 0.5, 0.0, 0.95, 0.25))


def _cover(rng: np.random.Generator, groups: Sequence[T], n: int, least: int = 1) -> list[T]:
    """n draws from `groups` in random order, each group at least `least` times."""
    draws = [group for group in groups for _ in range(least)]
    draws += [draw_from(rng, groups) for _ in range(n - len(draws))]
    return [draws[int(i)] for i in rng.permutation(len(draws))]


def _near(rng: np.random.Generator, point: float, low_pct: int, high_pct: int) -> float:
    """A value a few per cent (low_pct to high_pct, as tenths of a per cent) above or below
    `point`: data close to a threshold, so that changed data flip some labels."""
    offset = draw_int(rng, low_pct, high_pct) / 1000
    return point * (1 + offset if draw_chance(rng, 50) else 1 - offset)


# --- rounding as a spreadsheet does it -----------------------------------------------------


def excel_round(value: float, digits: int) -> float:
    """ROUND as a spreadsheet does it: on the value's 15 significant digits, half away from
    zero. (Python's `round` rounds the binary value half to even: `round(2.675, 2)` is 2.67
    where ROUND gives 2.68.) Changed data have two decimals, so products such as 36.75 ×
    0.9 = 33.075 land on ties often; the 15 digits make the result the same whichever order
    a formula multiplies in."""
    quantum = Decimal(1).scaleb(-digits)
    return float(Decimal(f"{float(value):.15g}").quantize(quantum, rounding=ROUND_HALF_UP))


def near_tie(value: float, digits: int = 2) -> bool:
    """Whether `value` is within a hair of a half at `digits` decimals: there, two correct
    formulas that add or multiply in another order can round to different results."""
    scaled = abs(value) * 10**digits
    return abs(scaled - math.floor(scaled) - 0.5) < 1e-6


def _tie_free(expected: Mapping[str, Any]) -> bool:
    return not any(isinstance(v, float) and near_tie(v) for v in expected.values())


# --- reading sheets (in truth functions) ---------------------------------------------------


def _get(sheets: Sheets, sheet: str, row: int, col: int) -> Any:
    """The value at 1-based (row, col) of a sheet; None outside the data."""
    rows = sheets.get(sheet) or ()
    if row - 1 >= len(rows) or col - 1 >= len(rows[row - 1]):
        return None
    return rows[row - 1][col - 1]


def _num(value: Any) -> float:
    """A value as arithmetic sees it: an empty cell is 0."""
    if value is None or value == "":
        return 0.0
    return float(value)


def _ref(sheet: str, col: int, row: int) -> str:
    return f"{sheet}!{column_letters(col)}{row}"


def _block(*lines: str) -> str:
    return "```\n" + "\n".join(lines) + "\n```"


def _column_task(
    instruction: str,
    sheets: Sheets,
    truth: Any,
    *,
    sheet: str,
    column: str,
    header: str,
    formula: str,
    last: int,
    inputs: Sequence[str],
    changes: Sequence[Change] = (),
    decimals: int | None = None,
) -> Scenario:
    """A task whose answer is one new column of `sheet`: `header` in row 1 and `formula` in
    row 2, filled down to row `last` (the reference solution); every cell below the header
    is a formula cell. `inputs` and `changes`: what the check changes (see `perturb`);
    `decimals`: what the instruction asks the values rounded to."""
    cells = tuple(f"{sheet}!{column}{row}" for row in range(2, last + 1))
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth(sheets),
        solution=(
            _block(
                f"SET {column}1 {_text(header)}", f"SET {column}2 {formula}", f"FILL {column}2 {column}3:{column}{last}"
            ),
        ),
        formula_cells=cells,
        inputs=tuple(inputs),
        changes=tuple(changes),
        truth=truth,
        decimals=dict.fromkeys(cells, decimals) if decimals is not None else {},
    )


def _text(value: str) -> str:
    """A SET value for a header: JSON-quoted."""
    return json.dumps(value)


def _sheet_rows(header: Sequence[Any] | None, rows: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    """A sheet's rows (the header first, if given), padded with None to one width."""
    table = ([list(header)] if header is not None else []) + [list(row) for row in rows]
    width = max(len(row) for row in table)
    return tuple(tuple(row + [None] * (width - len(row))) for row in table)


def _span(rows: int) -> str:
    """'rows 2-24' for `rows` data rows under a header."""
    return f"rows 2-{rows + 1}"


def _columns(header: Sequence[str]) -> str:
    return ", ".join(header[:-1]) + " and " + header[-1]


def _built(build: Callable[[], Scenario | None], tries: int = 200) -> Scenario:
    """`build()` again until no expected number sits on a rounding tie (all but never more
    than a couple of tries); a build returns None for a tie it found in its own terms."""
    for _ in range(tries):
        scenario = build()
        if scenario is not None and _tie_free(scenario.expected):
            return scenario
    raise RuntimeError("could not draw tie-free data")


# --- shared word pools ---------------------------------------------------------------------

PRODUCTS = (
    ("Desk Lamp", 18, 60), ("Office Chair", 89, 349), ("Standing Desk", 249, 799),
    ("Monitor 27in", 159, 449), ("Wireless Mouse", 12, 49), ("Mechanical Keyboard", 59, 189),
    ("USB-C Hub", 19, 79), ("Webcam", 29, 129), ("Headset", 25, 199), ("Laptop Stand", 22, 89),
    ("Notebook A5", 3, 12), ("Whiteboard", 45, 180), ("Printer Paper", 4, 9),
    ("Ink Cartridge", 15, 65), ("Desk Organizer", 9, 35), ("Footrest", 25, 80),
    ("Cable Tray", 14, 40), ("Paper Shredder", 60, 240), ("Filing Cabinet", 120, 380),
    ("Label Printer", 45, 150),
)  # fmt: skip
"""(name, lowest price, highest price)."""
PRODUCT_CATEGORIES = ("Electronics", "Furniture", "Lighting", "Stationery", "Storage", "Accessories")
REGIONS = (
    ("North", "South", "East", "West", "Central"),
    ("EMEA", "APAC", "LATAM", "North America", "Nordics"),
)
CITIES = (
    "Amsterdam", "Austin", "Berlin", "Boston", "Chicago", "Cork", "Denver", "Dublin",
    "Leeds", "Lisbon", "Lyon", "Madrid", "Newark", "Oslo", "Porto", "San Diego", "Seattle",
    "Toronto", "Vienna", "Zurich",
)  # fmt: skip
DEPARTMENTS = (
    "Engineering", "Finance", "Human Resources", "IT", "Legal", "Marketing", "Operations",
    "Sales", "Support",
)  # fmt: skip
EXPENSE_CATEGORIES = ("Hardware", "Meals", "Office Supplies", "Software", "Training", "Travel")
COMPANIES = (
    "Acme Logistics", "Blue Harbor Foods", "Cedar Interiors", "Delta Dental Group",
    "Evergreen Books", "Foxglove Florists", "Granite Peak Outfitters", "Harbor Lights Cafe",
    "Ironwood Builders", "Juniper Health", "Keystone Print", "Lakeside Motors",
    "Maple Street Bakery", "Northwind Traders", "Oakridge Pharmacy", "Pioneer Solar",
    "Quarry Hill Winery", "Riverbend Vets", "Summit Fitness", "Tidewater Marine",
    "Union Square Optics", "Valley Fresh Produce", "Willow Creek Dairy", "Yellowstone Tours",
    "Zephyr Cycles",
)  # fmt: skip
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _catalog(rng: np.random.Generator, k: int) -> list[tuple[str, float]]:
    """k distinct products with a price each (one price per product in a task)."""
    return [(name, _price(rng, low, high)) for name, low, high in draw_sample(rng, PRODUCTS, k)]


def _codes(rng: np.random.Generator, k: int, prefix: str) -> list[str]:
    """k distinct product codes such as P-1042, not in any order."""
    return [f"{prefix}-{number}" for number in draw_sample(rng, range(1000, 9000), k)]


# === row-formula ===========================================================================


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
        header = ["Employee", "Department", "Hours", "Hourly Rate"]
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
            minimum = draw_from(rng, (10, 12, 20, 25))
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


# === group-totals ==========================================================================


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
    table = [[*header, None, label]]
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
    ccol, cvalues = draw_from(rng, conditions)
    cvalues = draw_sample(rng, cvalues, min(len(cvalues), draw_int(rng, 3, 4)))
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


# === lookup ================================================================================


def truth_lookup(
    sheets: Sheets,
    *,
    sheet: str,
    rows: int,
    key: int,
    out: int,
    table: str,
    table_rows: int,
    table_key: int,
    table_value: int,
    quantity: int = 0,
    fixed: tuple[tuple[str, Any], ...] = (),
) -> dict[str, Any]:
    """Column `out` = the `table_value` column of the `table` row whose `table_key` column
    holds this row's `key` (exact match), times column `quantity` where that is set."""
    result: dict[str, Any] = dict(fixed)
    values = {}
    for row in range(table_rows + 1, 1, -1):  # the first match wins, as MATCH finds it
        values[_get(sheets, table, row, table_key)] = _get(sheets, table, row, table_value)
    for row in range(2, rows + 2):
        found = _num(values.get(_get(sheets, sheet, row, key)))
        result[_ref(sheet, out, row)] = _num(_get(sheets, sheet, row, quantity)) * found if quantity else found
    return result


def truth_two_way(
    sheets: Sheets,
    *,
    sheet: str,
    rows: int,
    row_key: int,
    col_key: int,
    quantity: int,
    out: int,
    table: str,
    table_rows: int,
    table_cols: int,
    fixed: tuple[tuple[str, Any], ...] = (),
) -> dict[str, Any]:
    """Column `out` = quantity × the cell of the `table` grid (row keys in its column A,
    column keys in its row 1) at this row's two keys."""
    result: dict[str, Any] = dict(fixed)
    rates = {
        (_get(sheets, table, r, 1), _get(sheets, table, 1, c)): _get(sheets, table, r, c)
        for r in range(2, table_rows + 2)
        for c in range(2, table_cols + 2)
    }
    for row in range(2, rows + 2):
        rate = _num(rates.get((_get(sheets, sheet, row, row_key), _get(sheets, sheet, row, col_key))))
        result[_ref(sheet, out, row)] = _num(_get(sheets, sheet, row, quantity)) * rate
    return result


def lookup(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _built(lambda: _lookup_price(rng))
    return _built(lambda: draw_from(rng, (_lookup_left, _lookup_grid))(rng))


def _lookup_price(rng: np.random.Generator) -> Scenario:
    """Level 1: each order's unit price from a Prices sheet by product code. The price list
    is in no order, so an approximate-match VLOOKUP (the default) finds wrong rows."""
    catalog = _catalog(rng, draw_int(rng, 6, 14))
    m = len(catalog)
    codes = _codes(rng, m, draw_from(rng, ("P", "PRD", "ITM")))
    prices = [[code, name, price] for code, (name, price) in zip(codes, catalog, strict=True)]
    n = draw_int(rng, 8, 40)
    first = draw_int(rng, 1000, 8000)
    orders = [[f"SO-{first + i}", draw_from(rng, codes), draw_int(rng, 1, 30)] for i in range(n)]
    last, result = n + 1, "Unit Price"
    fixed = (("Orders!D1", result),)
    truth = partial(
        truth_lookup,
        sheet="Orders",
        rows=n,
        key=2,
        out=4,
        table="Prices",
        table_rows=m,
        table_key=1,
        table_value=3,
        fixed=fixed,
    )
    sheets = {
        "Orders": _sheet_rows(("Order ID", "Product Code", "Quantity"), orders),
        "Prices": _sheet_rows(("Code", "Product", "Unit Price"), prices),
    }
    instruction = (
        f"The Orders sheet lists {n} orders ({_span(n)}) with the columns Order ID, Product Code "
        f"and Quantity; the Prices sheet lists each product's Code, Product and Unit Price (rows "
        f'2-{m + 1}). Write the header "{result}" in Orders!D1 and, in Orders!D2:D{last}, look up '
        f"the Unit Price of each order's product by its code. {FORMULAS} {SUBMIT}"
    )
    formula = f"=VLOOKUP(B2,Prices!$A$2:$C${m + 1},3,FALSE)"
    return _column_task(
        instruction,
        sheets,
        truth,
        sheet="Orders",
        column="D",
        header=result,
        formula=formula,
        last=last,
        inputs=(f"Prices!C2:C{m + 1}",),
        changes=(CycleRows(f"Prices!A2:C{m + 1}"), CycleRows(f"Orders!A2:C{last}"), CycleRows(f"Orders!B2:B{last}")),
    )


def _lookup_left(rng: np.random.Generator) -> Scenario:
    """Level 2: a line total, Quantity × the Unit Price from a Catalog sheet whose SKU
    column (the key) is to the right of the price, so VLOOKUP cannot reach it."""
    catalog = _catalog(rng, draw_int(rng, 6, 16))
    m = len(catalog)
    skus = _codes(rng, m, "SKU")
    table = [
        [draw_from(rng, PRODUCT_CATEGORIES), name, price, sku] for sku, (name, price) in zip(skus, catalog, strict=True)
    ]
    n = draw_int(rng, 8, 40)
    first = draw_int(rng, 1000, 8000)
    orders = [[f"SO-{first + i}", draw_from(rng, skus), draw_int(rng, 1, 30)] for i in range(n)]
    last, result = n + 1, "Line Total"
    fixed = (("Orders!D1", result),)
    truth = partial(
        truth_lookup,
        sheet="Orders",
        rows=n,
        key=2,
        out=4,
        table="Catalog",
        table_rows=m,
        table_key=4,
        table_value=3,
        quantity=3,
        fixed=fixed,
    )
    sheets = {
        "Orders": _sheet_rows(("Order ID", "SKU", "Quantity"), orders),
        "Catalog": _sheet_rows(("Category", "Product", "Unit Price", "SKU"), table),
    }
    instruction = (
        f"The Orders sheet lists {n} orders ({_span(n)}) with the columns Order ID, SKU and "
        f"Quantity; the Catalog sheet lists Category, Product, Unit Price and SKU for {m} products "
        f'(rows 2-{m + 1}). Write the header "{result}" in Orders!D1 and, in Orders!D2:D{last}, '
        f"compute each order's Quantity × the Unit Price of its SKU from the Catalog. "
        f"{FORMULAS} {SUBMIT}"
    )
    formula = f"=C2*INDEX(Catalog!$C$2:$C${m + 1},MATCH(B2,Catalog!$D$2:$D${m + 1},0))"
    return _column_task(
        instruction,
        sheets,
        truth,
        sheet="Orders",
        column="D",
        header=result,
        formula=formula,
        last=last,
        inputs=(f"Orders!C2:C{last}", f"Catalog!C2:C{m + 1}"),
        changes=(CycleRows(f"Catalog!A2:D{m + 1}"), CycleRows(f"Orders!A2:C{last}"), CycleRows(f"Orders!B2:B{last}")),
    )


SIZES = ("Envelope", "Small", "Medium", "Large", "Pallet")


def _lookup_grid(rng: np.random.Generator) -> Scenario:
    """Level 2: shipping cost = Packages × the rate per package from a Rates grid, found by
    the destination zone (the grid's rows) and the parcel size (its columns): a two-way
    lookup (INDEX with two MATCHes)."""
    zones = draw_sample(rng, CITIES, draw_int(rng, 3, 7))
    sizes = list(SIZES[draw_int(rng, 0, 1) :][: draw_int(rng, 3, 4)])
    base = _money(rng, 2.5, 6)
    grid = []
    for z, zone in enumerate(zones):
        zone_factor = 1 + z * draw_int(rng, 10, 35) / 100
        grid.append(
            [zone, *(round(base * zone_factor * (1 + s * draw_int(rng, 40, 90) / 100), 2) for s in range(len(sizes)))]
        )
    n = draw_int(rng, 8, 40)
    first = draw_int(rng, 100, 900)
    shipments = [
        [f"SH-{first + i:04d}", draw_from(rng, zones), draw_from(rng, sizes), draw_int(rng, 1, 25)] for i in range(n)
    ]
    last, result, z, s = n + 1, "Shipping Cost", len(zones), len(sizes)
    fixed = (("Shipments!E1", result),)
    truth = partial(
        truth_two_way,
        sheet="Shipments",
        rows=n,
        row_key=2,
        col_key=3,
        quantity=4,
        out=5,
        table="Rates",
        table_rows=z,
        table_cols=s,
        fixed=fixed,
    )
    sheets = {
        "Shipments": _sheet_rows(("Shipment ID", "Destination", "Size", "Packages"), shipments),
        "Rates": _sheet_rows(("Destination", *sizes), grid),
    }
    end = column_letters(s + 1)
    instruction = (
        f"The Shipments sheet lists {n} shipments ({_span(n)}) with the columns Shipment ID, "
        f"Destination, Size and Packages. The Rates sheet holds the price per package: one row "
        f"per destination (Rates!A2:A{z + 1}) and one column per size (Rates!B1:{end}1). Write the "
        f'header "{result}" in Shipments!E1 and, in Shipments!E2:E{last}, compute each '
        f"shipment's Packages × its rate per package. {FORMULAS} {SUBMIT}"
    )
    formula = f"=D2*INDEX(Rates!$B$2:${end}${z + 1},MATCH(B2,Rates!$A$2:$A${z + 1},0),MATCH(C2,Rates!$B$1:${end}$1,0))"
    return _column_task(
        instruction,
        sheets,
        truth,
        sheet="Shipments",
        column="E",
        header=result,
        formula=formula,
        last=last,
        inputs=(f"Shipments!D2:D{last}", f"Rates!B2:{end}{z + 1}"),
        changes=(
            CycleRows(f"Rates!A2:{end}{z + 1}"),
            CycleColumns(f"Rates!B1:{end}{z + 1}"),
            CycleRows(f"Shipments!A2:D{last}"),
        ),
    )


# === percent-of-total ======================================================================


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
        fixed = ((f"{sheet}!C1", result),)
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


# === running-total =========================================================================


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
        start = dt.date(2024, draw_int(rng, 1, 10), draw_int(rng, 1, 28))
        return [start + dt.timedelta(days=i) for i in range(n)]
    if kind == "weeks":
        start = draw_int(rng, 1, 12)
        return [f"Week {start + i}" for i in range(n)]
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


# === conditional-label =====================================================================


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
        rows = []
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
        rows = []
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


# === the families ==========================================================================

FAMILIES: tuple[Family, ...] = (
    Family(
        name="row-formula",
        summary="A computed column, one formula per row, filled down.",
        levels={
            1: "the product of two columns (revenue, pay, stock value) with its header",
            2: "several columns and a rule (discount and a tax rate in a cell, a volume discount, overtime), ROUNDed",
        },
        generate=row_formula,
    ),
    Family(
        name="group-totals",
        summary="Totals and averages per group with SUMIF, SUMIFS and AVERAGEIF.",
        levels={
            1: "the total per region or sales rep, into a summary table beside the data",
            2: "totals and averages per category on a Summary sheet, maybe only rows meeting a second condition",
        },
        generate=group_totals,
    ),
    Family(
        name="lookup",
        summary="Values looked up from another sheet by a key.",
        levels={
            1: "a unit price by product code from an unsorted Prices sheet (exact-match VLOOKUP)",
            2: "Quantity × a price whose key is right of it (INDEX/MATCH), or × a rate from a two-way grid",
        },
        generate=lookup,
    ),
    Family(
        name="percent-of-total",
        summary="Each row's share of a total, in per cent: an absolute reference to the total.",
        levels={
            1: "each row's per cent of a total row that is given",
            2: "a total row to write, per cents ROUNDed to 1 decimal, maybe of a per-row total of two columns",
        },
        generate=percent_of_total,
    ),
    Family(
        name="running-total",
        summary="Cumulative sums down a column.",
        levels={
            1: "a plain running total",
            2: "a bank balance from debits and credits, or a running total that restarts per store",
        },
        generate=running_total,
    ),
    Family(
        name="conditional-label",
        summary="Text labels from IF conditions on numbers.",
        levels={
            1: "one of two labels by a threshold, at least or more than",
            2: "three tiers with nested IF, or IF with AND / OR over two or three columns",
        },
        generate=conditional_label,
    ),
)
