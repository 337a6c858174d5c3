"""The lookup family: values looked up from another sheet by a key.

| level | asks | example (task id) |
|---|---|---|
| 1 | a unit price by product code from an unsorted `Prices` sheet | `=VLOOKUP(B2,Prices!$A$2:$C$11,3,FALSE)` (L1/0) |
| 2 | Quantity × a price whose key column is right of it, or Packages × a rate from a two-way grid | `=C2*INDEX(Catalog!$C$2:$C$12,MATCH(B2,Catalog!$D$2:$D$12,0))` (L2/0); destination × size grid with two MATCHes (L2/6) |

Why the verdict holds: every target is a formula cell recomputed by `truth_lookup` or
`truth_two_way` on data whose numbers the check scales (see `formula_cells`). The changes
move the rows of the data and lookup tables (`CycleRows`) and a rate grid's columns
(`CycleColumns`), so `=Prices!C5` for one order scores 0; keys stay unique, so an honest
lookup has one answer."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.formula_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _column_task,
    _get,
    _num,
    _ref,
    _sheet_rows,
    _span,
)
from rlenvs.envs.spreadsheet.families.formula_pools import CITIES, PRODUCT_CATEGORIES, _catalog, _codes, _money
from rlenvs.envs.spreadsheet.families.rounding import _built
from rlenvs.envs.spreadsheet.perturb import CycleColumns, CycleRows
from rlenvs.envs.spreadsheet.tasks import Scenario
from rlenvs.workbook.cells import column_letters


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


FAMILY = Family(
    name="lookup",
    summary="Values looked up from another sheet by a key.",
    levels={
        1: "a unit price by product code from an unsorted Prices sheet (exact-match VLOOKUP)",
        2: "Quantity × a price whose key is right of it (INDEX/MATCH), or × a rate from a two-way grid",
    },
    generate=lookup,
)
