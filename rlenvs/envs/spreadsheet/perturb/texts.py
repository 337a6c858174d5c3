"""Steps on text columns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import Change, _get, _put, _rows_of


@dataclass(frozen=True)
class Remap(Change):
    """Each non-empty cell of the area through `function(rng, value, **keywords)`: a
    module-level function, so that a task still pickles and two tasks compare equal."""

    function: Callable[..., Any] | None = None
    keywords: tuple[tuple[str, Any], ...] = ()

    def apply(self, changed, original, rng):
        if self.function is None:
            raise ValueError(f"Remap({self.area!r}) needs a function: Remap(area, function, keywords)")
        area = parse_area(self.area)
        rows = _rows_of(changed, area)
        for r in range(area.top, area.bottom + 1):
            for c in range(area.left, area.right + 1):
                value = _get(rows, r, c)
                if value is not None:
                    _put(rows, r, c, self.function(rng, value, **dict(self.keywords)))
