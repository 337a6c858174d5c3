"""rlenvs/Arithmetic-v1: procedurally generated arithmetic with exact answers, in five levels.

No data needed and never runs out of tasks. Level 1 is meant to be learnable by a tiny model
(the offline training quickstart uses it): a prompt of a few tokens, a one- or two-digit
answer, a one-line gold solution.

| level | asks | example prompt | answer |
|---|---|---|---|
| 1 | single-digit + and - (answer 0..18) | What is 7 + 9? | 16 |
| 2 | two/three-digit + and - (may be negative) | What is 631 - 922? | -291 |
| 3 | × and exact ÷ (2..99 by 2..25), a quarter of operands negative | What is 97 × (-9)? | -873 |
| 4 | three operations with parentheses, or a two-step word problem | What is (20 + 3 ÷ 3) × 5? | 105 |
| 5 | two fractions or two decimals under + - × ÷, exact | What is 7/2 - 10/7? | \\frac{29}{14} |

(Task ids of the examples: arithmetic/L1/6, L2/1, L3/5, L4/0, L5/3. A level-4 word problem:
"Ben buys 7 tickets at $5 each and pays with a $50 bill. How many dollars of change does Ben
get?" -> 15.)

Task ids are `arithmetic/L{level}/{index}`; see `rlenvs.envs.math.procedural` for seeding,
the row format for a user's own problem, and the reward.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from rlenvs.core.draw import draw_from, draw_int
from rlenvs.core.names import SHORT_FIRST_NAMES
from rlenvs.core.procedural import Family
from rlenvs.envs.math.procedural import (
    Level,
    Problem,
    ProceduralMathEnv,
    boxed,
    draw_sign,
    latex_decimal,
    latex_number,
    parenthesised,
    procedural_task,
)
from rlenvs.envs.math.tasks import MathTask

FAMILY = "arithmetic"
SUMMARY = "Arithmetic from single digits to fractions and decimals, exact answers."
FAMILY_SEED = 1
DEFAULT_LEVEL = 1
DEFAULT_SYSTEM_PROMPT = (
    "Solve the arithmetic problem. Give the exact final answer as \\boxed{...} at the end of your reply."
)

# --- level 1 and 2: addition and subtraction -------------------------------------------------


def single_digit_sum(rng: np.random.Generator) -> Problem:
    """a + b or a - b with single digits; a - b only when a >= b, so answers lie in 0..18."""
    a, b = draw_int(rng, 0, 9), draw_int(rng, 0, 9)
    if draw_int(rng, 0, 1):
        value, expression = a + b, f"{a} + {b}"
    else:
        a, b = max(a, b), min(a, b)
        value, expression = a - b, f"{a} - {b}"
    return Problem(f"What is {expression}?", str(value), f"{expression} = {boxed(str(value))}")


def multi_digit_sum(rng: np.random.Generator) -> Problem:
    """a + b or a - b with two- or three-digit operands; a difference may be negative."""
    a, b = draw_int(rng, 10, 999), draw_int(rng, 10, 999)
    if draw_int(rng, 0, 1):
        value = a + b
        steps = _in_two_parts(a, "+", b)
        expression = f"{a} + {b}"
    else:
        value = a - b
        expression = f"{a} - {b}"
        steps = _in_two_parts(max(a, b), "-", min(a, b))
        if a < b:
            steps += f" So {a} - {b} = -({b} - {a}) = {value}."
    return Problem(f"What is {expression}?", str(value), f"{steps}\n{boxed(str(value))}")


def _in_two_parts(a: int, operator: str, b: int) -> str:
    """a + b or a - b, adding or taking away b's leading part first: 347 + 82 = 347 + 80 + 2."""
    value = a + b if operator == "+" else a - b
    unit = 100 if b >= 100 else 10
    head, rest = b // unit * unit, b % unit
    if rest == 0:
        return f"{a} {operator} {b} = {value}."
    partial = a + head if operator == "+" else a - head
    return f"{a} {operator} {b} = {a} {operator} {head} {operator} {rest} = {partial} {operator} {rest} = {value}."


# --- level 3: multiplication and exact division --------------------------------------------


