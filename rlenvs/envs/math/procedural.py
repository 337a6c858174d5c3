"""What the procedural math envs (Arithmetic-v1, Algebra-v1) share.

Why procedural: these envs need no data at all, never run out of tasks, and give a curriculum
of difficulty levels with exact ground truth. Task `i` at level `L` is a pure function of
`(L, i)`: all its randomness comes from `task_rng(family_seed, L, i)` (the seeding every
procedural family shares, `rlenvs.core.procedural`), so a task id such as
`arithmetic/L2/17` rebuilds the same task in any process (vector workers, a later eval run).
Generators draw only with `Generator.integers` (via `draw_*`), the simplest draw and the
least likely to change between numpy releases; pin numpy to pin the tasks exactly.

The module holds exact LaTeX rendering of answers (the canonical ground-truth strings) and
`ProceduralMathEnv`, the env both families subclass: level validation (`ProceduralEnv`), the
`{question, answer}` row format for users' own problems, and the judge (one final answer,
scored as `math_answer_score` does, and stated in the form of the gold answer).

Why the form matters: the verifier decides *equivalence*. It already insists on a number
where the gold answer is one (`\\boxed{7 + 9}` is not 16), but for an expression it accepts
any equivalent one, such as the unexpanded `\\boxed{3(x - 7)(2x - 4)}` for a polynomial: the
question copied into the box. A policy trained on that learns to echo the prompt. So a reply
must also state its answer the way the gold one is stated (`answer_form`): a single number
when the gold answer is a number (any exact spelling in lowest terms: `3.5`, `7/2`, `x = 3.5`;
`14/4` is a division left undone), a tuple of numbers for a tuple, an expanded polynomial
with like terms combined for a polynomial; other answers (a user's own rows) only need to be
equivalent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.procedural import Family, ProceduralEnv
from rlenvs.core.procedural import Level as FamilyLevel
from rlenvs.core.procedural import task_rng as task_rng  # the families' seeding, kept importable here
from rlenvs.core.task import content_task_id
from rlenvs.envs.math.tasks import MathTask, row_string
from rlenvs.rewards.math import warm_up
from rlenvs.rewards.math.answer_form import verdict

# --- drawing -------------------------------------------------------------------------------


def draw_nonzero(rng: np.random.Generator, low: int, high: int) -> int:
    """A uniform int in [low, high] other than 0 (the range must hold a non-zero int)."""
    choices = [value for value in range(low, high + 1) if value != 0]
    return choices[int(rng.integers(len(choices)))]


def draw_sign(rng: np.random.Generator, negative_chance: tuple[int, int] = (1, 2)) -> int:
    """-1 with probability numerator/denominator, else 1."""
    numerator, denominator = negative_chance
    return -1 if int(rng.integers(denominator)) < numerator else 1


# --- exact LaTeX ---------------------------------------------------------------------------


def latex_number(value: int | Fraction) -> str:
    """The canonical LaTeX of a rational: "7", "-12", "\\frac{19}{12}", "-\\frac{3}{4}"."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def latex_decimal(value: int | Fraction) -> str:
    """A terminating decimal written exactly, without trailing zeros: "4.95", "-0.3", "1".

    Raises ValueError for a value with no finite decimal expansion (e.g. 1/3).
    """
    value = Fraction(value)
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
        if places > 30:
            raise ValueError(f"{value} has no terminating decimal expansion: write it with latex_number")
    if places == 0:
        return str(value.numerator)
    scaled = abs((value * 10**places).numerator)
    digits = str(scaled).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def latex_tuple(values: Sequence[int | Fraction]) -> str:
    """An ordered pair or triple: "(2, -1)", "(1, \\frac{1}{2}, 3)"."""
    return "(" + ", ".join(latex_number(value) for value in values) + ")"


def signed_sum(terms: Sequence[tuple[int, str]]) -> str:
    """Integer-coefficient terms written the way people write them.

    `[(3, "x"), (-1, "y"), (-5, "")]` -> "3x - y - 5"; zero terms are left out and a sum of
    nothing is "0". The second item of a term is its variable part ("x^2", "x", "" for a
    constant).
    """
    text = ""
    for coefficient, variable in terms:
        if coefficient == 0:
            continue
        magnitude = abs(coefficient)
        body = variable if variable and magnitude == 1 else f"{magnitude}{variable}"
        if not text:
            text = f"-{body}" if coefficient < 0 else body
        else:
            text += f" - {body}" if coefficient < 0 else f" + {body}"
    return text or "0"


def parenthesised(value: int | Fraction) -> str:
    """A number as an operand inside a longer expression: negatives get parentheses."""
    text = latex_number(value)
    return f"({text})" if value < 0 else text


# --- tasks ---------------------------------------------------------------------------------


class Problem(NamedTuple):
    """One generated problem, before it gets its task id."""

    prompt: str
    answer: str
    """Canonical LaTeX of the exact answer."""
    solution: str
    """Short worked steps ending in `\\boxed{answer}`."""


