"""Spreadsheet task families that reshape or clean tables, or ask for rank, date and text formulas.

Each family makes one realistic table (staff, orders, invoices, race results, contacts)
starting at A1 with its header in row 1, and asks for one well-defined change: rows sorted
or deduplicated, blanks filled, or a new column of formulas. The instruction names the exact
cells or range and the exact rule, and every judged value is computed here in plain Python,
never by the formula engine.

| family | level | asks | example (task id) |
|---|---|---|---|
| sort-rows | 1 | rows sorted by one numeric column, highest first (values) | `Reps` by Deals: `SORT A2:E36 BY D DESC` (L1/0) |
| sort-rows | 2 | rows sorted by a text column A to Z, then by a numeric one within it (values) | `Inventory` by Warehouse, then Unit Price: `SORT A2:E9 BY E ASC`, then `SORT A2:E9 BY C ASC` (L2/0) |
| dedupe-rows | 1 | rows equal to an earlier row in every cell deleted, rows below moved up (values) | `Expenses`: `DELETE ROWS 22`, `DELETE ROWS 12`, `DELETE ROWS 6`; near copies stay (L1/0) |
| dedupe-rows | 2 | rows whose key repeats ignoring case deleted, the first kept (values) | `Subscribers` by Email: row 19's `WEI.COSTA@OUTLOOK.COM` repeats row 7's `wei.costa@outlook.com` (L2/0) |
| fill-missing | 1 | blanks of a numeric column set to 0 or to the nearest value above (values) | `Prices`: blank C4 and C12 get the diesel price above, 1.38 and 1.36 (L1/0) |
| fill-missing | 2 | a filled copy in a new column: blanks get the column's or the group's average, rounded to 2 decimals (formulas) | `Lab`: `=IF(D2="",ROUND(AVERAGEIF($B$2:$B$9,B2,$D$2:$D$9),2),D2)` (L2/0) |
| rank | 1 | RANK by a score, 1 for the highest (or the lowest time or error rate), no ties (formulas) | `Exams`: `=RANK(C2,$C$2:$C$31)` (L1/0) |
| rank | 2 | ties sharing a rank as RANK does, or ranks within a group (formulas) | `Pickers` within each Shift: `=COUNTIFS($B$2:$B$22,B2,$C$2:$C$22,"<"&C2)+1` (L2/0) |
| date-diff | 1 | days between two date columns, maybe less the payment terms or times a daily rate (formulas) | `Invoices` days late: `=DAYS(E2,C2)-D2` (L1/0) |
| date-diff | 2 | whole years or months (DATEDIF), or monthly totals by YEAR and MONTH (formulas) | `Staff` years of service to the report date in F2: `=DATEDIF(C2,$F$2,"Y")` (L2/0) |
| clean-text | 1 | a messy column trimmed and put in Proper, UPPER or lower case (formulas) | `Subscribers` emails: `=LOWER(TRIM(B2))` (L1/0) |
| clean-text | 2 | a badge key from first and last name, a work email, or a phone number's digits as text (formulas) | ` pedro` and ` O'NEILL ` -> `P.O'Neill`: `=UPPER(LEFT(TRIM(B2),1))&"."&PROPER(TRIM(C2))` (L2/0) |

Task ids are `spreadsheet/{family}/L{level}/{index}`.

Value tasks (sort, dedupe, fill L1) judge every cell of the area the change may touch,
header and emptied rows included, so moving the header, leaving rows below the table or
damaging a neighbouring cell fails. Formula tasks judge a new column whose header is already
there; `truth` recomputes it from the sheets row by row, so it holds for whatever the env's
check puts in `inputs` (numbers scaled, dates moved by up to 40 days, texts shuffled within
their column) and its `changes` (`perturb`). Their `inputs` therefore name the date and text
columns a formula reads, not only the numbers: a rank, a day count or a cleaned name typed
in (or a constant dressed as a formula) changes with none of them and fails. The changes
move what a formula that did part of the work by hand relies on: the rows (so the blanks
and the groups) of a table to fill, more blanks where the group changed (and where no
average would need the ROUND asked for), the scores of a rank along a cycle and the groups
of a rank within groups, ties in a rank about ties and none where a rank promises none,
hire dates on and beside the report date's anniversary in years where days/365.25 miscounts
(the report date with a 29 February in its past year in one copy and none in the other,
and the hires on and a day after one anniversary the same years back in both, so that no
average year with an offset counts right) and every other hire a year away
where its count came out unchanged, end dates on and beside the start's day of the month
in months where days/30.4375 miscounts, order dates on every month end and the 1st after
it and a year away (a total by MONTH alone, or a month of 31 days, fails), end dates kept
after their starts in the day counts, the order of a summary's periods, texts messed again
in every way the cleaning undoes (a TRIM or SUBSTITUTE left out on rows that did not need
it fails), texts the task never showed in place of its own (cleaned answers typed into a
table and looked up fail), and phones in other shapes the data allows.

Choices that keep the judged values unambiguous:

- Sort keys are distinct within what they order, and every text key pool sorts the same
  with and without case (no "IT" beside "Interns"), so any stable or unstable, case-blind
  or case-aware sort gives one order. Tables never start sorted or deduplicated.
- Averages to round are redrawn when they fall on a half cent, where Excel's and Python's
  rounding would differ.
- DATEDIF dates use days 1 to 28, away from the month-end cases where spreadsheet programs
  disagree; `truth` still follows Excel's rule (whole months, then whole years) for any date,
  and start and end lie more than 80 days apart, so the moved end never precedes the start;
  where a day count's end could (a one-day rental), the check keeps it after the start.
- Most years-of-service hires fall within five weeks of the report date's day of the year,
  so that moving dates by 40 days changes some counts (a typed-in count does not survive).
- Dates reach `truth` as `datetime.date` or as serial numbers (days since 1899-12-30) alike.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeVar

import numpy as np

from rlenvs.core import names
from rlenvs.core.draw import coin, draw_distinct, draw_from, draw_int, draw_sample
from rlenvs.core.names import WIDE_FIRST_NAMES, WIDE_LAST_NAMES
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.fresh import (
    fresh_first_name,
    fresh_phone,
    same_digits,
)
from rlenvs.envs.spreadsheet.perturb import (
    Blanks,
    Change,
    CycleRows,
    DateEdges,
    Distinct,
    FreshTexts,
    InOrder,
    LeapPhase,
    OtherCount,
    Remap,
    SameDay,
    Ties,
)
from rlenvs.envs.spreadsheet.tasks import Scenario
from rlenvs.workbook.cells import column_letters

T = TypeVar("T")
Sheets = Mapping[str, Sequence[Sequence[Any]]]

SUBMIT = "Reply SUBMIT when done."
FORMULAS = "Write formulas, not typed values: the column must still be right when the data in the table changes."
EPOCH = dt.date(1899, 12, 30)
"""Day 0 of spreadsheet serial dates: serial 45292 is 2024-01-01."""
SHIFT_DAYS = 40
"""How far the env's check moves each input date (either way): DATEDIF's start and end are
drawn more than twice that apart, so that the moved end never comes before the start (where
DATEDIF is an error, not a number)."""

# --- drawing -------------------------------------------------------------------------------


def _date(rng: np.random.Generator, first_year: int, last_year: int) -> dt.date:
    """A date on day 1-28 of a month, so that month arithmetic has no month-end cases."""
    return dt.date(draw_int(rng, first_year, last_year), draw_int(rng, 1, 12), draw_int(rng, 1, 28))


# --- cells and replies ---------------------------------------------------------------------


def _letter(col: int) -> str:
    """The letters of a 0-based column index: 0 -> A."""
    return column_letters(col + 1)


def _ref(sheet: str, col: int, row: int) -> str:
    """A judged cell, "Staff!D2" (0-based column, 1-based row)."""
    return f"{sheet}!{_letter(col)}{row}"


def _span(sheet: str | None, col1: int, row1: int, col2: int, row2: int) -> str:
    where = f"{_letter(col1)}{row1}:{_letter(col2)}{row2}"
    return f"{sheet}!{where}" if sheet else where


def _reply(*lines: str) -> str:
    return "```\n" + "\n".join(lines) + "\n```"


def _rows(header: Sequence[Any], table: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    return (tuple(header), *(tuple(row) for row in table))


def _area(sheet: str, rows: Sequence[Sequence[Any]], width: int, height: int) -> dict[str, Any]:
    """Every cell of A1 to (width x height) with the content `rows` gives it (None beyond)."""
    expected: dict[str, Any] = {}
    for r in range(height):
        row = rows[r] if r < len(rows) else ()
        for c in range(width):
            expected[_ref(sheet, c, r + 1)] = row[c] if c < len(row) else None
    return expected


def _cell(sheets: Sheets, sheet: str, row: int, col: int) -> Any:
    """The value at a 1-based row and 0-based column of the rows `truth` receives (None off
    the edge: the env may hand over rows trimmed to their last non-empty cell)."""
    rows = sheets.get(sheet, ())
    if row - 1 >= len(rows):
        return None
    values = rows[row - 1]
    return values[col] if col < len(values) else None


def _column(sheets: Sheets, sheet: str, col: int, n: int) -> list[Any]:
    """Data rows 2 to n+1 of one column."""
    return [_cell(sheets, sheet, row, col) for row in range(2, n + 2)]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_blank(value: Any) -> bool:
    return value is None or value == ""


def _excel_round(value: float, digits: int) -> float:
    """ROUND as spreadsheets do it: half away from zero on the 15-digit decimal value (Python's
    `round` would turn 2.675 into 2.67, as the float is 2.67499...)."""
    exact = Decimal(format(value, ".15g")).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return float(exact)


def _near_half_cent(value: float) -> bool:
    """Whether rounding to cents is a coin toss between rounding rules."""
    fraction = abs(value) * 100 % 1
    return abs(fraction - 0.5) < 1e-6


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


# --- pools ---------------------------------------------------------------------------------

MESSY_LAST_NAMES = (*WIDE_LAST_NAMES, "O'Neill", "Smith-Jones", "D'Souza", "Lloyd-Evans")
"""Clean-text adds names where PROPER capitalises after the apostrophe or hyphen too."""

DEPARTMENTS = ("Engineering", "Finance", "Human Resources", "IT", "Legal", "Marketing", "Operations", "Sales", "Support")  # fmt: skip
CITIES = (
    "Amsterdam", "Austin", "Berlin", "Boston", "Chicago", "Denver", "Dublin", "Leeds",
    "Lisbon", "Lyon", "Madrid", "New York", "Oslo", "Porto", "San Diego", "Seattle",
    "Toronto", "Vienna", "Zurich",
)  # fmt: skip
REGIONS = ("Central", "East", "North", "South", "West")
COMPANIES = (
    "Bluebird Dental", "Clearwater Spa", "Granite Builders", "Harbor Cafe", "Lakeside Clinic",
    "Maple Bakery", "Northwind Traders", "Oakridge School", "Pinecrest Books", "Redwood Studio",
    "Silverline Taxi", "Summit Fitness",
)  # fmt: skip
PRODUCTS = (
    "Desk Lamp", "Docking Station", "HDMI Cable", "Headset", "Keyboard", "Laptop Stand",
    "Monitor", "Mouse", "Notebook", "USB Hub", "Webcam", "Whiteboard",
)  # fmt: skip
CATEGORIES = ("Cleaning", "Electrical", "Fasteners", "Garden", "Paint", "Plumbing", "Safety", "Tools")
TEAMS = ("Enterprise", "Inbound", "Mid Market", "Partners", "Renewals")
PROJECTS = ("Apollo", "Borealis", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor")
EXPENSE_TYPES = ("Hardware", "Meals", "Office Supplies", "Software", "Training", "Travel")
CLASSES = ("7A", "7B", "8A", "8B", "9A", "9B")
CLUBS = ("Harbour Harriers", "Hill Runners", "Park Striders", "River Road", "Valley AC")
PLANS = ("Basic", "Family", "Premium", "Standard", "Student")
DOMAINS = ("fastmail.com", "gmail.com", "icloud.com", "outlook.com", "proton.me", "yahoo.com")

SORT_KEY_POOLS = (DEPARTMENTS, CITIES, REGIONS, COMPANIES, PRODUCTS, CATEGORIES, TEAMS)
"""Pools whose values may be a sort key: letters and spaces only, and the same order with
and without case (checked in the tests)."""


def _person(rng: np.random.Generator) -> str:
    return names.person(rng, WIDE_FIRST_NAMES, WIDE_LAST_NAMES)


# --- generic tables ------------------------------------------------------------------------

# A column is (header, kind, argument). Kinds: "id" (argument: prefix; sequential ids from a
# random start), "person" (a different full name on each row), "people" (a few full names
# per table, repeated), "pick" (argument: pool; each table uses 3-6 of its values), "int"
# ((low, high, step)), "money" ((low, high) in cents, a number with two decimals), "date"
# ((first year, last year)).
Column = tuple[str, str, Any]

NUMERIC = ("int", "money")


def _table(rng: np.random.Generator, columns: Sequence[Column], rows: int, *, distinct: bool = True) -> list[list[Any]]:
    """`rows` data rows. With `distinct`, every numeric column has a different value on each
    row, so that sorting or ranking by it has one answer."""
    first_id = draw_int(rng, 1000, 8000)
    values: list[list[Any]] = []
    for _header, kind, arg in columns:
        if kind == "id":
            values.append([f"{arg}{first_id + row}" for row in range(rows)])
        elif kind == "person":
            values.append(draw_distinct(lambda: _person(rng), rows))
        elif kind == "people":
            pool = draw_distinct(lambda: _person(rng), draw_int(rng, 3, 6))
            values.append([draw_from(rng, pool) for _ in range(rows)])
        elif kind == "pick":
            pool = draw_sample(rng, arg, min(len(arg), draw_int(rng, 3, 6)))
            values.append([draw_from(rng, pool) for _ in range(rows)])
        elif kind == "date":
            values.append([_date(rng, *arg) for _ in range(rows)])
        else:
            draw = _number_draw(rng, kind, arg)
            values.append(draw_distinct(draw, rows) if distinct else [draw() for _ in range(rows)])
    return [list(row) for row in zip(*values, strict=True)]


def _number_draw(rng: np.random.Generator, kind: str, arg: Any) -> Callable[[], int | float]:
    if kind == "int":
        low, high, step = arg
        return lambda: draw_int(rng, low // step, high // step) * step
    low, high = arg
    return lambda: draw_int(rng, low, high) / 100


def _headers(columns: Sequence[Column]) -> list[str]:
    return [header for header, _, _ in columns]


# === sort-rows =============================================================================

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


# === dedupe-rows ===========================================================================

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


def _email(first: str, last: str, domain: str) -> str:
    letters = "".join(ch for ch in last if ch.isalpha())
    return f"{first}.{letters}@{domain}".lower()


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


# === fill-missing ==========================================================================


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


# === rank ==================================================================================

# A score table: (sheet, (name, group, score) columns, whether the lowest score ranks 1, the
# score column of level 2's tables with ties).
RankTable = tuple[str, tuple[Column, Column, Column], bool, Column]

RANK_TABLES: tuple[RankTable, ...] = (
    ("Reps", (("Rep", "person", None), ("Region", "pick", REGIONS), ("Revenue", "money", (1_500_000, 45_000_000))), False, ("Deals Won", "int", (5, 30, 1))),
    ("Exams", (("Student", "person", None), ("Class", "pick", CLASSES), ("Score", "int", (0, 100, 1))), False, ("Score", "int", (12, 30, 1))),
    ("Results", (("Runner", "person", None), ("Club", "pick", CLUBS), ("Time (min)", "money", (3_600, 7_500))), True, ("Time (min)", "int", (36, 52, 1))),
    ("Pickers", (("Picker", "person", None), ("Shift", "pick", ("Early", "Late", "Night")), ("Error Rate (%)", "money", (5, 480))), True, ("Errors", "int", (0, 12, 1))),
)  # fmt: skip


def rank(rng: np.random.Generator, level: int) -> Scenario:
    """Level 1: RANK over distinct scores. Level 2: scores with ties, which share the better
    rank and skip the next ones as RANK does, or ranks within each group (COUNTIFS)."""
    sheet, columns, lowest_first, tied = draw_from(rng, RANK_TABLES)
    n = draw_int(rng, 8, 40)
    within = level >= 2 and coin(rng)
    if level >= 2 and not within:
        columns = (columns[0], columns[1], tied)
    while True:
        table = _table(rng, columns, n, distinct=level == 1 or within)
        scores = [row[2] for row in table]
        groups = {row[1] for row in table}
        if level == 1 or (within and len(groups) > 1) or (not within and len(set(scores)) < n):
            break
    headers = [*_headers(columns), "Rank"]
    last = n + 1
    score, name, group = headers[2], headers[0].lower(), headers[1]
    best = "lowest" if lowest_first else "highest"
    truth = functools.partial(
        _rank_truth, sheet=sheet, n=n, score=2, group=1 if within else -1, target=3, ascending=lowest_first
    )
    order = ",1" if lowest_first else ""
    if within:
        rule = (
            f"rank each {name} by {score} (column C) among the {name}s of the same {group} "
            f"(column B) only: 1 for the {best} {score} within the {group}, 2 for the next, and so on"
        )
        compare = "<" if lowest_first else ">"
        formula = f'=COUNTIFS($B$2:$B${last},B2,$C$2:$C${last},"{compare}"&C2)+1'
    else:
        rule = f"rank each {name} by {score} (column C) among all {n} rows: 1 for the {best} {score}, 2 for the next, and so on"
        if level >= 2:
            rule += ". Equal scores share the same rank and the ranks after them are skipped, as RANK does (for example 1, 2, 2, 4)"
        formula = f"=RANK(C2,$C$2:$C${last}{order})"
    instruction = (
        f'The sheet {sheet} lists {n} {name}s (A2:C{last}); D1 holds the header "Rank". In '
        f"D2:D{last}, {rule}. {FORMULAS} {SUBMIT}"
    )
    sheets = {sheet: _rows(headers, table)}
    inputs = (f"{sheet}!C2:C{last}",)
    scores = f"{sheet}!C2:C{last}"
    changes: tuple[Change, ...]
    # the scores move along a cycle, so every row meets another score (a rank typed on a row
    # that scaling leaves first or last fails)
    if within:  # rows move, so a group typed into the formula is some other row's
        changes = (
            CycleRows(f"{sheet}!A2:C{last}"),
            CycleRows(f"{sheet}!B2:B{last}"),
            CycleRows(scores),
            Distinct(scores),
        )
    else:  # ties where the task is about ties, none where it promises none
        changes = (CycleRows(scores), Ties(scores)) if level >= 2 else (CycleRows(scores), Distinct(scores))
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth({sheet: [list(row) for row in sheets[sheet]]}),
        solution=(_reply(f"SET D2 {formula}", f"FILL D2 D3:D{last}"),),
        formula_cells=tuple(f"{sheet}!D{row}" for row in range(2, last + 1)),
        inputs=inputs,
        changes=changes,
        truth=truth,
    )


def _rank_truth(
    sheets: Sheets, *, sheet: str, n: int, score: int, group: int, target: int, ascending: bool
) -> dict[str, Any]:
    """RANK (group < 0): one more than the number of scores better than the row's. Within a
    group: the same, counting only rows of the row's group (text compared ignoring case)."""
    scores = _column(sheets, sheet, score, n)
    groups = [str(g).casefold() for g in _column(sheets, sheet, group, n)] if group >= 0 else [""] * n
    expected: dict[str, Any] = {}
    for row, (value, name) in enumerate(zip(scores, groups, strict=True)):
        better = sum(
            1
            for other, other_group in zip(scores, groups, strict=True)
            if _is_number(other) and other_group == name and (other < value if ascending else other > value)
        )
        expected[_ref(sheet, target, row + 2)] = better + 1
    return expected


