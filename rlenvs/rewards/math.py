"""Final-answer extraction and numeric answer rewards (GSM8K-style questions).

Why not "find a matching number anywhere": math-verify and similar checkers accept a
completion if any extracted candidate matches, so reasoning that mentions the right number
on the way to a wrong final answer is rewarded. Here a completion has exactly one final
answer, found by a fixed precedence, and a completion that commits to several different
final answers (a hedge) scores 0.

Precedence, highest first; within a kind the *last* occurrence is the final answer:

1. `\\boxed{...}` / `\\fbox{...}` (balanced braces);
2. `#### ...` (GSM8K's own format), to the end of the line;
3. "The answer is ...", "Final answer: ...", "Answer: ..." (spelt answer, Answer or ANSWER),
   to the end of the sentence.

Hedging: every boxed and `####` answer counts as a final answer; an "answer is" phrase
counts only when it holds a number (prose such as "the answer is not obvious" is not an
answer). If the counted answers do not all have the same value, the completion hedges.

Numbers: `1,234`, `$1,234.50`, `1{,}234`, `1\\,234`, trailing `.0`, fractions `3/4` and
`\\frac{3}{4}`, unicode minus and fullwidth digits, `%` and `\\%` dropped (GSM8K states
percentages as plain numbers), and trailing unit words ("72 clips", "18 dollars"). Anything
else around the number ("5 or 6", "x + 1", "about 5") makes the answer unparseable.
Values are compared exactly as fractions.

Pure functions, no global state: safe from any thread. Every step is linear in the text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from fractions import Fraction
from typing import Any, NamedTuple, Union

BOXED = "boxed"
HASH = "hash"
ANSWER_IS = "answer_is"

MAX_ANSWER_CHARS = 200
"""A final answer longer than this is not a number; skip normalising it."""

# Markers are located with str.find first and matched with these anchored patterns only
# there: a regex alternation scanning every position is ten times slower on real replies.
_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_ANSWER_TAIL = re.compile(r"\**[ \t]*(?:is\b|IS\b|:|=)[ \t*:]*(?:\n[ \t]*)?")
_BOX_PREFIXES = ("\\boxed", "\\fbox", "$\\boxed", "$\\fbox", "$ \\boxed", "$ \\fbox")
_BRACE = re.compile(r"[{}]")
# "The answer is 18. Then ..." -> "18": a period ends the sentence unless a digit follows.
_SENTENCE_END = re.compile(r"\.(?!\d)|[;!?]")
_TEXT_COMMANDS = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_NUMBER = re.compile(
    r"(?P<sign>[-+]?)\s*"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?:\.(?P<frac>\d*))?"
    r"(?:\s*/\s*(?P<den>\d+))?"
    r"\s*(?P<unit>[^\W\d_]+(?:[\s'’-][^\W\d_]+)*)?\s*"
)


Number = Union[int, Fraction]
"""Integral values are plain ints (the common case, and much cheaper than Fraction)."""


class FinalAnswer(NamedTuple):
    text: str
    """The answer as written, e.g. the inside of `\\boxed{}`."""
    kind: str
    """Which marker it came from: "boxed", "hash" or "answer_is"."""
    value: Number | None
    """Its numeric value, or None if it is not a single number."""


class Extraction(NamedTuple):
    answer: FinalAnswer | None
    """The final answer by precedence; None if the completion has no final-answer marker."""
    hedged: bool
    """The completion gives several final answers that disagree."""


NO_ANSWER = Extraction(None, False)


def extract_final_answer(completion: str) -> Extraction:
    """The completion's one final answer by the module's precedence, and whether it hedges."""
    boxed = [_final(text, BOXED) for text in _boxed_contents(completion)] if "\\" in completion else []
    hashed = [_final(text, HASH) for text in _hash_answers(completion)]
    phrased = []
    for phrase in _answer_phrases(completion):
        candidate = _final(_first_sentence(phrase), ANSWER_IS)
        if candidate.value is not None:  # "the answer is not obvious" is not an answer
            phrased.append(candidate)
    answers = boxed or hashed or phrased
    if not answers:
        return NO_ANSWER
    answer = answers[-1]
    everything = boxed + hashed + phrased
    if len(everything) == 1:
        return Extraction(answer, False)
    if answer.value is None:
        hedged = any(c.text != answer.text for c in everything)
    else:
        hedged = any(c.value != answer.value for c in everything)
    return Extraction(answer, hedged)


def parse_number(text: str) -> Number | None:
    """The single number `text` states (units, currency, separators allowed), else None."""
    if len(text) > MAX_ANSWER_CHARS:
        return None
    if text.isdigit() and text.isascii():
        return int(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).replace("−", "-")
    if "\\" in text or "{" in text or "$" in text:
        text = _strip_latex(text)
    text = text.strip().rstrip(".,;:!").replace("%", "").replace("*", "")
    match = _NUMBER.fullmatch(text)
    if match is None or (match.group("int") is None and not match.group("frac")):
        return None
    integer = (match.group("int") or "0").replace(",", "")
    fraction_digits = match.group("frac") or ""
    value = Fraction(int(integer + fraction_digits), 10 ** len(fraction_digits))
    if match.group("den") is not None:
        if fraction_digits or int(match.group("den")) == 0:
            return None
        value /= int(match.group("den"))
    if match.group("sign") == "-":
        value = -value
    return value.numerator if value.denominator == 1 else value


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


def completion_text(completion: Any) -> str:
    """The text of one TRL completion: a str, or a list of chat messages (the last one)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        return content if isinstance(content, str) else ""
    raise TypeError(f"a completion must be a str or a list of chat messages, got {type(completion).__name__}")


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


