"""Volatile functions: RAND, RANDBETWEEN, NOW, TODAY.

Their value is not a function of the workbook: a new random draw, or the clock, at every
recalculation (as in Excel and LibreOffice, where they recompute at every change). Here a
recalculation is every edit, since an edit drops the workbook's cached values
(`calc.Calculator`); reading a cell again without an edit gives the same value.

So that they cannot fake a check, the workbook marks every cell whose value was computed
from one of them, directly or through other cells, written references or OFFSET and
INDIRECT alike (`Workbook.depends_on_volatile`), and the env refuses such a cell wherever a
value is judged: a draw that happens to match, or a formula that changes between the
check's recalculations, scores 0 (a task's answer never depends on chance or on the day it
is checked). RAND and RANDBETWEEN draw from the workbook's own generator, which the env
seeds from the episode's seed, so that an episode replays the same.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from rlenvs.workbook.formulas.functions.base import function, num
from rlenvs.workbook.values import NUM, EvalError, date_to_serial


@function("RAND", max_args=0, ctx=True, volatile=True)
def rand(ctx: Any) -> float:
    """A uniform random number in [0, 1), drawn again at every recalculation."""
    return ctx.rng.random()


@function("RANDBETWEEN", min_args=2, max_args=2, ctx=True, volatile=True)
def randbetween(ctx: Any, bottom: Any, top: Any) -> float:
    """A uniform random whole number from bottom (rounded up) to top (rounded down), drawn
    again at every recalculation; #NUM! when none lies between them."""
    low, high = math.ceil(num(bottom)), math.floor(num(top))
    if low > high:
        raise EvalError(NUM)
    return float(ctx.rng.randint(low, high))


@function("NOW", max_args=0, volatile=True)
def now() -> float:
    """The local date and time as a serial (days since 1899-12-30, the time a fraction)."""
    return date_to_serial(dt.datetime.now())


@function("TODAY", max_args=0, volatile=True)
def today() -> float:
    """The local date as a serial."""
    return date_to_serial(dt.date.today())
