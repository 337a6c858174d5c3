"""When is a predicted answer the same as the gold answer?

Both are normalised (`normalize`), then read as a structure and compared part by part:

- lists (`1, 2`, `\\{1, 2\\}`, `6 and 8`, `1 \\pm \\sqrt 2`): the same items as sets (any
  order, repeats aside);
- tuples `(a, b)`: the same items in order; `(a, b)` also matches the open interval; a
  list of assignments `p=5, q=2; p=7, q=2` against tuples is regrouped into the tuples
  `(5, 2), (7, 2)` (its names, in the order written, give the tuple's order);
- intervals `[a, b)` and unions `A \\cup B`: the same brackets and endpoints;
- matrices (`pmatrix`, `bmatrix`, `array`, ...): the same shape and entries;
- `x = 3` against `3`: the value (a name on the left is a label); in a chain
  `x = 5 + 6 = 11` the last value, if its constant members agree (`20 = 19 = 18` states
  nothing true); `7 + 9 = 16` (a constant left side) states 16 only if its sides agree; two equations `2x + 4y = 3` and `y = ...`: the same equation up to a
  constant factor;
- inequalities: the same relation, either way round (`x > 5` is `5 < x`), and a double
  inequality `a <= x <= b` is the interval `[a, b]`; an inequality of one variable that is
  not that simple (`1 <= |z| <= 3/2`, `x^2 < 4`) is solved over the reals in the worker and
  compared as a set with intervals, unions and other inequalities;
- a multiple-choice letter `(C)` against `C`;
- everything else is one value: exact numbers first (`parse_number`, in process), then
  the symbolic worker (`symbolic`), which evaluates both sides (1e-9 relative tolerance)
  and falls back to `simplify`. Where the gold is a number, the prediction must be one
  (`7 + 9` does not state 16); with `rounding=True` a decimal with at least two decimals
  also matches a value it correctly rounds (`0.33` for `\\frac13`).

A comparison has a time budget; a part that runs out of it counts as different.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from rlenvs.rewards.math import symbolic
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import Number, parse_number

CHOICE = re.compile(r"\(?([A-Ea-e])\)?")
WORDS = re.compile(r"[A-Za-z][A-Za-z ']*")
_DECIMAL = re.compile(r"[-+]?\d*\.(\d+)")
_DECIMAL_COMMA = re.compile(r"(?<![\d,])\d+,\d+(?![\d,])")
_MATRIX = re.compile(r"\\begin\{([pbvBV]?matrix|array)\}(?:\{[^{}]*\})?(.*?)\\end\{\1\}", re.DOTALL)
_MEMBERSHIP = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?\s*\\in(?![A-Za-z])\s*")
_LIST_WORDS = re.compile(r"\s+(?:and|or)\s+|(?<=\))\s*(?:and|or)\s*(?=\()")
_AND_ONLY = re.compile(r"\band\b")
_GLUED_LIST_WORD = re.compile(r"(?<=[\d)}\]])(?:or|and)(?=[A-Za-z(\\])")
"""`W(x)=1orW(x)=-1`: "or"/"and" with no spaces, after a digit or bracket, before a name."""
_ONE_RELATION = re.compile(r"[^<>=!]+(?:<=|>=|!=|=|<|>)[^<>=!]+")
_LETTER = re.compile(r"[A-Za-z]")
COMMAND = re.compile(r"\\[A-Za-z]+")
_LABEL = re.compile(
    r"[^\d+\-]*|[^+\-]*_\{?\d+\}?[^+\-]*"
    r"|[A-Za-z](?:\s*\+\s*[A-Za-z])+"
    r"|[A-Za-z]\w*\s*\(\s*-?[\d./]+(?:\s*,\s*-?[\d./]+)*\s*\)"
    r"|[A-Za-z]\s*\^\s*\{?\d+\}?"
    r"|[A-Za-z]\s*\^\s*\{?\d+\}?(?:\s*\+\s*[A-Za-z]\s*\^\s*\{?\d+\}?)+"
    r"|[A-Za-z]\w*(?:\s*\^\s*\{\s*-1\s*\})?\s*\((?:[^()]|\([^()]*\))*\)"
)
"""A left-hand side that names the value rather than stating an equation: x, f(x), |AB|,
(p, q), a_{37}, \\frac{NO}{BO} (no digits but in subscripts, no + or -), and what AIME-style
questions ask for: a sum of letters `m+n`, a value `f(2)`, `g(f(2))`, `f^{-1}(x)`, a power
`x^2`, a sum of powers `a^2+b^2`."""
_SCALED_MATRIX = re.compile(
    r"(-|-?\d+(?:\.\d+)?|-?\\frac\{[^{}]*\}\{[^{}]*\}|-?\\sqrt\{[^{}]*\})\s*(?:\\cdot\s*)?(\\begin\{([pbvBV]?matrix)\}.*\\end\{\3\})",
    re.DOTALL,
)
"""A number written before a matrix: `\\frac{1}{3}\\begin{pmatrix}..\\end{pmatrix}`, `-\\begin{..}`."""
_ARITHMETIC = re.compile(r"[+*]|\\cdot|\\times")
_LONE_LETTER = re.compile(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])")
_VARIABLE_NAME = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?")
BASE_NUMERAL = re.compile(r"(-?[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)?)\s*_\s*\{?\s*(\d+)\s*\}?")
"""`52_8`, `2A_{16}`, `0.0011_2`: digits in a base, compared digit by digit (any case) and base."""
CHOICE_WITH_TEXT = re.compile(r"\(([A-Ea-e])\)\s+(?!.*\([A-Ea-e]\))(?!(?:or|and)\b)\S.*")
"""`(C) Plane`, `(C) 3`: a multiple-choice letter with its option's text (not another letter: `(C) or (D)`)."""
PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
"""A word of three letters or more, not a command's name: text, not variables (`x` and `X` differ)."""
_EMPTY = re.compile(
    r"\s*(?:\\emptyset|\\varnothing|\\\{\s*\\\}|\{\s*\}|no\s+(?:real\s+)?solutions?|none|no\s+such\s+\w+)\s*",
    re.IGNORECASE,
)
"""The empty set and the words that state it."""
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_SPACE_NOT_BETWEEN_DIGITS = re.compile(r"(?<!\d)\s+|\s+(?!\d)")
_BRACKETS = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Form:
    kind: str
    """leaf | list | tuple | interval | union | matrix | equation | assignment | relation | chain"""
    parts: tuple
    detail: str = ""
    """Brackets of an interval ("[)"), the operator of a relation."""
    source: str = ""
    """"relation" for an interval read from an inequality (`2 < x < 4`): it bounds a
    variable, so it is no point `(2, 4)`."""


