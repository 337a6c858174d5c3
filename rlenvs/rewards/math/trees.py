"""Expression trees up to rewrites that simplify nothing, for telling a restated question
from an answer. Runs in the symbolic worker (it builds sympy objects).

"Simplify `\\sqrt{50} + \\sqrt{18}`" has the value of its answer `8\\sqrt{2}`, so an equality
check alone pays for copying the question into the box, or for rewriting it a little:
`\\sqrt{18} + \\sqrt{50}`, `\\sqrt{50}+\\sqrt{18}+0`, `1\\cdot(\\sqrt{50}+\\sqrt{18})`,
`\\sqrt{50}+\\sqrt{2\\cdot 9}`. `canonical` reads an expression *without* evaluating it
(sympy's `evaluate(False)`) and then undoes exactly those rewrites: operands of `+` and `*`
in any order and grouping, the identities `+0`, `*1`, `^1`, and arithmetic on plain numbers
(`2\\cdot 9` is 18, `\\frac{4}{2}` is 2). Nothing else is simplified, so `5\\sqrt{2}+3\\sqrt{2}`
is not `\\sqrt{50}+\\sqrt{18}`.

`restates(answer, gold, question)` is true when the answer (already known to equal the
gold in value) is, by that reading, one of the question's expressions, or breaks a rule of
simplest form that the gold keeps (`form_faults`: like terms not combined, a common factor
not taken out, a function of constants left unevaluated, a fraction not in lowest terms, a
square factor under a root, a root in a denominator). MATH's answers are in simplest form,
and MATH-v0's prompt asks for it. An answer that reads as the gold itself never restates.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import sympy

from rlenvs.rewards.math.latex import parse_latex

Tree = tuple
"""("num", Fraction) | ("sym", name) | (operation, (children...))"""

MAX_FOLDED_EXPONENT = 64
"""Powers of plain numbers folded into one number only up to this exponent (`2^{10}` is
1024; a larger power stays a power, as written)."""


def canonical_latex(text: str) -> Tree:
    """The canonical tree of a LaTeX expression (raises `LatexError` if it does not parse)."""
    with sympy.evaluate(False):
        expression = parse_latex(text)
    return canonical(expression)


def canonical(expression: sympy.Basic) -> Tree:
    if expression.is_Rational:
        return ("num", Fraction(int(expression.p), int(expression.q)))
    if expression.is_Symbol:
        return ("sym", expression.name)
    children = [canonical(argument) for argument in expression.args]
    if isinstance(expression, (sympy.Add, sympy.Mul)):
        return _associative(type(expression).__name__, children)
    if isinstance(expression, sympy.Pow):
        base, exponent = children
        if exponent == ("num", Fraction(1)):
            return base
        if base[0] == "num" and exponent[0] == "num" and exponent[1].denominator == 1:
            power = int(exponent[1])
            if abs(power) <= MAX_FOLDED_EXPONENT and (base[1] != 0 or power > 0):
                return ("num", base[1] ** power)
        return ("Pow", (base, exponent))
    return (type(expression).__name__, tuple(children))


def _associative(operation: str, children: list[Tree]) -> Tree:
    """`+` or `*` flattened, its plain numbers folded into one, identities dropped, sorted."""
    flat: list[Tree] = []
    for child in children:
        flat.extend(child[1] if child[0] == operation else (child,))
    identity = Fraction(0) if operation == "Add" else Fraction(1)
    folded = identity
    others = []
    for child in flat:
        if child[0] == "num":
            folded = folded + child[1] if operation == "Add" else folded * child[1]
        else:
            others.append(child)
    if operation == "Mul" and folded == 0:
        return ("num", Fraction(0))
    parts = sorted(others, key=repr) + ([("num", folded)] if folded != identity else [])
    if not parts:
        return ("num", identity)
    if len(parts) == 1:
        return parts[0]
    return (operation, tuple(parts))


def operations(tree: Tree) -> int:
    """How many operations the tree has (its inner nodes, an n-ary sum counted n - 1 times)."""
    if tree[0] in ("num", "sym") or not tree[1]:
        return 0  # a number, a variable or a constant such as pi
    children = tree[1]
    own = len(children) - 1 if tree[0] in ("Add", "Mul") else 1
    return own + sum(operations(child) for child in children)


_EVALUATE = (
    sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc, sympy.asin, sympy.acos, sympy.atan,
    sympy.sinh, sympy.cosh, sympy.tanh, sympy.log, sympy.exp, sympy.factorial, sympy.Abs,
)


def restates(answer: str, gold: str, question: list[str], equal: Callable[[sympy.Expr, sympy.Expr], bool]) -> bool:
    """Whether `answer`, equal to `gold` in value, is no answer in the form asked (module
    docstring): it breaks a rule of simplest form that the gold keeps (`form_faults`), or
    it is one of the `question` expressions up to rewrites that simplify nothing.
    `equal(a, b)` decides exact equality of two sympy values: an answer that does not read
    as an expression of the gold's value (words, units) is not judged here."""
    with sympy.evaluate(False):
        written, written_gold = parse_latex(answer), parse_latex(gold)
    if not equal(parse_latex(answer), parse_latex(gold)):
        return False
    if form_faults(written) - form_faults(written_gold):
        return True
    tree, gold_tree = canonical(written), canonical(written_gold)
    if tree == gold_tree or operations(tree) == 0:
        return False
    for expression in question:
        try:
            if canonical_latex(expression) == tree:
                return True
        except (ValueError, TypeError, RecursionError):
            continue
    return False


