"""A safe, exact calculator for model tool calls (the tool of `rlenvs/GSM8K-Tool-v1`).

Why not `eval`: a model's tool call is untrusted text. `eval` runs attribute access and
imports (`__import__('os')`), and even pure arithmetic hangs or exhausts memory
(`9**9**9**9`). Here the expression is parsed with `ast` into a tree that is walked by hand:
only the node kinds below are evaluated, nothing is ever compiled or executed, and every
step is bounded before it is computed.

Why exact: GSM8K answers are exact numbers and floats are not (`0.1 * 3` is not `0.3`).
Every value is a `fractions.Fraction`; decimals in the input are read from their digits,
never through a float. Only `sqrt` of a non-square can be inexact, and results that
depend on it are marked as rounded.

The language:

- numbers: integers and decimals (`12`, `1.5`, `.5`, `2.`, `1e3`, `1_000`); no thousands
  separators — a comma only separates function arguments, so `1,234` is an error that
  says to write `1234` (accepting both would make `max(1,234)` ambiguous);
- `+ - * /` (exact division), `//` and `%` (floor division and modulo, as in Python),
  `**` with a whole-number exponent, unary `+ -`, parentheses;
- functions `abs(x)`, `sqrt(x)`, `floor(x)`, `ceil(x)`, `round(x)` / `round(x, digits)`
  (half away from zero, as people round, not Python's half-to-even), `min(...)`, `max(...)`;
- conveniences models write: `×`, `÷` and `−` read as `*`, `/` and `-`; one trailing `=` is
  ignored. `^` is an error that points to `**`.

Limits, so that no input can hang or exhaust memory (each is a module constant):

- `MAX_EXPRESSION_CHARS`: checked first, before any other work (a 100 KB reply is refused
  at once); GSM8K's own calculations are at most 36 characters;
- only ASCII digits, letters, `_ . , + - * / % ( )` and spaces get past a character check,
  so strings, brackets, comparisons and `=` never reach the parser;
- `MAX_NODES` syntax-tree nodes and `MAX_DEPTH` nesting levels, checked without recursion
  before evaluating;
- `MAX_DIGITS` for the numerator and the denominator of every literal and every
  intermediate result (checked by comparison with `10**MAX_DIGITS`, not by printing);
- `**`: before computing `b ** e` the size of the result is bounded from below by
  `|e| * (bits(b) - 1)`; past `MAX_DIGITS` it is refused without computing it. So the
  exponent of any base other than 0, 1, -1 is at most `MAX_BITS` (3322), and what is
  computed has at most twice the digit cap's bits. Exponents in literals (`1e999999999`) and `round`'s digits
  are bounded the same way;
- division, floor division and modulo by zero, and `0 ** -1`, are errors that name the
  zero divisor.

Results (`calculate`): an integral value is written as an integer (`24`); a value whose
decimal expansion ends within `MAX_DECIMALS` places is written exactly (`2.5`, `0.125`);
anything else is rounded to `MAX_DECIMALS` places and says so, with the exact fraction when
it is short: `33.3333333333 (rounded; exactly 100/3)`; a tiny value can show as
`0 (rounded)`. Errors are `CalculatorError`, whose
message says what is wrong and how to write it instead: it is shown to the model.
"""

from __future__ import annotations

import ast
import decimal
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

MAX_EXPRESSION_CHARS = 500
"""GSM8K's calculations are at most 36 characters; 500 leaves room for long sums."""
MAX_NODES = 300
MAX_DEPTH = 100
MAX_DIGITS = 1000
"""Enough for compound interest over 30 years of months (`1.0125**360` is exact at ~690
digits), small enough that every operation on such numbers takes microseconds."""
_DIGIT_LIMIT = 10**MAX_DIGITS
"""Numerators and denominators stay below this. Comparing with it is exact and costs no
more than the arithmetic that produced the number (printing it would cost far more)."""
MAX_BITS = math.ceil(MAX_DIGITS * math.log2(10))
"""A number of more bits than this certainly has more than `MAX_DIGITS` digits."""
MAX_DECIMALS = 10
MAX_ROUND_DIGITS = 100
SQRT_PRECISION = 50
"""Significant digits of an irrational square root: far beyond the `MAX_DECIMALS` shown."""
SHORT_FRACTION_DIGITS = 12
"""A rounded result also shows its exact fraction when both parts have at most this many digits."""

FUNCTIONS = ("abs", "ceil", "floor", "max", "min", "round", "sqrt")
_LANGUAGE = f"numbers, + - * / // % **, parentheses and the functions {', '.join(FUNCTIONS)}"

