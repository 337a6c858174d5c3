"""Tables of drawn rows for the table families, from column specs (header, kind, argument),
and the dates they hold."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rlenvs.core.draw import draw_distinct, draw_from, draw_int, draw_sample
from rlenvs.envs.spreadsheet.families.table_pools import _person


def _date(rng: np.random.Generator, first_year: int, last_year: int) -> dt.date:
    """A date on day 1-28 of a month, so that month arithmetic has no month-end cases."""
    return dt.date(draw_int(rng, first_year, last_year), draw_int(rng, 1, 12), draw_int(rng, 1, 28))


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