def form_faults(written: sympy.Basic) -> set[str]:
    """The rules of simplest form an expression, as written, breaks:

    - "unevaluated": a function of constants (`\\cos\\frac{\\pi}{6}`, `\\log 8`, `4!`, `|-3|`);
    - "lowest terms": a fraction of integers with a common factor (`\\frac{36}{99}`);
    - "square factor": a square root of an integer with a square factor (`\\sqrt{117}`);
    - "radical denominator": a root in a denominator (`\\frac{1}{\\sqrt{3}}`);
    - "like terms": a sum with two terms that differ only by a number (`6 + 12i - 3i`);
    - "like factors": a product with two powers of one base (`\\frac{40r^9}{8r^4}`, `\\sqrt2\\sqrt2`);
    - "common factor": a sum whose terms all share a factor (`a(b+2) + 5(b+2)`).
    """
    return _written_faults(written) | _tree_faults(canonical(written))


def _written_faults(expression: sympy.Basic) -> set[str]:
    """The faults only the unevaluated expression shows (numbers are folded in the tree)."""
    faults: set[str] = set()
    if isinstance(expression, _EVALUATE) and not expression.free_symbols:
        faults.add("unevaluated")
    if isinstance(expression, sympy.Mul):
        numerators = [a for a in expression.args if a.is_Integer and a != 0]
        denominators = [a.base for a in expression.args if a.is_Pow and a.exp == -1 and a.base.is_Integer]
        if any(sympy.igcd(int(n), int(d)) > 1 for n in numerators for d in denominators):
            faults.add("lowest terms")
    if isinstance(expression, sympy.Pow):
        base, exponent = expression.args
        if base.is_Integer and int(base) > 1 and exponent == sympy.Rational(1, 2):
            root = sympy.sqrt(int(base))
            if not root.is_Integer and not (root.is_Pow and root.base == base):
                faults.add("square factor")
        if exponent.is_negative and _has_radical(base):
            faults.add("radical denominator")
    for argument in expression.args:
        faults |= _written_faults(argument)
    return faults


def _has_radical(expression: sympy.Basic) -> bool:
    if isinstance(expression, sympy.Pow) and expression.exp.is_Rational and not expression.exp.is_Integer:
        return True
    return any(_has_radical(argument) for argument in expression.args)


def _tree_faults(tree: Tree) -> set[str]:
    faults: set[str] = set()
    if tree[0] in ("num", "sym"):
        return faults
    children = tree[1]
    if tree[0] == "Add":
        keys = [_without_number(term) for term in children]
        if len(keys) != len(set(keys)):
            faults.add("like terms")
        shared = set.intersection(*(_factors(term) for term in children))
        if shared:
            faults.add("common factor")
    if tree[0] == "Mul":
        bases = [_base(factor) for factor in _spread(children)]
        bases = [base for base in bases if base is not None]
        if len(bases) != len(set(bases)):
            faults.add("like factors")
    for child in children:
        faults |= _tree_faults(child)
    return faults


def _without_number(term: Tree) -> Tree:
    """A term with its numeric coefficient dropped: `12i` and `-3i` are both `i`."""
    if term[0] == "Mul":
        rest = tuple(child for child in term[1] if child[0] != "num")
        return rest[0] if len(rest) == 1 else ("Mul", rest)
    return ("num",) if term[0] == "num" else term


def _factors(term: Tree) -> set[Tree]:
    """A term's factors other than numbers."""
    factors = term[1] if term[0] == "Mul" else (term,)
    return {factor for factor in factors if factor[0] != "num"}


def _spread(factors: tuple) -> list[Tree]:
    """Factors with a power of a product spread over it: `(8r^4)^{-1}` is `8^{-1}`, `r^{-4}`."""
    spread: list[Tree] = []
    for factor in factors:
        if factor[0] == "Pow" and factor[1][0][0] == "Mul" and factor[1][1][0] == "num":
            spread.extend(("Pow", (inner, factor[1][1])) for inner in factor[1][0][1])
        else:
            spread.append(factor)
    return spread


def _base(factor: Tree) -> Tree | None:
    """What a factor is a power of; None for a plain number (`2` in `2\\sqrt2` is no power of 2)."""
    if factor[0] == "Pow":
        base, exponent = factor[1]
        if base[0] == "num" and exponent[0] == "num" and exponent[1].denominator == 1:
            return None  # `2^{-1}`, a number's inverse: part of a fraction, not a radical
        return _base(base) if base[0] == "Pow" else base  # `(r^4)^{-1}` is a power of r
    return None if factor[0] == "num" else factor
