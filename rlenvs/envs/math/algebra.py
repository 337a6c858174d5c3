"""rlenvs/Algebra-v1: procedurally generated algebra with exact answers, in five levels.

No data needed and never runs out of tasks. Answers are canonical LaTeX: numbers and
fractions, ordered pairs and triples, and at level 5 a polynomial, which the reward compares
by symbolic equivalence (`x^2 + 9x - 3` and `9x + x^2 - 3` are the same answer) once the
reply's polynomial is expanded with like terms combined (the prompt's own unexpanded
expression is equivalent too, and scores 0).

| level | asks | example prompt | answer |
|---|---|---|---|
| 1 | a·x + b = c, whole-number solution | Solve for x: 7x - 7 = 21. | 4 |
| 2 | a·x + b = c·x + d, fractional solution | Solve for x: -9x + 15 = -3x - 6. | \\frac{7}{2} |
| 3 | 2×2 linear system, whole-number solution | the system x + 3y = -15, 5x + y = 23 | (6, -7) |
| 4 | 3×3 linear system (whole numbers), or an equation between fractions | Solve for x: (3x - 4)/3 = (-4x + 7)/6. | \\frac{3}{2} |
| 5 | expand and simplify a sum of products, degree up to 3 | Expand and simplify: -3(x - 6)^2 + 3(x - 7)(2x - 4). | 3x^2 - 18x - 24 |

(Task ids of the examples: algebra/L1/6, L2/7, L3/3, L4/6, L5/5. A system's prompt puts one
equation per line and asks for "the ordered pair (x, y)" or "the ordered triple (x, y, z)".)

Task ids are `algebra/L{level}/{index}`; see `rlenvs.envs.math.procedural` for seeding, the
row format for a user's own problem, and the reward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from rlenvs.core.draw import draw_int
from rlenvs.core.procedural import Family
from rlenvs.envs.math.procedural import (
    Level,
    Problem,
    ProceduralMathEnv,
    boxed,
    draw_nonzero,
    latex_number,
    latex_tuple,
    parenthesised,
    procedural_task,
    signed_sum,
)
from rlenvs.envs.math.tasks import MathTask

FAMILY = "algebra"
SUMMARY = "Linear equations, linear systems and polynomials to expand, exact answers."
FAMILY_SEED = 2
DEFAULT_LEVEL = 1
DEFAULT_SYSTEM_PROMPT = (
    "Solve the algebra problem. Give the exact final answer as \\boxed{...} at the end of your reply: "
    "a number or fraction for one unknown, an ordered pair or triple for a system, "
    "a simplified expression for a simplification."
)


def linear(coefficient: int, constant: int, variable: str = "x") -> str:
    """ "3x + 5", "-x - 2", "7" (a zero coefficient leaves the variable out)."""
    return signed_sum([(coefficient, variable), (constant, "")])


def solved_for_x(coefficient: int, constant: int) -> tuple[Fraction, str]:
    """The value of x in `coefficient·x = constant`, and the sentence that divides it out."""
    value = Fraction(constant, coefficient)
    if coefficient == 1:
        return value, f"x = {latex_number(value)}."
    return value, f"Divide both sides by {coefficient}: x = {latex_number(value)}."


# --- levels 1 and 2: one linear equation -----------------------------------------------------


def one_step_equation(rng: np.random.Generator) -> Problem:
    """a·x + b = c with a whole-number x in -10..10."""
    a, x, b = draw_nonzero(rng, -9, 9), draw_int(rng, -10, 10), draw_nonzero(rng, -20, 20)
    while a in (1, -1):
        a = draw_nonzero(rng, -9, 9)
    c = a * x + b
    move = f"Subtract {b} from both sides" if b > 0 else f"Add {-b} to both sides"
    _, divide = solved_for_x(a, c - b)
    steps = f"{move}: {linear(a, 0)} = {c - b}. {divide}"
    return Problem(f"Solve for x: {linear(a, b)} = {c}.", str(x), f"{steps}\n{boxed(str(x))}")


def fractional_equation(rng: np.random.Generator) -> Problem:
    """a·x + b = c·x + d whose solution is a fraction, not a whole number."""
    while True:
        a, c = draw_int(rng, -9, 9), draw_int(rng, -9, 9)
        b, d = draw_int(rng, -15, 15), draw_int(rng, -15, 15)
        if a != 0 and a != c and (d - b) % (a - c) != 0:
            break
    value, divide = solved_for_x(a - c, d - b)
    steps = f"Collect the x terms on the left and the numbers on the right: {linear(a - c, 0)} = {d - b}. {divide}"
    answer = latex_number(value)
    return Problem(f"Solve for x: {linear(a, b)} = {linear(c, d)}.", answer, f"{steps}\n{boxed(answer)}")


# --- levels 3 and 4: linear systems, fractions -----------------------------------------------

VARIABLES = ("x", "y", "z")


def determinant(matrix: Sequence[Sequence[int]]) -> int:
    """Determinant of a 2×2 or 3×3 integer matrix, by cofactor expansion along the first row."""
    if len(matrix) == 2:
        (a, b), (c, d) = matrix
        return a * d - b * c
    return sum(
        (-1) ** column * matrix[0][column] * determinant([[*row[:column], *row[column + 1 :]] for row in matrix[1:]])
        for column in range(3)
    )


def with_column(matrix: Sequence[Sequence[int]], column: int, values: Sequence[int]) -> list[list[int]]:
    return [list(row[:column]) + [value] + list(row[column + 1 :]) for row, value in zip(matrix, values)]


def linear_system(rng: np.random.Generator, size: int, coefficient_bound: int, solution_bound: int) -> Problem:
    """A `size`×`size` system with a unique whole-number solution, solved by Cramer's rule."""
    while True:
        matrix = [[draw_int(rng, -coefficient_bound, coefficient_bound) for _ in range(size)] for _ in range(size)]
        if all(sum(1 for a in row if a != 0) >= min(2, size) for row in matrix) and determinant(matrix) != 0:
            break
    solution = [draw_int(rng, -solution_bound, solution_bound) for _ in range(size)]
    right = [sum(a * s for a, s in zip(row, solution)) for row in matrix]
    names = VARIABLES[:size]
    equations = [f"{signed_sum(list(zip(row, names)))} = {value}" for row, value in zip(matrix, right)]
    shape = "pair" if size == 2 else "triple"
    prompt = (
        "Solve the system of equations:\n"
        + "\n".join(equations)
        + f"\nGive the answer as the ordered {shape} ({', '.join(names)})."
    )
    main = determinant(matrix)
    replaced = [determinant(with_column(matrix, column, right)) for column in range(size)]
    if size == 2:
        (a, b), (c, d) = matrix
        steps = [f"By Cramer's rule, D = {a} × {parenthesised(d)} - {parenthesised(b)} × {parenthesised(c)} = {main}."]
        for column, name in enumerate(names):
            m = with_column(matrix, column, right)
            steps.append(
                f"D_{name} = {m[0][0]} × {parenthesised(m[1][1])} - {parenthesised(m[0][1])} × "
                f"{parenthesised(m[1][0])} = {replaced[column]}."
            )
    else:
        steps = [
            "By Cramer's rule, with D the determinant of the coefficients and D_x, D_y, D_z the "
            "determinants with that variable's column replaced by the right-hand sides: "
            + ", ".join([f"D = {main}"] + [f"D_{n} = {v}" for n, v in zip(names, replaced)])
            + "."
        ]
    steps.append(
        "So "
        + ", ".join(f"{n} = D_{n}/D = {replaced[i]}/{parenthesised(main)} = {solution[i]}" for i, n in enumerate(names))
        + "."
    )
    answer = latex_tuple(solution)
    return Problem(prompt, answer, " ".join(steps) + f"\n{boxed(answer)}")


