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

`restates(answer, gold, question, ...)` is true when the answer (already known to equal the
gold in value) is, by that reading, one of the question's expressions, or breaks a rule of
simplest form that the gold keeps (`form_faults`: arithmetic left undone, like terms not
combined, a function of constants left unevaluated, a fraction not in lowest terms, a
square factor under a root, a root in a denominator; and where the question asks to factor
or expand, the rules of those). MATH's answers are in simplest form, and MATH-v1's prompt
asks for it. An answer that reads as the gold itself never restates.
"""

from __future__ import annotations

import itertools
from collections import Counter
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
)  # fmt: skip


ASKS = ("factor", "expand", "fraction")
"""What a question may ask of the form: "factor" (factor completely), "expand", "fraction"."""


def restates(answer: str, gold: str, question: list[str], asks: frozenset[str]) -> bool:
    """Whether `answer`, equal to `gold` in value, is no answer in the form asked (module
    docstring): it breaks a rule of simplest form that the gold keeps (`form_faults`, with the
    rules of what the question `asks`), or it is one of the `question` expressions up to
    rewrites that simplify nothing. The caller has found the answer equal to the gold, so no
    proof of it is spent here (a slow one used to run out the budget and let an unsimplified
    answer through). An answer that does not read as an expression (words, units) is not
    judged here."""
    with sympy.evaluate(False):
        written, written_gold = parse_latex(answer), parse_latex(gold)
    if written.free_symbols - written_gold.free_symbols:
        return True  # a variable the gold has not, yet the same value: `t^0 G`, `(\\sin^2 t + \\cos^2 t) G`
    if _functions(written) - _functions(written_gold):
        return True  # a function the gold has not, yet the same value: `(\\sin^2 t + \\cos^2 t) G`, `e^{\\ln G}`
    if form_faults(written, asks) - form_faults(written_gold, asks):
        return True  # a rule broken more often than the gold breaks it (`2^{100} - 2 + 1 - 1`)
    tree, gold_tree = canonical(written), canonical(written_gold)
    if "factor" in asks and factor_count(tree) < factor_count(gold_tree):
        return True  # `(w^2-4)(w^2+4)` where the gold factors on to `(w-2)(w+2)(w^2+4)`
    if tree == gold_tree or operations(tree) == 0:
        return False
    inside, inside_gold = subtrees(tree), subtrees(gold_tree)
    for expression in question:
        try:
            asked = canonical_latex(expression)
        except (ValueError, TypeError, RecursionError):
            continue
        if asked == tree:
            return True
        if operations(asked) > 0 and asked in inside and asked not in inside_gold:
            return True  # the question's expression inside a wrapper worth 1: `i^4(E)`, `\\frac{1}{\\frac{1}{E}}`, `e^{\\ln E}`
    return False


def subtrees(tree: Tree) -> set[Tree]:
    """Every node of a canonical tree, itself included, and every sub-sum and sub-product of
    an n-ary sum or product's operands (`a + b` is inside `a + b + c`)."""
    found: set[Tree] = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if node in found:
            continue
        found.add(node)
        if node[0] in ("num", "sym"):
            continue
        children = node[1]
        pending.extend(children)
        if node[0] in ("Add", "Mul") and 2 < len(children) <= MAX_SUBSET_OPERANDS:
            for size in range(2, len(children)):
                pending.extend((node[0], subset) for subset in itertools.combinations(children, size))
    return found


MAX_SUBSET_OPERANDS = 8
"""Sums and products with more operands than this are not searched for their sub-sums."""


def _functions(expression: sympy.Basic) -> set[str]:
    """The functions an expression applies (`sin`, `log`; `e^x` counts as `exp`)."""
    found = {type(function).__name__ for function in expression.atoms(sympy.Function)}
    if any(power.base == sympy.E for power in expression.atoms(sympy.Pow)):
        found.add("exp")
    return found


