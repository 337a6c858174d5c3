"""The default change of a task's `inputs`: numbers scaled, dates moved, texts shuffled."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import Sheets, _get, _put, _rows_of


def scale_inputs(changed: Sheets, inputs: Sequence[str], rng: np.random.Generator) -> None:
    """Numbers scaled by 0.5-1.5 (whole numbers stay whole and nonzero ones nonzero, signs
    stay), dates moved by up to 40 days, texts shuffled among the column's text cells;
    formulas and empty cells stay."""
    for text in inputs:
        area = parse_area(text)
        rows = _rows_of(changed, area)
        for col in range(area.left, area.right + 1):
            cells = [(r, _get(rows, r, col)) for r in range(area.top, min(area.bottom, len(rows)) + 1)]
            texts = [r for r, value in cells if isinstance(value, str) and not value.startswith("=")]
            shuffled = [_get(rows, r, col) for r in texts]
            rng.shuffle(shuffled)
            for r, value in zip(texts, shuffled, strict=True):
                _put(rows, r, col, value)
            for r, value in cells:
                if not isinstance(value, str):
                    _put(rows, r, col, _changed_number_or_date(value, rng))


def _changed_number_or_date(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return round(value * rng.uniform(0.5, 1.5)) or value
    if isinstance(value, float):
        return round(value * rng.uniform(0.5, 1.5), 2)
    if isinstance(value, dt.date):
        return value + dt.timedelta(days=int(rng.integers(-40, 41)))
    return value