def two_by_two_system(rng: np.random.Generator) -> Problem:
    return linear_system(rng, size=2, coefficient_bound=6, solution_bound=9)


def equation_of_fractions(rng: np.random.Generator) -> Problem:
    """(a·x + b)/m = (c·x + d)/n, cleared of denominators by multiplying by lcm(m, n)."""
    while True:
        m, n = draw_int(rng, 2, 9), draw_int(rng, 2, 9)
        a, c = draw_nonzero(rng, -5, 5), draw_nonzero(rng, -5, 5)
        b, d = draw_nonzero(rng, -9, 9), draw_nonzero(rng, -9, 9)
        if m != n and n * a != m * c:
            break
    common = math.lcm(m, n)
    p, q = common // m, common // n
    coefficient, constant = p * a - q * c, q * d - p * b
    value, divide = solved_for_x(coefficient, constant)
    steps = (
        f"Multiply both sides by {common}: {_times(p, linear(a, b))} = {_times(q, linear(c, d))}, "
        f"that is {linear(p * a, p * b)} = {linear(q * c, q * d)}. "
        f"Collect the x terms on the left and the numbers on the right: {linear(coefficient, 0)} = {constant}. {divide}"
    )
    answer = latex_number(value)
    prompt = f"Solve for x: ({linear(a, b)})/{m} = ({linear(c, d)})/{n}."
    return Problem(prompt, answer, f"{steps}\n{boxed(answer)}")


def _times(factor: int, sum_text: str) -> str:
    """ "3(2x - 1)", or the sum alone when the factor is 1."""
    return sum_text if factor == 1 else f"{factor}({sum_text})"


