"""The symbolic verifier's worker process: compares LaTeX expressions with sympy.

Symbolic algebra can take unbounded time on adversarial input, and a Python thread cannot
be interrupted (`signal.alarm` only works in the main thread). So sympy runs here, in a
separate process that the caller kills when its time budget runs out.

Protocol (one JSON object per line): the worker prints `{"ready": true}` once sympy is
imported, then answers each request `{"id": n, "jobs": [[mode, a, b], ...]}` with
`{"id": n, "results": [true | false | null, ...]}`; null means "could not parse".
Modes: "equal" (a == b), "proportional" (a = c*b for a constant c != 0: equations),
"positive" (the same with c > 0: inequalities written the same way round), "rounded"
(a is a decimal that b, a constant, correctly rounds to: `0.33` and `\\frac13`), "set"
(a and b, JSON, are the same set of reals: see `_real_set`).
"""

from __future__ import annotations

import json
import random
import re
import sys

import sympy

from rlenvs.rewards.math.latex import LatexError, TooLarge, parse_latex

TOLERANCE = 1e-9
POINTS = 6
"""Random points at which two expressions with free symbols are evaluated."""


_PARSE_ERRORS = (
    LatexError, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError, RecursionError,
)


def compare(mode: str, left: str, right: str) -> bool | None:
    try:
        if mode == "set":
            a, b = _real_set(json.loads(left)), _real_set(json.loads(right))
        else:
            a, b = parse_latex(left), parse_latex(right)
    except TooLarge:
        return False
    except _PARSE_ERRORS:
        return None
    try:
        if mode == "equal":
            return _equal(a, b)
        if mode == "rounded":
            return _rounds_to(left, b)
        if mode == "set":
            return _same_set(a, b)
        return _proportional(a, b, positive=(mode == "positive"))
    except Exception:  # noqa: BLE001 - whatever sympy raises on an answer, it was not shown equal
        return False


_RELATIONS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "!=": sympy.Ne}


def _real_set(spec: dict) -> tuple[sympy.Set, str | None]:
    """The set of reals a spec describes, and the variable it is solved for (None for
    intervals). {"intervals": [[low, high, "[)"], ...]}: their union; {"relation": "1 <= |z|
    <= 3/2"}: the values of its one variable that satisfy every link of the chain."""
    if "intervals" in spec:
        parts = [
            sympy.Interval(parse_latex(low), parse_latex(high), brackets[0] == "(", brackets[1] == ")")
            for low, high, brackets in spec["intervals"]
        ]
        return sympy.Union(*parts), None
    pieces = re.split(r"(<=|>=|!=|<|>)", spec["relation"])
    sides = [parse_latex(piece) for piece in pieces[::2]]
    symbols = set().union(*(side.free_symbols for side in sides))
    if len(symbols) != 1 or len(sides) < 2:
        raise LatexError("an inequality of one variable is needed to make a set")
    variable = symbols.pop()
    real = sympy.Symbol(variable.name, real=True)
    sides = [side.subs(variable, real) for side in sides]
    solution = sympy.S.Reals
    for left, operator, right in zip(sides, pieces[1::2], sides[1:]):
        solution = solution & sympy.solveset(_RELATIONS[operator](left, right), real, sympy.S.Reals)
    return solution, variable.name


def _same_set(a: tuple[sympy.Set, str | None], b: tuple[sympy.Set, str | None]) -> bool:
    """Equal sets; two inequalities must also be in the same variable (x < 1 is not y < 1)."""
    (first, name_a), (second, name_b) = a, b
    if name_a is not None and name_b is not None and name_a != name_b:
        return False
    return first == second or first.symmetric_difference(second).is_empty is True


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
    if a.has(sympy.Sum, sympy.Indexed) or b.has(sympy.Sum, sympy.Indexed):
        return False  # sums left symbolic are compared by form (see latex `sum`): simplify only stalls
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
