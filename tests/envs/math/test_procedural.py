"""Arithmetic-v1 and Algebra-v1: every level's ground truth checked independently, determinism
across processes, the reward on right, wrong and rewritten answers, users' own rows, errors.

Ground truth is re-derived here from the prompt text alone (the expression or equations are
read into sympy and solved or expanded there; word problems are read back with one pattern
per template), so a generator whose prompt and answer disagree fails, whatever its own
arithmetic says. The gold solutions' worked steps are checked to be true equalities too.
"""

from __future__ import annotations

import ast
import json
import operator
import os
import pickle
import re
import subprocess
import sys
import warnings
from fractions import Fraction

import gymnasium as gym
import pytest
import sympy
from gymnasium.utils.env_checker import check_env

import rlenvs  # noqa: F401  (registers the ids)
from rlenvs.envs.math.algebra import AlgebraEnv, algebra_task
from rlenvs.envs.math.arithmetic import ArithmeticEnv, arithmetic_task
from rlenvs.rewards.math import math_answer_score
from rlenvs.rewards.math.answer_form import (
    ANY_FORM,
    EXPANDED_POLYNOMIAL,
    NUMBER,
    NUMBER_TUPLE,
    answer_form,
    has_form,
)

LEVELS = (1, 2, 3, 4, 5)
ARITHMETIC = "rlenvs/Arithmetic-v1"
ALGEBRA = "rlenvs/Algebra-v1"
GROUND_TRUTH_SAMPLES = {"arithmetic": 3000, "algebra": 1500}
REWARD_SAMPLES = 60

X, Y, Z = sympy.symbols("x y z")
SYMBOLS = {"x": X, "y": Y, "z": Z}
IMPLICIT_PRODUCTS = (
    (re.compile(r"(\d)\s*([xyz(])"), r"\1*\2"),  # 2x, 3(x + 1)
    (re.compile(r"\)\s*([xyz(\d])"), r")*\1"),  # (x + 1)(x - 2), (x + 1)x
    (re.compile(r"([xyz])\s*\("), r"\1*("),  # x(x - 4)
)
OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def sympy_of(text: str) -> sympy.Expr:
    """Plain math as the prompts write it (×, ÷, 2x, (x + 1)(x - 2), x^2, 2.5) as exact sympy.

    Read with Python's own parser after making products explicit: sympy's parse_expr with
    implicit multiplication is ten times slower, and this suite reads thousands of prompts.
    """
    text = text.replace("×", "*").replace("÷", "/").replace("^", "**")
    for pattern, replacement in IMPLICIT_PRODUCTS:
        text = pattern.sub(replacement, text)
    return _evaluate(ast.parse(text.strip(), mode="eval").body)


