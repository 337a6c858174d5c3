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
gold in value) is, by that reading, one of the question's expressions; or, for constants,
has more operations than both the gold and a question expression of the same value
(`\\sqrt{50}+\\sqrt{18}+\\sqrt{2}-\\sqrt{2}`: padding is not simplifying). An answer that
reads as the gold itself never restates.
"""

from __future__ import annotations

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


def restates(answer: str, gold: str, question: list[str], equal_values) -> bool:
    """Whether `answer` restates one of the `question` expressions (module docstring).
    `equal_values(a, b)` decides exact equality of two constant sympy values."""
    tree, gold_tree = canonical_latex(answer), canonical_latex(gold)
    if tree == gold_tree or operations(tree) == 0:
        return False
    value = parse_latex(answer)
    for expression in question:
        try:
            asked = canonical_latex(expression)
        except (ValueError, TypeError, RecursionError):
            continue
        if asked == tree:
            return True
        if operations(tree) > max(operations(gold_tree), operations(asked)) and not value.free_symbols:
            try:
                asked_value = parse_latex(expression)
            except (ValueError, TypeError, RecursionError):
                continue
            if not asked_value.free_symbols and equal_values(asked_value, value):
                return True
    return False
