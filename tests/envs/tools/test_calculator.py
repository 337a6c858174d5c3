"""The calculator tool: exact answers, clear refusals, and no input that hangs or eats memory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from datetime import timedelta
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlenvs.envs.tools.calculator import (
    MAX_DECIMALS,
    MAX_DIGITS,
    CalculatorError,
    calculate,
    evaluate,
    format_result,
)
from rlenvs.rewards.math import parse_number
from tests.conftest import GSM8K_TEST


@pytest.mark.parametrize(
    "expression,result",
    [
        ("48 / 2", "24"),
        ("16 - 3 - 4", "9"),
        ("2 + 3 * 4", "14"),
        ("(2 + 3) * 4", "20"),
        ("0.1 * 3", "0.3"),
        ("0.1 + 0.2", "0.3"),
        (".5 * 8", "4"),
        ("2. + 1", "3"),
        ("1e3 / 8", "125"),
        ("1_000 * 3", "3000"),
        ("7 / 2", "3.5"),
        ("1 / 8", "0.125"),
        ("-7 // 2", "-4"),
        ("7 % 3", "1"),
        ("-7 % 3", "2"),
        ("7.5 % 2", "1.5"),
        ("2 ** 10", "1024"),
        ("2 ** -2", "0.25"),
        ("-2 ** 2", "-4"),
        ("(-2) ** 3", "-8"),
        ("2 ** 3 ** 2", "512"),
        ("+5", "5"),
        ("--5", "5"),
        ("100 / 3", "33.3333333333 (rounded; exactly 100/3)"),
        ("2 / 3", "0.6666666667 (rounded; exactly 2/3)"),
        ("-2 / 3", "-0.6666666667 (rounded; exactly -2/3)"),
        ("1 / 2048", "0.0004882813 (rounded; exactly 1/2048)"),
        ("1 / 1024", "0.0009765625"),
        ("1.0125 ** 360", "87.5409951357 (rounded)"),
        ("abs(-3.5)", "3.5"),
        ("sqrt(16)", "4"),
        ("sqrt(2.25)", "1.5"),
        ("sqrt(1/4)", "0.5"),
        ("sqrt(2)", "1.4142135624 (rounded)"),
        ("sqrt(2) ** 2", "2 (rounded)"),
        ("floor(7 / 2)", "3"),
        ("ceil(7 / 2)", "4"),
        ("floor(-7 / 2)", "-4"),
        ("round(2.5)", "3"),
        ("round(-2.5)", "-3"),
        ("round(3.14159, 2)", "3.14"),
        ("round(1250, -2)", "1300"),
        ("min(3, 1, 2)", "1"),
        ("max(1,234)", "234"),
        ("max(4)", "4"),
        ("3 × 4 ÷ 2 − 1", "5"),
        ("48 / 2 =", "24"),
        ("  48/2  ", "24"),
        ("(\n 1 +\n 2)", "3"),
        ("0x10 + 1", "17"),
        ("1e999 / 1e999", "1"),
        ("(-1) ** (10 ** 999)", "1"),
        ("0 ** 0", "1"),
        ("0 ** 5", "0"),
        ("(" * 150 + "1" + ")" * 150, "1"),
    ],
)
def test_results(expression: str, result: str) -> None:
    assert calculate(expression) == result


@pytest.mark.parametrize(
    "expression,message",
    [
        ("", "empty expression"),
        ("   ", "empty expression"),
        ("=", "empty expression"),
        ("1 / 0", r"division by zero in '1 / 0': '0' is 0"),
        ("5 // (3 - 3)", r"division by zero .* '3 - 3' is 0"),
        ("5 % 0.0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("1,234 + 1", "thousands separators"),
        ("(1, 2)", "thousands separators"),
        ("2 ^ 3", r"write 2\*\*3"),
        ("48 / 2 = 24", "without '='"),
        ("x + 1", "unknown name 'x'"),
        ("pi * 2", "unknown name 'pi'"),
        ("sqrt", "call it with parentheses"),
        ("open(1)", "unknown function 'open'"),
        ("__import__('os').system('x')", 'unexpected character "\'"'),
        ('__import__("os")', "unexpected character '\"'"),
        ("(1).__class__", "attribute access"),
        ("(1).__class__.__bases__", "attribute access"),
        ("(1).real()", "attribute access"),
        ("1 .real", "attribute access"),
        ("[1, 2]", r"unexpected character '\['"),
        ("{1: 2}", r"unexpected character '\{'"),
        ("1 < 2", "unexpected character '<'"),
        ("lambda: 1", "unexpected character ':'"),
        ("not 1", "not supported"),
        ("1 if 1 else 2", "'if' expressions not supported"),
        ("1 and 2", "'and'/'or' not supported"),
        ("True + 1", "'True' is not a number"),
        ("None", "'None' is not a number"),
        ("1j", "'1j' is not a number"),
        ("max(*x)", "unpacking not supported"),
        ("max(**x)", "no keyword arguments"),
        ("round(1, 2, 3)", r"round got 3 argument\(s\): write round\(x\) or round\(x, digits\)"),
        ("sqrt()", r"sqrt got 0 argument\(s\)"),
        ("min()", r"min got 0 argument\(s\)"),
        ("round(1.5, 0.5)", "must be a whole number"),
        ("round(1, 101)", "from -100 to 100"),
        ("sqrt(-1)", "sqrt of a negative number"),
        ("2 ** 0.5", r"must be a whole number, got 0.5: use sqrt\(x\)"),
        ("1 +", "could not parse"),
        ("(1 + 2", "could not parse '\\(1 \\+ 2'"),
        ("1 2", "could not parse"),
        ("1\x00", "unexpected character"),
        ("\ud800", "unexpected character"),
        ("9**9**9**9", "more than 1000 digits"),
        ("10 ** 100000", "more than 1000 digits"),
        ("(10 ** 999) * (10 ** 999)", r"the result of '\(10 \*\* 999\) \* \(10 \*\* 999\)' has more than 1000 digits"),
        ("1 / 10 ** 1001", "more than 1000 digits"),
        ("1e999999999", "exponent of '1e999999999' is too large"),
        ("1e1000", "more than 1000 digits"),
        ("1" * 501, "too long"),
        ("-" * 200 + "1", "nested too deeply"),
        ("+".join(["1"] * 120), "too complex|nested too deeply"),
        ("(" * 300 + "1" + ")" * 300, "too long"),
    ],
)
def test_refusals_say_what_is_wrong(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError, match=message):
        calculate(expression)


def test_calculator_error_is_a_value_error() -> None:
    assert issubclass(CalculatorError, ValueError)
    with pytest.raises(TypeError, match="must be a str"):
        calculate(48)  # type: ignore[arg-type]


def test_the_digit_cap_admits_exactly_its_own_size() -> None:
    assert calculate(f"10 ** {MAX_DIGITS - 1}") == "1" + "0" * (MAX_DIGITS - 1)
    assert calculate("(10 ** 500 - 1) * (10 ** 500 + 1)") == "9" * MAX_DIGITS
    assert calculate("2 ** 3321") == str(2**3321) and len(str(2**3321)) == MAX_DIGITS
    assert calculate(f"1 / 10 ** {MAX_DIGITS - 1}") == "0 (rounded)"
    for too_large in ("2 ** 3322", f"10 ** {MAX_DIGITS}", f"1 / 10 ** {MAX_DIGITS}", "(10 ** 500) * (10 ** 500)"):
        with pytest.raises(CalculatorError, match="more than 1000 digits"):
            calculate(too_large)


@pytest.mark.full_data
def test_every_gsm8k_test_annotation_is_reproduced() -> None:
    """All 4282 `<<expression=result>>` annotations of the GSM8K test set (they were made
    with a calculator) come out equal to their recorded result (`16.00` equals `16`)."""
    annotation = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
    annotations = [
        found
        for line in GSM8K_TEST.read_text().splitlines()
        for found in annotation.findall(json.loads(line)["answer"])
    ]
    mismatches = [(e, r) for e, r in annotations if evaluate(e).value != parse_number(r.strip())]
    assert len(annotations) == 4282 and mismatches == []


# --- properties -----------------------------------------------------------------------------

Expression = tuple[str, "Fraction | None"]
"""Source text and its value by `fractions.Fraction` arithmetic; None if it divides by zero."""

_OPERATORS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: None if b == 0 else a / b,
    "//": lambda a, b: None if b == 0 else Fraction(a // b),
    "%": lambda a, b: None if b == 0 else a % b,
}


def _integer(n: int) -> Expression:
    return str(n), Fraction(n)


def _decimal(whole: int, thousandths: int) -> Expression:
    return f"{whole}.{thousandths:03d}", whole + Fraction(thousandths, 1000)


def _power(base: Expression, exponent: int) -> Expression:
    text, value = base
    if value == 0 and exponent < 0:
        return f"({text}) ** {exponent}", None
    return f"({text}) ** {exponent}", value**exponent


def _binary(left: Expression, operator: str, right: Expression) -> Expression:
    text = f"({left[0]} {operator} {right[0]})"
    if left[1] is None or right[1] is None:
        return text, None
    return text, _OPERATORS[operator](left[1], right[1])


def _negate(operand: Expression) -> Expression:
    return f"-{operand[0]}", None if operand[1] is None else -operand[1]


_NUMBERS = st.one_of(
    st.integers(0, 10**6).map(_integer),
    st.builds(_decimal, st.integers(0, 10**4), st.integers(0, 999)),
)
_LEAVES = st.one_of(_NUMBERS, st.builds(_power, _NUMBERS, st.integers(-3, 3)))
EXPRESSIONS = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.builds(_binary, children, st.sampled_from(sorted(_OPERATORS)), children),
        st.builds(_negate, children),
    ),
    max_leaves=12,
)


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@settings(max_examples=500, deadline=None)
@given(EXPRESSIONS)
def test_random_arithmetic_agrees_with_fractions(expression: Expression) -> None:
    text, expected = expression
    if expected is None:
        with pytest.raises(CalculatorError, match="division by zero"):
            evaluate(text)
    else:
        result = evaluate(text)
        assert result.value == expected and result.exact


@settings(max_examples=300, deadline=None)
@given(st.fractions(max_denominator=10**15).filter(lambda f: abs(f) < 10**15))
def test_results_read_back_as_what_they_say(value: Fraction) -> None:
    text = format_result(value)
    if "(rounded" in text:
        shown = parse_number(text.split(" (")[0])
        assert shown != value and abs(shown - value) <= Fraction(1, 2 * 10**MAX_DECIMALS)
        if max(len(str(abs(value.numerator))), len(str(value.denominator))) <= 12:
            assert text.endswith(f"exactly {value.numerator}/{value.denominator})")
    else:
        assert parse_number(text) == value


# Arbitrary text, and text over the calculator's own alphabet (far likelier to parse, so it
# reaches the evaluator and its guards): each returns a result or a CalculatorError, never
# anything else, well within the deadline (a guard that failed would take minutes or hang).
_CALCULATOR_ALPHABET = "0123456789" * 3 + "+-*/%()., _eEjx^=×÷−" + "*" * 10 + "abcdefghilmnopqrstuvwxyz"


@settings(max_examples=500, deadline=timedelta(seconds=2))
@given(st.one_of(st.text(max_size=600), st.text(alphabet=_CALCULATOR_ALPHABET, max_size=600)))
def test_any_text_gives_a_result_or_a_calculator_error(text: str) -> None:
    try:
        result = calculate(text)
    except CalculatorError as error:
        assert str(error)
    else:
        assert isinstance(result, str) and result


_POWERS = st.recursive(
    st.integers(-(10**6), 10**6).map(str),
    lambda children: st.builds(
        lambda a, op, b: f"({a}){op}({b})", children, st.sampled_from(["**", "*", "//", "%", "/"]), children
    ),
    max_leaves=8,
)


@settings(max_examples=500, deadline=timedelta(seconds=2))
@given(_POWERS)
def test_towers_of_powers_are_bounded(text: str) -> None:
    try:
        calculation = evaluate(text)
    except CalculatorError:
        return
    bound = 10**MAX_DIGITS
    assert abs(calculation.value.numerator) < bound and calculation.value.denominator < bound


# --- inputs built to hang or exhaust memory ------------------------------------------------

BOMBS = [
    "9**9**9**9",
    "10**100000",
    "10**10**10",
    "2**3**4**5",
    "(99**99)**(99**99)",
    "((2**1000)**3)**3",
    "-(2**99999)",
    "(10**999)**999",
    "(1/3)**100000",
    "10**300 * 10**300 * 10**300 * 10**300",
    "*".join(["999999999"] * 49) + "**99",
    "1e999999999",
    "1e-999999999",
    "round(1, 10**9)",
    "sqrt(10**10**10)",
    "floor(10**10**10 / 3)",
    "max(" + ",".join(["9**9**9"] * 50) + ")",
    "-" * 499 + "1",
    "(" * 5000 + "1" + ")" * 5000,
    "abs(" * 99 + "1" + ")" * 99,
    "1" * 100_000,
    "1+" * 50_000 + "1",
    "<calculator>" * 10_000,
]
_BOMB_RUNNER = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from rlenvs.envs.tools.calculator import CalculatorError, calculate
    outcomes = []
    for expression in json.load(sys.stdin):
        started = time.perf_counter()
        try:
            outcome = "result " + calculate(expression)[:40]
        except CalculatorError as error:
            outcome = "refused " + str(error)[:80]
        except BaseException as error:  # what the test is looking for: anything else
            outcome = "crashed " + type(error).__name__
        outcomes.append([expression[:30], outcome, time.perf_counter() - started])
    print(json.dumps(outcomes))
    """
)


def test_bombs_fail_fast_in_a_memory_capped_process() -> None:
    """Run in a child with 2 GiB of address space and a wall-clock limit, so a broken guard
    fails this test (crash, MemoryError, timeout) instead of hanging or swapping the machine."""
    finished = subprocess.run(
        [sys.executable, "-c", _BOMB_RUNNER],
        input=json.dumps(BOMBS),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    outcomes = json.loads(finished.stdout)
    assert [o for o in outcomes if o[2] > 1.0] == []  # each takes well under a millisecond
    assert [o for o in outcomes if not o[1].startswith("refused")] == []
