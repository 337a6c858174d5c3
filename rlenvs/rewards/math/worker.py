"""The symbolic verifier's worker process: compares LaTeX expressions with sympy.

Symbolic algebra can take unbounded time on adversarial input, and a Python thread cannot
be interrupted (`signal.alarm` only works in the main thread). So sympy runs here, in a
separate, single-threaded process whose main thread *can* be interrupted: each request
carries a budget in CPU seconds, enforced with a CPU-time timer (`ITIMER_PROF`). CPU time
is the work a check does, whatever else the machine is doing, so a verdict is the same
alone and inside a batch of 64 slow checks on two cores. (The caller kills a worker only
as a last resort, when it overruns its wall-clock safety limit.)

Protocol (one JSON object per line): the worker prints `{"ready": true}` once sympy is
imported, then answers each request `{"id": n, "budget": seconds, "jobs": [[mode, a, b],
...]}` with `{"id": n, "results": [true | false | null, ...], "cpu": seconds}`; null means
"could not parse"; a job the budget ran out on is false. Modes: "equal" (a == b),
"proportional" (a = c*b for a constant c != 0: equations), "positive" (the same with
c > 0: inequalities written the same way round), "rounded" (a is a decimal that b, a
constant, correctly rounds to: `0.33` and `\\frac13`), "set" (a and b, JSON, are the same
set of reals: see `_real_set`), "restates" (the answer a restates one of the question's
expressions; b is JSON `{"gold": ..., "question": [...]}`: see `trees`).

Equality is exact where both sides are exact. Constants are equal only when sympy proves
their difference is zero (`2^{64}` is not `2^{64}+1`, `\\pi` is not a close fraction, `\\sqrt2`
is not `1.41421356237`: a decimal is the exact rational it writes); numeric evaluation only
*refutes* equality of constants, never decides it. Rational functions are compared exactly
(`cancel`). Other expressions with variables are compared at sample points, at 60 digits
with a 1e-40 tolerance; the points include negatives, values near zero and large values, so
that `\\sqrt{x^2}` and `x`, or `|x|` and `x`, differ.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import time
from fractions import Fraction

import mpmath  # type: ignore[import-untyped]
import sympy

from rlenvs.rewards.math.latex import LatexError, TooLarge, parse_latex
from rlenvs.rewards.math.trees import restates

DIGITS = 60
"""Significant digits of numeric evaluation."""
mpmath.mp.dps = DIGITS
TOLERANCE = mpmath.mpf("1e-40")
"""Relative difference under which two sampled values agree (far below any decimal a
reply can state, far above the error of a 60-digit evaluation)."""
SAMPLE_POINTS = tuple(
    sympy.Rational(p)
    for p in ("-37/3", "-27/10", "-13/16", "-1/97", "3/1000", "7/19", "21/17", "23/10", "53/7", "1009/3")
)
"""Where expressions with variables are evaluated: negatives, values near zero, large
values (so `|x|` and `x`, `\\sqrt{x^2}` and `x` differ), never a small integer."""
MIN_AGREEING_POINTS = 5
"""Sample points (of those where both sides have a finite value) that must agree."""


class OutOfBudget(BaseException):
    """The request's CPU budget ran out (a BaseException, so sympy's `except Exception`
    clauses do not swallow it)."""


_PARSE_ERRORS = (
    LatexError,
    TypeError,
    ValueError,
    KeyError,
    IndexError,
    ZeroDivisionError,
    AttributeError,
    RecursionError,
)


def compare(mode: str, left: str, right: str) -> bool | None:
    if mode == "restates":
        spec = json.loads(right)
        try:
            return restates(left, spec["gold"], spec["question"], frozenset(spec.get("asks", ())))
        except TooLarge:
            return False
        except _PARSE_ERRORS:
            return None
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
    except Exception:
        return False


_RELATIONS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "!=": sympy.Ne}


def _real_set(spec: dict) -> tuple[sympy.Set, str | None]:
    """The set of reals a spec describes, and the variable it is solved for (None for
    intervals). {"intervals": [[low, high, "[)"], ...]}: their union; {"relation": "1 <= |z|
    <= 3/2"}: the values of its one variable that satisfy every link of the chain;
    {"union": [spec, ...]}: the union of those (`x < 2 or x > 3`); {"intersection": [...]}:
    their intersection (`x >= -2 and x <= 7`)."""
    if "union" in spec or "intersection" in spec:
        combine = "union" if "union" in spec else "intersection"
        parts = [_real_set(part) for part in spec[combine]]
        names = {name for _, name in parts if name is not None}
        if len(names) > 1:
            raise LatexError(f"an {combine} of inequalities in different variables")
        sets = [part for part, _ in parts]
        return (sympy.Union(*sets) if combine == "union" else sympy.Intersection(*sets)), (
            names.pop() if names else None
        )
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
        return constants_equal(a, b)
    if a.has(sympy.Sum, sympy.Indexed) or b.has(sympy.Sum, sympy.Indexed):
        return False  # sums left symbolic are compared by form (see latex `sum`): simplify only stalls
    if _rational_functions(a, b):
        return sympy.cancel(a - b) == 0
    agreed = 0
    for point in _points(symbols):
        va, vb = _value(a, point), _value(b, point)
        if va is None or vb is None:
            continue
        if not _agree(va, vb):
            return False
        agreed += 1
    if agreed >= MIN_AGREEING_POINTS:
        return True
    return sympy.simplify(a - b) == 0


def constants_equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Exact equality of two constants: rationals compare as rationals; anything else must
    agree numerically (which can only refute) and then have a difference sympy proves zero."""
    if a.is_Rational and b.is_Rational:
        return a == b
    if a.has(sympy.oo, -sympy.oo, sympy.zoo) or b.has(sympy.oo, -sympy.oo, sympy.zoo):
        return a == b if (a.is_infinite and b.is_infinite) else sympy.simplify(a - b) == 0
    va, vb = _number(a), _number(b)
    if va is None or vb is None or not _agree(va, vb):
        return False
    difference = a - b
    if difference == 0 or sympy.simplify(difference) == 0:
        return True
    if difference.is_algebraic:
        return sympy.minimal_polynomial(difference, sympy.Dummy("t")).is_Symbol
    return difference.equals(0) is True


def _rational_functions(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Both are ratios of polynomials with rational coefficients, so `cancel` decides exactly."""
    return all(e.is_rational_function() and all(c.is_Rational for c in e.atoms(sympy.Number)) for e in (a, b))


def _rounds_to(decimal: str, value: sympy.Expr) -> bool:
    if value.free_symbols:
        return False
    digits = len(decimal.partition(".")[2])
    stated = Fraction(decimal.strip())
    actual = _number(value)
    if actual is None or actual.imag != 0:
        return False
    # |value - stated| <= half a unit of the last stated digit, decided on 60 digits.
    error = abs(actual.real - mpmath.mpf(stated.numerator) / stated.denominator)
    return error * 10**digits <= mpmath.mpf(1) / 2


def _proportional(a: sympy.Expr, b: sympy.Expr, positive: bool) -> bool:
    """a == c*b for one constant c (nonzero; positive if asked): exactly for rational
    functions, else at the sample points."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    if _rational_functions(a, b):
        if b == 0:
            return False
        ratio = sympy.cancel(a / b)
        if ratio.free_symbols or ratio == 0:
            return False
        return not positive or bool(ratio > 0)
    ratios = []
    for point in _points(symbols or [sympy.Symbol("_")]):
        va, vb = _value(a, point), _value(b, point)
        if va is None or vb is None or vb == 0:
            continue
        ratios.append(va / vb)
    if len(ratios) < MIN_AGREEING_POINTS:
        return False
    first = ratios[0]
    if first == 0 or (positive and (first.imag != 0 or first.real <= 0)):
        return False
    return all(_agree(r, first) for r in ratios[1:])


def _points(symbols: list[sympy.Symbol]) -> list[dict]:
    """One point per sample value; with several variables each gets a different value."""
    count = len(SAMPLE_POINTS)
    return [{s: SAMPLE_POINTS[(i + 3 * k) % count] for k, s in enumerate(symbols)} for i in range(count)]


def _value(expression: sympy.Expr, point: dict) -> mpmath.mpc | None:
    return _number(expression.subs(point))


def _number(value: sympy.Expr) -> mpmath.mpc | None:
    """The value at 60 digits, or None where it is not a finite number."""
    evaluated = value.evalf(DIGITS)
    if not evaluated.is_number or evaluated.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    try:
        number = mpmath.mpc(evaluated._to_mpmath(mpmath.mp.prec))
    except (TypeError, ValueError, AttributeError):
        return None
    return number if mpmath.isfinite(number) else None


def _agree(x: mpmath.mpc, y: mpmath.mpc) -> bool:
    return abs(x - y) <= TOLERANCE * max(1, abs(x), abs(y))


def _out_of_budget(_signum: int, _frame: object) -> None:
    # Re-armed in case a bare `except:` inside sympy swallows the first one.
    signal.setitimer(signal.ITIMER_PROF, 0.01)
    raise OutOfBudget


def answer(request: dict) -> dict:
    """Run a request's jobs within its CPU budget; jobs after the budget ran out are False."""
    started = time.process_time()
    results: list[bool | None] = []
    jobs = request["jobs"]
    try:
        signal.setitimer(signal.ITIMER_PROF, max(float(request["budget"]), 1e-6))
        for job in jobs:
            results.append(compare(*job))
    except OutOfBudget:
        pass
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    results += [False] * (len(jobs) - len(results))
    return {"id": request["id"], "results": results, "cpu": time.process_time() - started}


def main() -> None:
    sys.setrecursionlimit(5000)
    signal.signal(signal.SIGPROF, _out_of_budget)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        print(json.dumps(answer(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
