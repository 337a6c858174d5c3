"""Comparing spreadsheet cell values the way SpreadsheetBench does, without an env.

SpreadsheetBench judges a workbook by the values of its answer cells after recalculation:
numbers are rounded to two decimals before comparing, an empty cell equals an empty
string (both are "nothing"), and values compare by type (the number 5 is not the text
"5"). Dates compare as the numbers a spreadsheet stores them as. `cells_match` is that rule for one cell and
`compare_cells` for a set of target cells, with a report of the first mismatches.

Where a task asks for a value rounded to k decimals, two decimals cannot tell 123.4568 from
123.46: `compare_cells(..., decimals={cell: k})` also requires such a cell to hold a number
with at most k decimals (`rounded_to`), so that "rounded to 2 decimals with ROUND" is checked.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

CENT = Decimal("0.01")
"""Numbers compare at two decimals, as SpreadsheetBench's check does. The rounding is a
spreadsheet's (15 significant digits, then half away from zero), not Python's binary
half-to-even: 33.075 computed two ways must not round to 33.07 one way and 33.08 the other."""


EXCEL_EPOCH = dt.datetime(1899, 12, 30)
"""Day 0 of spreadsheet date serials (from 1900-03-01 on, where Excel and LibreOffice agree)."""


def normalise(value: Any) -> Any:
    """One spelling per value: numbers rounded to 2 decimals (see CENT; bools stay bools), "" as
    None, dates and times as their spreadsheet serial numbers (a date is a number with a
    format in a spreadsheet: `=DATE(2024,5,1)` and a typed 2024-05-01 are the same value),
    text as it is."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return value
        digits = Decimal(f"{float(value):.15g}")
        rounded = float(digits.quantize(CENT, rounding=ROUND_HALF_UP) if abs(digits) < 10**15 else digits)
        return 0.0 if rounded == 0 else rounded  # -0.0 is 0
    if isinstance(value, dt.datetime):
        return normalise((value - EXCEL_EPOCH).total_seconds() / 86_400)
    if isinstance(value, dt.date):
        return normalise(float((value - EXCEL_EPOCH.date()).days))
    return value


def cells_match(got: Any, want: Any) -> bool:
    """SpreadsheetBench's cell rule: equal after `normalise`, and of the same kind."""
    got, want = normalise(got), normalise(want)
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, float) and isinstance(got, float):
        return got == want
    return type(got) is type(want) and got == want


def rounded_to(value: Any, digits: int) -> bool:
    """Whether a number has at most `digits` decimals, read as a spreadsheet shows it (15
    significant digits, so the float noise of 12.3*3 = 36.900000000000006 is no decimal).
    Anything but a number is not rounded."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    shown = Decimal(f"{float(value):.15g}")
    return shown == shown.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP) or abs(shown) >= 10**15


@dataclass(frozen=True)
class Comparison:
    matched: int
    total: int
    mismatches: tuple[tuple[str, Any, Any], ...]
    """(cell, got, wanted) of the first few cells that differ."""

    @property
    def all_match(self) -> bool:
        return self.total > 0 and self.matched == self.total


def compare_cells(
    got: Mapping[str, Any], want: Mapping[str, Any], *, report: int = 5, decimals: Mapping[str, int] | None = None
) -> Comparison:
    """Every cell of `want` against the same cell of `got` (missing: empty); a cell named in
    `decimals` must also be rounded to that many decimals (`rounded_to`)."""
    mismatches: list[tuple[str, Any, Any]] = []
    matched = 0
    decimals = decimals or {}
    for cell, wanted in want.items():
        value = got.get(cell)
        if cells_match(value, wanted) and (cell not in decimals or rounded_to(value, decimals[cell])):
            matched += 1
        elif len(mismatches) < report:
            mismatches.append((cell, value, wanted))
    return Comparison(matched, len(want), tuple(mismatches))