def answers_equivalent(
    predicted: str, gold: str, budget: float = symbolic.DEFAULT_BUDGET, *, rounding: bool = False
) -> bool:
    """Whether a predicted final answer (LaTeX, as written) states the gold answer.

    Where the gold answer is a number, the prediction must be a number too: `7 + 9` is not
    accepted for 16, or a model could copy the question's arithmetic into the box instead
    of doing it. `rounding=True` also accepts a decimal with two or more decimals that the
    gold value rounds to (`0.33` for `\\frac13`), as math-verify's precision setting does.
    """
    if not isinstance(predicted, str) or not isinstance(gold, str):
        raise TypeError(
            f"answers must be str, got {type(predicted).__name__} and {type(gold).__name__}: "
            "pass the answer text, e.g. '\\\\frac{3}{4}'"
        )
    return Comparison(budget, rounding).answers_equal(predicted, gold)


MAX_DEPTH = 20
"""Structures nested deeper than this are compared as plain text (no answer nests so)."""


def read_form(text: str, depth: int = 0) -> Form:
    """The structure of a normalised answer (see the module docstring)."""
    if depth > MAX_DEPTH:
        return Form("leaf", (text,))
    read = lambda part: read_form(part, depth + 1)  # noqa: E731
    text = _MEMBERSHIP.sub("", text).strip()
    if parse_number(text) is not None or CHOICE_WITH_TEXT.fullmatch(text):
        return Form("leaf", (text,))  # 11,111,111,100 is one number; `(D) the line y = x` one choice
    if text.startswith("\\{") and text.endswith("\\}") and _closing(text, 1) == len(text) - 1:
        # `\{1\pm\sqrt{5}, -2\}`: the set's items, each with its own plus-minus.
        items = [item for part in split_top_level(text[2:-2], ",;") for item in _expand_pm(part)]
        return Form("list", tuple(read(item) for item in items))
    items = [word_item for item in split_top_level(text, ",;") for word_item in _split_list_words(item)]
    if len(items) > 1:
        forms = []
        for item in items:
            forms.extend(_expand_pm(item))
        # "and" alone joins conditions that must all hold: `x >= -2 and x <= 7` is [-2, 7];
        # with "or" too, which binds first is not written: such a list states no set.
        words = {word.strip() for word in _LIST_WORDS.findall(text)}
        joiner = (
            "and"
            if words == {"and"} and len(split_top_level(text, ",;")) == 1
            else ("mixed" if words == {"and", "or"} else "")
        )
        return Form("list", tuple(read(item) for item in forms), joiner)
    if _PLUS_MINUS.search(text):
        return Form("list", tuple(read(item) for item in _expand_pm(text)))
    unions = _split_top_command(text, "\\cup")
    if len(unions) > 1:
        return Form("union", tuple(read(part) for part in unions))
    relation = _read_relation(text)
    if relation is not None:
        return relation
    if "\\approx" in text and "=" not in text:
        exact, _, approximation = text.partition("\\approx")
        if not (_is_label(exact, approximation) and _LETTER.search(COMMAND.sub("", exact))):
            # `\frac13 \approx 0.333`: the exact value, and a rounding of it that must be right.
            return Form("approx", (exact.strip(), approximation.split("\\approx")[-1].strip(), read(exact.strip())))
    equals = _split_equals(text)
    labelled = _is_label(equals[0], " = ".join(equals[1:])) if len(equals) > 1 else False
    if len(equals) > 2 or (len(equals) == 2 and labelled):
        # `x = 3` names the value 3; kept as an assignment so it can still be compared
        # with an equation (`y = 2x` against `2x - y = 0`). In a chain `x = 5 + 6 = 11` or
        # `(x+1)^2 = x^2+2x+1` every member must equal the next (`20 = 19 = 18` states
        # nothing true); they are kept to be checked.
        members = tuple(part.strip() for part in (equals[1:] if labelled else equals))
        return Form("assignment", (equals[0].strip(), equals[-1].strip(), read(equals[-1]), members))
    if len(equals) == 2:
        return Form("equation", (equals[0].strip(), equals[1].strip()))
    scaled = _SCALED_MATRIX.fullmatch(text)
    if scaled and scaled.group(1).strip():
        # `\frac{1}{3}\begin{pmatrix} -1 \\ 2 \end{pmatrix}`, `-\begin{pmatrix}...`: a scalar times each entry.
        scalar = scaled.group(1).strip()
        factor = "-1" if scalar == "-" else scalar
        scaled_matrix = _MATRIX.fullmatch(scaled.group(2))
        assert scaled_matrix is not None  # `_SCALED_MATRIX`'s group 2 is a whole `\begin{..matrix}..\end{..}`
        rows = [row for row in re.split(r"\\\\", scaled_matrix.group(2)) if row.strip()]
        return Form(
            "matrix", tuple(tuple(read(_scaled(factor, cell.strip())) for cell in row.split("&")) for row in rows)
        )
    matrix = _MATRIX.fullmatch(text)
    if matrix:
        rows = [row for row in re.split(r"\\\\", matrix.group(2)) if row.strip()]
        return Form("matrix", tuple(tuple(read(cell.strip()) for cell in row.split("&")) for row in rows))
    if len(text) >= 2 and text[0] in "([{" and _closing(text, 0) == len(text) - 1:
        inner = text[1:-1]
        if text.startswith("\\{") or text[0] == "{":
            inner = text[2:-2] if text.startswith("\\{") else inner
            return read(inner) if not _has_top(inner, ",;") else Form("list", read(inner).parts)
        parts = split_top_level(inner, ",;")
        if len(parts) == 2 and (text[0] == "[" or text[-1] == "]" or "\\infty" in inner):
            return Form("interval", tuple(read(p) for p in parts), text[0] + text[-1])
        if len(parts) >= 2:
            return Form("tuple", tuple(read(p) for p in parts), text[0] + text[-1])
        if text[0] == "(" or _MATRIX.fullmatch(inner.strip()):  # `\left[\begin{array}..\right]`
            return read(inner)
    if text.startswith("\\{") and text.endswith("\\}"):
        return Form("list", tuple(read(p) for p in split_top_level(text[2:-2], ",;")))
    return Form("leaf", (text,))