# === date-diff =============================================================================


def date_diff(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return draw_from(rng, (_project_days, _invoice_days, _rental_days))(rng)
    return draw_from(rng, (_tenure_years, _subscription_months, _monthly_totals))(rng)


def _dates_scenario(
    instruction: str,
    sheet: str,
    headers: Sequence[str],
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
    hired = f"Staff!C2:C{n + 1}"
    anniversaries = (
        LeapPhase("Staff!F2"),
        SameDay(hired, unit="Y", cell="Staff!F2"),
        OtherCount(hired, unit="Y", cell="Staff!F2"),
    )
    return _dates_scenario(
        instruction, "Staff", headers, table, truth, [(3, '=DATEDIF(C2,$F$2,"Y")')], [2], ("Staff!F2",), anniversaries
    )


def _subscription_months(rng: np.random.Generator) -> Scenario:
    """Level 2: whole months between Start and End (DATEDIF "M") and what was billed, months
    times the monthly fee."""
    n = draw_int(rng, 8, 40)
    fees = {plan: draw_from(rng, (499, 799, 999, 1299, 1499, 1999, 2499)) / 100 for plan in PLANS}
    table = []
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
    table = []
    for row in range(n):
        day = EPOCH + dt.timedelta(days=draw_int(rng, start_serial, int(_serial(end)) - 1))
        table.append([f"SO-{5000 + row}", day, draw_from(rng, customers), draw_int(rng, 2_000, 480_000) / 100])
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


# === clean-text ============================================================================


def _trim(text: str) -> str:
    """TRIM: no spaces at either end, and single spaces between words (spaces only)."""
    return " ".join(part for part in text.split(" ") if part)


def _proper(text: str) -> str:
    """PROPER: a letter is upper case after a non-letter (or at the start), lower otherwise."""
    out, after_letter = [], False
    for ch in text:
        if ch.isalpha():
            out.append(ch.lower() if after_letter else ch.upper())
            after_letter = True
        else:
            out.append(ch)
            after_letter = False
    return "".join(out)


def _mess(rng: np.random.Generator, text: str) -> str:
    """The text as it arrives from a form: odd case, spaces doubled or at the ends."""
    style = draw_int(rng, 0, 3)
    if style == 0:
        text = text.upper()
    elif style == 1:
        text = text.lower()
    elif style == 2:
        text = "".join(ch.swapcase() if ch.isalpha() and coin(rng) else ch for ch in text)
    words = text.split(" ")
    text = (" " * draw_int(rng, 1, 3)).join(words) if coin(rng) else text
    return " " * draw_int(rng, 0, 2) + text + " " * draw_int(rng, 0, 2)


def _messy(rng: np.random.Generator, texts: Sequence[str], clean: Callable[[str], str]) -> list[str]:
    """Messed-up versions of `texts`, at least two of them needing the cleaning."""
    while True:
        messy = [_mess(rng, text) for text in texts]
        if sum(clean(m) != m for m in messy) >= 2:
            return messy


def _text_truth(
    sheets: Sheets, *, sheet: str, n: int, rule: str, columns: tuple[int, ...], target: int, extra: str = ""
) -> dict[str, Any]:
    """Per row, the rule over the texts of `columns` into column `target`."""
    expected: dict[str, Any] = {}
    for row in range(2, n + 2):
        texts = ["" if _is_blank(v) else str(v) for v in (_cell(sheets, sheet, row, col) for col in columns)]
        expected[_ref(sheet, target, row)] = _clean(rule, texts, extra)
    return expected


def _clean(rule: str, texts: Sequence[str], extra: str) -> str:
    if rule == "proper":
        return _proper(_trim(texts[0]))
    if rule == "upper":
        return _trim(texts[0]).upper()
    if rule == "lower":
        return _trim(texts[0]).lower()
    if rule == "key":
        first, last = _trim(texts[0]), _trim(texts[1])
        return first[:1].upper() + "." + _proper(last)
    if rule == "email":
        return (_trim(texts[0]) + "." + _trim(texts[1])).lower() + "@" + extra
    if rule == "digits":
        return "".join(ch for ch in texts[0] if ch not in "() -")
    raise ValueError(rule)


def remessed(rng: np.random.Generator, value: Any, case: str) -> Any:
    """A text messed again so that every cleaning step is needed on every row (what the
    check's `Remap` does to clean-text inputs): a space at each end, spaces doubled between
    words, and letters in a `case` the cleaning must undo: "lower", "upper" or "swap" (the
    PROPER form with every letter's case swapped). A formula that skips TRIM on rows that
    happened not to need it is then wrong."""
    if not isinstance(value, str):
        return value
    text = "  ".join(_trim(value).split(" "))
    text = text.lower() if case == "lower" else text.upper() if case == "upper" else _proper(text).swapcase()
    return " " + text + " " * draw_int(rng, 1, 2)


PHONE_SHAPES = (
    "({a}) {m}-{e}", "{a}-{m}-{e}", "{a} {m} {e}", "({a}){m}-{e}", "({a}) {m} {e}", "{a} {m}-{e}",
    "({a})-{m}-{e}", "{a} {m}{e}", "({a}) {m}{e}", "{a}-{m}{e}",
)  # fmt: skip
"""How people write a phone number's three groups (area, middle, end): the tasks' own shapes
and the others a form lets through, with "(", ")", " " and "-" in other places."""


def reshaped_phone(rng: np.random.Generator, value: Any, before: Any = None) -> Any:
    """The phone's digits in a shape drawn from `PHONE_SHAPES`, among those holding every
    removable character that the row's starting phone (`before`) lacked: a formula that
    leaves out a SUBSTITUTE on a row that did not need it, reads fixed positions of one
    shape, or types the answer for the shapes it does not read, meets a shape it gets
    wrong (one shape for all rows let all three pass)."""
    if not isinstance(value, str):
        return value
    digits = "".join(ch for ch in value if ch.isdigit())
    lacking = {ch for ch in "() -" if ch not in (before if isinstance(before, str) else "")}
    shapes = [shape for shape in PHONE_SHAPES if lacking <= set(shape)]
    return draw_from(rng, shapes).format(a=digits[:-7], m=digits[-7:-4], e=digits[-4:])


def _new_last_name(rng: np.random.Generator) -> str:
    """A last name few tasks hold: two pool names joined by a hyphen, or O' or D' before
    one (PROPER capitalises after both)."""
    first, second = draw_sample(rng, WIDE_LAST_NAMES, 2)
    return draw_from(rng, (f"{first}-{second}", f"O'{first}", f"D'{first}"))


def fresh_name(rng: np.random.Generator, value: Any) -> str:
    """A full name for the check's `FreshTexts`: a new first name and a new last name."""
    return f"{fresh_first_name(rng, value)} {_new_last_name(rng)}"


def fresh_last_name(rng: np.random.Generator, value: Any) -> str:
    """A last name for the check's `FreshTexts`."""
    return _new_last_name(rng)


def fresh_email(rng: np.random.Generator, value: Any) -> str:
    """An email address for the check's `FreshTexts`, first.last at a mail domain."""
    return _email(fresh_first_name(rng, value), _new_last_name(rng), draw_from(rng, DOMAINS))


CODE_LETTERS = ("ab", "kx", "lm", "qt", "rv", "zp")
CODE_VARIANTS = ("blk", "wht", "red", "gry", "xl", "sm")


def _code(rng: np.random.Generator) -> str:
    return f"{draw_from(rng, CODE_LETTERS)}-{draw_int(rng, 100, 9999)} {draw_from(rng, CODE_VARIANTS)}"


def fresh_code(rng: np.random.Generator, value: Any) -> str:
    """A product code for the check's `FreshTexts`, as the task's codes are made."""
    return _code(rng)


def clean_text(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return draw_from(rng, (_clean_names, _clean_codes, _clean_emails))(rng)
    return draw_from(rng, (_name_keys, _work_emails, _phone_digits))(rng)


def _text_scenario(
    sheet: str,
    headers: Sequence[str],
    table: Sequence[Sequence[Any]],
    rule: str,
    columns: tuple[int, ...],
    formula: str,
    what: str,
    extra: str = "",
    cases: Sequence[str] = ("swap",),
    fresh: Sequence[Callable[..., str] | None] = (None,),
) -> Scenario:
    """A clean-text task: `columns` are cleaned by `rule` into the last column; `cases`, one
    per column, how the check messes each column again (`remessed`, or "phone" for
    `reshaped_phone`); `fresh`, one per column, the draw of the texts the check puts in
    instead of the task's own (`FreshTexts`), None to keep them."""
    n = len(table)
    target = len(headers) - 1
    t, last = _letter(target), n + 1
    truth = functools.partial(_text_truth, sheet=sheet, n=n, rule=rule, columns=columns, target=target, extra=extra)
    sheets = {sheet: _rows(headers, table)}
    instruction = (
        f"The sheet {sheet} holds {n} rows of data ({_span(None, 0, 2, target - 1, last)}) with its header "
        f'in row 1; {t}1 holds the header "{headers[target]}". In {t}2:{t}{last}, give {what}. '
        f"{FORMULAS} {SUBMIT}"
    )
    changes: list[Change] = []
    for col, case, draw in zip(columns, cases, fresh, strict=True):
        area = _span(sheet, col, 2, col, last)
        if draw is not None:  # two phones are the same number where their digits are
            changes.append(FreshTexts(area, draw, same=same_digits) if draw is fresh_phone else FreshTexts(area, draw))
        if case == "phone":
            changes.append(Remap(area, reshaped_phone, before=True))
        else:
            changes.append(Remap(area, remessed, (("case", case),)))
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth({sheet: [list(row) for row in sheets[sheet]]}),
        solution=(_reply(f"SET {t}2 {formula}", f"FILL {t}2 {t}3:{t}{last}"),),
        formula_cells=tuple(_ref(sheet, target, row) for row in range(2, last + 1)),
        inputs=tuple(_span(sheet, col, 2, col, last) for col in columns),
        changes=tuple(changes),
        truth=truth,
    )


def _full_names(rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    return draw_distinct(lambda: (draw_from(rng, WIDE_FIRST_NAMES), draw_from(rng, MESSY_LAST_NAMES)), n)


def _clean_names(rng: np.random.Generator) -> Scenario:
    """Level 1: a name typed carelessly -> trimmed, each word capitalised (PROPER(TRIM()))."""
    n = draw_int(rng, 8, 40)
    names = _messy(rng, [f"{first} {last}" for first, last in _full_names(rng, n)], lambda m: _proper(_trim(m)))
    table = [[f"C-{1000 + i}", name, draw_from(rng, CITIES)] for i, name in enumerate(names)]
    what = (
        "each contact's Name (column B) cleaned: without spaces at either end or doubled between "
        "words, and each word with a capital first letter and the rest lower case (as PROPER "
        "writes it: O'Neill, Smith-Jones)"
    )
    return _text_scenario(
        "Contacts",
        ["Contact", "Name", "City", "Clean Name"],
        table,
        "proper",
        (1,),
        "=PROPER(TRIM(B2))",
        what,
        fresh=(fresh_name,),
    )


def _clean_codes(rng: np.random.Generator) -> Scenario:
    """Level 1: product codes typed in any case with stray spaces -> TRIM, UPPER."""
    n = draw_int(rng, 8, 40)
    codes = draw_distinct(lambda: _code(rng), n)
    messy = _messy(rng, codes, lambda m: _trim(m).upper())
    table = [
        [product, code, draw_int(rng, 0, 400)]
        for product, code in zip((draw_from(rng, PRODUCTS) for _ in range(n)), messy, strict=True)
    ]
    what = "each Code (column B) cleaned: no spaces at either end or doubled inside, and all letters upper case"
    return _text_scenario(
        "Catalog",
        ["Product", "Code", "Stock", "Clean Code"],
        table,
        "upper",
        (1,),
        "=UPPER(TRIM(B2))",
        what,
        cases=("lower",),
        fresh=(fresh_code,),
    )


def _clean_emails(rng: np.random.Generator) -> Scenario:
    """Level 1: email addresses with capitals and spaces -> TRIM, LOWER."""
    n = draw_int(rng, 8, 40)
    people = _full_names(rng, n)
    emails = [_email(first, last, draw_from(rng, DOMAINS)) for first, last in people]
    messy = _messy(rng, emails, lambda m: _trim(m).lower())
    table = [[f"{first} {last}", email] for (first, last), email in zip(people, messy, strict=True)]
    what = "each Email (column B) cleaned: no spaces at either end and all letters lower case"
    return _text_scenario(
        "Subscribers",
        ["Name", "Email", "Clean Email"],
        table,
        "lower",
        (1,),
        "=LOWER(TRIM(B2))",
        what,
        cases=("upper",),
        fresh=(fresh_email,),
    )


def _name_keys(rng: np.random.Generator) -> Scenario:
    """Level 2: a key from the first letter of the first name, upper case, a dot and the last
    name in PROPER case, both trimmed: "  anna" and "BERG " -> "A.Berg"."""
    n = draw_int(rng, 8, 40)
    people = _full_names(rng, n)
    firsts = _messy(rng, [first for first, _ in people], lambda m: _trim(m)[:1].upper() + _trim(m)[1:].lower())
    lasts = _messy(rng, [last for _, last in people], lambda m: _proper(_trim(m)))
    table = [
        [f"E-{2000 + i}", first, last, draw_from(rng, DEPARTMENTS)]
        for i, (first, last) in enumerate(zip(firsts, lasts, strict=True))
    ]
    what = (
        "a badge key for each employee: the first letter of the First Name (column B, ignoring "
        "spaces around it) in upper case, a full stop, then the Last Name (column C) without spaces "
        "at either end or doubled, each word with a capital first letter and the rest lower case "
        "(as PROPER writes it): for example A.Berg, Z.O'Neill or L.Smith-Jones"
    )
    formula = '=UPPER(LEFT(TRIM(B2),1))&"."&PROPER(TRIM(C2))'
    return _text_scenario(
        "Staff",
        ["Employee", "First Name", "Last Name", "Department", "Badge Key"],
        table,
        "key",
        (1, 2),
        formula,
        what,
        cases=("lower", "swap"),
        fresh=(fresh_first_name, fresh_last_name),
    )


def _work_emails(rng: np.random.Generator) -> Scenario:
    """Level 2: first.last@company in lower case from trimmed name columns."""
    n = draw_int(rng, 8, 40)
    people = draw_distinct(lambda: (draw_from(rng, WIDE_FIRST_NAMES), draw_from(rng, WIDE_LAST_NAMES)), n)
    firsts = _messy(rng, [first for first, _ in people], lambda m: _trim(m).lower())
    lasts = _messy(rng, [last for _, last in people], lambda m: _trim(m).lower())
    domain = f"{draw_from(rng, ('northwind', 'bluebird', 'granite', 'pinecrest', 'summit'))}.{draw_from(rng, ('com', 'co.uk', 'io'))}"
    table = [[first, last, draw_from(rng, DEPARTMENTS)] for first, last in zip(firsts, lasts, strict=True)]
    what = (
        f"each employee's work email: the First Name (column A) and Last Name (column B), each "
        f'without spaces at either end or doubled, joined by a full stop, then "@{domain}", all in '
        f"lower case: for example anna.berg@{domain}"
    )
    formula = f'=LOWER(TRIM(A2)&"."&TRIM(B2)&"@{domain}")'
    return _text_scenario(
        "NewStarters",
        ["First Name", "Last Name", "Department", "Email"],
        table,
        "email",
        (0, 1),
        formula,
        what,
        domain,
        cases=("upper", "upper"),
        fresh=(fresh_first_name, fresh_last_name),
    )


def _phone_digits(rng: np.random.Generator) -> Scenario:
    """Level 2: phone numbers typed with brackets, spaces and dashes -> their digits, as text
    (a leading 0 stays; VALUE would drop it)."""
    n = draw_int(rng, 8, 40)
    uk = coin(rng)
    phones = []
    for _ in range(n):
        if uk:
            area, rest = f"0{draw_int(rng, 1000, 1999)}", f"{draw_int(rng, 100000, 999999)}"
            shapes = (f"{area} {rest}", f"({area}) {rest}", f"{area}-{rest[:3]}-{rest[3:]}")
        else:
            area, mid, end = draw_int(rng, 201, 989), draw_int(rng, 200, 999), draw_int(rng, 0, 9999)
            shapes = (f"({area}) {mid}-{end:04d}", f"{area}-{mid}-{end:04d}", f"{area} {mid} {end:04d}")
        phones.append(draw_from(rng, shapes))
    people = draw_distinct(lambda: _person(rng), n)
    table = [[name, phone] for name, phone in zip(people, phones, strict=True)]
    what = (
        'each Phone (column B) with every "(", ")", space and "-" removed, as text with its digits '
        "in order (a leading 0 stays): for example (555) 123-4567 gives 5551234567"
    )
    formula = '=SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(B2,"(",""),")","")," ",""),"-","")'
    return _text_scenario(
        "Customers",
        ["Customer", "Phone", "Digits"],
        table,
        "digits",
        (1,),
        formula,
        what,
        cases=("phone",),
        fresh=(fresh_phone,),
    )


# --- the families --------------------------------------------------------------------------


FAMILIES: tuple[Family, ...] = (
    Family(
        "sort-rows",
        "Sort a table's rows by one or two keys, header in place.",
        {1: "one numeric key, highest first", 2: "a text key A to Z, then a numeric key within it (two stable SORTs)"},
        sort_rows,
    ),
    Family(
        "dedupe-rows",
        "Delete duplicate rows, keeping the first, rows below moving up.",
        {1: "rows equal in every cell", 2: "rows whose key column repeats ignoring case"},
        dedupe_rows,
    ),
    Family(
        "fill-missing",
        "Fill the blank cells of a numeric column by a rule.",
        {1: "blanks set to 0 or to the value above (values)", 2: "a filled copy by formulas: blanks get the column's or the group's average, rounded to 2 decimals"},
        fill_missing,
    ),
    Family(
        "rank",
        "Rank rows by a score with formulas.",
        {1: "RANK over distinct scores, highest (or lowest time) first", 2: "ties sharing a rank as RANK does, or ranks within a group (COUNTIFS)"},
        rank,
    ),
    Family(
        "date-diff",
        "Formulas over date columns.",
        {1: "days between two dates, maybe less payment terms or times a daily rate", 2: "whole years or months (DATEDIF), or monthly totals by YEAR and MONTH"},
        date_diff,
    ),
    Family(
        "clean-text",
        "Clean text columns with text formulas.",
        {1: "TRIM with PROPER, UPPER or LOWER into a new column", 2: "a badge key, a work email or a phone number's digits from messy text"},
        clean_text,
    ),
)  # fmt: skip
