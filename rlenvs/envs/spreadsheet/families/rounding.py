"""ROUND as a spreadsheet does it, for the formula families' `truth`, and drawing their data
away from its ties.

`truth` rounds on 15 significant digits half away from zero (`excel_round`); sums are
exactly rounded (`math.fsum`, as the engine's SUM family adds) and products are taken in the
reference formula's order. The starting data are drawn so that no expected number sits on a
rounding tie (x.xx5 where two decimals are compared, or where ROUND cuts): `_built` draws
again until none does."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from rlenvs.envs.spreadsheet.tasks import Scenario


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


def _built(build: Callable[[], Scenario | None], tries: int = 200) -> Scenario:
    """`build()` again until no expected number sits on a rounding tie (all but never more
    than a couple of tries); a build returns None for a tie it found in its own terms."""
    for _ in range(tries):
        scenario = build()
        if scenario is not None and _tie_free(scenario.expected):
            return scenario
    raise RuntimeError("could not draw tie-free data")
