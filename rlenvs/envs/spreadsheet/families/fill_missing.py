"""The fill-missing family: fill the blank cells of a numeric column by a rule.

| level | asks | example (task id) |
|---|---|---|
| 1 | blanks of a numeric column set to 0 or to the nearest value above (values) | `Prices`: blank C4 and C12 get the diesel price above, 1.38 and 1.36 (L1/0) |
| 2 | a filled copy in a new column: blanks get the column's or the group's average, rounded to 2 decimals (formulas) | `Lab`: `=IF(D2="",ROUND(AVERAGEIF($B$2:$B$9,B2,$D$2:$D$9),2),D2)` (L2/0) |

Why the verdict holds: level 1 is a value task, judged on every cell of the area the change
may touch, header and emptied rows included. Level 2 judges a new column of formulas whose
header is already there; `_fill_truth` recomputes it from the sheets row by row, and the
check moves the rows (so the blanks and the groups) of the table (`CycleRows`) and adds
blanks where the group changed and where no average would need the ROUND asked for
(`Blanks`), so a filled value typed in fails. Averages to round are redrawn when they fall on
a half cent, where Excel's and Python's rounding would differ."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.drawn_tables import Column, _date, _headers, _table
from rlenvs.envs.spreadsheet.families.table_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _column,
    _is_blank,
    _is_number,
    _letter,
    _ref,
    _reply,
    _rows,
    _span,
)
from rlenvs.envs.spreadsheet.families.table_pools import CITIES, DEPARTMENTS, PRODUCTS, REGIONS, TEAMS
from rlenvs.envs.spreadsheet.perturb import Blanks, CycleRows
from rlenvs.envs.spreadsheet.tasks import Scenario


def _excel_round(value: float, digits: int) -> float:
    """ROUND as spreadsheets do it: half away from zero on the 15-digit decimal value (Python's
    `round` would turn 2.675 into 2.67, as the float is 2.67499...)."""
    exact = Decimal(format(value, ".15g")).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return float(exact)


def _near_half_cent(value: float) -> bool:
    """Whether rounding to cents is a coin toss between rounding rules."""
    fraction = abs(value) * 100 % 1
    return abs(fraction - 0.5) < 1e-6


def fill_missing(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return _fill_constant(rng) if coin(rng) else _fill_above(rng)
    return _fill_average(rng)


def _blank_rows(rng: np.random.Generator, n: int, first: int) -> list[int]:
    """A few 0-based data rows from `first` on to blank, sorted; runs of two can happen."""
    count = draw_int(rng, 2, max(2, n // 4))
    return sorted(int(i) + first for i in rng.permutation(n - first)[:count])


def _fill_constant(rng: np.random.Generator) -> Scenario:
    """Level 1, zero: a blank count means none happened (no units sold, no overtime)."""
    if coin(rng):
        sheet = "Sales"
        columns: tuple[Column, ...] = (
            ("Date", "date", (2024, 2024)),
            ("Store", "pick", CITIES),
            ("Product", "pick", PRODUCTS),
            ("Units", "int", (1, 60, 1)),
        )
        meaning = "no units were sold"
    else:
        sheet = "Overtime"
        columns = (
            ("Week", "int", (1, 52, 1)),
            ("Employee", "people", None),
            ("Department", "pick", DEPARTMENTS),
            ("Overtime Hours", "int", (1, 14, 1)),
        )
        meaning = "no overtime was worked"
    n = draw_int(rng, 8, 40)
    table = _table(rng, columns, n, distinct=False)
    col = len(columns) - 1
    table.sort(key=lambda row: row[0])
    blanks = _blank_rows(rng, n, 0)
    filled = [row[col] for row in table]
    for index in blanks:
        table[index][col] = None
        filled[index] = 0
    return _fill_scenario(
        sheet, columns, table, col, filled, blanks, f"a blank means {meaning}: set each blank cell of the column to 0"
    )


def _fill_above(rng: np.random.Generator) -> Scenario:
    """Level 1, the value above: a reading or price not taken that day carries over."""
    n = draw_int(rng, 8, 40)
    start = _date(rng, 2023, 2024)
    if coin(rng):
        sheet = "Readings"
        columns: tuple[Column, ...] = (("Date", "", None), ("Meter", "", None), ("Reading (kWh)", "", None))
        meter = f"M-{draw_int(rng, 100, 999)}"
        reading = draw_int(rng, 10_000, 90_000)
        table = []
        for day in range(n):
            reading += draw_int(rng, 5, 60)
            table.append([start + dt.timedelta(days=day), meter, reading])
        meaning = "the meter was not read that day"
    else:
        sheet = "Prices"
        columns = (("Week Starting", "", None), ("Station", "", None), ("Diesel (per litre)", "", None))
        station = f"{draw_from(rng, CITIES)} {draw_from(rng, ('North', 'Ring Road', 'Central', 'Airport'))}"
        price = draw_int(rng, 140, 190)
        table = []
        for week in range(n):
            price = max(120, price + draw_int(rng, -4, 4))
            table.append([start + dt.timedelta(weeks=week), station, price / 100])
        meaning = "the price did not change that week"
    col = 2
    blanks = _blank_rows(rng, n, 1)
    for index in blanks:
        table[index][col] = None
    filled: list[Any] = []
    for row in table:
        filled.append(row[col] if row[col] is not None else filled[-1])
    rule = (
        f"a blank means {meaning}: set each blank cell to the value of the nearest non-blank "
        f"cell above it in the same column (row 2 is never blank)"
    )
    return _fill_scenario(sheet, columns, table, col, filled, blanks, rule)


def _fill_scenario(
    sheet: str,
    columns: Sequence[Column],
    table: list[list[Any]],
    col: int,
    filled: Sequence[Any],
    blanks: Sequence[int],
    rule: str,
) -> Scenario:
    n = len(table)
    headers = _headers(columns)
    where = _span(None, col, 2, col, n + 1)
    instruction = (
        f"The sheet {sheet} holds a table with its header in row 1 and {n} data rows. Some "
        f"cells of {headers[col]} ({where}) are blank; {rule}. Put the numbers in the blank cells "
        f"(typed values or formulas both count) and leave every other cell as it is; all of "
        f"{where} is checked. {SUBMIT}"
    )
    expected = {_ref(sheet, col, row + 2): value for row, value in enumerate(filled)}
    solution = _reply(*(f"SET {_letter(col)}{index + 2} {filled[index]}" for index in blanks))
    return Scenario(
        instruction=instruction, sheets={sheet: _rows(headers, table)}, expected=expected, solution=(solution,)
    )


AVERAGE_TABLES: tuple[tuple[str, tuple[Column, ...]], ...] = (
    ("Survey", (("Respondent", "id", "R-"), ("Team", "pick", TEAMS), ("Tenure (years)", "int", (0, 25, 1)), ("Satisfaction", "int", (1, 10, 1)))),
    ("Stores", (("Store", "id", "ST-"), ("Region", "pick", REGIONS), ("Manager", "person", None), ("Weekly Sales", "money", (800_000, 4_500_000)))),
    ("Lab", (("Sample", "id", "S-"), ("Batch", "pick", ("B1", "B2", "B3", "B4")), ("Technician", "people", None), ("Yield (g)", "money", (1_200, 4_800)))),
)  # fmt: skip


def _fill_average(rng: np.random.Generator) -> Scenario:
    """Level 2: a cleaned copy of a column in a new column, blanks replaced by the average of
    the column's (or the row's group's) non-blank values, rounded to 2 decimals, by formulas.
    The copy goes in a new column because a formula in the blank cell itself would average a
    range that holds it (a circular reference)."""
    sheet, columns = draw_from(rng, AVERAGE_TABLES)
    by_group = coin(rng)
    n = draw_int(rng, 8, 40)
    col, group, target = len(columns) - 1, 1, len(columns)
    while True:
        table = _table(rng, columns, n, distinct=False)
        for index in _blank_rows(rng, n, 0):
            table[index][col] = None
        sheets = {sheet: [list(row) for row in _rows(_headers(columns), table)]}
        if _average_fill_ok(sheets, sheet, n, col, group if by_group else -1):
            break
    headers = [*_headers(columns), f"{columns[col][0]} (filled)"]
    truth = functools.partial(_fill_truth, sheet=sheet, n=n, col=col, group=group if by_group else -1, target=target)
    v, t = _letter(col), _letter(target)
    last = n + 1
    if by_group:
        average = f"the average of the non-blank {headers[col]} values of the rows with the same {headers[group]} (column {_letter(group)})"
        formula = f'=IF({v}2="",ROUND(AVERAGEIF(${_letter(group)}$2:${_letter(group)}${last},{_letter(group)}2,${v}$2:${v}${last}),2),{v}2)'
    else:
        average = f"the average of all non-blank values of {_span(None, col, 2, col, last)}"
        formula = f'=IF({v}2="",ROUND(AVERAGE(${v}$2:${v}${last}),2),{v}2)'
    cells = [_ref(sheet, target, row) for row in range(2, last + 1)]
    instruction = (
        f"The sheet {sheet} holds a table with its header in row 1 and {n} data rows; some cells "
        f"of {headers[col]} ({_span(None, col, 2, col, last)}) are blank. Column {t} (header "
        f'"{headers[target]}" in {t}1) must hold a filled copy: in each row 2 to {last}, the row\'s '
        f"{headers[col]} when it is not blank, otherwise {average}, rounded to 2 decimals. Leave "
        f"column {v} as it is. {FORMULAS} {SUBMIT}"
    )
    return Scenario(
        instruction=instruction,
        sheets={sheet: _rows(headers, table)},
        expected=truth(sheets),
        solution=(_reply(f"SET {t}2 {formula}", f"FILL {t}2 {t}3:{t}{last}"),),
        formula_cells=tuple(cells),
        inputs=(_span(sheet, col, 2, col, last),),
        # the blanks and the groups move, and more rows are blank
        changes=(
            CycleRows(_span(sheet, 0, 2, col, last)),
            Blanks(_span(sheet, col, 2, col, last), _letter(group) if by_group else "", rounded=2, zero=True),
        ),
        truth=truth,
        decimals=dict.fromkeys(cells, 2),  # "rounded to 2 decimals": an unrounded average is not the answer
    )


def _average_fill_ok(sheets: Sheets, sheet: str, n: int, col: int, group: int) -> bool:
    """Every group has a value to average, and no average sits on a half cent."""
    values = _column(sheets, sheet, col, n)
    groups = _column(sheets, sheet, group, n) if group >= 0 else [None] * n
    for name in set(groups):
        known = [v for v, g in zip(values, groups, strict=True) if g == name and _is_number(v)]
        if not known or _near_half_cent(sum(known) / len(known)):
            return False
    return any(_is_blank(v) for v in values)


def _fill_truth(sheets: Sheets, *, sheet: str, n: int, col: int, group: int, target: int) -> dict[str, Any]:
    """Each row's value, or for a blank the ROUND(...,2) average of the numbers of the column
    (group >= 0: of the rows with the same group, compared ignoring case as AVERAGEIF does)."""
    values = _column(sheets, sheet, col, n)
    groups = (
        [str(g).casefold() if g is not None else "" for g in _column(sheets, sheet, group, n)]
        if group >= 0
        else [""] * n
    )
    expected: dict[str, Any] = {}
    for row, (value, name) in enumerate(zip(values, groups, strict=True)):
        if not _is_blank(value):
            expected[_ref(sheet, target, row + 2)] = value
            continue
        known = [v for v, g in zip(values, groups, strict=True) if g == name and _is_number(v)]
        expected[_ref(sheet, target, row + 2)] = _excel_round(sum(known) / len(known), 2) if known else "#DIV/0!"
    return expected


FAMILY = Family(
    "fill-missing",
    "Fill the blank cells of a numeric column by a rule.",
    {
        1: "blanks set to 0 or to the value above (values)",
        2: "a filled copy by formulas: blanks get the column's or the group's average, rounded to 2 decimals",
    },
    fill_missing,
)