def product_or_quotient(rng: np.random.Generator) -> Problem:
    """a × b, or (a·b) ÷ b with a whole quotient; a quarter of the operands are negative."""
    first = draw_int(rng, 2, 99) * draw_sign(rng, (1, 4))
    second = draw_int(rng, 2, 25) * draw_sign(rng, (1, 4))
    if draw_int(rng, 0, 1):
        value = first * second
        expression = f"{parenthesised(first)} × {parenthesised(second)}"
        steps = _product_steps(abs(first), abs(second))
        if value < 0:
            steps += f" One factor is negative, so {expression} = {value}."
        elif first < 0:
            steps += f" Both factors are negative, so {expression} = {value}."
        return Problem(f"What is {expression}?", str(value), f"{steps}\n{boxed(str(value))}")
    dividend, divisor, value = first * second, second, first
    expression = f"{parenthesised(dividend)} ÷ {parenthesised(divisor)}"
    steps = f"{abs(divisor)} × {abs(value)} = {abs(dividend)}, so {abs(dividend)} ÷ {abs(divisor)} = {abs(value)}."
    if value < 0:
        steps += f" The signs differ, so the quotient is negative: {expression} = {value}."
    elif divisor < 0:
        steps += f" Both numbers are negative, so the quotient is positive: {expression} = {value}."
    return Problem(f"What is {expression}?", str(value), f"{steps}\n{boxed(str(value))}")


def _product_steps(a: int, b: int) -> str:
    """a × b by splitting the larger factor into tens and ones."""
    big, small = max(a, b), min(a, b)
    tens, ones = big // 10 * 10, big % 10
    if tens == 0 or ones == 0 or small % 10 == 0:
        return f"{a} × {b} = {a * b}."
    return f"{a} × {b} = {tens} × {small} + {ones} × {small} = {tens * small} + {ones * small} = {a * b}."


# --- level 4: expressions with parentheses, word problems ------------------------------------

Operation = tuple[str, "Expression", "Expression"]
"""(operator, left, right) with operator one of + - × ÷."""
Expression = int | Operation
"""A leaf number, or an operation."""

PRECEDENCE = {"+": 1, "-": 1, "×": 2, "÷": 2}
EXPRESSION_OPERATIONS = 3
MAX_INTERMEDIATE = 500


def evaluate(expression: Expression) -> Fraction:
    if isinstance(expression, int):
        return Fraction(expression)
    operator, left, right = expression
    a, b = evaluate(left), evaluate(right)
    if operator == "+":
        return a + b
    if operator == "-":
        return a - b
    return a * b if operator == "×" else a / b


def render(expression: Expression) -> str:
    """Standard notation with only the parentheses precedence needs."""
    if isinstance(expression, int):
        return str(expression)
    operator, left, right = expression
    return f"{_operand(left, operator, False)} {operator} {_operand(right, operator, True)}"


def _operand(child: Expression, parent: str, is_right: bool) -> str:
    if isinstance(child, int):
        return parenthesised(child)
    operator = child[0]
    needs = PRECEDENCE[operator] < PRECEDENCE[parent] or (
        is_right and PRECEDENCE[operator] == PRECEDENCE[parent] and not (operator == parent and parent in "+×")
    )
    text = render(child)
    return f"({text})" if needs else text


def reduce_once(expression: Operation) -> Expression:
    """Evaluate the first operation (in evaluation order) whose operands are both numbers."""
    operator, left, right = expression
    if not isinstance(left, int):
        return (operator, reduce_once(left), right)
    if not isinstance(right, int):
        return (operator, left, reduce_once(right))
    return int(evaluate(expression))


def random_expression(rng: np.random.Generator, operations: int) -> Expression:
    """A random tree of `operations` operations over 1..20 in which every ÷ is exact.

    A ÷ gets a number for its divisor, one that divides its dividend; where none does
    (or the divisor would have to be a whole subexpression) the operation becomes a +.
    """
    if operations == 0:
        return draw_int(rng, 1, 20)
    on_left = draw_int(rng, 0, operations - 1)
    on_right = operations - 1 - on_left
    left = random_expression(rng, on_left)
    operator = draw_from(rng, ("+", "-", "×", "÷"))
    if operator == "÷":
        dividend = int(evaluate(left))
        divisors = [d for d in range(2, 13) if dividend != 0 and dividend % d == 0]
        if on_right == 0 and divisors:
            return ("÷", left, draw_from(rng, divisors))
        operator = "+"
    return (operator, left, random_expression(rng, on_right))


def expression_problem(rng: np.random.Generator) -> Problem:
    """A three-operation expression that needs parentheses, solved one operation at a time."""
    # Resample (from the same stream, so still a function of the task id) until parentheses
    # matter and no step is large; about half the draws qualify.
    while True:
        expression = random_expression(rng, EXPRESSION_OPERATIONS)
        if "(" in render(expression) and _intermediates_within(expression, MAX_INTERMEDIATE):
            break
    value = int(evaluate(expression))
    chain = [render(expression)]
    while not isinstance(expression, int):
        expression = reduce_once(expression)
        chain.append(render(expression))
    return Problem(f"What is {chain[0]}?", str(value), " = ".join(chain) + f"\n{boxed(str(value))}")


def _intermediates_within(expression: Expression, bound: int) -> bool:
    if isinstance(expression, int):
        return abs(expression) <= bound
    value = evaluate(expression)
    return (
        abs(value) <= bound
        and _intermediates_within(expression[1], bound)
        and _intermediates_within(expression[2], bound)
    )