def form_faults(written: sympy.Basic, asks: frozenset[str] = frozenset()) -> Counter[str]:
    """The rules of simplest form an expression, as written, breaks, each with how often
    (a gold may break one once, `2^{100} - 2`, and an answer that breaks it again is no
    simpler: `2^{100} - 2 + 1 - 1`):

    - "arithmetic": arithmetic on plain numbers left undone (`\\pi\\cdot 3^2`, `r^{9-4}`,
      `(5+3)\\sqrt2`, `\\sqrt{64\\cdot 2}`);
    - "unevaluated": a function of constants (`\\cos\\frac{\\pi}{6}`, `\\log 8`, `4!`, `|-3|`);
    - "lowest terms": a fraction of integers with a common factor (`\\frac{36}{99}`,
      `\\frac{16\\sqrt2}{2}`);
    - "square factor": a square root of an integer with a square factor (`\\sqrt{117}`,
      `128^{1/2}`);
    - "radical denominator": a root in a denominator (`\\frac{1}{\\sqrt{3}}`, `\\sqrt{1/2}`,
      `2^{-1/2}`); "complex denominator": a complex number divided by (`\\frac{32-8i}{5+3i}`);
    - "like terms": a sum with two terms that differ only by a number (`6 + 12i - 3i`);
    - "like factors": a product with two powers of one base, both whole or both the same
      (`\\frac{40r^9}{8r^4}`, `\\sqrt2\\sqrt2`; not `x\\sqrt x`);
    - "uncancelled": a quotient of polynomials with a common factor (`\\frac{1-x^2}{1-x}`);
    and, where the question asks to factor: "common factor", a sum whose terms all share a
    factor (`a(b+2) + 5(b+2)`), or a factor whose coefficients share one (`(6-2x)(6+2x)`);
    where it asks to expand: "unexpanded", a product or power of a sum (`x(2x+13)+15`);
    where it asks for a fraction: "decimal" (`5.5` for an improper fraction).
    """
    faults = _written_faults(written) + _tree_faults(canonical(written))
    if _uncancelled(written):
        faults["uncancelled"] += 1
    if "fraction" in asks and written.atoms(sympy.Float):
        faults["decimal"] += 1
    if "factor" not in asks:
        faults.pop("common factor", None)
    if "expand" in asks and _unexpanded(canonical(written)):
        faults["unexpanded"] += 1
    return faults


def _uncancelled(written: sympy.Basic) -> bool:
    """A quotient of polynomials that share a factor (`\\frac{1-x^2}{1-x}`, `\\frac{2x^2-2}{2x-2}`)."""
    if not written.free_symbols:
        return False
    with sympy.evaluate(True):
        try:
            expression = written.doit()
            numerator, denominator = sympy.fraction(sympy.together(expression))
            if denominator.is_number or not (numerator.is_polynomial() and denominator.is_polynomial()):
                return False
            return not sympy.gcd(numerator, denominator).is_number
        except (sympy.PolynomialError, TypeError, ValueError, NotImplementedError):
            return False


def factor_count(tree: Tree) -> int:
    """How many factors other than numbers a product has, a whole power counted as often as
    its exponent says (`(x-1)^3(x+1)^3` has 6)."""
    factors = tree[1] if tree[0] == "Mul" else (tree,)
    count = 0
    for factor in factors:
        if factor[0] == "num":
            continue
        if factor[0] == "Pow" and factor[1][1][0] == "num" and factor[1][1][1].denominator == 1 and factor[1][1][1] > 0:
            count += int(factor[1][1][1])
        else:
            count += 1
    return count


def _numeric(expression: sympy.Basic) -> bool:
    return (
        not expression.free_symbols
        and not expression.atoms(sympy.Function)
        and not expression.has(sympy.pi, sympy.E, sympy.I, sympy.oo)
    )


def _fraction_literal(expression: sympy.Basic) -> bool:
    """A number as written: an integer, `b^{-1}`, `a \\cdot b^{-1}` (how `\\frac{a}{b}` reads)."""
    if expression.is_Integer or expression.is_Rational:
        return True
    if isinstance(expression, sympy.Pow):
        return expression.base.is_Integer and expression.exp == -1
    if isinstance(expression, sympy.Mul) and len(expression.args) == 2:
        return all(_fraction_literal(argument) for argument in expression.args) and any(
            argument.is_Integer for argument in expression.args
        )
    return False


def _constant_sum(expression: sympy.Basic) -> bool:
    """A sum of two or more terms with no variable in it (`3 + 2i`, `2 + \\sqrt3`)."""
    return isinstance(expression, sympy.Add) and not expression.free_symbols


def _constant_sum_term(term: sympy.Basic) -> bool:
    """A term of a sum that is a bracketed sum of constants, alone or times a number
    (`-(3-5i)`, `2(1+\\sqrt2)`)."""
    factors = _flat_factors(term)
    sums = [factor for factor in factors if _constant_sum(factor)]
    return len(sums) == 1 and all(factor.is_Rational or _constant_sum(factor) for factor in factors)


