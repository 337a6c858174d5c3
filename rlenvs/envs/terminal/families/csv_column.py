"""csv-column: extract and aggregate a CSV column.

| level | asks | example (task id) |
|---|---|---|
| 1 | the sum of one numeric column, as the answer | `amount` of `exports/orders_2024.csv` -> `submit 12347.79` (L1/0) |
| 2 | a total per category, maybe over filtered rows, byte-sorted, into a file | `quantity` per `product` where `city` is `Lyon`, into `quantity_by_product.csv` as `Desk Lamp,38` lines (L2/0) |

Why the verdict holds: the instruction names the exact column, filter, format and order it
wants, and the expectations check exactly that: level 1's answer as a number, level 2's file
line by line, in byte order. Totals are computed in hundredths, exact for both "12" and
"12.50", and a level 2 filter, where there is one, always drops a row and keeps some.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample
from rlenvs.core.names import people
from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families.byte_order import BYTE_ORDER, byte_sorted
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.shell import quote
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import AnswerIs, FileLines


def _cents(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


CITIES = (
    "Amsterdam", "Austin", "Berlin", "Boston", "Chicago", "Cork", "Denver", "Dublin",
    "Leeds", "Lisbon", "Lyon", "Madrid", "New York", "Newark", "Oslo", "Porto",
    "San Diego", "Seattle", "Toronto", "Vienna", "Zurich",
)  # fmt: skip
"""No city is a prefix of another, so sorting `city,total` lines whole or by the first
field gives one order."""
PRODUCTS = (
    "Desk Lamp", "Docking Station", "HDMI Cable", "Headset", "Keyboard", "Laptop Stand",
    "Monitor", "Mouse", "Notebook", "USB Hub", "Webcam", "Whiteboard",
)  # fmt: skip
DEPARTMENTS = (
    "Engineering", "Finance", "Human Resources", "IT", "Legal", "Marketing", "Operations",
    "Sales", "Support",
)  # fmt: skip
CARRIERS = ("DHL", "DPD", "FedEx", "GLS", "PostNL", "UPS")
EXPENSE_CATEGORIES = (
    "Client Gifts", "Hardware", "Meals", "Office Supplies", "Software", "Training", "Travel",
)  # fmt: skip
PROJECTS = (
    "Apollo",
    "Borealis",
    "Cobalt",
    "Delta",
    "Ember",
    "Falcon",
    "Granite",
    "Harbor",
)


# A column is (name, kind, argument). Kinds: "id" (argument: prefix; sequential ids),
# "date" (2024 dates), "cat" (argument: pool; each task uses a few of its values),
# "person" (a few full names per task), "name" (a different full name on each row), "int" ((low, high)), "dec" ((low, high) in cents,
# written with two decimals).
Column = tuple[str, str, object]

CSV_DATASETS: tuple[tuple[str, tuple[Column, ...]], ...] = (
    (
        "orders",
        (
            ("order_id", "id", "SO-"),
            ("date", "date", None),
            ("city", "cat", CITIES),
            ("product", "cat", PRODUCTS),
            ("quantity", "int", (1, 25)),
            ("amount", "dec", (199, 99999)),
            ("status", "cat", ("cancelled", "pending", "returned", "shipped")),
        ),
    ),
    (
        "employees",
        (
            ("employee_id", "id", "E"),
            ("name", "name", None),
            ("department", "cat", DEPARTMENTS),
            ("city", "cat", CITIES),
            ("level", "cat", ("junior", "lead", "mid", "senior")),
            ("salary", "int", (38000, 165000)),
            ("vacation_days", "int", (10, 30)),
        ),
    ),
    (
        "expenses",
        (
            ("date", "date", None),
            ("employee", "person", None),
            ("category", "cat", EXPENSE_CATEGORIES),
            ("amount", "dec", (350, 189000)),
            ("city", "cat", CITIES),
            ("approved", "cat", ("no", "yes")),
        ),
    ),
    (
        "shipments",
        (
            ("shipment_id", "id", "SH-"),
            ("origin", "cat", CITIES),
            ("carrier", "cat", CARRIERS),
            ("packages", "int", (1, 40)),
            ("weight_kg", "dec", (50, 250000)),
            ("status", "cat", ("delayed", "delivered", "in transit")),
        ),
    ),
    (
        "timesheet",
        (
            ("date", "date", None),
            ("employee", "person", None),
            ("project", "cat", PROJECTS),
            ("task", "cat", ("design", "development", "meetings", "review", "testing")),
            ("hours", "int", (1, 9)),
            ("billable", "cat", ("no", "yes")),
        ),
    ),
)


def _values(arg: object) -> tuple[str, ...]:
    """A "cat" column's argument: the values it draws from."""
    match arg:
        case tuple() if all(isinstance(value, str) for value in arg):
            return arg
    raise TypeError(f'a "cat" column takes a tuple of values, not {arg!r}')