class Comparison:
    """Compares a predicted form (always the first argument) with a gold form, within one
    budget of symbolic work however many comparisons it makes (a reply's hedge check
    compares all its answers on one budget)."""

    def __init__(self, budget: float, rounding: bool) -> None:
        self.remaining = budget
        """CPU seconds of symbolic work left to this comparison (waiting for a worker is free)."""
        self.rounding = rounding

    def answers_equal(self, predicted: str, gold: str) -> bool:
        """`answers_equivalent` on this comparison's budget."""
        fast = _numbers_equal(predicted, gold, self.rounding)
        if fast is not None:
            return fast
        return self.forms_equal(read_form(normalize_answer(predicted)), read_form(normalize_answer(gold)))

    def forms_equal(self, a: Form, b: Form) -> bool:
        if a == b:
            return True
        if a.kind == "approx" or b.kind == "approx":
            approx, other = (a, b) if a.kind == "approx" else (b, a)
            exact, approximation, value = approx.parts
            if not self.symbolic("rounded", approximation, exact):
                return False  # `8\\sqrt2 \\approx 3` is false, and states nothing
            return self.forms_equal(value, other) if approx is a else self.forms_equal(other, value)
        a, b = _as_solutions(a, b), _as_solutions(b, a)
        if a.kind == "assignment" and b.kind == "assignment":
            gold_label, label = b.parts[0].replace(" ", ""), a.parts[0].replace(" ", "")
            if _VARIABLE_NAME.fullmatch(gold_label) and label != gold_label:
                return False  # `y = \\frac32` or `y(x) = \\frac32` is not the line `x = \\frac32`
        if a.kind == "assignment" or b.kind == "assignment":
            return self.assignment_equal(a, b) if a.kind == "assignment" else self.assignment_equal(b, a)
        kinds = {a.kind, b.kind}
        if a.kind in ("relation", "chain", "list") and _written_set(b) and not _solved(a):
            return False  # `x^2 - 5x - 14 <= 0` for `[-2, 7]`: the question's inequality, not solved
        if b.kind == "tuple" and a.kind == "interval" and a.source == "relation":
            return False  # `2 < x < 4` bounds x: it is no point (2, 4)
        if a.kind == "list" and b.kind in ("union", "interval") and _relations(a):
            spec_a, spec_b = _set_spec(a), _set_spec(b)  # `x < 2 or x > 3` and `(-\infty, 2) \cup (3, \infty)`
            return spec_a is not None and spec_b is not None and self.symbolic("set", spec_a, spec_b)
        if kinds == {"matrix", "tuple"}:  # a column or row vector written as a tuple
            matrix, vector = (a, b) if a.kind == "matrix" else (b, a)
            entries = _vector_entries(matrix)
            return (
                entries is not None and self.sequence_equal(entries, vector.parts)
                if a is matrix
                else (entries is not None and self.sequence_equal(vector.parts, entries))
            )
        if kinds == {"relation", "interval"}:  # x >= 4 and [4, \infty)
            relation, interval = (a, b) if a.kind == "relation" else (b, a)
            as_interval = _relation_interval(relation)
            if as_interval is not None:
                return self.forms_equal(as_interval, interval)
        if kinds <= _SET_KINDS | {"tuple"} and kinds & {"relation", "chain"} and kinds != {"relation"}:
            spec_a, spec_b = _set_spec(a), _set_spec(b)
            return spec_a is not None and spec_b is not None and self.symbolic("set", spec_a, spec_b)
        if kinds == {"tuple", "interval"}:
            return a.detail == b.detail and self.sequence_equal(a.parts, b.parts)
        if kinds == {"equation", "leaf"}:
            return self.worked_value_equal(a, b)
        if a.kind != b.kind:
            return False
        if a.kind == "leaf":
            return self.leaf_equal(a.parts[0], b.parts[0])
        if a.kind in ("tuple", "interval"):
            return a.detail == b.detail and self.sequence_equal(a.parts, b.parts)
        if a.kind in ("list", "union"):
            return self.set_equal(list(a.parts), list(b.parts))
        if a.kind == "matrix":
            return len(a.parts) == len(b.parts) and all(self.sequence_equal(r, s) for r, s in zip(a.parts, b.parts))
        if a.kind == "equation":
            return self.symbolic("proportional", _difference(*a.parts), _difference(*b.parts))
        if a.kind == "relation":
            if a.detail != b.detail:
                return False
            mode = "proportional" if a.detail == "!=" else "positive"
            return self.symbolic(mode, _difference(*a.parts), _difference(*b.parts))
        return False

    def assignment_equal(self, assignment: Form, other: Form) -> bool:
        label, value_text, value, members = assignment.parts
        if not self.all_equal(members):
            return False
        if other.kind == "assignment":
            other_label = other.parts[0]
            if _VARIABLE_NAME.fullmatch(label) and _VARIABLE_NAME.fullmatch(other_label) and label != other_label:
                return False  # `y = \frac32` is not the line `x = \frac32`
            return self.forms_equal(value, other.parts[2])
        if other.kind == "equation":
            return self.forms_equal(Form("equation", (label, value_text)), other)
        return self.forms_equal(value, other)

    def worked_value_equal(self, a: Form, b: Form) -> bool:
        """`7 + 9 = 16` against 16: an equation whose left side is a constant states its right
        side, but only if both sides agree. `1/2 = 10/9` (false) states no value, and neither
        does `2x = 10` (an equation in x: 10 is not x). An identity between expressions
        (`(x+1)(x+2) = x^2+3x+2`) states its right side too."""
        equation, leaf = (a, b) if a.kind == "equation" else (b, a)
        left, right = equation.parts
        if _LETTER.search(COMMAND.sub("", left)) and not _LETTER.search(COMMAND.sub("", right)):
            return False
        value = read_form(right)
        stated = self.forms_equal(value, leaf) if equation is a else self.forms_equal(leaf, value)
        if not stated:
            return False
        numbers = _numbers_equal(left, right, rounding=False)
        return numbers if numbers is not None else self.symbolic("equal", left, right)

    def all_equal(self, members: tuple[str, ...]) -> bool:
        """Every member of a chain equals the next (`x = 5 + 6 = 11`, `(x+1)^2 = x^2+2x+1`)."""
        for first, second in itertools.pairwise(members):
            numbers = _numbers_equal(first, second, rounding=False)
            if not (numbers if numbers is not None else self.symbolic("equal", first, second)):
                return False
        return True

    def sequence_equal(self, a: tuple, b: tuple) -> bool:
        return len(a) == len(b) and all(self.forms_equal(x, y) for x, y in zip(a, b))

    def set_equal(self, a: list[Form], b: list[Form]) -> bool:
        """Every item of each side has an equal on the other (order and repeats aside)."""
        return all(any(self.forms_equal(x, y) for y in b) for x in a) and all(
            any(self.forms_equal(x, y) for x in a) for y in b
        )

    def leaf_equal(self, a: str, b: str) -> bool:
        if _compact(a) == _compact(b):
            return True
        if _EMPTY.fullmatch(a) and _EMPTY.fullmatch(b):
            return True  # `\\emptyset` for "no solution"
        bases = BASE_NUMERAL.fullmatch(a), BASE_NUMERAL.fullmatch(b)
        if bases[0] and bases[1]:
            return bases[0][1].upper() == bases[1][1].upper() and int(bases[0][2]) == int(bases[1][2])
        choice_text = CHOICE_WITH_TEXT.fullmatch(a)
        if choice_text and (choice := CHOICE.fullmatch(b)):
            return choice_text[1].upper() == choice[1].upper()
        if PROSE_WORD.search(a) and PROSE_WORD.search(b) and _compact(a).lower() == _compact(b).lower():
            return True  # text with a word in it, any case: `june 20` is `\\text{June 20}`
        if WORDS.fullmatch(a) and WORDS.fullmatch(b):
            a, b = _ARTICLE.sub("", a), _ARTICLE.sub("", b)
            choice_a, choice_b = CHOICE.fullmatch(a), CHOICE.fullmatch(b)
            return a.lower() == b.lower() or bool(choice_a and choice_b and choice_a[1].upper() == choice_b[1].upper())
        choice_a, choice_b = CHOICE.fullmatch(a), CHOICE.fullmatch(b)
        if choice_a and choice_b:
            return choice_a[1].upper() == choice_b[1].upper()
        numbers = _numbers_equal(a, b, self.rounding)
        if numbers is not None:
            return numbers
        if parse_number(b, letter_units=False) is not None:
            return False  # the gold is a number and the prediction is not (`7 + 9` for 16)
        rounded = _DECIMAL.fullmatch(a)
        if self.rounding and rounded and len(rounded.group(1)) >= 2 and self.symbolic("rounded", a, b):
            return True
        return self.symbolic("equal", a, b)

    def symbolic(self, mode: str, a: str, b: str) -> bool:
        if self.remaining <= 0:
            return False
        answers = symbolic.compare([(mode, a, b)], budget=self.remaining)
        self.remaining -= answers.cpu
        return answers.results[0] is True