def _evaluate(node: ast.AST) -> sympy.Expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        exact = Fraction(repr(node.value))  # 2.5 -> 5/2 exactly: the literals have few digits
        return sympy.Rational(exact.numerator, exact.denominator)
    if isinstance(node, ast.Name) and node.id in SYMBOLS:
        return SYMBOLS[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    raise AssertionError(f"not plain math: {ast.dump(node)}")


def rational(value: sympy.Expr) -> Fraction:
    assert value.is_Rational, f"{value} is not a rational number"
    return Fraction(int(value.p), int(value.q))


# --- reading the canonical answers --------------------------------------------------------

INTEGER = r"-?(?:0|[1-9]\d*)"
DECIMAL = r"-?(?:0|[1-9]\d*)\.\d*[1-9]"
FRACTION = r"(-?)\\frac\{([1-9]\d*)\}\{([1-9]\d*)\}"


def number_of(answer: str) -> Fraction:
    """A canonical number: an integer, a decimal without trailing zeros, or a reduced \\frac."""
    if re.fullmatch(INTEGER, answer) or re.fullmatch(DECIMAL, answer):
        return Fraction(answer)
    match = re.fullmatch(FRACTION, answer)
    assert match, f"{answer!r} is not a canonical LaTeX number"
    sign, top, bottom = match.group(1), int(match.group(2)), int(match.group(3))
    assert bottom > 1, f"{answer!r} is a whole number written as a fraction"
    assert Fraction(top, bottom).denominator == bottom, f"{answer!r} is not in lowest terms"
    return -Fraction(top, bottom) if sign else Fraction(top, bottom)


def tuple_of(answer: str) -> tuple[Fraction, ...]:
    match = re.fullmatch(r"\((.+)\)", answer)
    assert match, f"{answer!r} is not an ordered tuple"
    return tuple(number_of(part) for part in match.group(1).split(", "))


# --- deriving the truth from the prompt ----------------------------------------------------

WORD_PROBLEMS = (
    (r"\w+ has (\d+) \w+\. \w+ buys (\d+) packs of (\d+) \w+ each and then gives away (\d+)\. .*",
     lambda has, packs, per, gives: has + packs * per - gives),
    (r"\w+ buys (\d+) \w+ at \$(\d+) each and pays with a \$(\d+) bill\. .*",
     lambda count, price, bill: bill - count * price),
    (r"A box holds (\d+) rows of (\d+) \w+\. \w+ fills (\d+) boxes and then loses (\d+) \w+\. .*",
     lambda rows, per, boxes, lost: rows * per * boxes - lost),
    (r"\w+ has (\d+) \w+ and finds (\d+) more\. \w+ shares all of them equally among (\d+) friends\. .*",
     lambda had, found, friends: Fraction(had + found, friends)),
)  # fmt: skip


def arithmetic_truth(prompt: str) -> Fraction:
    match = re.fullmatch(r"What is (.+)\?", prompt)
    if match:
        return rational(sympy_of(match.group(1)))
    for pattern, formula in WORD_PROBLEMS:
        match = re.fullmatch(pattern, prompt)
        if match:
            value = Fraction(formula(*map(int, match.groups())))
            assert value >= 0 and value.denominator == 1, f"a count must be a whole number >= 0: {prompt}"
            return value
    raise AssertionError(f"prompt matches no known problem shape: {prompt!r}")


def linear_root(left: str, right: str) -> Fraction:
    polynomial = sympy.Poly(sympy_of(left) - sympy_of(right), X)
    assert polynomial.degree() == 1, f"{left} = {right} is not linear in x"
    slope, intercept = polynomial.all_coeffs()
    return rational(-intercept / slope)


def algebra_truth(prompt: str) -> Fraction | tuple[Fraction, ...] | sympy.Expr:
    if prompt.startswith("Solve for x: "):
        left, right = prompt.removeprefix("Solve for x: ").removesuffix(".").split(" = ")
        return linear_root(left, right)
    if prompt.startswith("Solve the system of equations:\n"):
        lines = prompt.splitlines()
        sides = [line.split(" = ") for line in lines[1:-1]]
        unknowns = [X, Y, Z][: len(sides)]
        shape = "pair" if len(unknowns) == 2 else "triple"
        assert lines[-1] == f"Give the answer as the ordered {shape} ({', '.join(map(str, unknowns))})."
        # Each equation as "left - right = 0" (sympy.Eq is slow to build, and nothing here needs it).
        matrix, right = sympy.linear_eq_to_matrix([sympy_of(a) - sympy_of(b) for a, b in sides], unknowns)
        assert matrix.det() != 0, "the system must have exactly one solution"
        return tuple(rational(value) for value in matrix.LUsolve(right))
    if prompt.startswith("Expand and simplify: "):
        return sympy_of(prompt.removeprefix("Expand and simplify: ").removesuffix("."))
    raise AssertionError(f"prompt matches no known problem shape: {prompt!r}")


# Runs of plain arithmetic joined by " = " in a worked solution ("45 × 21 = 945"); a "."
# counts only between digits, so "= 35. 3 + 35" is two runs, not one.
CHAIN_CHAR = r"(?:[\d+\-×÷()/ ]|(?<=\d)\.(?=\d))"
CHAIN = re.compile(rf"{CHAIN_CHAR}+(?: = {CHAIN_CHAR}+)+")


def assert_steps_are_equalities(solution: str) -> None:
    plain = re.sub(r"\\boxed\{(-?[\d.]+)\}", r"\1", solution)  # "5 - 3 = \boxed{2}" is a step too
    chains = [match.group() for match in CHAIN.finditer(plain)]
    assert chains, f"no worked step in {solution!r}"
    for chain in chains:
        values = {rational(sympy_of(part)) for part in chain.split(" = ")}
        assert len(values) == 1, f"wrong step {chain!r} in {solution!r}"


# --- ground truth, every level --------------------------------------------------------------


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize("level", LEVELS)
def test_arithmetic_answers_match_the_prompts(level: int) -> None:
    for index in range(GROUND_TRUTH_SAMPLES["arithmetic"]):
        task = arithmetic_task(level, index)
        assert number_of(task.answer) == arithmetic_truth(task.prompt), task
        assert answer_form(task.answer) == NUMBER  # so restating the question scores 0
        assert task.solution.endswith(f"\\boxed{{{task.answer}}}")
        assert_steps_are_equalities(task.solution)


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize("level", LEVELS)
def test_algebra_answers_match_the_prompts(level: int) -> None:
    for index in range(GROUND_TRUTH_SAMPLES["algebra"]):
        task = algebra_task(level, index)
        truth = algebra_truth(task.prompt)
        if isinstance(truth, Fraction):
            assert number_of(task.answer) == truth, task
            assert answer_form(task.answer) == NUMBER
        elif isinstance(truth, tuple):
            assert tuple_of(task.answer) == truth, task
            assert answer_form(task.answer) == NUMBER_TUPLE
        else:
            answer = sympy_of(task.answer)
            assert sympy.expand(truth - answer) == 0, task
            assert sympy.expand(answer) == answer and answer.free_symbols == {X}, f"not simplified: {task.answer}"
            assert answer_form(task.answer) == EXPANDED_POLYNOMIAL
        assert task.solution.endswith(f"\\boxed{{{task.answer}}}")


def test_level_one_arithmetic_is_tiny() -> None:
    """The quickstart trains a tiny model on it: short prompts, answers 0..18, one-line gold."""
    for index in range(2000):
        task = arithmetic_task(1, index)
        assert re.fullmatch(r"What is \d [+-] \d\?", task.prompt), task.prompt
        assert 0 <= int(task.answer) <= 18
        assert "\n" not in task.solution and len(task.solution) < 30


def test_levels_cover_what_they_promise() -> None:
    shapes = {
        "arithmetic L2 negative": any(arithmetic_task(2, i).answer.startswith("-") for i in range(200)),
        "arithmetic L3 ×": any("×" in arithmetic_task(3, i).prompt for i in range(200)),
        "arithmetic L3 ÷": any("÷" in arithmetic_task(3, i).prompt for i in range(200)),
        "arithmetic L4 parentheses": any("(" in arithmetic_task(4, i).prompt for i in range(200)),
        "arithmetic L4 words": any(not arithmetic_task(4, i).prompt.startswith("What is") for i in range(200)),
        "arithmetic L5 fractions": any("\\frac" in arithmetic_task(5, i).answer for i in range(200)),
        "arithmetic L5 decimals": any("." in arithmetic_task(5, i).prompt for i in range(200)),
        "algebra L2 fractions": all("\\frac" in algebra_task(2, i).answer for i in range(200)),
        "algebra L3 pairs": all(len(tuple_of(algebra_task(3, i).answer)) == 2 for i in range(200)),
        "algebra L4 triples": any(algebra_task(4, i).answer.count(",") == 2 for i in range(200)),
        "algebra L4 fractions": any("/" in algebra_task(4, i).prompt for i in range(200)),
        "algebra L5 cubics": any("x^3" in algebra_task(5, i).answer for i in range(200)),
    }
    assert [name for name, present in shapes.items() if not present] == []


@pytest.mark.parametrize("task_at", [arithmetic_task, algebra_task])
@pytest.mark.parametrize("level", LEVELS)
def test_indices_give_varied_tasks(task_at, level: int) -> None:
    prompts = {task_at(level, index).prompt for index in range(300)}
    assert len(prompts) > 100


DOCUMENTED_EXAMPLES = {
    "arithmetic/L1/6": ("What is 7 + 9?", "16"),
    "arithmetic/L2/1": ("What is 631 - 922?", "-291"),
    "arithmetic/L3/5": ("What is 97 × (-9)?", "-873"),
    "arithmetic/L4/0": ("What is (20 + 3 ÷ 3) × 5?", "105"),
    "arithmetic/L4/5": (
        "Ben buys 7 tickets at $5 each and pays with a $50 bill. How many dollars of change does Ben get?",
        "15",
    ),
    "arithmetic/L5/3": ("What is 7/2 - 10/7?", "\\frac{29}{14}"),
    "algebra/L1/6": ("Solve for x: 7x - 7 = 21.", "4"),
    "algebra/L2/7": ("Solve for x: -9x + 15 = -3x - 6.", "\\frac{7}{2}"),
    "algebra/L3/3": (
        "Solve the system of equations:\nx + 3y = -15\n5x + y = 23\nGive the answer as the ordered pair (x, y).",
        "(6, -7)",
    ),
    "algebra/L4/6": ("Solve for x: (3x - 4)/3 = (-4x + 7)/6.", "\\frac{3}{2}"),
    "algebra/L5/5": ("Expand and simplify: -3(x - 6)^2 + 3(x - 7)(2x - 4).", "3x^2 - 18x - 24"),
}


@pytest.mark.parametrize("task_id", DOCUMENTED_EXAMPLES)
def test_the_examples_in_the_docstrings_are_what_those_ids_give(task_id: str) -> None:
    """The module docstrings quote these ids; a change to a generator must update them."""
    task = local_task(task_id)
    assert (task.prompt, task.answer) == DOCUMENTED_EXAMPLES[task_id]


# --- determinism -------------------------------------------------------------------------

SUBPROCESS_IDS = [f"arithmetic/L{level}/{index}" for level in LEVELS for index in (0, 17, 2**40 + 3)] + [
    f"algebra/L{level}/{index}" for level in LEVELS for index in (0, 17, 2**40 + 3)
]
SUBPROCESS_SCRIPT = """
import json, sys
import gymnasium as gym
import rlenvs
out = {}
for task_id in json.loads(sys.argv[1]):
    family, level, _ = task_id.split("/")
    env_id = "rlenvs/Arithmetic-v1" if family == "arithmetic" else "rlenvs/Algebra-v1"
    env = gym.make(env_id, level=int(level[1:])).unwrapped
    prompt, info = env.reset(options={"task_id": task_id})
    out[task_id] = [prompt, env.task.answer, env.oracle_action(), info["task_id"]]
print(json.dumps(out))
"""


def local_task(task_id: str):
    family, level, index = task_id.split("/")
    task_at = arithmetic_task if family == "arithmetic" else algebra_task
    return task_at(int(level[1:]), int(index))


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_same_id_same_task_in_another_process() -> None:
    environment = {**os.environ, "PYTHONHASHSEED": "12345"}  # string hashing must not matter
    result = subprocess.run(
        [sys.executable, "-c", SUBPROCESS_SCRIPT, json.dumps(SUBPROCESS_IDS)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
        timeout=120,
    )
    remote = json.loads(result.stdout)
    for task_id in SUBPROCESS_IDS:
        task = local_task(task_id)
        assert remote[task_id] == [task.prompt, task.answer, task.solution, task_id]


def test_reset_by_task_id_and_index_rebuild_the_task() -> None:
    env = gym.make(ALGEBRA, level=3).unwrapped
    by_id, info = env.reset(options={"task_id": "algebra/L3/17"})
    assert by_id == algebra_task(3, 17).prompt and info["task_id"] == "algebra/L3/17"
    by_index, info = env.reset(options={"task_index": 17})
    assert by_index == by_id and info["task_id"] == "algebra/L3/17"
    _, info = env.reset(seed=4)
    seeded = info["task_id"]
    assert re.fullmatch(r"algebra/L3/\d+", seeded) and env.reset(seed=4)[1]["task_id"] == seeded


def test_a_task_id_of_another_level_names_the_right_form() -> None:
    env = gym.make(ARITHMETIC, level=2).unwrapped
    with pytest.raises(KeyError, match="arithmetic/L2/17"):
        env.reset(options={"task_id": "arithmetic/L3/17"})


@pytest.mark.parametrize("env_id", [ARITHMETIC, ALGEBRA])
@pytest.mark.parametrize("level", LEVELS)
def test_every_level_passes_check_env_and_pickles(env_id: str, level: int) -> None:
    env = gym.make(env_id, level=level).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    env.reset(seed=level)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.task == env.task and clone.level == level
    assert clone.step(clone.oracle_action())[1] == 1.0


# --- the reward ---------------------------------------------------------------------------


def wrong_answers(answer: str) -> list[str]:
    """Near misses of a canonical answer: off by one, wrong sign, swapped pair."""
    if answer.startswith("("):
        values = tuple_of(answer)
        wrong = [(values[0] + 1, *values[1:])]
        if any(values):
            wrong.append(tuple(-v for v in values))
        if values[0] != values[1]:
            wrong.append((values[1], values[0], *values[2:]))
        return [
            "(" + ", ".join(sympy.latex(sympy.Rational(v.numerator, v.denominator)) for v in w) + ")" for w in wrong
        ]
    if "x" in answer:
        polynomial = sympy_of(answer)
        return [sympy.latex(polynomial + 1), sympy.latex(-polynomial), sympy.latex(polynomial.subs(X, -X))]
    value = number_of(answer)
    wrong = [value + 1, value - 1] + ([-value] if value else [])
    return [sympy.latex(sympy.Rational(v.numerator, v.denominator)) for v in wrong]


def rewritten_answers(answer: str) -> list[str]:
    """The same answer in the same form, written differently: other spellings, a label."""
    if answer.startswith("("):
        names = "(x, y)" if answer.count(",") == 1 else "(x, y, z)"
        return [answer.replace(", ", ","), f"{names} = {answer}", f"\\left{answer[:-1]}\\right)"]
    if "x" in answer:
        polynomial = sympy_of(answer)
        constant_first = sympy.Poly(polynomial, X).all_coeffs()[::-1]
        powers = {0: "", 1: "x"}
        ascending = " ".join(
            f"{'-' if c < 0 else '+'} {abs(c)}{powers.get(k, f'x^{{{k}}}')}" for k, c in enumerate(constant_first) if c
        ).removeprefix("+ ")
        return [sympy.latex(polynomial), f"f(x) = {answer}", ascending]
    value = number_of(answer)
    # (Not `6/3` for 2: a fraction with a common factor is a division left undone, and
    # "What is 480 ÷ 8?" answered `480/8` would be the question copied.)
    spelled = f"{value.numerator}/{value.denominator}" if value.denominator != 1 else f"{value.numerator}.0"
    return [sympy.latex(sympy.Rational(value.numerator, value.denominator)), f"x = {answer}", spelled]


def echoes(prompt: str) -> list[str]:
    """Answers that restate the question instead of solving it: equivalent to the gold answer
    (the verifier alone would accept them) but not in its form."""
    if prompt.startswith("What is "):
        expression = prompt.removeprefix("What is ").removesuffix("?")
        return [expression, expression.replace("×", "\\times").replace("÷", "\\div"), expression.replace("÷", "/")]
    if prompt.startswith("Expand and simplify: "):
        expression = prompt.removeprefix("Expand and simplify: ").removesuffix(".")
        factored = sympy.latex(sympy.factor(sympy_of(expression)))
        return [expression] + ([factored] if "(" in factored else [])  # some do not factor
    if prompt.startswith("Solve for x: "):
        left, right = prompt.removeprefix("Solve for x: ").removesuffix(".").split(" = ")
        root = linear_root(left, right)
        return [f"({root.numerator * 2}) / ({root.denominator} + {root.denominator})"]
    truth = algebra_truth(prompt)
    return ["(" + ", ".join(f"{v} + 0 * 1" if v.denominator == 1 else str(v) for v in truth) + ")"]


@pytest.mark.parametrize("env_id", [ARITHMETIC, ALGEBRA])
@pytest.mark.parametrize("level", LEVELS)
def test_oracle_scores_one_and_near_misses_score_zero(env_id: str, level: int) -> None:
    env = gym.make(env_id, level=level).unwrapped
    for index in range(REWARD_SAMPLES):
        env.reset(options={"task_index": index})
        answer = env.task.answer
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        assert (reward, terminated, truncated, info["correct"]) == (1.0, True, False, True), env.task
        for wrong in wrong_answers(answer):
            env.reset(options={"task_index": index})
            reward = env.step(f"Working... so the answer is \\boxed{{{wrong}}}.")[1]
            assert reward == 0.0, f"{wrong!r} scored {reward} against {answer!r}"


@pytest.mark.parametrize("env_id", [ARITHMETIC, ALGEBRA])
@pytest.mark.parametrize("level", LEVELS)
def test_the_same_answer_written_differently_scores_one(env_id: str, level: int) -> None:
    env = gym.make(env_id, level=level).unwrapped
    for index in range(0, REWARD_SAMPLES, 3):
        env.reset(options={"task_index": index})
        for written in rewritten_answers(env.task.answer):
            env.reset(options={"task_index": index})
            _, reward, _, _, info = env.step(f"So the answer is \\boxed{{{written}}}.")
            assert reward == 1.0, (written, env.task.answer, info)


@pytest.mark.parametrize("env_id", [ARITHMETIC, ALGEBRA])
@pytest.mark.parametrize("level", LEVELS)
def test_restating_the_question_scores_zero(env_id: str, level: int) -> None:
    env = gym.make(env_id, level=level).unwrapped
    restated = 0
    for index in range(REWARD_SAMPLES):
        env.reset(options={"task_index": index})
        if env.task.prompt.startswith(("What is ", "Expand and simplify: ", "Solve ")):
            for echo in echoes(env.task.prompt):
                env.reset(options={"task_index": index})
                _, reward, _, _, info = env.step(f"\\boxed{{{echo}}}")
                assert reward == 0.0 and info["in_form"] is False, (echo, env.task.answer)
                restated += 1
    assert restated >= REWARD_SAMPLES // 3


def test_the_verifier_alone_would_accept_a_restated_question() -> None:
    """Why the env checks the answer's form: for a number the shared verifier already
    insists on a number, but an expression gold accepts any equivalent expression, so
    equivalence alone would reward copying "expand and simplify" questions."""
    task = arithmetic_task(3, 5)
    assert math_answer_score("\\boxed{97 \\times (-9)}", task.answer) == 0.0
    env = gym.make(ALGEBRA, level=5).unwrapped
    env.reset(options={"task_index": 0})
    echo = env.task.prompt.removeprefix("Expand and simplify: ").rstrip(".")
    assert math_answer_score(f"\\boxed{{{echo}}}", env.task.answer) == 1.0
    assert env.step(f"\\boxed{{{echo}}}")[1] == 0.0


@pytest.mark.parametrize(
    "form,stated,restated",
    [
        (
            NUMBER,
            [
                "-3",
                "3.5",
                "7/2",
                "\\frac{7}{2}",
                "-\\frac{3}{4}",
                "x = 4",
                "$16$",
                "1,099",
                "\\$18",
                "15 dollars",
                "(-22)",
            ],
            ["7 + 9", "97 \\times (-9)", "\\frac{14}{2} - 1", "480/8", "x", "25x"],
        ),
        (
            NUMBER_TUPLE,
            ["(6, -7)", "(6,-7)", "(x, y) = (6, -7)", "\\left(1, 2, 3\\right)", "x = 6, y = -7", "x=6,y=-7,z=0"],
            ["(2 + 4, -7)", "6, -7", "(6)", "x = 6, x = -7", "x = 6, y = 2 + 4", "[6, -7]"],
        ),
        (
            EXPANDED_POLYNOMIAL,
            ["3x^2 - 18x - 24", "-24 - 18x + 3x^{2}", "3 x^{2} - 18 x - 24", "f(x) = x^3 - x", "x"],
            ["3(x^2 - 6x - 8)", "(x - 6)^2", "x^2 + 2x^2", "3x^2 - 18x - 24 + 0", "x^2 + -x", "x \\cdot (x + 1)", ""],
        ),
    ],
)
def test_answer_forms(form: str, stated: list[str], restated: list[str]) -> None:
    assert [text for text in stated if not has_form(text, form)] == []
    assert [text for text in restated if has_form(text, form)] == []


def test_the_form_is_read_off_the_gold_answer() -> None:
    forms = {
        "16": NUMBER,
        "-\\frac{3}{4}": NUMBER,
        "(6, -7)": NUMBER_TUPLE,
        "x^2 + 9x - 3": EXPANDED_POLYNOMIAL,
        "25x": EXPANDED_POLYNOMIAL,
        "\\sqrt{2}": ANY_FORM,
        "(x + 1)^2": ANY_FORM,
    }
    assert {gold: answer_form(gold) for gold in forms} == forms


def test_hedging_between_the_answer_and_another_scores_zero() -> None:
    env = gym.make(ALGEBRA, level=2).unwrapped
    env.reset(options={"task_index": 5})
    answer = env.task.answer
    assert env.step(f"\\boxed{{{answer}}} or maybe \\boxed{{{wrong_answers(answer)[0]}}}")[1] == 0.0


def test_reply_without_an_answer_gets_a_reminder_then_another_turn() -> None:
    env = gym.make(ARITHMETIC, level=1, max_turns=2).unwrapped
    env.reset(options={"task_index": 3})
    observation, reward, terminated, truncated, info = env.step("Let me think about it.")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert "\\boxed" in observation and info["messages"] == [{"role": "user", "content": observation}]
    _, reward, terminated, _, info = env.step(env.oracle_action())
    assert (reward, terminated, info["stop_reason"]) == (1.0, True, "answered")


def test_vector_env_at_a_level_runs_an_episode() -> None:
    envs = gym.make_vec(
        ALGEBRA, num_envs=2, vectorization_mode="async", vector_kwargs={"shared_memory": False}, level=5
    )
    try:
        _, infos = envs.reset(seed=7)
        assert all(task_id.startswith("algebra/L5/") for task_id in infos["task_id"])
        _, rewards, terminated, _, _ = envs.step(tuple(envs.call("oracle_action")))
        assert list(rewards) == [1.0, 1.0] and all(terminated)
    finally:
        envs.close()


# --- users' own problems --------------------------------------------------------------------


@pytest.mark.parametrize(
    "env_id,row,right,wrongs",
    [
        (ARITHMETIC, {"question": "What is 2 + 2?", "answer": "4"}, "\\boxed{4}", ["\\boxed{5}", "\\boxed{2 + 2}"]),
        (
            ARITHMETIC,
            {"question": "What is 1/2 + 1/4?", "answer": "\\frac{3}{4}"},
            "\\boxed{0.75}",
            ["\\boxed{\\frac{1}{2}}", "\\boxed{1/2 + 1/4}"],
        ),
        (ARITHMETIC, {"question": "What is 6 × 7?", "answer": 42}, "\\boxed{42}", ["\\boxed{24}"]),
        (
            ALGEBRA,
            {"question": "Solve: x + y = 3, x - y = 1.", "answer": "(2, 1)"},
            "\\boxed{(2, 1)}",
            ["\\boxed{(1, 2)}", "\\boxed{((3 + 1)/2, (3 - 1)/2)}"],
        ),
        (
            ALGEBRA,
            {"question": "Expand (x + 1)^2.", "answer": "x^2 + 2x + 1"},
            "\\boxed{1 + 2x + x^{2}}",
            ["\\boxed{x^2 + 1}", "\\boxed{(x + 1)^2}"],
        ),
        # An answer in no checked form needs only to be equivalent.
        (
            ALGEBRA,
            {"question": "What is the square root of 2?", "answer": "\\sqrt{2}"},
            "\\boxed{\\frac{2}{\\sqrt{2}}}",
            ["\\boxed{2}"],
        ),
    ],
)
def test_a_users_own_row_is_posed_and_scored(env_id: str, row: dict, right: str, wrongs: list[str]) -> None:
    env = gym.make(env_id).unwrapped
    observation, info = env.reset(options={"task": row})
    assert observation == row["question"] and info["task_id"].startswith(env.family + "/custom-")
    assert env.step(right)[1] == 1.0
    for wrong in wrongs:
        env.reset(options={"task": row})
        assert env.step(wrong)[1] == 0.0, wrong
    env.reset(options={"task": row})
    assert env.step(env.oracle_action())[1] == 1.0


def test_a_row_with_its_own_solution_uses_it_as_the_oracle() -> None:
    env = gym.make(ALGEBRA).unwrapped
    row = {
        "question": "Solve for x: 2x = 3.",
        "answer": "\\frac{3}{2}",
        "solution": "x = 3/2, so \\boxed{\\frac{3}{2}}",
    }
    env.reset(options={"task": row})
    assert env.oracle_action() == row["solution"]


@pytest.mark.parametrize(
    "row,message",
    [
        ({"answer": "4"}, "'question'"),
        ({"question": "What is 2 + 2?"}, "'answer'"),
        ({"question": "What is 2 + 2?", "answer": "  "}, "'answer'"),
        ({"question": "What is 2 + 2?", "answer": "\\frac{1}{2"}, "LaTeX"),
        ({"question": "What is 2 + 2?", "answer": "4", "solution": "so \\boxed{5}"}, "solution"),
        ({"question": "What is 2 + 2?", "answer": "4", "solution": "so \\boxed{2 + 2}"}, "solution"),
    ],
)
def test_a_bad_row_names_its_bad_field(row: dict, message: str) -> None:
    env = gym.make(ARITHMETIC).unwrapped
    with pytest.raises(ValueError, match=message):
        env.reset(options={"task": row})


# --- constructor errors ------------------------------------------------------------------------


@pytest.mark.parametrize("env_class", [ArithmeticEnv, AlgebraEnv])
def test_default_level_is_one_and_kwargs_are_json(env_class) -> None:
    env = env_class()
    assert env.level == 1 and env.max_turns == 1 and "\\boxed" in env.system_prompt
    json.dumps({"level": env.level, "max_turns": env.max_turns, "system_prompt": env.system_prompt})


@pytest.mark.parametrize("env_id", [ARITHMETIC, ALGEBRA])
@pytest.mark.parametrize("level", [0, 6, -1])
def test_an_unknown_level_lists_the_valid_ones(env_id: str, level: int) -> None:
    with pytest.raises(ValueError, match=r"no level .*\[1, 2, 3, 4, 5\]"):
        gym.make(env_id, level=level)


@pytest.mark.parametrize("level", ["2", 2.0, True, None])
def test_a_level_that_is_not_an_int_is_a_type_error(level) -> None:
    with pytest.raises(TypeError, match="level must be an int"):
        gym.make(ARITHMETIC, level=level)


def test_other_bad_kwargs_are_clear() -> None:
    with pytest.raises(TypeError, match="levle"):
        gym.make(ALGEBRA, levle=2)
    with pytest.raises(ValueError, match="max_turns"):
        gym.make(ALGEBRA, max_turns=0)
    with pytest.raises(TypeError, match="system_prompt"):
        gym.make(ARITHMETIC, system_prompt=3)


def test_no_system_prompt_sends_only_the_problem() -> None:
    env = gym.make(ARITHMETIC, system_prompt=None).unwrapped
    observation, info = env.reset(seed=1)
    assert info["messages"] == [{"role": "user", "content": observation}]