ITEMS = ("apples", "stickers", "marbles", "pencils", "cards", "shells", "coins", "buttons")
GOODS = ("pens", "notebooks", "muffins", "tickets", "plants", "books")


def word_problem(rng: np.random.Generator) -> Problem:
    """One of four two-step templates about everyday counting and money (counts from 2 up,
    so every noun is plural)."""
    name, items = draw_from(rng, SHORT_FIRST_NAMES), draw_from(rng, ITEMS)
    template = draw_int(rng, 0, 3)
    if template == 0:
        has, packs, per_pack = draw_int(rng, 2, 40), draw_int(rng, 2, 9), draw_int(rng, 2, 12)
        gives = draw_int(rng, 1, has + packs * per_pack)
        value = has + packs * per_pack - gives
        prompt = (
            f"{name} has {has} {items}. {name} buys {packs} packs of {per_pack} {items} each "
            f"and then gives away {gives}. How many {items} does {name} have now?"
        )
        steps = (
            f"{packs} packs of {per_pack} is {packs} × {per_pack} = {packs * per_pack}. "
            f"{has} + {packs * per_pack} = {has + packs * per_pack}. "
            f"{has + packs * per_pack} - {gives} = {value}."
        )
    elif template == 1:
        things = draw_from(rng, GOODS)
        count, price = draw_int(rng, 2, 9), draw_int(rng, 1, 12)
        bill = next(b for b in (20, 50, 100, 200) if b >= count * price)
        value = bill - count * price
        prompt = (
            f"{name} buys {count} {things} at ${price} each and pays with a ${bill} bill. "
            f"How many dollars of change does {name} get?"
        )
        steps = f"The {things} cost {count} × {price} = {count * price} dollars. The change is {bill} - {count * price} = {value}."
    elif template == 2:
        rows, per_row, boxes = draw_int(rng, 2, 9), draw_int(rng, 2, 9), draw_int(rng, 2, 6)
        total = rows * per_row * boxes
        lost = draw_int(rng, 2, total - 1)
        value = total - lost
        prompt = (
            f"A box holds {rows} rows of {per_row} {items}. {name} fills {boxes} boxes "
            f"and then loses {lost} {items}. How many {items} are left?"
        )
        steps = (
            f"One box holds {rows} × {per_row} = {rows * per_row}. {boxes} boxes hold "
            f"{boxes} × {rows * per_row} = {total}. {total} - {lost} = {value}."
        )
    else:
        friends, each = draw_int(rng, 2, 9), draw_int(rng, 2, 15)
        had = draw_int(rng, 2, friends * each - 1)
        found = friends * each - had
        value = each
        prompt = (
            f"{name} has {had} {items} and finds {found} more. {name} shares all of them equally "
            f"among {friends} friends. How many {items} does each friend get?"
        )
        steps = f"{had} + {found} = {had + found}. {had + found} ÷ {friends} = {value}."
    return Problem(prompt, str(value), f"{steps}\n{boxed(str(value))}")


def expression_or_word_problem(rng: np.random.Generator) -> Problem:
    return expression_problem(rng) if draw_int(rng, 0, 1) else word_problem(rng)


# --- level 5: fractions and decimals ---------------------------------------------------------


def fraction_problem(rng: np.random.Generator) -> Problem:
    """Two fractions with denominators 2..12 combined by + - × ÷; the answer in lowest terms."""
    first, second = _draw_fraction(rng), _draw_fraction(rng)
    operator = draw_from(rng, ("+", "-", "×", "÷"))
    a, b = _fraction_text(first), _fraction_text(second)
    if operator in "+-":
        # Written without parentheses: / binds tighter than + and -.
        expression = f"{a} {operator} {b}"
        value = first + second if operator == "+" else first - second
        bottom = math.lcm(first.denominator, second.denominator)
        top_a = first.numerator * bottom // first.denominator
        top_b = second.numerator * bottom // second.denominator
        top = top_a + top_b if operator == "+" else top_a - top_b
        steps = (
            f"The common denominator is {bottom}: {a} = {top_a}/{bottom} and {b} = {top_b}/{bottom}. "
            f"{top_a}/{bottom} {operator} {top_b}/{bottom} = {top}/{bottom}"
        )
    else:
        # Parenthesised: 3/4 ÷ 5/6 would read as ((3/4) ÷ 5)/6.
        expression = f"({a}) {operator} ({b})"
        steps = ""
        factor = second
        if operator == "÷":
            factor = 1 / second
            steps = f"Dividing by {b} is multiplying by {_fraction_text(factor)}: "
        value = first * factor
        top, bottom = first.numerator * factor.numerator, first.denominator * factor.denominator
        steps += (
            f"({first.numerator} × {factor.numerator})/({first.denominator} × {factor.denominator}) = {top}/{bottom}"
        )
    if (top, bottom) != (value.numerator, value.denominator):
        steps += f" = {_fraction_text(value)}"
    answer = latex_number(value)
    return Problem(f"What is {expression}?", answer, f"{steps}.\n{boxed(answer)}")