@dataclass(frozen=True)
class Level(FamilyLevel[Problem]):
    """One difficulty level of a math family: what it asks, its problem generator, and
    whether its answers need the symbolic verifier."""

    symbolic: bool = False
    """Its answers are expressions, which the verifier compares in a sympy worker process
    (numbers, fractions and tuples are compared in process)."""


def procedural_task(family: Family[Problem], level: int, index: int) -> MathTask:
    """Task `index` of `level`: the problem its own random stream generates, with its id."""
    problem = family.scenario(level, index)
    return MathTask(
        task_id=family.task_id(level, index),
        prompt=problem.prompt,
        answer=problem.answer,
        solution=problem.solution,
    )


def boxed(answer: str) -> str:
    return f"\\boxed{{{answer}}}"


# --- the env -------------------------------------------------------------------------------

ROW_ANSWER_EXAMPLES = "7, -\\frac{3}{4}, 2.5, (2, -1) or x^2 + 3x - 1"


class ProceduralMathEnv(ProceduralEnv, TextEnv[MathTask]):
    """A math env whose tasks are generated at one difficulty level; see the subclasses.

    Reward 1.0 iff the reply's single final answer is equivalent to the exact answer
    (`rlenvs.rewards.math.check_answer`, the working of `math_answer_score`) and stated in
    its form (`answer_form`: a number, not `7 + 9`), else 0.0; a hedge is 0.0.
    `info["answer_form"]` names the form and `info["in_form"]` says whether the reply had it.
    With `max_turns > 1`, a reply with no final answer at all gets a format reminder and
    another turn; a reply with an answer ends the episode.
    """

    env_name: ClassVar[str]
    """The id without the namespace, for error messages, e.g. "Arithmetic-v1"."""
    family: ClassVar[str]
    """The first part of task ids, e.g. "arithmetic"."""
    levels: ClassVar[Mapping[int, Level]]
    """The family's levels, for what the env needs of one (`symbolic`)."""
    task_families: ClassVar[Mapping[str, Family[Problem]]]
    """{family: its Family}: the one family whose levels `ProceduralEnv` checks."""
    if TYPE_CHECKING:  # each subclass sets it, `task_at = staticmethod(its_task)`

        @staticmethod
        def task_at(level: int, index: int) -> MathTask:
            """The family's module-level `(level, index) -> task`: picklable, unlike a closure."""

    format_reminder: ClassVar[str] = (
        "I could not find a final answer in your reply. End your reply with the final answer as \\boxed{...}."
    )

    def __init__(
        self,
        level: int,
        max_turns: int,
        system_prompt: str | None,
        render_mode: str | None,
    ) -> None:
        self.level = self.check_level(level)
        source = self.level_source(self.level, type(self).task_at)
        super().__init__(source, max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode)
        if self.levels[self.level].symbolic:
            warm_up()  # start the sympy worker now (about a second), not inside the first episode

    @classmethod
    def task_of(cls, family: str, level: int, index: int) -> MathTask:
        if family != cls.family:
            raise ValueError(f"{cls.env_name} has one task family, {cls.family!r}, not {family!r}")
        return cls.task_at(level, index)

    def task_from_row(self, row: Mapping[str, Any]) -> MathTask:
        return math_row_task(row, content_task_id(self.family, row), self.env_name)

    def judge(self, task: MathTask, reply: str) -> Judgement:
        result = verdict(reply, task.answer, task.prompt)
        check = result.check
        info = {
            "parsed_answer": check.answer,
            "hedged": check.hedged,
            "answer_form": result.form,
            "in_form": result.in_form,
        }
        if check.answer is None and not check.hedged:
            return Judgement(0.0, resolved=False, correct=False, feedback=self.format_reminder, info=info)
        return Judgement(
            float(result.correct), resolved=True, correct=result.correct, stop_reason="answered", info=info
        )

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        return task.solution


def math_row_task(row: Mapping[str, Any], task_id: str, env_name: str) -> MathTask:
    """A user's own problem `{"question": ..., "answer": ...[, "solution": ...]}` as a task.

    The answer must be one the verifier can read (its own `\\boxed{}` scores 1.0), and a
    given solution must end in that answer, so that `oracle_action` still earns the maximum
    reward; either failing is a ValueError that names the field.
    """
    given_answer = row.get("answer")
    if isinstance(given_answer, int) and not isinstance(given_answer, bool):
        given_answer = str(given_answer)
    question = row_string(row.get("question"), "question", env_name)
    answer = row_string(given_answer, "answer", env_name).strip()
    if not verdict(boxed(answer), answer).correct:
        raise ValueError(
            f"{env_name} row answer {answer!r} is not an answer the verifier can read: write it in "
            f"LaTeX, e.g. {ROW_ANSWER_EXAMPLES}"
        )
    solution = row.get("solution")
    if solution is None:
        solution = f"The answer is {boxed(answer)}."
    elif not isinstance(solution, str) or not verdict(solution, answer).correct:
        raise ValueError(
            f"{env_name} row solution must be a string whose final answer is {answer!r} "
            f"(end it with {boxed(answer)}), got {str(solution)[-80:]!r}"
        )
    return MathTask(task_id=task_id, prompt=question.strip(), answer=answer, solution=solution)
