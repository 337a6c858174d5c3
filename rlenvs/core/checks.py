"""Argument checks that name the argument, what it must be and what it got.

Constructors and entry points check their arguments up front, so a wrong one fails where it
is passed, not deep in an episode. `bool` is an `int` to Python, and `max_turns=True` is
almost always a slip, so an int check refuses it; numpy's ints pass (seeds and indices
often come from arrays).
"""

from __future__ import annotations

import math
import numbers
from typing import TypeGuard


def is_int(value: object) -> TypeGuard[int]:
    """An int (Python's or numpy's, which compare as ints do), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(
    name: str,
    value: object,
    *,
    at_least: int | None = None,
    at_most: int | None = None,
    or_none: str | None = None,
    meaning: str = "",
) -> None:
    """ValueError unless `value` is an int in `at_least..at_most`; with `or_none`, None is
    allowed too, and the message says what it means (`or_none="no limit"`); `meaning` says
    what the number is (`"0: no limit"`)."""
    if value is None and or_none is not None:
        return
    if is_int(value) and (at_least is None or value >= at_least) and (at_most is None or value <= at_most):
        return
    if at_least is not None and at_most is not None:
        rule = f"an int in {at_least}..{at_most}"
    elif at_least is not None:
        rule = f"an int >= {at_least}"
    elif at_most is not None:
        rule = f"an int <= {at_most}"
    else:
        rule = "an int"
    if meaning:
        rule += f" ({meaning})"
    if or_none is not None:
        rule += f" or None ({or_none})"
    raise ValueError(f"{name} must be {rule}, got {value!r}")


def check_flag(name: str, value: object) -> None:
    """TypeError unless `value` is True or False (not 1, "yes" or None)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")


def check_seconds(name: str, value: object) -> None:
    """ValueError unless `value` is a finite number of seconds > 0, or None (no limit)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a number of seconds > 0 or None (no limit), got {value!r}")


def check_share(name: str, value: object, *, meaning: str) -> None:
    """ValueError unless `value` is a real number in 0..1; `meaning` says what it is a share of."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= float(value) <= 1:
        raise ValueError(f"{name} must be a number from 0 to 1 ({meaning}), got {value!r}")