def _compact(text: str) -> str:
    """The text without spaces, but for a space between two digits (`9 0` is not `90`)."""
    return _SPACE_NOT_BETWEEN_DIGITS.sub("", text)


def _numbers_equal(a: str, b: str, rounding: bool) -> bool | None:
    """Exact comparison when both sides are plain numbers; None when either is not. `b` is
    read as a gold answer is (`3s^2` is no number there)."""
    x, y = parse_number(a), parse_number(b, letter_units=False)
    if x is None and y is not None and "." in b:
        x = _decimal_comma(a)
    elif y is None and x is not None and "." in a:
        y = _decimal_comma(b)  # a gold `1,22` is 1.22; a gold `(0,1)` is a pair, never 0.1
    if x is None or y is None:
        return None
    if x == y:
        return True
    return rounding and _rounds_to(a, y)


def _decimal_comma(text: str) -> Number | None:
    """`1000,99` or `2,74 $` read as 1000.99 and 2.74 (one comma, between digits), tried only
    against a side written with a decimal point (otherwise `-2,1` is the list of -2 and 1);
    never in brackets (`(0,1)` is a pair)."""
    if text.count(",") != 1 or not _DECIMAL_COMMA.search(text) or re.search(r"[()\[\]{}]", text):
        return None
    return parse_number(text.replace(",", "."))