def system_or_fractions(rng: np.random.Generator) -> Problem:
    if draw_int(rng, 0, 1):
        return linear_system(rng, size=3, coefficient_bound=4, solution_bound=6)
    return equation_of_fractions(rng)


# --- level 5: polynomials ----------------------------------------------------------------------

Polynomial = tuple[int, ...]
"""Integer coefficients, constant first: (−3, 9, 1) is x^2 + 9x − 3."""


def poly_add(p: Polynomial, q: Polynomial) -> Polynomial:
    size = max(len(p), len(q))
    return _trimmed(tuple((p[i] if i < len(p) else 0) + (q[i] if i < len(q) else 0) for i in range(size)))


def poly_mul(p: Polynomial, q: Polynomial) -> Polynomial:
    product = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            product[i + j] += a * b
    return _trimmed(tuple(product))


def _trimmed(p: Polynomial) -> Polynomial:
    end = len(p)
    while end > 1 and p[end - 1] == 0:
        end -= 1
    return p[:end]


def poly_text(p: Polynomial) -> str:
    """Highest power first: "2x^3 - x^2 + 5x - 3"."""
    powers = {0: "", 1: "x"}
    return signed_sum([(p[k], powers.get(k, f"x^{k}")) for k in range(len(p) - 1, -1, -1)])


def random_term(rng: np.random.Generator) -> tuple[str, Polynomial]:
    """One product to expand, as (its text without sign or scale, its polynomial)."""
    kind = draw_int(rng, 0, 3)
    first = (draw_nonzero(rng, -7, 7), 1)
    second = (draw_nonzero(rng, -7, 7), draw_int(rng, 1, 3))
    if kind == 0:  # (x + a)(bx + c)
        return f"({poly_text(first)})({poly_text(second)})", poly_mul(first, second)
    if kind == 1:  # x(bx + c)
        return f"x({poly_text(second)})", poly_mul((0, 1), second)
    if kind == 2:  # (bx + c)^2
        return f"({poly_text(second)})^2", poly_mul(second, second)
    return f"x({poly_text(first)})({poly_text(second)})", poly_mul((0, 1), poly_mul(first, second))


def polynomial_simplification(rng: np.random.Generator) -> Problem:
    """Two or three scaled products added or subtracted; the answer is the expanded sum."""
    while True:
        parts = []
        for _ in range(draw_int(rng, 2, 3)):
            text, polynomial = random_term(rng)
            scale = draw_int(rng, 1, 3) * (-1 if draw_int(rng, 0, 2) == 0 else 1)
            parts.append((scale, text, poly_mul((scale,), polynomial)))
        total: Polynomial = (0,)
        for _, _, expanded in parts:
            total = poly_add(total, expanded)
        if len(total) >= 2:  # not a constant: there is something to simplify to
            break
    expression = ""
    for scale, text, _ in parts:
        written = text if abs(scale) == 1 else f"{abs(scale)}{text}"
        if not expression:
            expression = f"-{written}" if scale < 0 else written
        else:
            expression += f" - {written}" if scale < 0 else f" + {written}"
    expansions = "; ".join(
        f"{'-' if scale < 0 else ''}{'' if abs(scale) == 1 else abs(scale)}{text} = {poly_text(expanded)}"
        for scale, text, expanded in parts
    )
    combined = " + ".join(f"({poly_text(expanded)})" for _, _, expanded in parts)
    answer = poly_text(total)
    steps = f"Expand each part: {expansions}. Combine like terms: {combined} = {answer}."
    return Problem(f"Expand and simplify: {expression}.", answer, f"{steps}\n{boxed(answer)}")


# --- the env ---------------------------------------------------------------------------------

LEVELS: dict[int, Level] = {
    1: Level("a·x + b = c with a whole-number solution", one_step_equation),
    2: Level("a·x + b = c·x + d with a fractional solution", fractional_equation),
    3: Level("2×2 linear systems, answer (x, y)", two_by_two_system),
    4: Level("3×3 linear systems or equations between fractions", system_or_fractions),
    5: Level("expand and simplify a polynomial", polynomial_simplification, symbolic=True),
}
ALGEBRA = Family.of_levels(FAMILY, SUMMARY, LEVELS, seed=FAMILY_SEED)


def algebra_task(level: int, index: int) -> MathTask:
    """Task `index` of `level`; module level so that envs holding it pickle."""
    return procedural_task(ALGEBRA, level, index)


class AlgebraEnv(ProceduralMathEnv):
    """Algebra problems at one of five levels; reply with the exact answer in `\\boxed{}`."""

    env_name = "Algebra-v1"
    family = FAMILY
    levels = LEVELS
    task_families = {FAMILY: ALGEBRA}
    task_at = staticmethod(algebra_task)

    def __init__(
        self,
        level: int = DEFAULT_LEVEL,
        max_turns: int = 1,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(level, max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode)
