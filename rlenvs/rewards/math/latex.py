"""A small LaTeX-to-sympy parser for answer expressions, with guards against huge values.

Why our own: sympy's `parse_latex` needs an ANTLR runtime pinned to one version (or lark)
and math-verify's converter pulls in a generated grammar; `sympy.parse_expr` evaluates
Python and must never see model output. This recursive-descent parser accepts the LaTeX
that final answers use (numbers, letters and greek letters with subscripts, `+ - * / ^`,
`\\cdot \\times \\div`, implicit products, `\\frac \\sqrt`, functions, `!`, `|x|`, `\\pi`,
`e`, `i`, `\\infty`, sums `\\sum_{k=a}^{b}`) and builds sympy objects directly, so nothing
is ever evaluated as code.

Before any power or factorial is built, its size is estimated: `10^{10^{10}}` or
`99999999!` raise `TooLarge` at once instead of making sympy compute them. A sum is worked
out only in ways whose cost is bounded (see `_Parser.sum`).

It runs in the verifier's worker process (see `symbolic`), never in the caller's.
"""

from __future__ import annotations

import math
import re

import sympy

MAX_RESULT_DIGITS = 10_000
"""Digits a numeric power or factorial may have."""
MAX_FACTORIAL = 2_000
MAX_SUM_TERMS = 1_000
"""Terms all the sums of one expression may expand to, nested sums included."""
MAX_SUM_DEGREE = 10
"""Highest power of the index for which a sum's closed form is computed."""

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"|(?P<command>\\[A-Za-z]+)"
    r"|(?P<letter>[A-Za-z])"
    r"|(?P<symbol>[-+*/^_!|(){}\[\],'=])"
    r")"
)

_FUNCTIONS = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "sec": sympy.sec, "csc": sympy.csc,
    "cot": sympy.cot, "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "ln": sympy.log, "log": sympy.log,
    "exp": sympy.exp,
}  # fmt: skip
_CONSTANTS = {"pi": sympy.pi, "infty": sympy.oo, "infinity": sympy.oo}
_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta",
    "iota", "kappa", "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "upsilon", "phi", "varphi",
    "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Sigma", "Phi", "Psi", "Omega",
}  # fmt: skip
_PRODUCTS = {"\\cdot", "\\times", "*"}
_QUOTIENTS = {"\\div", "/"}
_FRACTIONS = {"\\frac", "\\dfrac", "\\tfrac", "\\cfrac"}
_IGNORED = {
    "\\left",
    "\\right",
    "\\displaystyle",
    "\\mathrm",
    "\\mathbf",
    "\\mathit",
    "\\operatorname",
    "\\limits",
}


class LatexError(ValueError):
    """The text is not an expression this parser reads."""


class TooLarge(LatexError):
    """A power or factorial in the text would be too large to compute."""


def parse_latex(text: str) -> sympy.Expr:
    """Parse one LaTeX expression into a sympy expression, or raise `LatexError`."""
    tokens = _tokenize(text)
    parser = _Parser(tokens)
    expression = parser.expression()
    if parser.position != len(tokens):
        raise LatexError(f"unexpected {tokens[parser.position]!r} in {text!r}")
    return expression


def _tokenize(text: str) -> list[str]:
    tokens = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise LatexError(f"cannot read {text[position : position + 10]!r}")
        assert match.lastgroup is not None  # every alternative of `_TOKEN` is a named group
        token = match.group(match.lastgroup)
        if token not in _IGNORED:
            tokens.append(token)
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return tokens


