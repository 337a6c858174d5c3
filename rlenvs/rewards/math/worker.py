"""The symbolic verifier's worker process: compares LaTeX expressions with sympy.

Symbolic algebra can take unbounded time on adversarial input, and a Python thread cannot
be interrupted (`signal.alarm` only works in the main thread). So sympy runs here, in a
separate process that the caller kills when its time budget runs out.

Protocol (one JSON object per line): the worker prints `{"ready": true}` once sympy is
imported, then answers each request `{"id": n, "jobs": [[mode, a, b], ...]}` with
`{"id": n, "results": [true | false | null, ...]}`; null means "could not parse".
Modes: "equal" (a == b), "proportional" (a = c*b for a constant c != 0: equations),
"positive" (the same with c > 0: inequalities written the same way round), "rounded"
(a is a decimal that b, a constant, correctly rounds to: `0.33` and `\\frac13`).
"""

from __future__ import annotations

import json
import random
import sys

import sympy

from rlenvs.rewards.math.latex import LatexError, TooLarge, parse_latex

TOLERANCE = 1e-9
POINTS = 6
"""Random points at which two expressions with free symbols are evaluated."""


def compare(mode: str, left: str, right: str) -> bool | None:
    try:
        a, b = parse_latex(left), parse_latex(right)
    except TooLarge:
        return False
    except (LatexError, TypeError, ValueError, ZeroDivisionError, AttributeError, RecursionError):
        return None
    try:
        if mode == "equal":
            return _equal(a, b)
        if mode == "rounded":
            return _rounds_to(left, b)
        return _proportional(a, b, positive=(mode == "positive"))
    except (TypeError, ValueError, ZeroDivisionError, AttributeError, RecursionError, OverflowError):
        return False


def _equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    if a == b:
        return True
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    if not symbols:
        return _close(a, b)
    agreed = 0
    for point in _points(symbols):
        va, vb = _value(a, point), _value(b, point)
        if va is None or vb is None:
            continue
        if not _numbers_close(va, vb):
            return False
        agreed += 1
    if agreed >= POINTS // 2:
        return True
    return sympy.simplify(a - b) == 0


def _rounds_to(decimal: str, value: sympy.Expr) -> bool:
    if value.free_symbols:
        return False
    digits = len(decimal.partition(".")[2])
    stated = sympy.Rational(decimal)
    return abs(complex(value.evalf(30)) - complex(stated)) <= 0.5 * 10.0**-digits * (1 + 1e-9)


def _proportional(a: sympy.Expr, b: sympy.Expr, positive: bool) -> bool:
    """a == c*b for one constant c (nonzero; positive if asked), checked at random points."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    ratios = []
    for point in _points(symbols or [sympy.Symbol("_")]):
        va, vb = _value(a, point), _value(b, point)
        if va is None or vb is None or abs(vb) < 1e-12:
            continue
        ratios.append(va / vb)
    if len(ratios) < 2:
        return False
    first = ratios[0]
    if abs(first) < 1e-12 or (positive and (abs(first.imag) > 1e-12 or first.real <= 0)):
        return False
    return all(_numbers_close(r, first) for r in ratios[1:])


def _points(symbols: list[sympy.Symbol]) -> list[dict]:
    rng = random.Random(20261129)  # fixed: the same comparison gives the same verdict
    return [{s: sympy.Float(rng.uniform(0.3, 2.7), 30) for s in symbols} for _ in range(POINTS)]


def _value(expression: sympy.Expr, point: dict) -> complex | None:
    value = expression.evalf(30, subs=point)
    if not value.is_number or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    try:
        return complex(value)
    except (TypeError, ValueError):
        return None


def _close(a: sympy.Expr, b: sympy.Expr) -> bool:
    if a.has(sympy.oo, -sympy.oo, sympy.zoo) or b.has(sympy.oo, -sympy.oo, sympy.zoo):
        return sympy.simplify(a - b) == 0 if not (a.is_infinite and b.is_infinite) else a == b
    va, vb = complex(a.evalf(30)), complex(b.evalf(30))
    return _numbers_close(va, vb)


def _numbers_close(x: complex, y: complex) -> bool:
    return abs(x - y) <= TOLERANCE * max(1.0, abs(x), abs(y))


def main() -> None:
    sys.setrecursionlimit(5000)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        results = [compare(*job) for job in request["jobs"]]
        print(json.dumps({"id": request["id"], "results": results}), flush=True)


if __name__ == "__main__":
    main()
