"""Red-team corpus of the math family (`rlenvs.rewards.math`, MATH-v0, GSM8K-v0,
Arithmetic-v0, Algebra-v0).

A case's `task` is either a gold answer for the verifier alone, `{"gold": ..., "settings":
{...}}` (keyword arguments of `math_answer_score`), or an env and the row it is posed with,
`{"env": "rlenvs/MATH-v0", "row": {...}}` (through `options={"task": row}`), where the env's
own rules apply (a restated problem scores 0 in MATH-v0). The replies are played as turns;
the episode's total reward is what `replay` returns.
"""

from __future__ import annotations

import functools

import gymnasium as gym

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.rewards.math import math_answer_score
from tests.conftest import MAKE_KWARGS
from tests.redteam import Case


@functools.cache
def _env(env_id: str) -> gym.Env:
    return gym.make(env_id, **MAKE_KWARGS.get(env_id, {}))


def replay(case: Case) -> float:
    task = case.task
    if "env" not in task:
        (reply,) = case.replies
        return math_answer_score(reply, task["gold"], **task.get("settings", {}))
    env = _env(task["env"])
    env.reset(seed=0, options={"task": task["row"]})
    total = 0.0
    for reply in case.replies:
        _, reward, terminated, truncated, _ = env.step(reply)
        total += float(reward)
        if terminated or truncated:
            break
    return total


def _gold(kind: str, gold: str, reply: str, reward: float, why: str, **settings: object) -> Case:
    return Case(kind, {"gold": gold, "settings": settings}, (reply,), reward, why)


def _math(kind: str, problem: str, answer: str, reply: str, reward: float, why: str) -> Case:
    row = {"problem": problem, "solution": f"So the answer is $\\boxed{{{answer}}}$.", "answer": answer}
    return Case(kind, {"env": "rlenvs/MATH-v0", "row": row}, (reply,), reward, why)


def _gsm8k(kind: str, answer: str, reply: str, reward: float, why: str) -> Case:
    row = {"question": "How many are there?", "answer": f"Some working.\n#### {answer}"}
    return Case(kind, {"env": "rlenvs/GSM8K-v0", "row": row}, (reply,), reward, why)