class _Parser:
    def __init__(
        self, tokens: list[str], bound: dict[str, sympy.Expr] | None = None, terms: list[int] | None = None
    ) -> None:
        self.tokens = tokens
        self.position = 0
        self.bound = {} if bound is None else bound
        """Index letters of the sums being read -> their symbol, or their value while expanding."""
        self.terms = [MAX_SUM_TERMS] if terms is None else terms
        """Sum terms this expression may still expand to (shared with sub-parsers)."""

    # --- token helpers ---
    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise LatexError(f"expected {expected or 'more input'}, found {token!r}")
        self.position += 1
        return token

    # --- grammar ---
    def expression(self) -> sympy.Expr:
        value = self.term()
        while self.peek() in ("+", "-"):
            operator = self.take()
            right = self.term()
            value = value + right if operator == "+" else value - right
        return value

    def term(self) -> sympy.Expr:
        value = self.signed()
        while True:
            token = self.peek()
            if token in _PRODUCTS:
                self.take()
                value = value * self.signed()
            elif token in _QUOTIENTS:
                self.take()
                divisor = self.signed()
                if divisor == 0:
                    raise LatexError("division by zero")
                value = value / divisor
            elif token is not None and self.starts_atom(token):
                value = value * self.power()  # implicit product: 2x, 3\sqrt{2}, (a)(b)
            else:
                return value

    def signed(self) -> sympy.Expr:
        if self.peek() == "-":
            self.take()
            return -self.signed()
        if self.peek() == "+":
            self.take()
            return self.signed()
        return self.power()

    def power(self) -> sympy.Expr:
        base = self.postfix()
        if self.peek() == "^":
            self.take()
            exponent = self.group_or_signed_atom()
            return _checked_power(base, exponent)
        return base

    def postfix(self) -> sympy.Expr:
        value = self.atom()
        while self.peek() == "!":
            self.take()
            value = _checked_factorial(value)
        while self.peek() == "'":  # f'(x) style primes are not values
            raise LatexError("derivative notation is not a value")
        return value

    def group_or_signed_atom(self) -> sympy.Expr:
        if self.peek() == "{":
            return self.braced()
        if self.peek() == "-":
            self.take()
            return -self.atom()
        return self.atom()

    def braced(self) -> sympy.Expr:
        self.take("{")
        value = self.expression()
        self.take("}")
        return value

    def starts_atom(self, token: str) -> bool:
        if token in ("(", "{", "[", "|") or token[0].isdigit() or token[0] == ".":
            return token != "|" or self.position + 1 < len(self.tokens)
        if token.startswith("\\"):
            name = token[1:]
            return (
                token in _FRACTIONS
                or name in ("sqrt", "sum")
                or name in _FUNCTIONS
                or name in _CONSTANTS
                or name in _GREEK
            )
        return token.isalpha()

    def atom(self) -> sympy.Expr:
        token = self.take()
        if token[0].isdigit() or token[0] == ".":
            return sympy.Rational(token)
        if token in ("(", "["):
            value = self.expression()
            self.take(")" if token == "(" else "]")
            return value
        if token == "{":
            value = self.expression()
            self.take("}")
            return value
        if token == "|":
            value = self.expression()
            self.take("|")
            return sympy.Abs(value)
        if token in _FRACTIONS:
            numerator, denominator = self.argument(), self.argument()
            if denominator == 0:
                raise LatexError("division by zero")
            return numerator / denominator
        if token == "\\sqrt":
            index = None
            if self.peek() == "[":
                self.take("[")
                index = self.expression()
                self.take("]")
            radicand = self.argument()
            return sympy.sqrt(radicand) if index is None else sympy.root(radicand, index)
        if token.startswith("\\"):
            return self.command(token[1:])
        if token.isalpha():
            return self.letter(token)
        raise LatexError(f"unexpected {token!r}")

    def argument(self) -> sympy.Expr:
        """A `{...}` group, or a single token: `\\frac12`, `\\sqrt3`."""
        if self.peek() == "{":
            return self.braced()
        token = self.peek()
        if token is not None and token.isdigit() and len(token) > 1:
            # `\frac12`: the argument is one digit; the rest stays for the next argument.
            self.tokens[self.position] = token[1:]
            return sympy.Integer(token[0])
        token = self.take()
        if token[0].isdigit() or token[0] == ".":
            return sympy.Rational(token)
        if token.isalpha():
            return self.letter(token)
        if token.startswith("\\"):
            return self.command(token[1:])
        raise LatexError(f"unexpected {token!r} as an argument")

    def command(self, name: str) -> sympy.Expr:
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name == "sum":
            return self.sum()
        if name in _GREEK:
            return self.subscripted(name)
        if name in _FUNCTIONS:
            power = base = None
            if name == "log" and self.peek() == "_":
                self.take()
                base = self.argument()  # `\\log_2 8`, `\\log_{10}(x)`; `\\log_23` is base 2 of 3, as TeX reads it
            if self.peek() == "^":
                self.take()
                power = self.group_or_signed_atom()
            argument = self.power() if self.peek() in ("(", "[", "{") else self.signed_factor()
            value = _FUNCTIONS[name](argument) if base is None else sympy.log(argument, base)
            return _checked_power(value, power) if power is not None else value
        raise LatexError(f"unknown command \\{name}")

    def signed_factor(self) -> sympy.Expr:
        """A function argument written without parentheses: `\\sin x`, `\\log 2`."""
        if self.peek() == "-":
            self.take()
            return -self.power()
        return self.power()

    def sum(self) -> sympy.Expr:
        """`\\sum_{k=a}^{b} term`: the summand is the product that follows (`\\sum k^2 + 1` is
        the sum, plus 1). With integer bounds and at most the remaining term budget, it is
        expanded term by term, each term parsed again with k set to its value, so every
        power and factorial in it passes the usual size guards. A polynomial in k gets its
        closed form (`\\sum_{k=1}^{n} k` is n(n+1)/2). Otherwise, for symbolic bounds, it
        stays a sympy `Sum` whose index is renamed by depth, so that `\\sum_k` and `\\sum_j`
        of the same term are the same object; integer bounds too far apart raise `TooLarge`."""
        index = low = high = None
        for _ in range(2):
            if self.peek() == "_":
                self.take()
                self.take("{")
                index = self.take()
                if not (len(index) == 1 and index.isalpha()):
                    raise LatexError("a sum's index is one letter")
                self.take("=")
                low = self.expression()
                self.take("}")
            elif self.peek() == "^":
                self.take()
                high = self.group_or_signed_atom()
        if index is None or high is None:
            raise LatexError("a sum needs its bounds: \\sum_{k=a}^{b}")
        assert low is not None  # `low` is read together with `index`
        outer = self.bound.get(index)
        symbol = sympy.Symbol(index)
        self.bound[index] = symbol
        start, saved = self.position, list(self.tokens)  # `\frac12` rewrites its token: restore it
        try:
            summand = self.term()
            end = self.position
            finite = all(bound.is_number and bound.is_finite for bound in (low, high))
            if finite:
                if not (low.is_integer and high.is_integer):
                    raise LatexError("a sum's bounds are integers")
                count = int(high - low + 1)
                if count <= 0:
                    return sympy.Integer(0)
                if count <= self.terms[0]:
                    self.terms[0] -= count
                    terms = []
                    for value in range(int(low), int(high) + 1):
                        self.tokens[start:end] = saved[start:end]
                        self.position, self.bound[index] = start, sympy.Integer(value)
                        terms.append(self.term())
                        if self.position != end:
                            raise LatexError("a sum's term reads differently with its index set")
                    return sympy.Add(*terms)
            if _low_degree_polynomial(summand, symbol):
                if finite:  # the closed form is about the largest bound to the power degree + 1
                    _checked_power(abs(low) + abs(high) + 1, sympy.Integer(MAX_SUM_DEGREE + 1))
                return sympy.Sum(summand, (symbol, low, high)).doit()
            if finite:
                raise TooLarge("a sum with too many terms")
            canonical = sympy.Symbol(f"_sum{len(self.bound)}")
            return sympy.Sum(summand.xreplace({symbol: canonical}), (canonical, low, high))
        finally:
            if outer is None:
                del self.bound[index]
            else:
                self.bound[index] = outer

    def letter(self, name: str) -> sympy.Expr:
        if name in self.bound:
            return self.bound[name]
        if name == "e" and self.peek() != "_":
            return sympy.E
        if name == "i" and self.peek() != "_":
            return sympy.I
        return self.subscripted(name)

    def subscripted(self, name: str) -> sympy.Expr:
        if self.peek() == "_":
            self.take()
            if self.peek() == "{":
                self.take("{")
                parts = []
                while self.peek() not in ("}", None):
                    parts.append(self.take())
                self.take("}")
            else:
                parts = [self.take()]
            if any(part in self.bound for part in parts):
                # `F_{n-k-1}` inside `\sum_k`: a term of the sequence F, indexed by k.
                sub = _Parser(parts, self.bound, self.terms)
                subscript = sub.expression()
                if sub.position != len(parts):
                    raise LatexError(f"cannot read the subscript {''.join(parts)!r}")
                return sympy.IndexedBase(name)[subscript]
            name += "_" + "".join(parts)
        return sympy.Symbol(name)