_UNICODE_OPERATORS = str.maketrans({"×": "*", "÷": "/", "−": "-"})
_BAD_CHARACTER = re.compile(r"[^0-9A-Za-z_.,+\-*/%() \t\r\n]")
_DECIMAL_LITERAL = re.compile(r"(?P<mantissa>[0-9_]*\.?[0-9_]*)(?:[eE](?P<exponent>[+-]?[0-9_]+))?")
_SNIPPET_CHARS = 40

_NODE_NAMES = {
    ast.Compare: "comparisons", ast.BoolOp: "'and'/'or'", ast.IfExp: "'if' expressions",
    ast.Subscript: "indexing", ast.List: "lists", ast.Set: "sets", ast.Dict: "dicts",
    ast.Lambda: "lambdas", ast.NamedExpr: "':='", ast.JoinedStr: "strings", ast.Starred: "'*' unpacking",
    ast.ListComp: "comprehensions", ast.GeneratorExp: "generators", ast.Await: "'await'",
}  # fmt: skip


class CalculatorError(ValueError):
    """An expression the calculator refuses; the message is meant for the model to read."""


@dataclass(frozen=True)
class Calculation:
    value: Fraction
    exact: bool
    """False when the value went through an irrational `sqrt` and is an approximation."""

    @property
    def text(self) -> str:
        """The result as shown to the model (see the module docstring)."""
        return format_result(self.value, self.exact)


def calculate(expression: str) -> str:
    """The result of `expression` as text, or `CalculatorError` saying what is wrong."""
    return evaluate(expression).text


def evaluate(expression: str) -> Calculation:
    """The exact value of `expression`; raises `CalculatorError` on anything else."""
    if not isinstance(expression, str):
        raise TypeError(f"calculator expression must be a str, got {type(expression).__name__}")
    source = _normalise(expression)
    tree = _parse(source)
    _check_size(tree)
    evaluator = _Evaluator(source)
    value = evaluator.value(tree.body)
    return Calculation(value, exact=not evaluator.approximate)


def format_result(value: Fraction, exact: bool = True) -> str:
    """An integer, an exact short decimal, or a rounded decimal that says it is rounded."""
    if exact and value.denominator == 1:
        return str(value.numerator)
    text = _decimal_text(value, MAX_DECIMALS)
    if exact and (10**MAX_DECIMALS) % value.denominator == 0:
        return text
    note = "rounded"
    if exact and max(len(str(abs(value.numerator))), len(str(value.denominator))) <= SHORT_FRACTION_DIGITS:
        note += f"; exactly {value.numerator}/{value.denominator}"
    return f"{text} ({note})"


# --- reading the expression -----------------------------------------------------------------


def _normalise(expression: str) -> str:
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(
            f"expression too long ({len(expression)} characters, at most {MAX_EXPRESSION_CHARS}): "
            "compute it in smaller steps"
        )
    source = expression.translate(_UNICODE_OPERATORS).strip()
    if source.endswith("="):
        source = source[:-1].rstrip()
    if not source:
        raise CalculatorError("empty expression: write an arithmetic expression such as 48 / 2")
    if "^" in source:
        raise CalculatorError("'^' is not a power here: write 2**3 for 2 to the power of 3")
    bad = _BAD_CHARACTER.search(source)
    if bad:
        char = bad.group()
        hint = (
            "write only the expression, without '=' or the result"
            if char == "="
            else f"the calculator understands only {_LANGUAGE}"
        )
        raise CalculatorError(f"unexpected character {char!r} at position {bad.start()}: {hint}")
    return source


def _parse(source: str) -> ast.Expression:
    try:
        return ast.parse(source, mode="eval")
    except SyntaxError as error:
        raise CalculatorError(f"could not parse {_snippet(source)!r}: {error.msg}") from None
    except (ValueError, RecursionError, MemoryError, OverflowError):
        raise CalculatorError(f"could not parse {_snippet(source)!r}: write {_LANGUAGE}") from None


def _check_size(tree: ast.Expression) -> None:
    """Node count and nesting depth, without recursion (the evaluator recurses after this)."""
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree.body, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise CalculatorError(f"expression too complex (over {MAX_NODES} parts): compute it in smaller steps")
        if depth > MAX_DEPTH:
            raise CalculatorError(f"expression nested too deeply (over {MAX_DEPTH} levels): simplify it")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET_CHARS else text[: _SNIPPET_CHARS - 3] + "..."


# --- evaluating it --------------------------------------------------------------------------