def _bounds(arg: object) -> tuple[int, int]:
    """An "int" or "dec" column's argument: (low, high)."""
    match arg:
        case (int() as low, int() as high):
            return low, high
    raise TypeError(f'an "int" or "dec" column takes (low, high), not {arg!r}')


def _csv_table(rng: np.random.Generator, columns: Sequence[Column], rows: int) -> list[list[str]]:
    """`rows` data rows; categorical columns draw from a few values each so they repeat."""
    pools: list[Sequence[str]] = []
    for _name, kind, arg in columns:
        if kind == "cat":
            values = _values(arg)
            pools.append(draw_sample(rng, values, min(len(values), draw_int(rng, 3, 6))))
        elif kind == "person":
            pools.append(people(rng, draw_int(rng, 4, 7)))
        else:
            pools.append(())
    first_id = draw_int(rng, 1000, 8000)
    names = people(rng, rows) if any(kind == "name" for _, kind, _ in columns) else []
    table = []
    for row in range(rows):
        cells = []
        for (_name, kind, arg), pool in zip(columns, pools, strict=True):
            if kind == "id":
                cells.append(f"{arg}{first_id + row}")
            elif kind == "name":
                cells.append(names[row])
            elif kind == "date":
                cells.append(f"2024-{draw_int(rng, 1, 12):02d}-{draw_int(rng, 1, 28):02d}")
            elif kind in ("cat", "person"):
                cells.append(draw_from(rng, pool))
            elif kind == "int":
                low, high = _bounds(arg)
                cells.append(str(draw_int(rng, low, high)))
            else:
                low, high = _bounds(arg)
                cells.append(_cents(draw_int(rng, low, high)))
        table.append(cells)
    return table


def _csv_text(columns: Sequence[Column], table: Sequence[Sequence[str]]) -> str:
    lines = [",".join(name for name, _, _ in columns)]
    lines += [",".join(row) for row in table]
    return "\n".join(lines) + "\n"


def _as_cents(cell: str) -> int:
    """A column value in hundredths: exact sums for both "12" and "12.50"."""
    whole, _, part = cell.partition(".")
    return int(whole) * 100 + int(part.ljust(2, "0") or 0)


def _csv_place(rng: np.random.Generator, stem: str) -> str:
    return draw_from(rng, (f"{stem}.csv", f"data/{stem}.csv", f"exports/{stem}_2024.csv"))


def csv_column(rng: np.random.Generator, level: int) -> Scenario:
    stem, columns = draw_from(rng, CSV_DATASETS)
    path = _csv_place(rng, stem)
    numeric = [i for i, (_, kind, _) in enumerate(columns) if kind in ("int", "dec")]
    if level == 1:
        return _csv_sum(rng, path, columns, draw_from(rng, numeric))
    return _csv_group(rng, path, columns, draw_from(rng, numeric))


