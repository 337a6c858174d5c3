"""Math reward functions: (completion, ground truth) -> 0.0 or 1.0, and TRL's shape.

`math_answer_score` is the general verifier (any LaTeX answer, `equivalence`);
`numeric_answer_score` the exact-number special case, kept for callers that want no
symbolic worker at all.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

from rlenvs.rewards.completions import completion_text
from rlenvs.rewards.math import symbolic
from rlenvs.rewards.math.equivalence import CHOICE_WITH_TEXT, Comparison, answers_equivalent, read_form, split_top_level
from rlenvs.rewards.math.extraction import (
    BOXED,
    TOOL_MARK,
    Extraction,
    FinalAnswer,
    agree,
    boxed_contents,
    extract_final_answer,
    is_math_span,
    prose,
    unclosed_box,
    unwrap_formatting,
)
from rlenvs.rewards.math.hedging import visible
from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import Number, parse_number
from rlenvs.rewards.math.units import is_unit_word, is_value_word

UNMARKED_POLICIES = ("bare", "last")
MAX_ANSWERS_COMPARED = 16
"""A reply stating more different-looking final answers than this hedges without its
answers being compared by value (which would cost a symbolic check each)."""
BARE_ANSWER_MAX_CHARS = 200
BARE_ANSWER_MAX_WORDS = 3
_LAST_CANDIDATES = re.compile(
    r"\$\$(?P<display>.+?)\$\$|\$(?P<inline>[^$]+?)\$|\\\((?P<paren>.+?)\\\)|\\\[(?P<bracket>.+?)\\\]"
    r"|(?<![A-Za-z])(?P<number>-?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?)",
    re.DOTALL,
)
"""The last-answer candidates: math spans, and numbers not glued to a word (`AZYUK2A`, `H2O`)."""
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
_MATH_START = re.compile(r"[\d$\\=^_(){}\[\]<>+\-*/|]")
_NAME = re.compile(r"\s*[A-Za-z]+\s*[=^_(]")
"""A leading name of what the answer states: `area = 25`, `AB = 5`, `sqrt(2)`."""
_MATH_WORDS = frozenset({
    "sqrt", "pi", "sin", "cos", "tan", "sec", "csc", "cot", "ln", "log", "exp", "inf", "infty", "infinity",
})  # fmt: skip


def numeric_answer_score(completion: str, ground_truth: str) -> float:
    """1.0 iff the completion's single final answer equals `ground_truth` as a number, else 0.0.

    `ground_truth` is a number ("72", "1,000", "0.5") or a whole gold solution ending in a
    final-answer marker (GSM8K's "... #### 72").
    """
    return 1.0 if is_correct(extract_final_answer(completion), gold_value(ground_truth)) else 0.0


def is_correct(extraction: Extraction, gold: Number) -> bool:
    """A single, unhedged final answer whose value is exactly `gold`."""
    answer = extraction.answer
    return not extraction.hedged and answer is not None and answer.value == gold


def numeric_answer_reward(completions: list[Any], answer: list[str], **_columns: Any) -> list[float]:
    """`numeric_answer_score` in TRL's reward-function shape.

    Accepts plain completions (`list[str]`) and conversational ones (`list[list[message]]`,
    scored on the last message's content); `answer` is the dataset column with the truth.
    """
    if len(completions) != len(answer):
        raise ValueError(f"got {len(completions)} completions but {len(answer)} answers: they must pair up")
    return [numeric_answer_score(completion_text(c), str(a)) for c, a in zip(completions, answer)]


@functools.lru_cache(maxsize=65536)
def gold_value(ground_truth: str) -> Number:
    """The numeric value of a ground truth: a number, or a gold solution's final answer."""
    value = parse_number(ground_truth)
    if value is None:
        extraction = extract_final_answer(ground_truth)
        if extraction.answer is not None and not extraction.hedged:
            value = extraction.answer.value
    if value is None:
        raise ValueError(
            f"ground truth {ground_truth[:80]!r} is neither a number nor a solution ending in "
            "'#### N' or '\\boxed{N}'"
        )
    return value


def math_answer_score(
    completion: str,
    ground_truth: str,
    *,
    budget: float = symbolic.DEFAULT_BUDGET,
    unmarked: str = "bare",
    rounding: bool = False,
) -> float:
    """1.0 iff the completion's final answer is equivalent to the ground truth, else 0.0.

    `ground_truth` is an answer (`"\\frac{3}{4}"`, `"(2, -1)"`, `"x \\in [0, 1)"`) or a whole
    gold solution whose `\\boxed{}` (or `####`) holds it. The final answer is found as for
    `numeric_answer_score`; a reply that hedges scores 0. Several boxed answers are read as
    one list only when the gold answer is itself a list ("2 and 3"). A reply with no
    final-answer marker counts only if the whole reply is a short bare answer (`"18"`,
    `"$\\frac{3}{4}$"`); `unmarked="last"` instead takes such a reply's last number or math
    span, as math-verify does (more lenient: a reply that never commits to an answer can
    still score). `rounding=True` accepts a decimal the gold value rounds to (see
    `answers_equivalent`). `budget` bounds the seconds spent on symbolic comparison.
    """
    check = check_answer(completion, ground_truth, budget=budget, unmarked=unmarked, rounding=rounding)
    return 1.0 if check.correct else 0.0


class AnswerCheck(NamedTuple):
    answer: str | None
    """The completion's final answer as written; None if it gives none or hedges."""
    hedged: bool
    correct: bool


def check_answer(
    completion: str,
    ground_truth: str,
    *,
    budget: float = symbolic.DEFAULT_BUDGET,
    unmarked: str = "bare",
    rounding: bool = False,
    problem: str | None = None,
) -> AnswerCheck:
    """`math_answer_score` with its working: the answer found and whether the reply hedged
    (envs use it to tell "no answer yet" from "a wrong answer"). `problem`, where given, is
    the question's text: a box the reply quotes from it (a blank to fill in, an operator
    written as a box) is not an answer."""
    if not isinstance(completion, str) or not isinstance(ground_truth, str):
        raise TypeError(
            f"math answers are checked on str completion and ground truth, got {type(completion).__name__} "
            f"and {type(ground_truth).__name__}"
        )
    if unmarked not in UNMARKED_POLICIES:
        raise ValueError(f"unmarked={unmarked!r}: choose one of {list(UNMARKED_POLICIES)}")
    quoted = quoted_boxes(problem) if problem else frozenset()
    gold = gold_answer(ground_truth, quoted)
    extraction = extract_final_answer(completion, quoted)
    predicted = _final_answer(completion, extraction, _is_list(gold), unmarked, budget)
    if predicted is None:
        return AnswerCheck(None, extraction.answer is not None, False)
    correct = answers_equivalent(predicted, gold, budget=budget, rounding=rounding)
    if not correct and problem and (number := without_problem_nouns(predicted, problem)) is not None:
        correct = answers_equivalent(number, gold, budget=budget, rounding=rounding)
    if correct and problem and not _option_text_matches(predicted, problem):
        correct = False  # `(C) e` where the problem's option (C) is `c`: another option's text
    return AnswerCheck(predicted, False, correct)


def math_answer_reward(completions: list[Any], answer: list[str], **_columns: Any) -> list[float]:
    """`math_answer_score` in TRL's reward-function shape (plain or conversational)."""
    if len(completions) != len(answer):
        raise ValueError(f"got {len(completions)} completions but {len(answer)} answers: they must pair up")
    return [math_answer_score(completion_text(c), str(a)) for c, a in zip(completions, answer)]


def final_answer(
    completion: str, *, gold_is_list: bool = False, unmarked: str = "bare", budget: float = symbolic.DEFAULT_BUDGET
) -> str | None:
    """The completion's final answer text, or None if it has none or hedges."""
    return _final_answer(completion, extract_final_answer(completion), gold_is_list, unmarked, budget)


def _final_answer(
    completion: str, extraction: Extraction, gold_is_list: bool, unmarked: str, budget: float
) -> str | None:
    """The answer to compare with the gold: the final one, unless the reply hedges.

    Answers that look different may have one value (`\\boxed{\\frac{\\sqrt3}{2}}` and
    `\\boxed{\\dfrac{\\sqrt{3}}{2}}`, `\\boxed{(113)}` and `\\boxed{113}`): that is no hedge.
    Where the gold is a list, several boxes are its items ("\\boxed{2} and \\boxed{3}"), but
    a `####` or "answer is" that states another list still hedges."""
    answer = extraction.answer
    if answer is None:
        shown = prose(visible(completion))  # a tool's tags or output are no bare answer (`<result>540</result>`)
        bare = _bare_answer(shown) if TOOL_MARK not in shown else None
        return bare if bare is not None or unmarked == "bare" else _last_answer(completion)
    if not extraction.hedged:
        return answer.text
    stated = list({other.text: other for other in extraction.stated}.values())
    if len(stated) > MAX_ANSWERS_COMPARED:
        return None  # that many different-looking answers are a hedge, whatever their values
    check = Comparison(budget, rounding=False)  # one budget for the whole hedge check
    if all(_same_value(other, answer.text, check) for other in stated):
        return answer.text
    boxed = [other.text for other in extraction.stated if other.kind == BOXED]
    if gold_is_list and answer.kind == BOXED and extraction.listed and not _narrows(boxed):
        items = ", ".join(boxed)
        if all(_same_value(other, items, check) for other in stated if other.kind != BOXED):
            return items
    return None


def _narrows(boxed: list[str]) -> bool:
    """The last box keeps some items of an earlier, longer list: `\\boxed{2, 3}` then
    `\\boxed{2}` is 2, not the list (a box of several items is still one, as in
    `\\boxed{30^\\circ}` then `\\boxed{75^\\circ, 75^\\circ}`)."""

    def items(text: str) -> set[str]:
        return {normalize_answer(item) for item in split_top_level(text, ",;")}

    last = items(boxed[-1])
    return any(len(earlier := items(text)) > len(last) and last <= earlier for text in boxed[:-1])


def _same_value(stated: FinalAnswer, answer: str, check: Comparison) -> bool:
    """Two answers of one reply state the same thing, either read as the gold."""
    if stated.text == answer:
        return True
    values = parse_number(stated.text.strip("$"), letter_units=False), parse_number(answer, letter_units=False)
    if values[0] is not None and values[0] == values[1]:
        return True  # one value in two forms (`$\\frac{72}{6}$ or $\\boxed{12 \\text{ gm}}$`): no hedge
    return check.answers_equal(stated.text, answer) or check.answers_equal(answer, stated.text)


_NUMBER_AND_WORDS = re.compile(
    r"(?P<number>[^A-Za-z]*?\d[^A-Za-z]*?)\s*(?:/|\bper\b|\beach\b)?\s*(?P<words>[A-Za-z][A-Za-z' -]{0,60}?)\s*"
)
_SAYS_NOTHING = frozenset(
    {"long", "ago", "early", "late", "old", "tall", "wide", "high", "deep", "away", "left", "total"}
)
"""Words after a count that say nothing of its value ("minutes long", "years ago")."""
_PROBLEM_WORD = re.compile(r"[A-Za-z]+")


def without_problem_nouns(answer: str, problem: str) -> str | None:
    """The number of an answer that names what it counts in the problem's own words
    (`18 \\text{ dumplings}` where the problem asks how many dumplings, `\\$18/\\text{day}`):
    the unit list (`units`) cannot hold every noun a problem counts, but the problem names
    its own. None unless every word is the problem's (singular or plural), a listed unit, or
    says nothing of the value ("long", "ago"); never a value word ("halves", "dozen")."""
    plain = normalize_answer(answer)
    match = _NUMBER_AND_WORDS.fullmatch(plain)
    if match is None:
        return None
    known = {_singular(word.lower()) for word in _PROBLEM_WORD.findall(problem)}
    words = match["words"].replace("-", " ").split()
    for word in words:
        lowered = word.lower()
        if is_value_word(lowered) or not (
            _singular(lowered) in known or is_unit_word(word) or lowered in _SAYS_NOTHING
        ):
            return None
    return match["number"].strip()


def _singular(word: str) -> str:
    for plural, singular in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(plural) and len(word) > len(plural) + 2:
            return word[: -len(plural)] + singular
    return word


OPTION = re.compile(r"\(([A-Ea-e])\)[ \t]*([^\n]+?)[ \t]*(?=\([A-Ea-e]\)|\n|$)")
"""A multiple-choice option in a problem's `option_lines`: its letter and its text."""


def _option_text_matches(answer: str, problem: str) -> bool:
    """A choice letter written with an option's text (`(C) Plane`) must carry that letter's
    own text, where the problem lists its options; a bare letter has nothing to match."""
    written = CHOICE_WITH_TEXT.fullmatch(normalize_answer(answer))
    if written is None:
        return True
    options = {match[1].upper(): _option_key(match[2]) for match in OPTION.finditer(option_lines(problem))}
    letter = written[1].upper()
    if letter not in options:
        return not options  # no options listed: the text cannot be checked against them
    return _option_key(normalize_answer(answer)[written.end(1) + 1 :]) == options[letter]


_OPTION_MARKUP = re.compile(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}")
_OPTION_SPACING = re.compile(r"\\qquad|\\quad|\\[ ,;!]|\$\$?")


def option_lines(problem: str) -> str:
    """The problem with its options' markup gone (`$\\textbf{(A)}\\ 3 \\qquad`) but its line
    breaks kept, so an option's text ends at the next option or at its line's end."""
    return _OPTION_SPACING.sub(" ", _OPTION_MARKUP.sub(r"\1", problem))


def _option_key(text: str) -> str:
    return re.sub(r"[\s$.,;]", "", normalize_answer(text)).lower()


def quoted_boxes(problem: str) -> frozenset[str]:
    """The normalised contents of the boxes a problem shows, nested ones too (see
    `check_answer`): "Let $\\boxed{N}$ be ... Find $\\boxed{\\boxed{11}\\times\\boxed{20}}$"."""
    quoted: set[str] = set()
    pending = [problem]
    while pending:
        text = pending.pop()
        if "box" in text:
            for box in boxed_contents(text):
                quoted.add(normalize_answer(box))
                pending.append(box)
    return frozenset(quoted)


@functools.lru_cache(maxsize=65536)
def gold_answer(ground_truth: str, quoted: frozenset[str] = frozenset()) -> str:
    """The answer a ground truth states: its boxed answer(s), its final answer by the usual
    precedence (`####`, "The answer is"), or else the whole text. Boxes whose content is
    in `quoted` (the problem's own, see `quoted_boxes`) are notation, not answers, unless
    no other box is left."""
    if parse_number(ground_truth, letter_units=False) is not None:
        return ground_truth.strip()  # a number states itself: no extraction to run (GSM8K's golds)
    boxes = boxed_contents(ground_truth) if "\\" in ground_truth else []
    if quoted and any(normalize_answer(box) not in quoted for box in boxes):
        boxes = [box for box in boxes if normalize_answer(box) not in quoted]
    if boxes:
        answers: list[FinalAnswer] = []
        check = Comparison(symbolic.DEFAULT_BUDGET, rounding=False)
        for box in boxes:
            text = unwrap_formatting(box)
            answer = FinalAnswer(text, BOXED, parse_number(text))
            # A box repeated, in any spelling, is one answer (`10\\sqrt{2}` and `10\\sqrt 2`).
            if not any(agree(answer, earlier) or _same_value(answer, earlier.text, check) for earlier in answers):
                answers.append(answer)
        return ", ".join(answer.text for answer in answers)
    unclosed = unclosed_box(ground_truth)
    if unclosed is not None:
        # A gold box never closed is a typo in the data set, not a hedge: its answer runs to
        # the end. (A completion's unclosed box is never read: see `boxed_contents`.)
        return unclosed.strip()
    extraction = extract_final_answer(ground_truth)
    if extraction.answer is not None and not extraction.hedged:
        return extraction.answer.text
    return ground_truth.strip()


@functools.lru_cache(maxsize=65536)
def _is_list(gold: str) -> bool:
    return parse_number(gold) is None and read_form(normalize_answer(gold)).kind == "list"


def _bare_answer(completion: str) -> str | None:
    """The whole completion, if it is a short answer and not prose: one math span, or one
    line with a digit or some math in it and at most a few words (units, "percent")."""
    text = completion.strip()
    if not text or len(text) > BARE_ANSWER_MAX_CHARS:
        return None
    if is_math_span(text):
        return text
    if "\n" in text:
        return None
    if not any(c.isdigit() for c in text) and "$" not in text and "\\" not in text:
        return None
    if _leads_with_prose(text):
        return None
    return text if len(_WORD.findall(text)) <= BARE_ANSWER_MAX_WORDS else None


def _leads_with_prose(text: str) -> bool:
    """Words before the math make a sentence ("We find that $x < 3$.", "Total: 18"), not a
    bare answer: words may only follow it (units: "18 apples"). A name before `=` (`area =
    25`) and function names (`sqrt(2)`, `pi/2`) are not prose."""
    if _NAME.match(text):
        return False
    start = _MATH_START.search(text)
    head = text[: start.start()] if start else text
    return any(word.lower() not in _MATH_WORDS for word in _WORD.findall(head))


def _last_answer(completion: str) -> str | None:
    """The last math span or number of the completion (the `unmarked="last"` policy)."""
    candidates = list(_LAST_CANDIDATES.finditer(completion[-4 * BARE_ANSWER_MAX_CHARS :]))
    if not candidates:
        return None
    last = candidates[-1]
    assert last.lastgroup is not None  # every alternative of `_LAST_CANDIDATES` is a named group
    return last.group(last.lastgroup).strip()
