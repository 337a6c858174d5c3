"""The generated tests as the test runner runs them, and how they compare answers.

A generated test is one line, `assert _generated_same(candidate(args), expected)`, over
literals only. `_generated_same` is `==` except that floats compare to a relative 1e-6 (the
reference's float is one correct rounding, not the only one) and containers compare item by
item under the same rule. Its source goes into the test program's set-up (`SAME_SOURCE`) and
the build compares with the same function, so the tests chosen at build time judge the
reference and its mutants exactly as they will judge a reply.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable


def _generated_same(got: object, expected: object) -> bool:
    import math

    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-9) or (got != got and expected != expected)
    if isinstance(expected, (list, tuple)):
        return (
            type(got) is type(expected)
            and len(got) == len(expected)
            and all(_generated_same(a, b) for a, b in zip(got, expected))
        )
    if isinstance(expected, dict):
        return (
            type(got) is dict
            and got.keys() == expected.keys()
            and all(_generated_same(got[key], expected[key]) for key in expected)
        )
    return got == expected


close_enough = _generated_same
SAME_SOURCE = inspect.getsource(_generated_same)


def generated_test(name: str, args: tuple, expected: object, wrapper: str = "{}") -> str:
    """The test source: `name` is what the task's own tests call the solution, `wrapper` what
    they put around the call (`inputs.call_wrapper`), `expected` the wrapped answer."""
    call = wrapper.format(f"{name}({', '.join(repr(arg) for arg in args)})")
    return f"assert {_generated_same.__name__}({call}, {expected!r})"


def wrapped(wrapper: str) -> Callable[[object], object]:
    """The function `wrapper` applies (its names are `inputs.WRAPPERS`' built-ins, its other
    arguments literals: a template read from a task's tests, checked there)."""
    return eval(f"lambda _value: {wrapper.format('_value')}", {"__builtins__": builtins})