def _csv_sum(rng: np.random.Generator, path: str, columns: Sequence[Column], col: int) -> Scenario:
    """Level 1: the sum of one numeric column, submitted as the answer."""
    table = _csv_table(rng, columns, draw_int(rng, 15, 40))
    name, kind, _ = columns[col]
    total = sum(_as_cents(row[col]) for row in table)
    if kind == "int":
        answer, example = str(total // 100), "`submit 1234`"
        program = f"NR > 1 {{ total += ${col + 1} }} END {{ print total }}"
    else:
        answer, example = _cents(total), "`submit 1234.50`, the exact total"
        program = f'NR > 1 {{ total += ${col + 1} }} END {{ printf "%.2f\\n", total }}'
    instruction = (
        f"`{path}` is a comma-separated file whose first line is a header. What is the sum "
        f"of its `{name}` column over all {len(table)} data rows? Reply with "
        f"`submit <total>` (for example {example})."
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, _csv_text(columns, table)),),
        solution=(f"head -n 3 {path}", f"awk -F, {quote(program)} {path}"),
        expect=(AnswerIs(answer, numeric=True),),
        answer=answer,
    )


def _csv_group(rng: np.random.Generator, path: str, columns: Sequence[Column], col: int) -> Scenario:
    """Level 2: totals per category, maybe over a filtered subset, sorted, into a file."""
    groupable = [i for i, (_, kind, _) in enumerate(columns) if kind in ("cat", "person")]
    group = draw_from(rng, groupable)
    filters = [i for i in groupable if i != group and columns[i][1] == "cat"]
    use_filter = bool(filters) and coin(rng)
    fcol = draw_from(rng, filters) if use_filter else -1
    while True:  # redraw (same stream) until the filter drops a row and keeps some
        table = _csv_table(rng, columns, draw_int(rng, 30, 70))
        if fcol < 0:
            fval = ""
            break
        fval = draw_from(rng, sorted({row[fcol] for row in table}))
        kept = sum(row[fcol] == fval for row in table)
        if 0 < kept < len(table):
            break
    name, kind, _ = columns[col]
    gname = columns[group][0]
    totals: dict[str, int] = {}
    for row in table:
        if fcol < 0 or row[fcol] == fval:
            totals[row[group]] = totals.get(row[group], 0) + _as_cents(row[col])
    show = (lambda c: str(c // 100)) if kind == "int" else _cents
    lines = [f"{key},{show(totals[key])}" for key in byte_sorted(list(totals))]
    header = f"{gname},total_{name}"
    with_header = coin(rng)
    if with_header:
        lines.insert(0, header)
    out = f"{name}_by_{gname}.csv"

    condition = f'NR > 1 && ${fcol + 1} == "{fval}"' if fcol >= 0 else "NR > 1"
    if kind == "int":
        emit = 'print k "," t[k]'
    else:
        emit = 'printf "%s,%.2f\\n", k, t[k]'
    program = f"{condition} {{ t[${group + 1}] += ${col + 1} }} END {{ for (k in t) {emit} }}"
    pipeline = f"awk -F, {quote(program)} {path} | LC_ALL=C sort -t, -k1,1"
    if with_header:
        command = f"{{ echo {quote(header)}; {pipeline}; }} > {out}"
    else:
        command = f"{pipeline} > {out}"

    counted = f" (counting only the rows whose `{columns[fcol][0]}` is `{fval}`)" if fcol >= 0 else ""
    first = (
        f"The first line of `{out}` is the header `{header}`; after it come"
        if with_header
        else f"`{out}` has no header line, only"
    )
    number = (
        "the total as a whole number"
        if kind == "int"
        else "the total written with exactly two decimals (e.g. `1234.50`)"
    )
    instruction = (
        f"`{path}` is a comma-separated file (no quoted fields) whose first line is a header. "
        f"Total its `{name}` column per `{gname}`{counted} and write the result to `{out}` "
        f"in the current directory. {first} lines of the form `<{gname}>,<total>`, one for each "
        f"`{gname}` value that has at least one counted row, with {number}, sorted by the "
        f"`{gname}` value {BYTE_ORDER}. {DONE}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, _csv_text(columns, table)),),
        solution=(f"head -n 3 {path}", command),
        expect=(FileLines(out, tuple(lines)),),
    )


FAMILY: Family = Family(
    "csv-column",
    "Extract and aggregate a CSV column.",
    {
        1: "sum of one numeric column, submitted as the answer",
        2: "total per category (optionally over rows matching a filter), byte-sorted, into a file",
    },
    csv_column,
    tags=("text",),
)
