"""Steps on text columns: texts made messy again, and texts the task never showed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.perturb.base import Change, Sheets, Starting, _get, _put, _rows_of


@dataclass(frozen=True)
class Remap(Change):
    """Each non-empty cell of the area through `function(rng, value, **keywords)`: a
    module-level function, so that a task still pickles and two tasks compare equal. With
    `before`, the function also gets the starting data's value of the same cell
    (`before=...`): what a formula written per row for that row's starting text relies on
    (a row whose phone had no brackets then meets brackets)."""

    function: Callable[..., Any] | None = None
    keywords: tuple[tuple[str, Any], ...] = ()
    before: bool = False

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        if self.function is None:
            raise ValueError(f"Remap({self.area!r}) needs a function: Remap(area, function, keywords)")
        area = parse_area(self.area)
        rows, starting = _rows_of(changed, area), _rows_of(original, area)
        for r in range(area.top, area.bottom + 1):
            for c in range(area.left, area.right + 1):
                value = _get(rows, r, c)
                if value is not None:
                    extra = {"before": _get(starting, r, c)} if self.before else {}
                    _put(rows, r, c, self.function(rng, value, **dict(self.keywords), **extra))


def _same_text(text: str) -> str:
    """A text as a case-blind lookup matches it: case and spaces ignored."""
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class FreshTexts(Change):
    """Every text of the area replaced by one the task never showed: `draw(rng, value)`, a
    module-level function of the family, gives a text of the same kind (a name, a code, an
    email, a phone), drawn again while it is the same as a text of the area on the starting
    data or one already put in: the same by `same` (a module-level function too), by
    default equal ignoring case and spaces; for phones, the same digits. Shuffling and
    re-casing keep the same set of texts, so the cleaned texts typed into a table and
    fetched by a case-blind lookup (VLOOKUP or MATCH, which ignore case) would pass; new
    texts are not in that table."""

    draw: Callable[..., str] | None = None
    tries: int = 200
    same: Callable[[str], str] = _same_text

    def apply(self, changed: Sheets, original: Starting, rng: np.random.Generator) -> None:
        if self.draw is None:
            raise ValueError(f"FreshTexts({self.area!r}) needs a draw function: FreshTexts(area, draw)")
        area = parse_area(self.area)
        rows, starting = _rows_of(changed, area), _rows_of(original, area)
        cells = [(r, c) for r in range(area.top, area.bottom + 1) for c in range(area.left, area.right + 1)]
        seen = {self.same(v) for r, c in cells if isinstance(v := _get(starting, r, c), str)}
        for r, c in cells:
            value = _get(rows, r, c)
            if not isinstance(value, str):
                continue
            for _ in range(self.tries):
                new = self.draw(rng, value)
                if self.same(new) not in seen:
                    break
            else:
                raise RuntimeError(
                    f"FreshTexts({self.area!r}): {self.tries} draws gave no new text; widen the pool of {self.draw.__name__}"
                )
            seen.add(self.same(new))
            _put(rows, r, c, new)