def _rounds_to(decimal_text: str, value: Number) -> bool:
    """`decimal_text` has at least two decimals and is `value` correctly rounded to them."""
    match = _DECIMAL.search(decimal_text)
    if match is None or len(match.group(1)) < 2:
        return False
    digits = len(match.group(1))
    stated = parse_number(decimal_text)
    return stated is not None and abs(Fraction(stated) - Fraction(value)) * 10**digits <= Fraction(1, 2)


def _difference(left: str, right: str) -> str:
    return f"({left}) - ({right})"


_VARIABLE = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?")
_QUANTITY = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?(?:\([^()]*\))?")
"""What `a < ... < b` bounds when it reads as an interval: a variable or a value `f(x)`."""


def _relation_interval(relation: Form) -> Form | None:
    """`x < b` as (-oo, b), `a <= x` as [a, oo); None unless one side is a lone variable."""
    right, left = relation.parts  # the relation reads `left op right`
    closed = relation.detail == "<="
    if relation.detail == "!=":
        return None
    if _VARIABLE.fullmatch(left):
        return Form("interval", (read_form("-\\infty"), read_form(right)), "(" + ("]" if closed else ")"))
    if _VARIABLE.fullmatch(right):
        return Form("interval", (read_form(left), read_form("\\infty")), ("[" if closed else "(") + ")")
    return None