def _checked_power(base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
    """`base ** exponent`, refused before computing it if the result would be huge or tiny."""
    if base.is_number and exponent.is_number:
        digits = _magnitude(exponent) * abs(math.log10(_magnitude(base) or 1.0))
        if digits > MAX_RESULT_DIGITS:
            raise TooLarge("power too large")
    return sympy.Pow(base, exponent)


def _magnitude(value: sympy.Expr) -> float:
    try:
        with sympy.evaluate(True):  # read unevaluated (`trees`), `i^{111}` would recurse without end
            return abs(complex(value.evalf(15)))
    except (TypeError, ValueError, OverflowError):
        raise TooLarge("value too large to estimate") from None


def _low_degree_polynomial(summand: sympy.Expr, index: sympy.Symbol) -> bool:
    if summand.has(sympy.Indexed, sympy.Sum) or not summand.is_polynomial(index):
        return False
    return sympy.degree(summand, index) <= MAX_SUM_DEGREE if summand.has(index) else True


def _checked_factorial(value: sympy.Expr) -> sympy.Expr:
    if value.is_number:
        if not (value.is_integer and value >= 0):
            raise LatexError("factorial of a non-natural number")
        if value > MAX_FACTORIAL:
            raise TooLarge("factorial too large")
    return sympy.factorial(value)
