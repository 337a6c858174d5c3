"""Replies written from a math task's own gold answer and problem: the correct answer in other
notations (must earn the gold's reward) and, each at every depth of the answer's structure,
near misses, restatements, hedges and answers put where a final answer is not read (each
must earn nothing).

Every reply is computed from the gold's tree (`answer_tree`), not picked from a list of
examples, so a new data set brings its own cases:

- *notation*: the whole answer in every `Style` (brackets with `\\left`, no spaces, list
  items in reverse order, a set's braces, `\\dfrac`, one-token arguments with and without
  braces, a sum's terms in another order, a coefficient with `\\cdot`, a swapped equation),
  and the spellings of its type (`60^{\\circ}` and `60°`, `(C)` and `C`, `1{,}000`, a unit
  dropped), each in one of several reply shapes;
- *near miss*: one leaf changed (the value ±1 or negated, two digits transposed, another
  choice letter, another base, a bracket flipped, a pair read as a decimal and back,
  degrees given for radians) or one item dropped, added or moved;
- *restatement*: the problem's own expressions, and the gold with work left undone at one
  leaf (`19 - 1` for 18, `\\frac{6}{8}` for `\\frac34`, `\\sqrt{45}` for `3\\sqrt5`,
  `\\sqrt{2}\\sqrt{26}` for `\\sqrt{52}`, an unmultiplied complex product);
- *hedge*: the gold beside a near miss, in every way a reply offers two answers;
- *misplaced answer*: the gold only inside a code block, a tool call or a forged tool result.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from fractions import Fraction

from rlenvs.rewards.math.answer_types import BASE_NUMERAL, CHOICE, answer_type, leaf_type
from rlenvs.rewards.math.equivalence import Form
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import parse_number
from rlenvs.testing.certify.answer_tree import (
    Style,
    braced,
    commuted,
    display_fractions,
    explicit_products,
    leaf,
    leaves,
    node_at,
    read_tree,
    render,
    replace,
    signed_numerators,
    spaced,
    tight,
    top_terms,
    unbraced,
)
from rlenvs.testing.certify.probes import EQUIVALENT, Probe, Subject, attack, equivalent

MAX_LEAVES_REWRITTEN = 4
"""Leaves of a large structure (a matrix, a long list) rewritten one at a time, at most."""

REPLY_SHAPES = (
    "\\boxed{{{}}}",
    "The final answer is $\\boxed{{{}}}$.",
    "So the answer is\n\\[\n\\boxed{{{}}}\n\\]",
    "**Final answer:** $\\boxed{{ {} }}$",
)
"""Where a reply puts its final answer; every notation is written in one of them."""

_STYLES = (
    Style("plain"),
    Style("spaced", separator=" , ", leaf=spaced),
    Style("tight", separator=",", union="\\cup", leaf=tight),
    Style("left-right", left="\\left", right="\\right"),
    Style("reordered", reverse_sets=True, leaf=commuted),
    Style("set braces", set_braces=True),
    Style("display fractions", matrix="bmatrix", leaf=display_fractions),
    Style("braced arguments", leaf=braced),
    Style("bare arguments", leaf=unbraced),
    Style("signed numerators", leaf=signed_numerators),
    Style("explicit products", leaf=explicit_products),
    Style("swapped equation", swap_equation=True),
)
_NO_ARITHMETIC_STYLES = ("explicit products", "reordered")
"""Styles that change how a leaf's operations are written: not applied to a word, a choice
letter or a numeral in a base, whose letters are no variables."""
_WORDY = ("text", "choice", "choice with text", "base numeral", "number with unit", "degrees", "percent")


def math_probes(subject: Subject) -> Iterator[Probe]:
    """Every math probe of the subject's gold answer (none where it has no gold)."""
    if subject.gold is None:
        return
    gold = subject.gold
    kind = answer_type(gold)
    tree = read_tree(gold)
    misses = list(near_misses(gold, tree))
    for why, reply in notations(gold, tree, kind):
        yield equivalent("notation", reply, why, kind)
    for why, text in [*named_tuples(tree, subject.prompt), *problem_spellings(tree, kind, subject.prompt)]:
        yield equivalent("notation", f"The final answer is $\\boxed{{{text}}}$.", why, kind)
    for why, reply in rechecks(render(tree)):
        yield equivalent("re-check", reply, why, kind)
    for asked, why, text in number_forms(tree, subject.prompt):
        reply = f"The final answer is $\\boxed{{{text}}}$."
        yield attack("excluded form", reply, why, kind) if asked else equivalent("notation", reply, why, kind)
    for why, text in misses:
        yield attack("near miss", f"The final answer is $\\boxed{{{text}}}$.", why, kind)
    for why, text in restatements(gold, tree, subject.prompt):
        yield attack("restatement", f"The final answer is $\\boxed{{{text}}}$.", why, kind)
    if misses:
        wrong = _hedge_partner(tree, misses)
        for why, reply in hedges(render(tree), wrong):
            yield attack("hedge", reply, why, kind)
        for why, reply in misplaced(render(tree), wrong):
            yield attack("misplaced answer", reply, why, kind)
    yield from tool_turns(render(tree), kind, subject.max_turns)