def _flat_terms(expression: sympy.Basic) -> list[sympy.Basic]:
    if isinstance(expression, sympy.Add):
        return [term for argument in expression.args for term in _flat_terms(argument)]
    return [expression]


def _flat_factors(expression: sympy.Basic) -> list[sympy.Basic]:
    if isinstance(expression, sympy.Mul):
        return [factor for argument in expression.args for factor in _flat_factors(argument)]
    return [expression]


def _written_faults(expression: sympy.Basic) -> Counter[str]:
    """The faults only the unevaluated expression shows (numbers are folded in the tree). A
    sum or product is read flat, however it was grouped when parsed."""
    faults: Counter[str] = Counter()
    if isinstance(expression, _EVALUATE) and not expression.free_symbols:
        faults["unevaluated"] += 1
    if isinstance(expression, (sympy.exp, sympy.log)) and isinstance(expression.args[0], (sympy.exp, sympy.log)):
        faults["unevaluated"] += 1  # `e^{\\ln E}`: a function of its inverse
    if isinstance(expression, sympy.Add) and (literals := sum(map(_fraction_literal, _flat_terms(expression)))) >= 2:
        faults["arithmetic"] += literals - 1  # `\\sqrt{26} + 1 - 1`: one sum to do per literal past the first
    if isinstance(expression, sympy.Add):
        # `(2+7i)-(3-5i)`, `i\\sqrt2 + (3+2i) - (3+2i)`: a bracketed sum of constants inside a sum
        faults["arithmetic"] += sum(_constant_sum_term(term) for term in _flat_terms(expression))
    if isinstance(expression, sympy.Mul):
        factors = _flat_factors(expression)
        integers = [f for f in factors if f.is_Integer and f not in (0, 1, -1)]
        inverses = [f.base for f in factors if f.is_Pow and f.exp == -1 and f.base.is_Integer]
        if any(sympy.igcd(int(n), int(d)) > 1 for n in integers for d in inverses):
            faults["lowest terms"] += 1
        if len(integers) >= 2 or len(inverses) >= 2:
            faults["arithmetic"] += 1
        roots = [
            f.exp for f in factors if f.is_Pow and f.base.is_Integer and f.exp.is_Rational and not f.exp.is_Integer
        ]
        if sum(_constant_sum(factor) for factor in factors) >= 2:
            faults["arithmetic"] += 1  # `(2+\\sqrt3)(5-\\sqrt3)`, `(2+3i)(1-2i)`: a product of sums left unmultiplied
        if len(roots) != len({root.q for root in roots}):
            faults["arithmetic"] += 1  # `\\sqrt{2}\\sqrt{13}` is `\\sqrt{26}`: roots of one index left unmultiplied
    if isinstance(expression, sympy.Pow):
        base, exponent = expression.args
        if _numeric(exponent) and not exponent.is_Integer and not _fraction_literal(exponent):
            faults["arithmetic"] += 1  # `r^{9-4}`
        with sympy.evaluate(True):
            exponent_value = exponent.doit() if _numeric(exponent) else None
            base_value = base.doit() if _numeric(base) else None
        if exponent_value is not None and exponent_value.is_Rational and not exponent_value.is_Integer:
            if base.is_Integer and abs(exponent_value) > 1:
                faults["square factor"] += 1  # `2^{7/2}` is `8\\sqrt{2}`
        if base == sympy.E and isinstance(exponent, sympy.log):
            faults["unevaluated"] += 1  # `e^{\\ln E}`: a function of its inverse
        if base_value is not None and exponent_value is not None and exponent_value.is_Integer:
            if abs(int(exponent_value)) >= 2 or not _fraction_literal(base):
                faults["arithmetic"] += 1  # `3^2`, `\\sqrt{3^2+2^2}`'s inside
        if base_value is not None and exponent_value is not None and exponent_value.is_Rational:
            if not exponent_value.is_Integer:
                if not _fraction_literal(base) or (not base.is_Integer and base_value.is_Integer):
                    faults["arithmetic"] += 1  # `\\sqrt{64\\cdot 2}`, `\\sqrt{2^7}`
                if (base_value.is_Rational and not base_value.is_Integer) or exponent_value < 0:
                    faults["radical denominator"] += 1  # `\\sqrt{1/2}`, `2^{-1/2}`
                elif base_value.is_Integer and int(base_value) > 1:
                    with sympy.evaluate(True):
                        root = sympy.root(int(base_value), int(exponent_value.q))
                    if root.is_Integer:
                        faults["arithmetic"] += 1  # `\\sqrt{64}`, `\\sqrt[3]{8}`: a root that is a number
                    elif not (root.is_Pow and root.base == base_value):
                        faults["square factor"] += 1  # `\\sqrt{117}`, `\\sqrt[3]{1024}`
        if exponent == 0 or (base == sympy.I and exponent.is_Integer and exponent != 1):
            faults["arithmetic"] += 1  # `\\pi^0`, `x^0`, `i^4`: a power worth a number, left
        if exponent == -1 and isinstance(base, sympy.Pow) and base.exp == -1:
            faults["arithmetic"] += 1  # `\\frac{1}{\\frac{1}{E}}`
        if exponent.is_negative and _constant_sum(base) and base.has(sympy.I):
            faults["complex denominator"] += 1  # `\\frac{32-8i}{5+3i}`: the division left undone
        if exponent.is_negative and _has_radical(base):
            faults["radical denominator"] += 1
    operands = (
        _flat_terms(expression)
        if isinstance(expression, sympy.Add)
        else _flat_factors(expression)
        if isinstance(expression, sympy.Mul)
        else expression.args
    )
    for argument in operands:
        faults += _written_faults(argument)
    return faults