class _Evaluator:
    """Walks the checked tree; `approximate` turns True once an irrational sqrt was taken."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.approximate = False

    def text_of(self, node: ast.AST) -> str:
        return _snippet(ast.get_source_segment(self.source, node) or "")

    def value(self, node: ast.expr) -> Fraction:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            operand = self.value(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.value(node.left), self.value(node.right)
            return self.bounded(_BINARY[type(node.op)](self, node, left, right), node)
        if isinstance(node, ast.Call):
            return self.bounded(self.call(node), node)
        raise CalculatorError(self.unsupported(node))

    def constant(self, node: ast.Constant) -> Fraction:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CalculatorError(
                f"{self.text_of(node)!r} is not a number: the calculator understands only {_LANGUAGE}"
            )
        if isinstance(value, int):
            return self.bounded(Fraction(value), node)
        return self.bounded(_decimal_literal(ast.get_source_segment(self.source, node) or ""), node)

    def bounded(self, value: Fraction, node: ast.AST) -> Fraction:
        if abs(value.numerator) >= _DIGIT_LIMIT or value.denominator >= _DIGIT_LIMIT:
            raise CalculatorError(
                f"the result of {self.text_of(node)!r} has more than {MAX_DIGITS} digits: "
                "the calculator refuses numbers that large"
            )
        return value

    def divisor(self, node: ast.BinOp, right: Fraction) -> Fraction:
        if right == 0:
            raise CalculatorError(f"division by zero in {self.text_of(node)!r}: {self.text_of(node.right)!r} is 0")
        return right

    def power(self, node: ast.BinOp, base: Fraction, exponent: Fraction) -> Fraction:
        if exponent.denominator != 1:
            raise CalculatorError(
                f"the exponent in {self.text_of(node)!r} must be a whole number, got "
                f"{format_result(exponent)}: use sqrt(x) for square roots"
            )
        power = exponent.numerator
        if base == 0:
            if power < 0:
                raise CalculatorError(f"division by zero in {self.text_of(node)!r}: 0 to a negative power")
            return Fraction(1 if power == 0 else 0)
        if base in (1, -1):
            return base if power % 2 else Fraction(1)
        # |b**e| >= 2 ** (|e| * (bits - 1)) for the larger of numerator and denominator, so
        # this refuses exactly the powers that certainly exceed the cap; what it lets through
        # has at most twice the cap's bits and is checked exactly afterwards.
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if abs(power) * (bits - 1) > MAX_BITS:
            raise CalculatorError(
                f"{self.text_of(node)!r} would have more than {MAX_DIGITS} digits: "
                "the calculator refuses numbers that large"
            )
        return base**power

    def call(self, node: ast.Call) -> Fraction:
        if not isinstance(node.func, ast.Name):
            raise CalculatorError(self.unsupported(node.func))
        if node.func.id not in FUNCTIONS:
            raise CalculatorError(f"unknown function {node.func.id!r}: the functions are {', '.join(FUNCTIONS)}")
        name = node.func.id
        if node.keywords:
            raise CalculatorError(f"{name}() takes no keyword arguments: write {name}(x)")
        arguments = [self.value(argument) for argument in node.args]
        return _FUNCTIONS[name](self, node, arguments)

    def sqrt(self, node: ast.Call, arguments: list[Fraction]) -> Fraction:
        (x,) = _arity(node, arguments, 1, 1, "sqrt(x)")
        if x < 0:
            raise CalculatorError(f"sqrt of a negative number in {self.text_of(node)!r}: {format_result(x)}")
        numerator, denominator = math.isqrt(x.numerator), math.isqrt(x.denominator)
        if numerator * numerator == x.numerator and denominator * denominator == x.denominator:
            return Fraction(numerator, denominator)
        self.approximate = True
        context = decimal.Context(prec=SQRT_PRECISION)
        root = context.sqrt(context.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator)))
        return Fraction(root)

    def round(self, node: ast.Call, arguments: list[Fraction]) -> Fraction:
        x, *rest = _arity(node, arguments, 1, 2, "round(x) or round(x, digits)")
        digits = rest[0] if rest else Fraction(0)
        if digits.denominator != 1 or abs(digits) > MAX_ROUND_DIGITS:
            raise CalculatorError(
                f"round's digits in {self.text_of(node)!r} must be a whole number from "
                f"{-MAX_ROUND_DIGITS} to {MAX_ROUND_DIGITS}, got {format_result(digits)}"
            )
        scale = Fraction(10) ** digits.numerator
        return Fraction(_round_half_away(x * scale)) / scale

    def unsupported(self, node: ast.AST) -> str:
        text = self.text_of(node)
        if isinstance(node, ast.Name):
            if node.id in FUNCTIONS:
                return f"{node.id} is a function: call it with parentheses, e.g. {node.id}(16)"
            return f"unknown name {node.id!r}: the calculator understands only {_LANGUAGE}"
        if isinstance(node, ast.Attribute):
            return f"attribute access ({text!r}) is not allowed: the calculator understands only {_LANGUAGE}"
        if isinstance(node, ast.Tuple):
            return (
                f"a comma outside a function call ({text!r}): write numbers without thousands "
                "separators (1234, not 1,234); commas only separate function arguments"
            )
        kind = _NODE_NAMES.get(type(node))
        if kind is None and isinstance(node, (ast.BinOp, ast.UnaryOp)):
            kind = f"the operator in {text!r}"
        return f"{kind or type(node).__name__} not supported: the calculator understands only {_LANGUAGE}"


def _add(ev: _Evaluator, node: ast.BinOp, a: Fraction, b: Fraction) -> Fraction:
    return a + b


def _subtract(ev: _Evaluator, node: ast.BinOp, a: Fraction, b: Fraction) -> Fraction:
    return a - b


def _multiply(ev: _Evaluator, node: ast.BinOp, a: Fraction, b: Fraction) -> Fraction:
    return a * b


def _divide(ev: _Evaluator, node: ast.BinOp, a: Fraction, b: Fraction) -> Fraction:
    return a / ev.divisor(node, b)


def _floor_divide(ev: _Evaluator, node: ast.BinOp, a: Fraction, b: Fraction) -> Fraction:
    return Fraction(a // ev.divisor(node, b))


def _modulo(ev: _Evaluator, node: ast.BinOp, a: Fraction, b: Fraction) -> Fraction:
    return a % ev.divisor(node, b)


_BINARY: dict[type[ast.operator], Callable[[_Evaluator, ast.BinOp, Fraction, Fraction], Fraction]] = {
    ast.Add: _add,
    ast.Sub: _subtract,
    ast.Mult: _multiply,
    ast.Div: _divide,
    ast.FloorDiv: _floor_divide,
    ast.Mod: _modulo,
    ast.Pow: _Evaluator.power,
}


def _arity(node: ast.Call, arguments: list[Fraction], least: int, most: int | None, usage: str) -> list[Fraction]:
    if len(arguments) < least or (most is not None and len(arguments) > most):
        name = node.func.id  # type: ignore[attr-defined]  # checked by _Evaluator.call
        raise CalculatorError(f"{name} got {len(arguments)} argument(s): write {usage}")
    return arguments


def _one(function: Callable[[Fraction], Fraction | int], usage: str):
    def apply(ev: _Evaluator, node: ast.Call, arguments: list[Fraction]) -> Fraction:
        (x,) = _arity(node, arguments, 1, 1, usage)
        return Fraction(function(x))

    return apply


def _many(function: Callable[[list[Fraction]], Fraction], usage: str):
    def apply(ev: _Evaluator, node: ast.Call, arguments: list[Fraction]) -> Fraction:
        return function(_arity(node, arguments, 1, None, usage))

    return apply


_FUNCTIONS: dict[str, Callable[[_Evaluator, ast.Call, list[Fraction]], Fraction]] = {
    "abs": _one(abs, "abs(x)"),
    "ceil": _one(math.ceil, "ceil(x)"),
    "floor": _one(math.floor, "floor(x)"),
    "max": _many(max, "max(a, b, ...)"),
    "min": _many(min, "min(a, b, ...)"),
    "round": _Evaluator.round,
    "sqrt": _Evaluator.sqrt,
}


def _decimal_literal(text: str) -> Fraction:
    """A float literal's exact value from its digits (a float would already be rounded)."""
    match = _DECIMAL_LITERAL.fullmatch(text)
    if match is None:
        raise CalculatorError(f"{_snippet(text)!r} is not a number the calculator can read: write e.g. 1.5")
    exponent = int(match.group("exponent") or "0")
    if abs(exponent) > MAX_DIGITS:
        raise CalculatorError(f"the exponent of {_snippet(text)!r} is too large: at most {MAX_DIGITS} digits")
    mantissa = match.group("mantissa").replace("_", "")
    whole, _, fraction = mantissa.partition(".")
    value = Fraction(int(whole + fraction or "0"), 10 ** len(fraction))
    return value * Fraction(10) ** exponent


def _round_half_away(x: Fraction) -> int:
    magnitude = math.floor(abs(x) + Fraction(1, 2))
    return -magnitude if x < 0 else magnitude


def _decimal_text(value: Fraction, places: int) -> str:
    scaled = _round_half_away(value * 10**places)
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled)).rjust(places + 1, "0")
    whole, fraction = digits[:-places], digits[-places:].rstrip("0")
    return f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"