def _draw_fraction(rng: np.random.Generator) -> Fraction:
    """A fraction n/d (1 <= n <= 11, 2 <= d <= 12) that is not a whole number."""
    while True:
        value = Fraction(draw_int(rng, 1, 11), draw_int(rng, 2, 12))
        if value.denominator != 1:
            return value


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}" if value.denominator != 1 else str(value.numerator)


def decimal_problem(rng: np.random.Generator) -> Problem:
    """Two decimals with one or two places combined by + - × ÷, with an exact decimal answer."""
    operator = draw_from(rng, ("+", "-", "×", "÷"))
    if operator in "+-":
        first = Fraction(draw_int(rng, 1, 999), 10 ** draw_int(rng, 1, 2))
        second = Fraction(draw_int(rng, 1, 999), 10 ** draw_int(rng, 1, 2))
        value = first + second if operator == "+" else first - second
        places = max(_places(first), _places(second))
        steps = (
            f"Line up the decimal points: {_padded(first, places)} {operator} {_padded(second, places)} "
            f"= {_padded(value, places)}"
        )
        written = _padded(value, places)
    elif operator == "×":
        first = Fraction(draw_int(rng, 2, 99), 10)
        second = Fraction(draw_int(rng, 2, 99), 10 ** draw_int(rng, 1, 2))
        value = first * second
        whole_a, whole_b = _as_whole(first), _as_whole(second)
        places = _places(first) + _places(second)
        written = _padded(value, places)
        steps = (
            f"{whole_a} × {whole_b} = {whole_a * whole_b}, and the factors have {places} decimal places "
            f"in all, so the product is {written}"
        )
    else:
        second = Fraction(draw_int(rng, 2, 50), 10)
        value = Fraction(draw_int(rng, 2, 99), 10 ** draw_int(rng, 0, 1))
        first = second * value
        shift = 10 ** max(_places(first), _places(second))
        written = latex_decimal(value)
        steps = (
            f"Multiply both numbers by {shift}: {latex_decimal(first)} ÷ {latex_decimal(second)} "
            f"= {int(first * shift)} ÷ {int(second * shift)} = {written}"
        )
    answer = latex_decimal(value)
    if written != answer:
        steps += f" = {answer}"
    expression = f"{latex_decimal(first)} {operator} {latex_decimal(second)}"
    return Problem(f"What is {expression}?", answer, f"{steps}.\n{boxed(answer)}")


def _places(value: Fraction) -> int:
    """How many decimal places `value` has when written exactly."""
    text = latex_decimal(value)
    return len(text.split(".")[1]) if "." in text else 0


def _as_whole(value: Fraction) -> int:
    """The digits of a decimal read as a whole number: 2.5 -> 25, 0.04 -> 4."""
    return int(value * 10 ** _places(value))


def _padded(value: Fraction, places: int) -> str:
    """`value` with exactly `places` decimal places (it must have no more): 3.7 -> "3.70"."""
    if places == 0:
        return latex_decimal(value)
    scaled = int(value * 10**places)
    digits = str(abs(scaled)).rjust(places + 1, "0")
    return f"{'-' if scaled < 0 else ''}{digits[:-places]}.{digits[-places:]}"


def fraction_or_decimal(rng: np.random.Generator) -> Problem:
    return fraction_problem(rng) if draw_int(rng, 0, 1) else decimal_problem(rng)


# --- the env ---------------------------------------------------------------------------------

LEVELS: dict[int, Level] = {
    1: Level("single-digit + and -", single_digit_sum),
    2: Level("two/three-digit + and -", multi_digit_sum),
    3: Level("× and exact ÷", product_or_quotient),
    4: Level("expressions with parentheses or word problems", expression_or_word_problem),
    5: Level("fractions and decimals", fraction_or_decimal),
}
ARITHMETIC = Family.of_levels(FAMILY, SUMMARY, LEVELS, seed=FAMILY_SEED)


def arithmetic_task(level: int, index: int) -> MathTask:
    """Task `index` of `level`; module level so that envs holding it pickle."""
    return procedural_task(ARITHMETIC, level, index)


class ArithmeticEnv(ProceduralMathEnv):
    """Arithmetic problems at one of five levels; reply with the exact answer in `\\boxed{}`."""

    env_name = "Arithmetic-v1"
    family = FAMILY
    levels = LEVELS
    task_families = {FAMILY: ARITHMETIC}
    task_at = staticmethod(arithmetic_task)

    def __init__(
        self,
        level: int = DEFAULT_LEVEL,
        max_turns: int = 1,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(level, max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode)