def _read_relation(text: str) -> Form | None:
    parts = re.split(r"(<=|>=|!=|<|>)", text)
    if len(parts) == 3:
        left, operator, right = (p.strip() for p in parts)
        if operator in (">", ">="):
            left, right, operator = right, left, operator.replace(">", "<")
        return Form("relation", (right, left), operator)  # right - left > 0 (or != 0)
    if len(parts) == 5 and not _QUANTITY.fullmatch(parts[2].strip()):
        return Form("chain", (text,))  # 1 <= |z| <= 3/2 is not the interval [1, 3/2] of z
    if len(parts) == 5 and parts[1] in ("<", "<=") and parts[3] in ("<", "<="):
        low, high = parts[0].strip(), parts[4].strip()
        brackets = ("[" if parts[1] == "<=" else "(") + ("]" if parts[3] == "<=" else ")")
        return Form("interval", (read_form(low), read_form(high)), brackets, "relation")
    if len(parts) == 5 and parts[1] in (">", ">=") and parts[3] in (">", ">="):
        high, low = parts[0].strip(), parts[4].strip()
        brackets = ("[" if parts[3] == ">=" else "(") + ("]" if parts[1] == ">=" else ")")
        return Form("interval", (read_form(low), read_form(high)), brackets, "relation")
    return None