def _has_radical(expression: sympy.Basic) -> bool:
    if isinstance(expression, sympy.Pow) and expression.exp.is_Rational and not expression.exp.is_Integer:
        return True
    return any(_has_radical(argument) for argument in expression.args)


def _tree_faults(tree: Tree) -> Counter[str]:
    faults: Counter[str] = Counter()
    if tree[0] in ("num", "sym"):
        return faults
    children = tree[1]
    if tree[0] == "Add":
        keys = [_without_number(term) for term in children]
        if len(keys) != len(set(keys)):
            faults["like terms"] += 1
        if set.intersection(*(_factors(term) for term in children)) or _content(tree) > 1:
            faults["common factor"] += 1
    if tree[0] == "Mul":
        found = [_power(factor) for factor in _spread(children)]
        powers = [power for power in found if power is not None]
        for i, (base, exponent) in enumerate(powers):
            for other_base, other_exponent in powers[i + 1 :]:
                if base == other_base and (exponent == other_exponent or (_whole(exponent) and _whole(other_exponent))):
                    faults["like factors"] += 1
    for child in children:
        faults += _tree_faults(child)
    return faults


def _content(tree: Tree) -> int:
    """The greatest common divisor of a sum's integer coefficients (1 if any is not one)."""
    divisor = 0
    for term in tree[1]:
        numbers = [child[1] for child in (term[1] if term[0] == "Mul" else (term,)) if child[0] == "num"]
        coefficient = numbers[0] if numbers else Fraction(1)
        if coefficient.denominator != 1:
            return 1
        divisor = sympy.igcd(divisor, int(coefficient))
    return int(divisor)


def _whole(exponent: Tree) -> bool:
    return exponent[0] == "num" and exponent[1].denominator == 1


def _unexpanded(tree: Tree) -> bool:
    """A product with a sum in it, or a whole power of a sum, anywhere."""
    if tree[0] in ("num", "sym"):
        return False
    children = tree[1]
    if tree[0] == "Mul" and any(child[0] == "Add" for child in children):
        return True
    if tree[0] == "Pow" and children[0][0] == "Add" and _whole(children[1]) and children[1][1] > 1:
        return True
    return any(_unexpanded(child) for child in children)


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


def _power(factor: Tree) -> tuple[Tree, Tree] | None:
    """(base, exponent) of a factor, a power of a power multiplied out; None for a plain
    number or a number's inverse (`2` and `2^{-1}` in `\\frac{2\\sqrt2}{2}` are no powers of 2)."""
    if factor[0] == "num":
        return None
    if factor[0] != "Pow":
        return factor, ("num", Fraction(1))
    base, exponent = factor[1]
    if base[0] == "num" and _whole(exponent):
        return None
    if base[0] == "Pow" and _whole(exponent) and base[1][1][0] == "num":
        return base[1][0], ("num", base[1][1][1] * exponent[1])  # `(r^4)^{-1}` is r^{-4}
    return base, exponent