def _final(text: str, kind: str) -> FinalAnswer:
    text = text.strip()
    return FinalAnswer(text, kind, parse_number(text))


def _rest_of_line(text: str, start: int) -> str:
    """From `start` to the end of its line, bounded so a huge one-line reply stays linear."""
    end = text.find("\n", start, start + 2 * MAX_ANSWER_CHARS)
    return text[start : end if end != -1 else start + 2 * MAX_ANSWER_CHARS]


def _hash_answers(text: str) -> list[str]:
    """What follows each `####`, to the end of its line."""
    answers = []
    start = text.find("####")
    while start != -1:
        answers.append(_rest_of_line(text, start + 4))
        start = text.find("####", start + 4)
    return answers


def _answer_phrases(text: str) -> list[str]:
    """What follows each "answer is" / "answer:" (answer, Answer or ANSWER), in order.

    "The answer is \\boxed{18}" is skipped: the box is counted on its own.
    """
    if "nswer" not in text and "NSWER" not in text:
        return []
    phrases = []
    for spelling in ("nswer", "NSWER"):
        start = text.find(spelling)
        while start != -1:
            head = start - 1
            if head >= 0 and text[head] in "aA" and (head == 0 or not text[head - 1].isalnum()):
                match = _ANSWER_TAIL.match(text, start + len(spelling))
                if match and not text.startswith(_BOX_PREFIXES, match.end()):
                    phrases.append((start, _rest_of_line(text, match.end())))
            start = text.find(spelling, start + 1)
    phrases.sort()
    return [phrase for _, phrase in phrases]


def _first_sentence(text: str) -> str:
    end = _SENTENCE_END.search(text)
    return text[: end.start()] if end else text


def _boxed_contents(text: str) -> list[str]:
    """The contents of every `\\boxed{...}` and `\\fbox{...}` with balanced braces, in order."""
    contents = []
    braces: dict[int, int] | None = None  # all matching braces, computed only if a box nests
    for opening in _BOX_OPEN.finditer(text):
        end = opening.end()
        close = text.find("}", end)
        if close != -1 and text.find("{", end, close) != -1:
            braces = braces if braces is not None else _matching_braces(text, opening.start())
            close = braces.get(end - 1, -1)
        if close != -1:
            # Cut past the length any number has, so that thousands of nested boxes do not
            # copy the reply thousands of times; a cut content never parses.
            contents.append(text[end : min(close, end + MAX_ANSWER_CHARS + 1)])
    return contents


def _matching_braces(text: str, begin: int) -> dict[int, int]:
    """Index of each `{` from `begin` on -> index of its `}`: one pass over the braces, so
    nested or unbalanced boxes in a huge reply cost linear time."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for match in _BRACE.finditer(text, begin):
        if match.group() == "{":
            stack.append(match.start())
        elif stack:
            pairs[stack.pop()] = match.start()
    return pairs


def _strip_latex(text: str) -> str:
    text = text.replace("\\$", "").replace("$", "").replace("{,}", ",").replace("\\%", "%")
    for spacing in ("\\,", "\\!", "\\;", "\\ ", "\\left", "\\right"):
        text = text.replace(spacing, "" if spacing in ("\\,", "\\!") else " ")
    text = _TEXT_COMMANDS.sub(r" \1", text)
    text = _FRAC.sub(r"\1/\2", text)
    return text.replace("{", "").replace("}", "")
