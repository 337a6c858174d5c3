"""The default change of a task's `inputs`: numbers scaled, dates moved, texts shuffled."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import Sheets, _cycle, _get, _put, _rows_of


def scale_inputs(changed: Sheets, inputs: Sequence[str], rng: np.random.Generator) -> None:
    """Numbers scaled by 0.5-1.5 (whole numbers stay whole and nonzero ones nonzero, signs
    stay), dates moved by up to 40 days, every number and date to another value than it
    had; texts moved among the column's text cells along one cycle through them all
    (`_cycle`: no text stays in its row, where `shuffle` left some); formulas and empty
    cells stay."""
    for text in inputs:
        area = parse_area(text)
        rows = _rows_of(changed, area)
        for col in range(area.left, area.right + 1):
            cells = [(r, _get(rows, r, col)) for r in range(area.top, min(area.bottom, len(rows)) + 1)]
            texts = [r for r, value in cells if isinstance(value, str) and not value.startswith("=")]
            values = [_get(rows, r, col) for r in texts]
            for r, j in zip(texts, _cycle(len(texts), rng), strict=True):
                _put(rows, r, col, values[j])
            for r, value in cells:
                if not isinstance(value, str):
                    _put(rows, r, col, _changed_number_or_date(value, rng))


TRIES = 20


def _changed_number_or_date(value: Any, rng: np.random.Generator) -> Any:
    """Another value of the same kind. Drawn again while it equals the old one: a single
    tax rate of 0.05 scaled to 0.052 and rounded to two decimals, or a quantity of 1, which
    rounds to 0 or 1, came back unchanged, so the rate or the quantity could be typed into
    the formula. Zero stays zero (its scale is unknown), and so do booleans."""
    if isinstance(value, bool) or value is None or value == 0:
        return value
    if isinstance(value, (int, float)):
        for _ in range(TRIES):
            factor = rng.uniform(0.5, 1.5)
            new = round(value * factor) if isinstance(value, int) else round(value * factor, 2)
            if new != value and new != 0:
                return new
        step = 1 if isinstance(value, int) else 0.01
        return (
            value + (step if value > 0 else -step)
            if isinstance(value, int)
            else round(value + (step if value > 0 else -step), 2)
        )
    if isinstance(value, dt.date):
        return value + dt.timedelta(days=int(rng.choice([*range(-40, 0), *range(1, 41)])))
    return value
