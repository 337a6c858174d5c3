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
    # --- restating the problem: no simpler than the question scores 0 (MATH-v0) ---------
    *[
        _math("restated-problem", "Simplify $\\sqrt{50} + \\sqrt{18}$.", "8\\sqrt{2}", f"\\boxed{{{reply}}}", 0.0, why)
        for reply, why in [
            ("\\sqrt{50} + \\sqrt{18}", "the question copied"),
            ("\\sqrt{18} + \\sqrt{50}", "the question with its terms swapped"),
            ("\\sqrt{50}+\\sqrt{18}+0", "the question plus zero"),
            ("1\\cdot(\\sqrt{50}+\\sqrt{18})", "the question times one"),
            ("\\sqrt{50}+\\sqrt{2\\cdot 9}", "the question with a number rewritten"),
            ("\\frac{2\\sqrt{50}+2\\sqrt{18}}{2}", "the question doubled and halved"),
            ("\\sqrt{50}+\\sqrt{18}+\\sqrt{2}-\\sqrt{2}", "the question padded: more operations than it"),
        ]
    ],
    _math("restated-problem", "Simplify $\\sqrt{50} + \\sqrt{18}$.", "8\\sqrt{2}", "\\boxed{8\\sqrt{2}}", 1.0, "the answer"),
    _math("restated-problem", "Simplify $\\sqrt{50} + \\sqrt{18}$.", "8\\sqrt{2}", "\\boxed{\\sqrt{2} \\cdot 8}", 1.0,
          "the answer written the other way round"),
    _math("restated-problem", "Simplify $\\sqrt{50} + \\sqrt{18}$.", "8\\sqrt{2}", "\\boxed{\\sqrt{128}}", 1.0,
          "simpler than the question, if not the gold's form"),
    _math("restated-problem", "Rationalize the denominator of $\\frac{5}{\\sqrt{3}}$.", "\\frac{5\\sqrt{3}}{3}",
          "\\boxed{\\frac{5}{3}\\sqrt{3}}", 1.0, "the gold's form reordered: more operations than the question is fine"),
    _math("restated-problem", "Rationalize the denominator of $\\frac{5}{\\sqrt{3}}$.", "\\frac{5\\sqrt{3}}{3}",
          "\\boxed{\\frac{5 \\cdot 1}{\\sqrt{3}}}", 0.0, "the question with a factor one"),
    _math("restated-problem", "Expand $(x+1)(x+2)$.", "x^2+3x+2", "\\boxed{(x+2)(x+1)}", 0.0, "the product swapped, not expanded"),
    _math("restated-problem", "Expand $(x+1)(x+2)$.", "x^2+3x+2", "\\boxed{2 + 3x + x^2}", 1.0, "expanded, in another order"),
    # --- extraction: what the final answer is -------------------------------------------
    _gold("extraction-hash", "18", "#### Step 1: Find the total\nShe has 6 + 12 = 18.\n#### Step 2: Answer\n\\boxed{18}", 1.0,
          "level-4 markdown headings are text, not GSM8K answers"),
    _gold("extraction-hash", "18", "#### Step 1: Add\n6 + 12 = 18\n#### Final Answer\nThe answer is 18.", 1.0,
          "headings and an 'answer is' line"),
    _gold("extraction-hash", "18", "###### 5\n\\boxed{18}", 1.0, "six hashes are a heading"),
    _gold("extraction-hash", "18", "##### Final\n#### 18", 1.0, "five hashes are a heading; '#### 18' is the answer"),
    _gold("extraction-hash", "18", "#### 17\n\\boxed{18}", 0.0, "'#### 17' is an answer, and disagrees"),
    _gold("extraction-placeholder", "5", "Fill in $\\boxed{\\phantom{2}} + 3 = 8$: it is \\boxed{5}.", 1.0, "a phantom box is a blank"),
    _gold("extraction-placeholder", "5", "\\boxed{} so \\boxed{5}", 1.0, "an empty box is no answer"),
    _gold("extraction-placeholder", "5", "The blank $\\boxed{\\ }$ holds \\boxed{5}.", 1.0, "a spacing box is no answer"),
    _gold("extraction-placeholder", "5", "\\boxed{\\ }", 0.0, "a placeholder alone states nothing"),
    Case("extraction-placeholder", {"env": "rlenvs/MATH-v0", "row": {
        "problem": "Let $\\boxed{N}$ mean the number of divisors of $N$. Find $\\boxed{\\boxed{11}\\times\\boxed{20}}$.",
        "answer": "12"}}, ("Here $\\boxed{11} = 2$ and $\\boxed{20} = 6$, so $\\boxed{11}\\times\\boxed{20} = 12$: "
                            "the answer is \\boxed{12}.",), 1.0,
         "boxes quoted from the problem are its notation, not answers; the last box decides"),
    _gold("extraction-formatting", "113", "Answer: \\boxed{\\textbf{(113) }}. So \\boxed{113}", 1.0,
          "a bold, parenthesised box beside a plain one is one answer"),
    _gold("extraction-formatting", "18", "\\boxed{\\boxed{18}}", 1.0, "a box in a box is one answer"),
    _gold("extraction-formatting", "18", "\\boxed{\\fbox{18}}", 1.0, "an fbox in a box is one answer"),
    _gold("extraction-formatting", "18", "\\boxed{\\color{red}{18}}", 1.0, "colour is formatting"),
    _gold("extraction-formatting", "18", "\\boxed{\\textcolor{red}{18}}", 1.0, "colour is formatting"),
    _gold("extraction-formatting", "18", "\\boxed{{\\bf 18}}", 1.0, "bold is formatting"),
    _gold("extraction-formatting", "18", "\\boxed{\\mathbf{18}} and again \\boxed{18}", 1.0, "bold is formatting"),
    _gold("extraction-formatting", "\\frac{\\sqrt{3}}{2}", "\\boxed{\\frac{\\sqrt3}{2}}, i.e. \\boxed{\\dfrac{\\sqrt{3}}{2}}", 1.0,
          "two spellings of one value are no hedge"),
    _gold("extraction-formatting", "18", "\\boxed{\\boxed{18}} or \\boxed{17}", 0.0, "still a hedge between 18 and 17"),
    _gold("extraction-braces", "\\{1, 2\\}", "\\boxed{\\{1, 2\\}}", 1.0, "escaped braces do not unbalance a box"),
    _gold("extraction-braces", "\\{1, 2\\}", "\\boxed{\\{1, 3\\}}", 0.0, "another set"),
    _gold("extraction-braces", "\\left\\{\\begin{array}{ll} x & x > 0 \\\\ -x & x \\le 0 \\end{array}\\right.",
          "So $f(x) = \\boxed{\\left\\{\\begin{array}{ll} x & x > 0 \\\\ -x & x \\le 0 \\end{array}\\right.}$", 1.0,
          "a piecewise answer's \\left\\{ is read"),
    _gold("extraction-spacing", "18", "\\boxed \n{18}", 1.0, "a newline before the brace"),
    _gold("extraction-spacing", "18", "\\boxed   {18}", 1.0, "spaces before the brace"),
    _gold("extraction-spacing", "9", "so $x^2 + y^2 = \\boxed 9$.", 1.0, "TeX's one-token argument"),
    _gold("extraction-spacing", "18", "\\boxed{1\u200b8}", 1.0, "a zero-width space inside the number"),
    _gold("extraction-spacing", "18", "\\boxed{\u200e18\u200f}", 1.0, "bidirectional marks around the number"),
    _gold("extraction-spacing", "10", "\\boxed{1e1}", 1.0, "scientific notation"),
    _gold("extraction-spacing", "10", "\\boxed{1.0\\times10^{1}}", 1.0, "scientific notation in LaTeX"),
    _gold("extraction-answer-is", "[-2,2]", "So the range is found.\nThe answer is: [-2,2]", 1.0, "MetaMath's style, no $"),
    _gold("extraction-answer-is", "(1,2)", "The answer is: (1,2)", 1.0, "a tuple without $"),
    _gold("extraction-answer-is", "x^2+33x-33", "The answer is: x^2+33x-33", 1.0, "an expression without $"),
    _gold("extraction-answer-is", "\\sqrt{2}", "The answer is: \\sqrt{2}", 1.0, "a radical without $"),
    _gold("extraction-answer-is", "\\sqrt{2}", "The answer is: \\sqrt{3}", 0.0, "another radical"),
    _gold("extraction-answer-is", "5", "The answer is not obvious, but 5 is likely.", 0.0, "prose is no answer"),
    _gold("extraction-precedence", "116", "So the probability is $1/115$, and our answer is $1/115$... no: "
          "m/n = 1/115 gives m + n = \\boxed{116}.", 1.0, "an 'answer is' before the last box is working"),
    _gold("extraction-precedence", "5", "The answer is 6. So \\boxed{5}.", 1.0, "the box decides"),
    _gold("extraction-precedence", "18", "\\boxed{18} Answer: 20 or so", 0.0, "a different answer after the last box hedges"),
    _gold("extraction-precedence", "18", "\\boxed{18}. The answer is 18 apples.", 1.0, "the same answer after the box"),
    _gold("extraction-precedence", "44", "Therefore $17^{-1}\\equiv \\boxed{44}\\pmod{83}$. We may check our answer: "
          "$17\\cdot 44 = 748 \\equiv 1\\pmod{83}$.", 1.0, "checking the answer after the box states no other answer"),
    _gold("extraction-precedence", "C", "The total is $34$ dollars, choice $\\boxed{\\text{C}}$. A calculator gives the answer "
          "$33.98$ for the exact cost.", 1.0, "'gives the answer $x$' mid-sentence is prose"),
    _gold("extraction-chain", "18", "\\boxed{20 = 19 = 18}", 0.0, "a chain of unequal numbers states nothing true"),
    _gold("extraction-chain", "17", "\\boxed{x = 7 + 9 = 17}", 0.0, "a false step in a chain"),
    _gold("extraction-chain", "11", "\\boxed{x = 5 + 6 = 11}", 1.0, "a true chain states its last value"),
    _gold("extraction-list", "2, 3", "\\boxed{2} and \\boxed{3}\n#### 5", 0.0, "a #### that disagrees with the listed boxes"),
    _gold("extraction-list", "2, 3", "\\boxed{2} and \\boxed{3}. The answer is 4.", 0.0, "an 'answer is' after them disagrees"),
    _gold("extraction-list", "2, 3", "\\boxed{2} and \\boxed{3}. The answer is $3, 2$.", 1.0, "it agrees with them"),
    _gold("extraction-list", "2, 3", "\\boxed{2} and \\boxed{3}", 1.0, "several boxes are a list's items"),
]
