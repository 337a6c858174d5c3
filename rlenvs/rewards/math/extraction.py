"""Finding the one final answer of a completion.

Why not "find a matching answer anywhere": math-verify and similar checkers accept a
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
answer). If the counted answers do not all agree, the completion hedges: numbers must have
the same value, anything else the same text.

Every step is linear in the completion's length, whatever it holds.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rlenvs.rewards.math.normalize import normalize_answer
from rlenvs.rewards.math.numbers import Number, parse_number

BOXED = "boxed"
HASH = "hash"
ANSWER_IS = "answer_is"

MAX_ANSWER_CHARS = 1000
"""Box contents and answer lines are cut at this length: no real final answer is longer,
and a cut bounds the work on adversarial replies."""

# Markers are located with str.find first and matched with these anchored patterns only
# there: a regex alternation scanning every position is ten times slower on real replies.
BOX_OPEN = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_ANSWER_TAIL = re.compile(r"\**[ \t]*(?:(?:is\b|IS\b|:|=)[ \t*:]*(?:\n[ \t]*)?|[ \t]+(?=\$|\\\(|\\\[))")
"""After "answer": "is", ":" or "=", or just a space before a math span ("Answer $9$")."""
_MATH_SPAN = re.compile(r"\$\$.+\$\$|\$(?:[^$\\]|\\.)+\$|\\\(.+\\\)|\\\[.+\\\]", re.DOTALL)
"""A text that is wholly one `$...$`, `$$...$$`, `\\(...\\)` or `\\[...\\]` span (`\\$`, an
escaped dollar sign, does not end a `$` span)."""
_BRACE = re.compile(r"[{}]")
# "The answer is 18. Then ..." -> "18": a period ends the sentence unless a digit follows.
_SENTENCE_END = re.compile(r"\.(?!\d)|[;!?]")


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
    boxed = [_final(text, BOXED) for text in boxed_contents(completion)] if "\\" in completion else []
    hashed = [_final(text, HASH) for text in hash_answers(completion)]
    phrased = []
    for phrase in _answer_phrases(completion):
        candidate = _final(phrase, ANSWER_IS)
        # "the answer is not obvious" is not an answer; a number or a math span is.
        if candidate.value is not None or is_math_span(candidate.text):
            phrased.append(candidate)
    answers = boxed or hashed or phrased
    if not answers:
        return NO_ANSWER
    answer = answers[-1]
    everything = boxed + hashed + phrased
    if len(everything) == 1:
        return Extraction(answer, False)
    if answer.value is None:
        key = _hedge_key(answer.text)
        hedged = any(c.text != answer.text and _hedge_key(c.text) != key for c in everything)
    else:
        hedged = any(c.value != answer.value for c in everything)
    return Extraction(answer, hedged)


def _hedge_key(text: str) -> str:
    """Non-numeric answers agree when they read the same once normalised (`$x=1$`, `x = 1`)."""
    return normalize_answer(text).replace(" ", "")



def is_math_span(text: str) -> bool:
    return _MATH_SPAN.fullmatch(text.strip()) is not None


def _final(text: str, kind: str) -> FinalAnswer:
    text = text.strip()
    return FinalAnswer(text, kind, parse_number(text))


def _rest_of_line(text: str, start: int) -> str:
    """From `start` to the end of its line, bounded so a huge one-line reply stays linear."""
    end = text.find("\n", start, start + 2 * MAX_ANSWER_CHARS)
    return text[start : end if end != -1 else start + 2 * MAX_ANSWER_CHARS]


def hash_answers(text: str) -> list[str]:
    """What follows each `####`, to the end of its line."""
    answers = []
    start = text.find("####")
    while start != -1:
        answers.append(_rest_of_line(text, start + 4))
        start = text.find("####", start + 4)
    return answers


def _answer_phrases(text: str) -> list[str]:
    """The sentence after each "answer is" / "answer:" (answer, Answer or ANSWER), in order.

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
                if match:
                    after = match.end()
                    # A math span may run over lines ("Answer \\[\n 9 \n\\]"); prose ends with its line.
                    if text.startswith(("$", "\\(", "\\["), after):
                        phrase = _first_sentence(text[after : after + MAX_ANSWER_CHARS])
                    else:
                        phrase = _first_sentence(_rest_of_line(text, after))
                    # "The answer is \\boxed{18}" or "$x \\in \\boxed{...}$": the box counts itself.
                    if "\\boxed" not in phrase and "\\fbox" not in phrase:
                        phrases.append((start, phrase))
            start = text.find(spelling, start + 1)
    phrases.sort()
    return [phrase for _, phrase in phrases]


def _first_sentence(text: str) -> str:
    """The phrase up to the end of its sentence; a leading math span is kept whole, so a
    period inside `$x = 5.$` does not cut it."""
    for opening, closing in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opening):
            end = text.find(closing, len(opening))
            while end > 0 and closing == "$" and text[end - 1] == "\\":  # `\$` is a dollar sign
                end = text.find(closing, end + 1)
            if end != -1:
                return text[: end + len(closing)]
    end = _SENTENCE_END.search(text)
    return text[: end.start()] if end else text


def boxed_contents(text: str) -> list[str]:
    """The contents of every `\\boxed{...}` and `\\fbox{...}` with balanced braces, in order."""
    contents = []
    braces: dict[int, int] | None = None  # all matching braces, computed only if a box nests
    for opening in BOX_OPEN.finditer(text):
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

