"""The sort-rows family: sort a table's rows by one or two keys, header in place.

| level | asks | example (task id) |
|---|---|---|
| 1 | rows sorted by one numeric column, highest first (values) | `Reps` by Deals: `SORT A2:E36 BY D DESC` (L1/0) |
| 2 | rows sorted by a text column A to Z, then by a numeric one within it (values) | `Inventory` by Warehouse, then Unit Price: `SORT A2:E9 BY E ASC`, then `SORT A2:E9 BY C ASC` (L2/0) |

Why the verdict holds: a value task judges every cell of the area the change may touch,
header and emptied rows included, so moving the header, leaving rows below the table or
damaging a neighbouring cell fails. Sort keys are distinct within what they order, and every
text key pool sorts the same with and without case (no "IT" beside "Interns"; the pools are
`SORT_KEY_POOLS`), so any stable or unstable, case-blind or case-aware sort gives one order.
Tables never start sorted."""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.drawn_tables import NUMERIC, Column, _headers, _table
from rlenvs.envs.spreadsheet.families.table_cells import SUBMIT, _area, _letter, _reply, _rows, _span
from rlenvs.envs.spreadsheet.families.table_pools import CITIES, COMPANIES, DEPARTMENTS, PRODUCTS, REGIONS, TEAMS
from rlenvs.envs.spreadsheet.tasks import Scenario

CATEGORIES = ("Cleaning", "Electrical", "Fasteners", "Garden", "Paint", "Plumbing", "Safety", "Tools")


SORT_KEY_POOLS = (DEPARTMENTS, CITIES, REGIONS, COMPANIES, PRODUCTS, CATEGORIES, TEAMS)
"""Pools whose values may be a sort key: letters and spaces only, and the same order with
and without case (checked in the tests)."""


SORT_TABLES: tuple[tuple[str, tuple[Column, ...]], ...] = (
    (
        "Staff",
        (
            ("Employee ID", "id", "E-"),
            ("Name", "person", None),
            ("Department", "pick", DEPARTMENTS),
            ("City", "pick", CITIES),
            ("Hired", "date", (2012, 2024)),
            ("Salary", "int", (38000, 165000, 50)),
        ),
    ),
    (
        "Orders",
        (
            ("Order", "id", "SO-"),
            ("Customer", "pick", COMPANIES),
            ("Region", "pick", REGIONS),
            ("Product", "pick", PRODUCTS),
            ("Units", "int", (1, 80, 1)),
            ("Revenue", "money", (4_000, 950_000)),
        ),
    ),
    (
        "Inventory",
        (
            ("SKU", "id", "SKU-"),
            ("Category", "pick", CATEGORIES),
            ("Warehouse", "pick", CITIES),
            ("Stock", "int", (0, 900, 1)),
            ("Unit Price", "money", (99, 25_000)),
        ),
    ),
    (
        "Reps",
        (
            ("Rep", "person", None),
            ("Region", "pick", REGIONS),
            ("Team", "pick", TEAMS),
            ("Deals", "int", (3, 90, 1)),
            ("Revenue", "money", (1_500_000, 45_000_000)),
        ),
    ),
)


def sort_rows(rng: np.random.Generator, level: int) -> Scenario:
    """Level 1: one numeric key, highest first. Level 2: a text key A to Z, then a numeric key
    within it; SORT sorts by one column and keeps ties in order, so the reference sorts by the
    second key first. The table is redrawn until neither key alone gives the answer."""
    sheet, columns = draw_from(rng, SORT_TABLES)
    n = draw_int(rng, 8, 40)
    width = len(columns)
    numeric = [i for i, (_, kind, _) in enumerate(columns) if kind in NUMERIC]
    texts = [i for i, (_, kind, _) in enumerate(columns) if kind == "pick"]
    key = draw_from(rng, numeric)
    primary = draw_from(rng, texts) if level >= 2 else -1
    descending = True if level == 1 else coin(rng)
    while True:
        table = _table(rng, columns, n)
        by_key = sorted(table, key=lambda row: row[key], reverse=descending)
        if level == 1:
            ordered = by_key
            if ordered != table:
                break
            continue
        ordered = sorted(by_key, key=lambda row: row[primary])
        by_primary = sorted(table, key=lambda row: row[primary])
        if len({row[primary] for row in table}) > 1 and ordered not in (table, by_key, by_primary):
            break
    headers = _headers(columns)
    data = _span(None, 0, 2, width - 1, n + 1)
    letter = _letter(key)
    way = "from highest to lowest" if descending else "from lowest to highest"
    if level == 1:
        rule = f"by {headers[key]} (column {letter}) {way}"
        solution = _reply(f"SORT {data} BY {letter} DESC")
    else:
        rule = (
            f"by {headers[primary]} (column {_letter(primary)}) from A to Z and, within the same "
            f"{headers[primary]}, by {headers[key]} (column {letter}) {way}"
        )
        solution = _reply(
            f"SORT {data} BY {letter} {'DESC' if descending else 'ASC'}", f"SORT {data} BY {_letter(primary)} ASC"
        )
    instruction = (
        f"The sheet {sheet} holds a table with its header in row 1 and {n} data rows "
        f"({data}). Sort the data rows {rule}, keeping every row's cells together. The header "
        f"stays in row 1 and the table stays in {_span(None, 0, 1, width - 1, n + 1)}. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets={sheet: _rows(headers, table)},
        expected=_area(sheet, _rows(headers, ordered), width, n + 1),
        solution=(solution,),
    )


FAMILY = Family(
    "sort-rows",
    "Sort a table's rows by one or two keys, header in place.",
    {1: "one numeric key, highest first", 2: "a text key A to Z, then a numeric key within it (two stable SORTs)"},
    sort_rows,
)
