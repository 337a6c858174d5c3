"""The spreadsheet functions, by family; importing this package fills `FUNCTIONS`.

`FUNCTIONS` maps each upper-case name to a `FunctionSpec` whose `impl` has a docstring;
see `base` for how arguments arrive and how to add a function.
"""

from __future__ import annotations

from rlenvs.workbook.formulas.functions import (  # noqa: F401  (registration)
    address,
    conditional,
    dates,
    logical,
    lookup,
    numeric,
    stats,
    subtotal,
    text,
    volatile,
)
from rlenvs.workbook.formulas.functions.base import (
    FUNCTIONS,
    FunctionSpec,
    function,
)

__all__ = ["FUNCTIONS", "FunctionSpec", "function"]