def stated_value(answer: str) -> str:
    """The part of a normalised answer that is compared as its value: what a label names
    (`x = \\sqrt{50}` is `\\sqrt{50}`), the last member of a chain or identity, the exact
    value before `\\approx`; else the answer itself."""
    form = read_form(answer)
    if form.kind in ("assignment", "equation"):
        return form.parts[1]
    return form.parts[0] if form.kind in ("leaf", "approx") else answer


def _scaled(factor: str, entry: str) -> str:
    """`factor` times a matrix entry: the exact number where both are numbers, else the product."""
    x, y = parse_number(factor), parse_number(entry)
    if x is None or y is None:
        return f"({factor})\\cdot({entry})"
    value = Fraction(x) * Fraction(y)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _is_label(left: str, right: str) -> bool:
    """`left = right` names a value: a label that is not itself in the value (`x = 2x + 3`
    is an equation in x, not a name for 2x + 3) and names no variable twice (`x + x = 4`
    and `x \\cdot x = 4` are equations)."""
    left = left.strip()
    if not _LABEL.fullmatch(left):
        return False
    variables = _LONE_LETTER.findall(COMMAND.sub(" ", left))
    if _ARITHMETIC.search(left) and len(variables) != len(set(variables)):
        return False
    return not (_VARIABLE_NAME.fullmatch(left) and re.search(rf"(?<![A-Za-z\\]){re.escape(left)}(?![A-Za-z])", right))


def _split_equals(text: str) -> list[str]:
    if "\\approx" in text and "=" not in text:
        return [part.strip() for part in text.split("\\approx")]  # `x \approx 11` names 11
    if "=" not in text:
        return [text]
    if "\\approx" in text:
        before, _, after = text.partition("\\approx")
        text = before if "=" in before else after
    return list(split_top_level(text, "="))


MAX_PLUS_MINUS = 3
"""`a \\pm b` expands to two answers; more than this many signs would explode, and are text."""


_PLUS_MINUS = re.compile(r"\\(pm|mp)(?![A-Za-z])")
"""`\\pm` and `\\mp`, not the start of `\\pmod` or `\\pmb`."""


def _expand_pm(text: str) -> list[str]:
    signs = _PLUS_MINUS.findall(text)
    if not signs or len(signs) > MAX_PLUS_MINUS:
        return [text]
    for sign in ("\\pm", "\\mp"):
        match = re.search(re.escape(sign) + r"(?![A-Za-z])", text)
        if match:
            head, tail = text[: match.start()], text[match.end() :]
            first, second = ("+", "-") if sign == "\\pm" else ("-", "+")
            if not head.strip():
                return _expand_pm(f"{first}{tail}") + _expand_pm(f"{second}{tail}")
            return _expand_pm(f"{head}{first}{tail}") + _expand_pm(f"{head}{second}{tail}")
    return [text]


def _split_list_words(text: str) -> list[str]:
    parts = [part for part in _LIST_WORDS.split(text) if part.strip()]
    return [piece for part in parts for piece in _split_glued_words(part)]


def _split_glued_words(text: str) -> list[str]:
    """`W(x)=1orW(x)=-1` as two answers; split only where every piece is one whole relation,
    so "or"/"and" inside a word (`\\floor`, `x = 10ordinal`) never splits."""
    if "or" not in text and "and" not in text:
        return [text]
    pieces = _GLUED_LIST_WORD.split(text)
    return pieces if len(pieces) > 1 and all(_ONE_RELATION.fullmatch(p) for p in pieces) else [text]


_COORDINATES = frozenset("xyz")


def _as_solutions(form: Form, other: Form) -> Form:
    """A list of assignments `p=5, q=2; p=7, q=2` as the tuples `(5, 2), (7, 2)`, when the
    other answer is a tuple or a list of tuples with one item per name. The names must
    repeat in the same order in every group; the tuple follows that order, but for the
    coordinates x, y, z, which it takes in that order."""
    if form.kind != "list" or not all(part.kind == "assignment" for part in form.parts):
        return form
    tuples = [other] if other.kind == "tuple" else list(other.parts) if other.kind == "list" else []
    if not tuples or any(t.kind != "tuple" for t in tuples):
        return form
    names = [part.parts[0].replace(" ", "") for part in form.parts]
    size = len(dict.fromkeys(names))
    if size < 2 or len(names) % size or any(len(t.parts) != size for t in tuples):
        return form
    if any(names[i] != names[i % size] for i in range(len(names))):
        return form
    # x, y and z are a tuple's coordinates in that order, however the reply lists them
    # (`y = -2, x = 1` is (1, -2)); other names keep the order written (`m = 2, b = 3`).
    order = sorted(range(size), key=lambda i: names[i]) if set(names[:size]) <= _COORDINATES else range(size)
    groups = [
        Form("tuple", tuple(form.parts[i + j].parts[2] for j in order), tuples[0].detail)
        for i in range(0, len(names), size)
    ]
    return groups[0] if other.kind == "tuple" and len(groups) == 1 else Form("list", tuple(groups))