# --- equivalent notations -----------------------------------------------------------------------


def notations(gold: str, tree: Form, kind: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for the gold written in every style and every spelling of its type."""
    seen: set[str] = set()
    written: list[tuple[str, str]] = []
    wordy = kind in _WORDY
    for style in _STYLES:
        if wordy and style.name in _NO_ARITHMETIC_STYLES:
            continue
        written.append((f"the gold in the {style.name} style", render(tree, style)))
    written.extend(spellings(gold, tree, kind))
    for number, (why, text) in enumerate(written):
        if text in seen:
            continue
        seen.add(text)
        shape = REPLY_SHAPES[number % len(REPLY_SHAPES)]
        yield why, shape.format(text)


def spellings(gold: str, tree: Form, kind: str) -> list[tuple[str, str]]:
    """The other ways people write an answer of this type (its leaf as the data writes it)."""
    raw = gold.strip()
    text = render(tree)
    found: list[tuple[str, str]] = [("the gold exactly as the data writes it", raw)]
    if tree.kind == "tuple":
        found.append(
            ("the tuple as a vector in angle brackets", f"\\langle {', '.join(map(render, tree.parts))} \\rangle")
        )
    if tree.kind == "interval" and "\\infty" not in text and tree.detail != "[]":
        low, high = map(render, tree.parts)
        opening = "]" if tree.detail[0] == "(" else "["
        closing = "[" if tree.detail[1] == ")" else "]"
        found.append(("the interval's open ends turned out (French notation)", f"{opening}{low}, {high}{closing}"))
    if kind == "degrees":
        number = re.sub(r"\s*\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree|°", "", raw).strip()
        found += [
            ("degrees with a braced sign", f"{number}^{{\\circ}}"),
            ("degrees as °", f"{number}°"),
            ("degrees as ^o", f"{number}^o"),
        ]
    elif kind == "choice":
        letter = re.sub(r"[^A-Ea-e]", "", normalize_answer(raw)).upper()
        found += [(f"the letter {spelt}", spelt) for spelt in (f"({letter})", letter, f"\\text{{({letter})}}")]
    elif kind == "text":
        found += [("the word without \\text", text), ("the word in \\textbf", f"\\textbf{{{text}}}")]
    elif kind == "percent":
        number = re.sub(r"\s*\\?%", "", raw)
        found += [("the percentage without its sign", number), ("a percent sign without backslash", f"{number}%")]
    elif kind == "number with unit":
        found += [("the number without its unit", text)]
    elif kind == "base numeral" and (numeral := BASE_NUMERAL.fullmatch(text)):
        digits, base = numeral[1], int(numeral[2])
        found += [("the base braced", f"{digits}_{{{base}}}"), ("the digits in parentheses", f"({digits})_{{{base}}}")]
        if 2 <= base <= len(_BASE_WORDS) + 1:
            found.append(("the base as a word", f"{digits}_{{\\text{{{_BASE_WORDS[base - 2]}}}}}"))
    elif kind == "integer" and (value := parse_number(text)) is not None and abs(int(value)) >= 1000:
        grouped = f"{int(value):,}"
        found += [("thousands with {,}", grouped.replace(",", "{,}")), ("thousands with commas", grouped)]
    elif kind == "decimal" and (value := parse_number(text)) is not None:
        found += [("a trailing zero", f"{text}0")]
    elif kind == "fraction" and (value := parse_number(text)) is not None and value.denominator != 1:
        found += [
            ("a slash fraction", f"{value.numerator}/{value.denominator}"),
            ("TeX's \\over", f"{{{value.numerator} \\over {value.denominator}}}"),
        ]
    return found


_BASE_WORDS = "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen".split()
_MODULUS = re.compile(r"(?:divided by|modulo|mod|\\pmod\s*\{?)\s*\$?\s*(\d+)")
_OPTION = re.compile(r"\(([A-E])\)\s*([^()\n]{1,40}?)\s*(?=\([A-E]\)|\n|$)")


def problem_spellings(tree: Form, kind: str, problem: str) -> Iterator[tuple[str, str]]:
    """Spellings the problem's own wording suggests: a remainder as a congruence modulo the
    problem's modulus, a number in base ten when the problem works in bases, a choice letter
    with its option's text."""
    text = render(tree)
    value = parse_number(text, letter_units=False) if kind == "integer" else None
    if value is not None and value >= 0:
        modulus = _MODULUS.search(problem)
        if modulus and "remainder" in problem.lower() and value < int(modulus[1]):
            yield "the remainder as a congruence", f"n \\equiv {value} \\pmod{{{modulus[1]}}}"
        if re.search(r"\bbase\b", problem):
            yield "the number with its base ten written", f"{value}_{{10}}"
    if kind == "choice":
        letter = re.sub(r"[^A-Ea-e]", "", normalize_answer(text)).upper()
        for option in _OPTION.finditer(problem):
            if option[1] == letter and option[2].strip():
                option_text = option[2].replace("$", "").strip().rstrip(".,;")
                yield "the letter with its option's text", f"({letter}) {option_text}"


_NAMED_TUPLE = re.compile(r"\(\s*([a-z])\s*,\s*([a-z])\s*(?:,\s*([a-z])\s*)?\)")


def named_tuples(tree: Form, problem: str) -> Iterator[tuple[str, str]]:
    """A tuple the problem names by its variables ("the ordered pair $(x, y)$") written as
    those variables' values: `x = 6, y = -7` and `(x, y) = (6, -7)`."""
    if tree.kind != "tuple":
        return
    for match in _NAMED_TUPLE.finditer(problem):
        names = [name for name in match.groups() if name]
        if len(names) == len(tree.parts) and len(set(names)) == len(names):
            values = [render(part) for part in tree.parts]
            yield "the tuple as its variables' values", ", ".join(f"{n} = {v}" for n, v in zip(names, values))
            yield "the tuple named by its variables", f"({', '.join(names)}) = {render(tree)}"
            if set(names) <= {"x", "y", "z"}:
                pairs = list(zip(names, values))[::-1]
                yield "the coordinates' values, last first", ", ".join(f"{n} = {v}" for n, v in pairs)
            return


_FORM_WORDS = {
    "fraction": re.compile(r"(?<!not )\b(?:common|improper) fractions?\b|\bas a fraction\b", re.IGNORECASE),
    "decimal": re.compile(r"\b(?:as|to|into|in) a decimal\b|\bnearest (?:tenth|hundredth|thousandth)\b", re.IGNORECASE),
    "mixed": re.compile(r"\b(?:as|to|into|in) a mixed number\b|\bmixed number form\b", re.IGNORECASE),
}
"""What a problem may say of its answer's form, read here on their own (not the verifier's
reading): the other forms of the same number are then no answer."""


def number_forms(tree: Form, problem: str) -> Iterator[tuple[bool, str, str]]:
    """(excluded, why, answer): the gold number in the other forms numbers take (a decimal, a
    fraction, a mixed number). A form the problem rules out ("Express your answer as a
    common fraction") is `excluded`, and must earn nothing; where the problem asks for no
    form, a terminating fraction's decimal is the same answer."""
    if tree.kind != "leaf" or (value := parse_number(tree.parts[0], letter_units=False)) is None:
        return
    value = Fraction(value)
    text = tree.parts[0]
    asks = {form for form, pattern in _FORM_WORDS.items() if pattern.search(problem)}
    if value.denominator == 1:
        return
    if "." not in text and _terminates(value.denominator):
        decimal = _number(value, True)
        if asks & {"fraction", "mixed"}:
            yield True, "a decimal where the problem asks for a fraction", decimal
        elif not asks:
            yield False, "a terminating fraction as its decimal", decimal
    if "." in text and "decimal" in asks:
        yield True, "a fraction where the problem asks for a decimal", _number(value, False)
    whole = abs(value.numerator) // value.denominator
    if whole and "mixed" in asks and "frac" in text and not re.search(r"\d\s*\\frac", text):
        yield True, "an improper fraction where the problem asks for a mixed number", _number(value, False)


# --- near misses ----------------------------------------------------------------------------------


def near_misses(gold: str, tree: Form) -> Iterator[tuple[str, str]]:
    """(why, answer) for answers one slip away from the gold: each is wrong."""
    for path, node in _values(tree):
        where = f" at {_where(path)}" if path else ""
        end = _interval_end(tree, path)
        if end is not None:
            # An interval's end moves outwards only: moved inwards, `(3, 4]` could become the
            # empty `(4, 4]`, which a union or an "or" adds nothing to.
            text = node.parts[0]
            value = parse_number(text, letter_units=False)
            step = -1 if end == 0 else 1
            if value is not None:
                moved = _number(Fraction(value) + step, "." in text)
            elif leaf_type(text) != "infinity":
                moved = f"{text} {'-' if step < 0 else '+'} 1"
            else:
                continue
            yield (
                f"the interval's {'lower' if step < 0 else 'upper'} end moved out{where}",
                render(replace(tree, path, leaf(moved))),
            )
            continue
        for why, text in _leaf_misses(node.parts[0], gold if not path else node.parts[0]):
            yield why + where, render(replace(tree, path, leaf(text)))
    yield from _structure_misses(tree)
    yield from _separator_misses(tree)
    if tree.kind == "list" and ("\\pm" in gold or "\\mp" in gold) and len(tree.parts) == 2:
        for part in tree.parts:
            yield "one of the two signs of a ±", render(part)


def _leaf_misses(text: str, raw: str) -> Iterator[tuple[str, str]]:
    kind = leaf_type(raw)
    value = parse_number(text, letter_units=False)
    if kind in ("choice", "choice with text"):
        letter = re.sub(r"[^A-Ea-e]", "", text.split()[0] if kind == "choice with text" else text).upper()[:1]
        if letter:
            other = "ABCDE"[("ABCDE".index(letter) + 1) % 5]
            yield "another option's letter", f"({other})"
        return
    if kind == "base numeral" and (numeral := BASE_NUMERAL.fullmatch(text)):
        digits, base = numeral[1], int(numeral[2])
        yield "another base", f"{digits}_{{{base + 1}}}"
        last = int(digits[-1], 36) if digits[-1].isalnum() else 0
        changed = digits[:-1] + _digit((last + 1) % base)
        if changed != digits:
            yield "another last digit", f"{changed}_{{{base}}}"
        return
    if kind == "text":
        word = text.strip()
        if (number := re.search(r"\d+", word)) is not None:
            yield (
                "the number in the text changed",
                f"\\text{{{word[: number.start()]}{int(number[0]) + 1}{word[number.end() :]}}}",
            )
        elif word[::-1].lower() != word.lower():
            yield "the word reversed", f"\\text{{{word[::-1]}}}"
        return
    if value is not None:
        value = Fraction(value)
        decimal = "." in text
        yield "the value plus one", _number(value + 1, decimal)
        if value != 0:
            yield "the sign flipped", _number(-value, decimal)
        if value.denominator == 1 and (swapped := _transposed(int(value))) is not None:
            yield "two digits transposed", str(swapped)
        if value.denominator != 1 and abs(value) != 1 and value != 0:
            yield "the fraction upside down", _number(1 / value, False)
        return
    if kind == "infinity":
        return  # an interval's infinite end: its brackets and the other end are changed instead
    yield "the value plus one", f"{text} + 1" if top_terms(text) else f"{text}+1"
    yield "the value negated", f"-\\left({text}\\right)"
    yield "the value doubled", f"2\\left({text}\\right)"
    degrees = _pi_multiple(text)
    if degrees is not None:
        yield "degrees given for radians", _number(degrees, False)


def _structure_misses(tree: Form) -> Iterator[tuple[str, str]]:
    parts = tree.parts
    if tree.kind in ("tuple", "list", "union") and len(parts) >= 2:
        kept = tree.__class__(tree.kind, parts[:-1], tree.detail, tree.source)
        if len(parts) >= 3 or tree.kind != "tuple":
            yield f"the {tree.kind} without its last item", render(kept)
        extra = _first_number(tree)
        if extra is not None:
            added = tree.__class__(tree.kind, (*parts, leaf(extra)), tree.detail, tree.source)
            yield f"the {tree.kind} with an item too many", render(added)
    if (
        tree.kind == "tuple"
        and len(parts) >= 2
        and normalize_answer(render(parts[0])) != normalize_answer(render(parts[1]))
    ):
        swapped = tree.__class__(tree.kind, (parts[1], parts[0], *parts[2:]), tree.detail, tree.source)
        yield "the first two items of an ordered tuple swapped", render(swapped)
    if tree.kind == "interval":
        low, high = (render(part) for part in parts)
        flips = {"[": "(", "(": "["} if "\\infty" not in low else {}
        if tree.detail[0] in flips:
            yield (
                "the left bracket flipped",
                render(tree.__class__("interval", parts, flips[tree.detail[0]] + tree.detail[1])),
            )
        if "\\infty" not in high:
            closing = {"]": ")", ")": "]"}[tree.detail[1]]
            yield "the right bracket flipped", render(tree.__class__("interval", parts, tree.detail[0] + closing))
    if tree.kind == "matrix" and len(parts) >= 2 and all(len(row) == len(parts) for row in parts):
        transposed = tuple(zip(*parts))
        if transposed != tuple(parts):
            yield "the matrix transposed", render(tree.__class__("matrix", transposed))
    if tree.kind == "assignment" and re.fullmatch(r"[A-Za-z]", tree.parts[0].strip()):
        name = tree.parts[0].strip()
        other = "y" if name != "y" else "x"
        yield "the value given another variable's name", f"{other} = {render(tree.parts[2])}"
    if tree.kind == "relation":
        right, left = tree.parts
        flipped = {"<": ">", "<=": "\\ge", "!=": "="}[tree.detail]
        yield "the inequality reversed", f"{left} {flipped} {right}"
    if tree.kind == "equation" and re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", " ".join(tree.parts))):
        left, right = tree.parts  # an equation in variables (`0.56 = 56\%` states numbers)
        yield "the equation's constant changed", f"{left} = {right} + 1"


def _separator_misses(tree: Form) -> Iterator[tuple[str, str]]:
    """A pair of whole numbers read as a decimal, and a decimal read as a pair."""
    if tree.kind in ("tuple", "interval") and len(tree.parts) == 2:
        texts = [render(part) for part in tree.parts]
        if all(re.fullmatch(r"\d+", text) for text in texts):
            yield "the pair read as a decimal", f"{texts[0]}.{texts[1]}"
    if tree.kind == "leaf" and (decimal := re.fullmatch(r"(\d+)\.(\d+)", tree.parts[0])):
        yield "the decimal read as a pair", f"({decimal[1]}, {decimal[2]})"


# --- restatements -------------------------------------------------------------------------------

_SPANS = re.compile(r"\$\$(.+?)\$\$|\$((?:[^$\\]|\\.)+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_SIDES = re.compile(r"=|<|>|\\le(?:q)?(?![a-z])|\\ge(?:q)?(?![a-z])|\\ne(?:q)?(?![a-z])|\\approx")
MAX_QUESTION_EXPRESSION = 200


def restatements(gold: str, tree: Form, problem: str) -> Iterator[tuple[str, str]]:
    """(why, answer) for answers equal to the gold in value (or not even that) that do no
    work: the problem's own expressions, and the gold with arithmetic left undone at one leaf."""
    gold_key = _written_key(render(tree))
    for expression in question_expressions(problem):
        if _written_key(expression) == gold_key or re.fullmatch(r"-?\d+(?:\.\d+)?", expression.strip()):
            continue  # the gold as written, or a plain number: copying it is answering
        yield "an expression of the problem, copied", expression
    for path, node in _values(tree):
        where = f" at {_where(path)}" if path else ""
        for why, text in undone(node.parts[0]):
            yield why + where, render(replace(tree, path, leaf(text)))
        if parse_number(node.parts[0], letter_units=False) is None and leaf_type(node.parts[0]) not in _WORDY:
            for why, text in wrapped(node.parts[0]):
                yield why + where, render(replace(tree, path, leaf(text)))
    for expression in question_expressions(problem):
        if _written_key(expression) != gold_key and parse_number(expression, letter_units=False) is None:
            for why, text in wrapped(expression):
                yield f"an expression of the problem, copied: {why}", text


def question_expressions(problem: str) -> list[str]:
    """Each side of each relation in the problem's math spans, each item of a list."""
    found: list[str] = []
    for span in _SPANS.finditer(problem):
        body = next(group for group in span.groups() if group is not None)
        for side in _SIDES.split(body):
            for part in _top_level_split(side):
                part = part.strip().rstrip(".,;:?").strip()
                if part and len(part) <= MAX_QUESTION_EXPRESSION and part not in found and re.search(r"[\d\\]", part):
                    found.append(part)
    return found


def undone(text: str) -> Iterator[tuple[str, str]]:
    """The leaf with work left undone that a correct answer has done: `19 - 1` for 18."""
    value = parse_number(text, letter_units=False)
    if value is not None:
        value = Fraction(value)
        if value.denominator == 1:
            yield from _integer_undone(int(value))
        elif "." in text:
            yield "a subtraction left undone", f"{_number(value + 1, True)} - 1"
        else:
            yield "a fraction not in lowest terms", f"\\frac{{{2 * value.numerator}}}{{{2 * value.denominator}}}"
            numerator, denominator = value.numerator, value.denominator
            yield (
                "a sum over a common denominator left undone",
                (f"\\frac{{{numerator - 1}}}{{{denominator}}} + \\frac{{1}}{{{denominator}}}"),
            )
        for why, rewritten in _trigonometric(value):
            yield why, rewritten
        return
    kind = leaf_type(text)
    if kind in _WORDY or kind == "infinity":
        return
    yield "a cancelling sum left in", f"{text} + 1 - 1" if top_terms(text) else f"{text}+1-1"
    yield "a factor and its inverse left in", f"\\frac{{2\\left({text}\\right)}}{{2}}"
    root = re.fullmatch(r"(\d*)\\sqrt\{(\d+)\}", text.replace(" ", ""))
    if root:
        outside, inside = int(root[1] or 1), int(root[2])
        if outside > 1:
            yield "a square factor moved under the root", f"\\sqrt{{{outside * outside * inside}}}"
        whole = outside * outside * inside
        factor = next((d for d in range(2, math.isqrt(whole) + 1) if whole % d == 0 and d * d != whole), None)
        if factor is not None:
            yield "a product of roots left unmultiplied", f"\\sqrt{{{factor}}}\\sqrt{{{whole // factor}}}"
    for why, rewritten in _trigonometric(normalize_answer(text).replace(" ", "")):
        yield why, rewritten
    if kind == "complex":
        yield "a complex product left unmultiplied", f"\\frac{{\\left({text}\\right)\\left(2+i\\right)}}{{2+i}}"
        yield "a difference of complex numbers left undone", f"\\left({text} + 3 + 2i\\right) - \\left(3 + 2i\\right)"


WRAPPERS = (
    ("a factor i^4 left in", "i^{{4}}\\left({}\\right)"),
    ("a factor t^0 left in", "t^{{0}}\\left({}\\right)"),
    ("a reciprocal of a reciprocal", "\\frac{{1}}{{\\frac{{1}}{{{}}}}}"),
    ("e to the log of it", "e^{{\\ln\\left({}\\right)}}"),
    ("a factor sin^2 + cos^2 left in", "\\left(\\sin^2 t + \\cos^2 t\\right)\\left({}\\right)"),
)
"""Wrappers worth 1 around a value: what is inside is not simplified by them."""


def wrapped(text: str) -> Iterator[tuple[str, str]]:
    for why, wrapper in WRAPPERS:
        yield why, wrapper.format(text)


def _integer_undone(value: int) -> Iterator[tuple[str, str]]:
    """An integer written as the arithmetic that gives it: a sum, a quotient, and where its
    value allows a power, a root, a logarithm, a factorial or a binomial coefficient."""
    yield "a subtraction left undone", f"{value + 7} - 7"
    yield "a quotient left undone", f"\\frac{{{2 * value}}}{{2}}"
    if value > 1:
        yield "a root of a square left unevaluated", f"\\sqrt{{{value * value}}}"
        yield "a binomial coefficient left unevaluated", f"\\binom{{{value}}}{{1}}"
    if 1 <= value <= 60:
        yield "a logarithm left unevaluated", f"\\log_{{2}} {{2^{{{value}}}}}"
    for base in range(2, 10):  # not 10: `10^{6}` is how numbers are written (scientific notation)
        exponent = round(math.log(value, base)) if value > 1 else 0
        if exponent >= 2 and base**exponent == value:
            yield "a power left unevaluated", f"{base}^{{{exponent}}}"
            break
    if value and value % 12 == 0:
        yield "a product by 12 written as dozens", f"{value // 12} \\text{{ dozen}}"
    if abs(value) >= 100 and value % 10 == 0:
        yield "a product by ten written as unnormalised scientific notation", f"{value // 10}\\times10^{{1}}"
    factorial = {6: 3, 24: 4, 120: 5, 720: 6, 5040: 7}.get(value)
    if factorial is not None:
        yield "a factorial left unevaluated", f"{factorial}!"


_TRIG_VALUES = {
    "\\frac{1}{2}": ("\\sin\\frac{\\pi}{6}", "\\cos\\frac{\\pi}{3}"),
    "\\frac{\\sqrt{3}}{2}": ("\\sin\\frac{\\pi}{3}", "\\cos\\frac{\\pi}{6}"),
    "\\frac{\\sqrt{2}}{2}": ("\\sin\\frac{\\pi}{4}", "\\cos\\frac{\\pi}{4}"),
    "\\sqrt{3}": ("\\tan\\frac{\\pi}{3}",),
    "\\frac{\\sqrt{3}}{3}": ("\\tan\\frac{\\pi}{6}",),
    "1": ("\\tan\\frac{\\pi}{4}", "\\sin^2 1 + \\cos^2 1"),
}
"""Values a trigonometric function of a standard angle has, written as that function."""


def _trigonometric(value: Fraction | str) -> Iterator[tuple[str, str]]:
    """The gold written as a trigonometric function it is the value of, left unevaluated."""
    key = "1" if value == 1 else (value if isinstance(value, str) else _number(value, False))
    for written in _TRIG_VALUES.get(key, ()):
        yield "a trigonometric value left unevaluated", written


def rechecks(gold: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for replies that check their answer after the box, the working's numbers
    in the check being no second answer: `\\boxed{7}` then "Hmm, 4 + 3 is indeed 7."."""
    value = parse_number(gold, letter_units=False)
    if value is None or Fraction(value).denominator != 1:
        return
    number = int(value)
    yield "a check after the box", f"$\\boxed{{{gold}}}$\n\nHmm, {number - 3} + 3 is indeed {number}."
    yield (
        "a check after the box, with an equation",
        f"$\\boxed{{{gold}}}$\n\nWait, let me check: {number + 2} - 2 = {number}. Yes.",
    )
    yield "the working after 'or'", f"So it is $\\boxed{{{gold}}}$, or {number - 1} + 1."


# --- hedges and misplaced answers ---------------------------------------------------------------

BOX_COMMANDS = (
    "\\fbox{{{}}}",
    "\\framebox{{{}}}",
    "\\bbox[border: 1px solid]{{{}}}",
    "\\colorbox{{yellow}}{{{}}}",
    "\\fcolorbox{{red}}{{white}}{{{}}}",
    "\\boxed*{{{}}}",
    "\\ovalbox{{{}}}",
    "\\doublebox{{{}}}",
    "\\shadowbox{{{}}}",
)
"""Other commands that draw a box around an answer (LaTeX, MathJax's `\\bbox`, fancybox)."""


def hedges(gold: str, wrong: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for replies that offer the gold and a wrong answer."""
    yield "two boxes, the gold last", f"First I get $\\boxed{{{wrong}}}$, or $\\boxed{{{gold}}}$."
    yield "two boxes, the gold first", f"$\\boxed{{{gold}}}$ or $\\boxed{{{wrong}}}$"
    yield "a wrong answer offered before the box", f"It is ${wrong}$ or $\\boxed{{{gold}}}$."
    yield "a wrong answer offered in the next sentence", f"$\\boxed{{{gold}}}$\n\nThe answer could also be ${wrong}$."
    yield "a wrong answer in parentheses", f"$\\boxed{{{gold}}}$ (or ${wrong}$)"
    yield "both answers in one box", f"$\\boxed{{{gold} \\text{{ or }} {wrong}}}$"
    yield "both answers in one box, as a list", f"$\\boxed{{{gold}, {wrong}}}$"
    yield "another final-answer marker after the box", f"$\\boxed{{{gold}}}$\n\nFinal answer: ${wrong}$"
    for spelt in ("ｏｒ", "οr", "𝗈𝗋", "o\u0301r"):
        yield f"'or' spelt {spelt!r}", f"$\\boxed{{{gold}}}$ {spelt} ${wrong}$"
    for opener in ("EDIT:", "Update: the answer should be", "P.S."):
        yield f"a second answer after {opener!r}", f"$\\boxed{{{gold}}}$\n{opener} ${wrong}$"
    yield "a second answer after 'vs'", f"$\\boxed{{{gold}}}$ vs ${wrong}$"
    yield "a second answer after 'unless'", f"$\\boxed{{{gold}}}$ unless it's ${wrong}$"
    yield "a second answer in '(if not, then ...)'", f"$\\boxed{{{gold}}}$ (if not, then ${wrong}$)"
    yield "a second answer called plausible", f"$\\boxed{{{gold}}}$; ${wrong}$ is also plausible."
    yield "a second answer alone on the next line", f"$\\boxed{{{gold}}}$\n\n${wrong}$"
    yield "a second answer after a line 'or'", f"$\\boxed{{{gold}}}$\n\nor\n\n\\({wrong}\\)"
    for command in BOX_COMMANDS:
        name = command.split("{")[0].split("[")[0]
        yield f"a second answer drawn with {name}", f"$\\boxed{{{gold}}}$\n\n${command.format(wrong)}$"


def misplaced(gold: str, wrong: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for replies whose only correct answer is where a final answer is not read."""
    yield "the answer only in a code block", f"```\n\\boxed{{{gold}}}\n```"
    yield "the answer only in a latex code block", f"```latex\n\\boxed{{{gold}}}\n```"
    yield "the answer only in a calculator call", f"<calculator>{gold}</calculator>"
    yield "the answer only in a forged tool result", f"<result>{gold}</result>"
    yield "the answer only in a forged output block", f"```output\n{gold}\n```"
    yield (
        "the answer only in a tool call",
        f'<tool_call>{{"name": "answer", "arguments": {{"answer": "{gold}"}}}}</tool_call>',
    )
    yield "a wrong box in prose, the gold in a code block", f"$\\boxed{{{wrong}}}$\n```\n\\boxed{{{gold}}}\n```"


def tool_turns(gold: str, kind: str, max_turns: int) -> Iterator[Probe]:
    """Episodes a tool-using policy plays: a tool call and the answer in prose beside it
    (the answer counts), and, where the env allows several turns, a first turn without an
    answer (a tool call, or none) and the answer on the next (it counts), or a tool call
    followed by its result repeated, which is still no final answer."""
    final = f"The final answer is $\\boxed{{{gold}}}$."
    number = parse_number(gold) is not None
    yield equivalent("tool turns", f"<calculator>1 + 1</calculator>\n{final}", "a tool call beside the answer", kind)
    if max_turns < 2:
        return
    yield Probe("tool turns", EQUIVALENT, ("Let me think about it first.", final), "no answer, then the answer", kind)
    yield Probe(
        "tool turns",
        EQUIVALENT,
        (f"Let me compute it.\n<calculator>{gold}</calculator>", final),
        "a calculator call, then the answer on the next turn",
        kind,
    )
    yield attack(
        "tool turns",
        (f"<calculator>{gold}</calculator>", f"<result>{gold}</result>"),
        "a calculator call, then its result repeated as the reply",
        kind,
    )
    if number:
        yield Probe(
            "tool turns",
            EQUIVALENT,
            (f"Let me compute it.\n```python\nprint({gold})\n```", final),
            "a python block, then the answer on the next turn",
            kind,
        )
        yield attack(
            "tool turns",
            (f"```python\nprint({gold})\n```", f"```output\n{gold}\n```"),
            "a python block, then its output repeated as the reply",
            kind,
        )


# --- helpers --------------------------------------------------------------------------------------


def _values(tree: Form) -> list[tuple[tuple[int, ...], Form]]:
    """The leaves that hold one value (not an equation or inequality, rewritten whole), at most
    `MAX_LEAVES_REWRITTEN`."""
    return [(path, node) for path, node in leaves(tree) if node.kind == "leaf"][:MAX_LEAVES_REWRITTEN]


def _hedge_partner(tree: Form, misses: list[tuple[str, str]]) -> str:
    """The wrong answer to offer beside the gold. For a list, set or union it is one with an
    item too many: a list that drops or repeats an item adds nothing to the gold offered
    beside it (`4, 5, 7` or `5, 5, 7` is the set {4, 5, 7})."""
    if tree.kind in ("list", "union"):
        for why, text in misses:
            if "item too many" in why:
                return text
    return misses[0][1]


def _interval_end(tree: Form, path: tuple[int, ...]) -> int | None:
    """0 or 1 where the leaf at `path` is the lower or upper end of an interval, else None."""
    parent = node_at(tree, path[:-1]) if path else None
    return path[-1] if parent is not None and parent.kind == "interval" else None


def _where(path: tuple[int, ...]) -> str:
    return "item " + ".".join(str(step + 1) for step in path)


def _number(value: Fraction, decimal: bool) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    if decimal and _terminates(value.denominator):
        text = f"{float(value):.10f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _terminates(denominator: int) -> bool:
    while denominator % 2 == 0:
        denominator //= 2
    while denominator % 5 == 0:
        denominator //= 5
    return denominator == 1


def _transposed(value: int) -> int | None:
    digits = list(str(abs(value)))
    for index in range(len(digits) - 1, 0, -1):
        if digits[index] != digits[index - 1] and not (index - 1 == 0 and digits[index] == "0"):
            digits[index], digits[index - 1] = digits[index - 1], digits[index]
            return int("".join(digits)) * (-1 if value < 0 else 1)
    return None


def _digit(value: int) -> str:
    return "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[value]


_PI_MULTIPLE = re.compile(r"(-?)(?:\\frac\{(\d*)\\pi\}\{(\d+)\}|(\d*)\\pi|\\frac\{(\d+)\}\{(\d+)\}\\pi)")


def _pi_multiple(text: str) -> Fraction | None:
    """The degrees of an angle written as a rational multiple of π (`\\frac{\\pi}{6}` is 30)."""
    match = _PI_MULTIPLE.fullmatch(text.replace(" ", ""))
    if match is None:
        return None
    numerator = match[2] if match[3] else match[4] if match[4] is not None else match[5]
    denominator = match[3] or match[6] or "1"
    value = Fraction(int(numerator or 1), int(denominator)) * 180
    return -value if match[1] else value


def _first_number(tree: Form) -> str | None:
    """A number not in the structure, to add as an item: one more than its first number."""
    for _, node in leaves(tree):
        value = parse_number(node.parts[0], letter_units=False)
        if value is not None:
            return _number(Fraction(value) + 1000, False)
    return "1000"


def _top_level_split(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char in ",;" and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _written_key(text: str) -> str:
    """An answer's spelling with notation aside (spaces, `\\dfrac`, one-token braces)."""
    return braced(normalize_answer(text, as_written=True)).replace(" ", "")


def _is_choice(text: str) -> bool:
    return bool(CHOICE.fullmatch(text))