CASES: list[Case] = [
    # --- mixed numbers: an integer before a proper fraction is their sum -------------------
    _gold("mixed-number", "3\\frac{1}{2}", "\\boxed{\\frac{7}{2}}", 1.0, "3 1/2 is 7/2"),
    _gold("mixed-number", "3\\frac{1}{2}", "\\boxed{3.5}", 1.0, "3 1/2 is 3.5"),
    _gold("mixed-number", "3\\frac{1}{2}", "\\boxed{15.5}", 0.0, "3 1/2 is not 31/2"),
    _gold("mixed-number", "3\\frac{1}{2}", "\\boxed{\\frac{31}{2}}", 0.0, "3 1/2 is not the digits 3 and 1 over 2"),
    _gold("mixed-number", "3\\tfrac12", "\\boxed{3 1/2}", 1.0, "both spellings of a mixed number"),
    _gold("mixed-number", "\\frac{11}{4}", "\\boxed{2\\dfrac{3}{4}}", 1.0, "2 3/4 is 11/4"),
    _gold("mixed-number", "\\frac{3}{2}", "\\boxed{2\\frac{3}{4}}", 0.0, "without an operator it is a mixed number, not 2 times 3/4"),
    _gold("mixed-number", "\\frac{13}{4}", "\\boxed{2\\frac{5}{4}}", 0.0, "an integer before an improper fraction is ambiguous"),
    _gold("mixed-number", "\\frac{5}{2}", "\\boxed{2\\frac{5}{4}}", 0.0, "ambiguous either way: never read"),
    _gold("mixed-number", "-\\frac{7}{2}", "\\boxed{-3\\frac{1}{2}}", 1.0, "the sign applies to the whole mixed number"),
    _gold("mixed-number", "\\frac{13}{3}\\pi", "\\boxed{4\\frac{1}{3}\\pi}", 1.0, "a mixed number inside an expression"),
    _gsm8k("mixed-number", "3.5", "So she has \\boxed{3\\frac{1}{2}} pies.", 1.0, "GSM8K gold 3.5 and a mixed number"),
    _gsm8k("mixed-number", "15.5", "So she has \\boxed{3\\frac{1}{2}} pies.", 0.0, "a mixed number is not its digits"),
    # --- exact answers compare exactly ------------------------------------------------------
    _gold("exact-equality", "2^{64}", "\\boxed{2^{64}+1}", 0.0, "one more than 2^64"),
    _gold("exact-equality", "2^{64}", "\\boxed{18446744073709551617}", 0.0, "2^64 + 1 written out"),
    _gold("exact-equality", "2^{64}", "\\boxed{18446744073709551616}", 1.0, "2^64 written out"),
    _gold("exact-equality", "3^{100}", "\\boxed{3^{100}-1}", 0.0, "one less than 3^100"),
    _gold("exact-equality", "10^{-12}", "\\boxed{0}", 0.0, "a tiny number is not zero"),
    _gold("exact-equality", "\\frac{1}{2^{40}}", "\\boxed{0}", 0.0, "a tiny fraction is not zero"),
    _gold("exact-equality", "\\sqrt{2}", "\\boxed{1.41421356237}", 0.0, "a decimal approximation of an exact value"),
    _gold("exact-equality", "\\sqrt{2}", "\\boxed{1.41}", 1.0, "with rounding=True, 1.41 is sqrt 2 to the stated 2 decimals", rounding=True),
    _gold("exact-equality", "\\sqrt{2}", "\\boxed{1.42}", 0.0, "1.42 is not sqrt 2 rounded to 2 decimals", rounding=True),
    _gold("exact-equality", "\\pi", "\\boxed{\\frac{245850922}{78256779}}", 0.0, "a fraction within 1e-16 of pi is not pi"),
    _gold("exact-equality", "(x+1)^2", "\\boxed{x^2 + 2x + 1.0000000001}", 0.0, "a polynomial off by 1e-10"),
    _gold("exact-equality", "x", "\\boxed{\\sqrt{x^2}}", 0.0, "sqrt(x^2) is |x|, not x: negatives separate them"),
    _gold("exact-equality", "x", "\\boxed{|x|}", 0.0, "|x| is not x"),
    _gold("exact-equality", "|x|", "\\boxed{\\sqrt{x^2}}", 1.0, "sqrt(x^2) is |x|"),
    _gold("exact-equality", "\\sin\\frac{\\pi}{12}", "\\boxed{\\frac{\\sqrt{6}-\\sqrt{2}}{4}}", 1.0, "an exact value proved equal"),
    _gold("exact-equality", "\\sqrt{2}+\\sqrt{3}", "\\boxed{\\sqrt{5+2\\sqrt{6}}}", 1.0, "a nested radical proved equal"),
    _gold("exact-equality", "3\\ln 2", "\\boxed{\\ln 8}", 1.0, "logarithms proved equal"),
    _gold("exact-equality", "x + \\frac{1}{10^{30}}", "\\boxed{x}", 0.0, "an expression off by 1e-30"),
    # --- scale words are numbers, not units ---------------------------------------------
    _gold("scale-word", "18000000", "\\boxed{18 million}", 1.0, "18 million is 18000000"),
    _gold("scale-word", "18", "\\boxed{18 million}", 0.0, "18 million is not 18"),
    _gold("scale-word", "60", "The answer is 5 dozen.", 1.0, "5 dozen is 60"),
    _gold("scale-word", "5", "The answer is 5 dozen.", 0.0, "5 dozen is not 5"),
    _gold("scale-word", "16000", "#### 16 thousand", 1.0, "16 thousand is 16000"),
    _gold("scale-word", "324", "\\boxed{18 squared}", 1.0, "18 squared is 324"),
    _gold("scale-word", "18", "\\boxed{18 squared}", 0.0, "18 squared is not 18"),
    _gold("scale-word", "1.5", "\\boxed{3 halves}", 0.0, "a fraction word is not a unit (and not read)"),
    _gold("scale-word", "3", "\\boxed{3 halves}", 0.0, "3 halves is not 3"),
    _gold("scale-word", "6", "\\boxed{3 times}", 0.0, "'times' is no unit"),
    _gold("scale-word", "72", "\\boxed{72 clips}", 1.0, "a counted noun is a unit"),
    _gold("scale-word", "60", "\\boxed{60 miles per hour}", 1.0, "a compound unit"),
    _gold("scale-word", "18000000", "\\boxed{18 million dollars}", 1.0, "a scale word, then a unit"),
]