_SET_KINDS = frozenset({"relation", "chain", "interval", "union"})


def _written_set(form: Form) -> bool:
    """A gold answer written as a set in solved form: interval notation, a union, an open
    interval `(a, b)`; not an inequality (any equivalent inequality answers one of those)."""
    if form.kind == "interval":
        return form.source != "relation"
    if form.kind == "union":
        return True
    return form.kind == "tuple" and len(form.parts) == 2 and form.detail == "()"


def _solved(form: Form) -> bool:
    """An inequality in solved form: each side of each link is a lone variable or free of
    letters (`x < 2`, `-2 <= x <= 7`, `x != 3`); a list of such (`x < 2 or x > 3`)."""
    if form.kind == "list":
        return all(_solved(part) for part in form.parts)
    if form.kind == "interval":
        return True
    sides: Sequence[str]
    if form.kind == "relation":
        sides = form.parts
    elif form.kind == "chain":
        sides = re.split(r"<=|>=|!=|<|>", form.parts[0])
    else:
        return True
    return all(_VARIABLE.fullmatch(side.strip()) or not _LETTER.search(COMMAND.sub("", side)) for side in sides)


def _relations(form: Form) -> bool:
    """A list of inequalities and intervals (`x < 2 or x > 3`), to compare as their union."""
    return all(part.kind in ("relation", "chain", "interval", "union") for part in form.parts)


def _vector_entries(matrix: Form) -> tuple | None:
    """The entries of a one-column or one-row matrix, in order; None for any other shape."""
    rows = matrix.parts
    if len(rows) == 1:
        return rows[0]
    if all(len(row) == 1 for row in rows):
        return tuple(row[0] for row in rows)
    return None


def _open_interval(form: Form) -> Form:
    """`(a, b)` is also the open interval (a, b)."""
    if form.kind == "tuple" and form.detail == "()" and len(form.parts) == 2:
        return Form("interval", form.parts, "()")
    return form


def _set_spec(form: Form) -> str | None:
    """A set of reals for the worker's "set" mode (JSON): an inequality to solve, or a union
    of intervals by their endpoints; None if the form is neither."""
    if form.kind == "list":
        if form.detail == "mixed":
            return None
        specs = [_set_spec(part) for part in form.parts]
        parts = [spec for spec in specs if spec is not None]
        combine = "intersection" if form.detail == "and" else "union"
        return None if len(parts) != len(specs) else json.dumps({combine: [json.loads(part) for part in parts]})
    if form.kind == "chain":
        return json.dumps({"relation": form.parts[0]})
    if form.kind == "relation":
        right, left = form.parts
        return json.dumps({"relation": f"{left} {form.detail} {right}"})
    intervals = [_open_interval(i) for i in (form.parts if form.kind == "union" else [form])]
    if not all(i.kind == "interval" and all(p.kind == "leaf" for p in i.parts) for i in intervals):
        return None
    return json.dumps({"intervals": [[i.parts[0].parts[0], i.parts[1].parts[0], i.detail] for i in intervals]})


def _has_top(text: str, separators: str) -> bool:
    return len(split_top_level(text, separators)) > 1


def split_top_level(text: str, separators: str) -> list[str]:
    """Split at separators that are not inside brackets or braces."""
    parts, depth, start = [], 0, 0
    index = 0
    while index < len(text):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char in separators and depth == 0 and not (char == "=" and index > 0 and text[index - 1] in "<>!"):
            parts.append(text[start:index])
            start = index + 1
        index += 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()] or [text]


def _split_top_command(text: str, command: str) -> list[str]:
    if command not in text:
        return [text]
    return [part.strip() for part in text.split(command) if part.strip()]


def _closing(text: str, open_index: int) -> int | None:
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] in "([{":
            depth += 1
        elif text[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return None
