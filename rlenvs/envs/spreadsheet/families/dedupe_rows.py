"""The dedupe-rows family: delete duplicate rows, keeping the first, rows below moving up.

| level | asks | example (task id) |
|---|---|---|
| 1 | rows equal to an earlier row in every cell deleted, rows below moved up (values) | `Expenses`: `DELETE ROWS 22`, `DELETE ROWS 12`, `DELETE ROWS 6`; near copies stay (L1/0) |
| 2 | rows whose key repeats ignoring case deleted, the first kept (values) | `Subscribers` by Email: row 19's `WEI.COSTA@OUTLOOK.COM` repeats row 7's `wei.costa@outlook.com` (L2/0) |

Why the verdict holds: a value task judges every cell of the area the change may touch,
header and emptied rows included, so moving the header, leaving rows below the table or
damaging a neighbouring cell fails. Tables never start deduplicated."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rlenvs.core.draw import coin, draw_distinct, draw_from, draw_int, draw_sample
from rlenvs.core.names import WIDE_FIRST_NAMES, WIDE_LAST_NAMES
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.drawn_tables import NUMERIC, Column, _date, _headers, _table
from rlenvs.envs.spreadsheet.families.table_cells import SUBMIT, _area, _letter, _reply, _rows, _span
from rlenvs.envs.spreadsheet.families.table_pools import CITIES, COMPANIES, DOMAINS, PLANS, PRODUCTS, PROJECTS, _email
from rlenvs.envs.spreadsheet.tasks import Scenario

EXPENSE_TYPES = ("Hardware", "Meals", "Office Supplies", "Software", "Training", "Travel")


DEDUPE_TABLES: tuple[tuple[str, tuple[Column, ...]], ...] = (
    (
        "Orders",
        (
            ("Order", "id", "SO-"),
            ("Date", "date", (2024, 2024)),
            ("Customer", "pick", COMPANIES),
            ("Product", "pick", PRODUCTS),
            ("Units", "int", (1, 40, 1)),
            ("Amount", "money", (1_500, 250_000)),
        ),
    ),
    (
        "Timesheet",
        (
            ("Date", "date", (2024, 2024)),
            ("Employee", "people", None),
            ("Project", "pick", PROJECTS),
            ("Hours", "int", (1, 9, 1)),
            ("Billable", "pick", ("No", "Yes")),
        ),
    ),
    (
        "Expenses",
        (
            ("Date", "date", (2023, 2024)),
            ("Employee", "people", None),
            ("Category", "pick", EXPENSE_TYPES),
            ("Amount", "money", (350, 189_000)),
            ("Approved", "pick", ("No", "Yes")),
        ),
    ),
)


def _delete_rows(sheet_rows: Sequence[int]) -> list[str]:
    """DELETE ROWS actions for these sheet rows, bottom run first so that the numbers of the
    rows still to delete do not move."""
    runs: list[list[int]] = []
    for row in sorted(sheet_rows):
        if runs and row == runs[-1][-1] + 1:
            runs[-1].append(row)
        else:
            runs.append([row])
    actions = []
    for run in reversed(runs):
        actions.append(f"DELETE ROWS {run[0]}" if len(run) == 1 else f"DELETE ROWS {run[0]}:{run[-1]}")
    return actions


def _insert_copies(
    rng: np.random.Generator, table: list[list[Any]], copies: int, make: Callable[[list[Any]], list[Any]]
) -> None:
    """Insert `copies` rows, each `make` of an earlier row, somewhere below that row."""
    for _ in range(copies):
        source = draw_int(rng, 0, len(table) - 1)
        table.insert(draw_int(rng, source + 1, len(table)), make(list(table[source])))


def _first_of_each(
    table: Sequence[Sequence[Any]], key: Callable[[Sequence[Any]], Any]
) -> tuple[list[Sequence[Any]], list[int]]:
    """The rows whose key was not seen above them, and the indexes of the others."""
    kept, dropped, seen = [], [], set()
    for index, row in enumerate(table):
        if key(row) in seen:
            dropped.append(index)
        else:
            seen.add(key(row))
            kept.append(row)
    return kept, dropped


def dedupe_rows(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _dedupe_exact(rng)
    return _dedupe_key(rng)


def _dedupe_exact(rng: np.random.Generator) -> Scenario:
    """Level 1: rows that repeat an earlier row in every cell (an export that ran twice).
    Near copies, one cell different, are not duplicates and stay."""
    sheet, columns = draw_from(rng, DEDUPE_TABLES)
    n = draw_int(rng, 8, 40)
    copies = draw_int(rng, 2, max(2, n // 4))
    near = draw_int(rng, 1, 2)
    changeable = [i for i, (_, kind, _) in enumerate(columns) if kind in NUMERIC]
    while True:
        table = _table(rng, columns, n - copies - near, distinct=False)
        if len({tuple(row) for row in table}) < len(table):
            continue

        def nearly(row: list[Any]) -> list[Any]:
            col = draw_from(rng, changeable)
            row[col] = (
                row[col] + draw_int(rng, 1, 3)
                if columns[col][1] == "int"
                else round(row[col] + draw_int(rng, 100, 900) / 100, 2)
            )
            return row

        _insert_copies(rng, table, near, nearly)
        _insert_copies(rng, table, copies, lambda row: row)
        kept, dropped = _first_of_each(table, tuple)
        if len(kept) == n - copies:
            break
    width, headers = len(columns), _headers(columns)
    area = _span(None, 0, 1, width - 1, n + 1)
    instruction = (
        f"The sheet {sheet} holds a table with its header in row 1 and {n} data rows "
        f"({_span(None, 0, 2, width - 1, n + 1)}). Some rows repeat an earlier row exactly, in "
        f"every column. Delete each such repeated row and keep the first occurrence; rows that "
        f"differ in any cell are not duplicates. Remove the rows themselves (DELETE ROWS) so that "
        f"the rows below move up: the remaining rows keep their order, start in row 2 with no "
        f"gaps, and nothing is left below the table within {area}. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets={sheet: _rows(headers, table)},
        expected=_area(sheet, _rows(headers, kept), width, n + 1),
        solution=(_reply(*_delete_rows([index + 2 for index in dropped])),),
    )


def _recase(rng: np.random.Generator, text: str) -> str:
    """The same text in another case, as people type it."""
    style = draw_int(rng, 0, 2)
    if style == 0:
        return text.upper()
    if style == 1:
        return ".".join(part[:1].upper() + part[1:] for part in text.split("."))
    flipped = [ch.upper() if ch.isalpha() and coin(rng) else ch for ch in text]
    changed = "".join(flipped)
    return changed if changed != text else text.upper()


KEY_TABLES = ("Subscribers", "Suppliers")


def _dedupe_key(rng: np.random.Generator) -> Scenario:
    """Level 2: rows whose key (an email or a supplier code) repeats an earlier one ignoring
    upper/lower case are duplicates even when other cells differ (a later sign-up, a new
    plan); the first row of each key stays. One name comes back under another key (a second
    email, a second branch's code): not a duplicate."""
    sheet = draw_from(rng, KEY_TABLES)
    n = draw_int(rng, 8, 40)
    copies = draw_int(rng, 2, max(2, n // 4))
    unique = n - copies
    again = draw_int(rng, 1, unique - 1)
    before = draw_int(rng, 0, again - 1)
    if sheet == "Subscribers":
        headers = ["Name", "Email", "City", "Plan", "Joined"]
        key = 1
        cities = draw_sample(rng, CITIES, 5)
        people = draw_distinct(lambda: (draw_from(rng, WIDE_FIRST_NAMES), draw_from(rng, WIDE_LAST_NAMES)), unique)
        domains = [draw_from(rng, DOMAINS) for _ in people]
        people[again] = people[before]
        domains[again] = draw_from(rng, [domain for domain in DOMAINS if domain != domains[before]])
        table = [
            [
                f"{first} {last}",
                _email(first, last, domain),
                draw_from(rng, cities),
                draw_from(rng, PLANS),
                _date(rng, 2022, 2024),
            ]
            for (first, last), domain in zip(people, domains, strict=True)
        ]

        def later(row: list[Any]) -> list[Any]:
            row[key] = _recase(rng, row[key]) if draw_int(rng, 0, 3) else row[key]
            if coin(rng):
                row[3] = draw_from(rng, PLANS)
            row[4] = row[4] + dt.timedelta(days=draw_int(rng, 1, 200))
            return row
    else:
        headers = ["Code", "Supplier", "City", "Terms (days)", "Rating"]
        key = 0
        names = draw_sample(rng, COMPANIES, min(unique, len(COMPANIES)))
        names += [f"{draw_from(rng, WIDE_LAST_NAMES)} Supplies" for _ in range(unique - len(names))]
        names[again] = names[before]
        codes = draw_distinct(
            lambda: f"{draw_from(rng, ('ac', 'bx', 'hq', 'mt', 'nw', 'pr', 'sv', 'tk'))}-{draw_int(rng, 100, 999)}",
            unique,
        )
        table = [
            [code, name, draw_from(rng, CITIES), draw_from(rng, (14, 30, 45, 60)), draw_int(rng, 1, 5)]
            for code, name in zip(codes, names, strict=True)
        ]

        def later(row: list[Any]) -> list[Any]:
            row[key] = _recase(rng, row[key]) if draw_int(rng, 0, 3) else row[key]
            if coin(rng):
                row[3] = draw_from(rng, (14, 30, 45, 60))
            row[4] = draw_int(rng, 1, 5)
            return row

    _insert_copies(rng, table, copies, later)
    kept, dropped = _first_of_each(table, lambda row: row[key].casefold())
    width = len(headers)
    area = _span(None, 0, 1, width - 1, n + 1)
    instruction = (
        f"The sheet {sheet} holds a table with its header in row 1 and {n} data rows "
        f"({_span(None, 0, 2, width - 1, n + 1)}). Two rows are duplicates when their "
        f"{headers[key]} (column {_letter(key)}) is the same ignoring upper/lower case, even if "
        f"their other cells differ. For each {headers[key]}, keep only its first (topmost) row "
        f"unchanged and delete the others as whole rows (DELETE ROWS) so that the rows below "
        f"move up: the remaining rows keep their order, start in row 2 with no gaps, and nothing "
        f"is left below the table within {area}. {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets={sheet: _rows(headers, table)},
        expected=_area(sheet, _rows(headers, kept), width, n + 1),
        solution=(_reply(*_delete_rows([index + 2 for index in dropped])),),
    )


FAMILY = Family(
    "dedupe-rows",
    "Delete duplicate rows, keeping the first, rows below moving up.",
    {1: "rows equal in every cell", 2: "rows whose key column repeats ignoring case"},
    dedupe_rows,
)
