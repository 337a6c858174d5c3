"""Short text answers (a city, a name, a word): the reply's one final answer, compared with the
gold answer, or any of its aliases, as text once both are normalised.

Why not "does the reply contain the answer": a policy lists every candidate ("Paris, Lyon or
Marseille") and is paid for the one that is right. Here a reply has exactly one final answer,
and a reply that states two which do not normalise to the same text hedges and scores 0:

1. The math verifier's final answer (`rlenvs.rewards.math.extraction`: the last `\\boxed{}`,
   else `#### X`, else "The answer is X" where X reads as math), with every other answer it
   finds stated (every box, an "or X" after one, ...);
2. answer lines ("Answer: Paris", "**Final answer:** Paris", R1's `<answer>Paris</answer>`):
   every one must agree with the box, where there is one, and with each other;
3. with neither, the whole reply when it is one short line ("Paris" scores; "It is Paris or
   Lyon" is the answer "it is paris or lyon", which is not "paris").

A box holding a list ("\\boxed{Paris, Lyon}") is the answer "paris lyon", so no box can hedge
either. Code blocks, tool calls and tool results state no answer; a reasoning model's answer is
read after its last `</think>`.

What normalising removes, on both sides alike, is only what does not change which answer is
meant: case, accents (`São Tomé` is `Sao Tome`), formatting (`\\text{}`, `\\textbf{}`, `**`,
backticks, `$`), quotation marks, apostrophes, periods and commas that are not between two
digits (`Washington, D.C.` is `Washington DC`; `3.5` stays `3.5`), a dash between letters as
a space (`Port-au-Prince`), a leading article (`The Hague`), and runs of spaces. Every other character
counts: `C++` is not `C`. A gold that is a number is compared as one, exactly (`1,000` is
`1000`; `-5` is not `5`); use `rlenvs.rewards.math.math_answer_score` for anything more
mathematical than a number.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from rlenvs.rewards.code_blocks import THINK_END
from rlenvs.rewards.completions import completion_text
from rlenvs.rewards.math.extraction import extract_final_answer, prose, unwrap_formatting
from rlenvs.rewards.math.hedging import visible
from rlenvs.rewards.math.numbers import parse_number

BARE_ANSWER_MAX_CHARS = 200
"""The longest reply read as a bare answer (no marker): a short line, not a paragraph."""

_TEXT_WRAPPER = re.compile(
    r"\\(?:text|textbf|textit|textnormal|textrm|textsf|texttt|mathrm|mathbf|mathit|mathsf|mbox|emph)\s*\{([^{}]*)\}"
)
_MARKUP = re.compile(r"\*\*|__|`|\$|\\[ ,;:!]|~")
_QUOTES = re.compile(r"[\"'‘’“”«»]")
_POINT = re.compile(r"(?<!\d)[.,]|[.,](?!\d)")
"""A period or comma that is not between two digits (`D.C.`, `Washington,`; not `3.5`, `1,000`)."""
_DASHES = re.compile(r"(?<=[^\W\d])[-‐‑‒–—_]+(?=[^\W\d])")
"""A dash or underscore between two letters (`Port-au-Prince`), not a minus sign (`-5`, `1-2`)."""
_END_PUNCTUATION = re.compile(r"[\s!?;:]+$")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+(?=\S)")
_SPACES = re.compile(r"\s+")
_ANSWER_LINE = re.compile(
    rf"^[ \t*_#>-]*(?:the[ \t]+)?(?:final[ \t]+)?answer[ \t*_]*[:：][ \t*_]*(?P<answer>[^\n]{{1,{BARE_ANSWER_MAX_CHARS}}}?)"
    r"[ \t*_]*$",
    re.IGNORECASE | re.MULTILINE,
)
"""An answer line: "Answer: Paris", "**Final answer:** Paris", and an R1-style `<answer>Paris</answer>`,
which `prose` writes as one."""


def text_answer_score(completion: str, ground_truth: str | float | Sequence[str | float]) -> float:
    """1.0 iff the completion's one final answer is the ground truth, or one of its aliases
    (a list of accepted spellings), as text once normalised; else 0.0 (module docstring).
    A number, or a str that is one, is compared as a number."""
    golds = _golds(ground_truth)
    if not isinstance(completion, str):
        raise TypeError(f"a completion is a str, got {type(completion).__name__}")
    answer = final_text_answer(completion)
    if answer is None:
        return 0.0
    return 1.0 if any(_same_answer(answer, gold) for gold in golds) else 0.0


def final_text_answer(completion: str) -> str | None:
    """The completion's final answer, normalised (`normalize_text_answer`); None when it
    states none, or several that differ (a hedge)."""
    shown = _after_thinking(completion)
    lines = [match["answer"] for match in _ANSWER_LINE.finditer(prose(visible(shown)))]
    extraction = extract_final_answer(completion)
    if extraction.answer is not None:
        stated = [extraction.answer.text, *(other.text for other in extraction.stated), *lines]
    elif extraction.hedged:
        return None
    elif lines:
        stated = lines
    else:
        return _bare_answer(shown)
    answers = {normalize_text_answer(text) for text in stated}
    return answers.pop() if len(answers) == 1 and "" not in answers else None


def normalize_text_answer(text: str) -> str:
    """`text` with what does not change which answer is meant taken out (module docstring)."""
    text = unwrap_formatting(visible(text))
    for _ in range(8):  # nested wrappers: \textbf{\text{Paris}}
        unwrapped = _TEXT_WRAPPER.sub(r"\1", text)
        if unwrapped == text:
            break
        text = unwrapped
    text = _MARKUP.sub(" ", text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).casefold()
    text = _POINT.sub("", _QUOTES.sub("", text))
    text = _SPACES.sub(" ", _DASHES.sub(" ", text)).strip()
    return _ARTICLE.sub("", _END_PUNCTUATION.sub("", text))


def text_answer_reward(completions: list[Any], answer: list[Any], **_columns: Any) -> list[float]:
    """`text_answer_score` in TRL's reward-function shape (plain or conversational completions);
    `answer` is the dataset column with each gold answer or list of aliases."""
    if len(completions) != len(answer):
        raise ValueError(f"got {len(completions)} completions but {len(answer)} answers: they must pair up")
    return [text_answer_score(completion_text(c), a) for c, a in zip(completions, answer)]


def _golds(ground_truth: Any) -> tuple[str, ...]:
    """The accepted answers as text: a str or number, or a list of them (aliases)."""
    items = tuple(ground_truth) if isinstance(ground_truth, (list, tuple)) else (ground_truth,)
    golds = tuple(str(item) if _is_number(item) else item for item in items)
    if not golds or not all(isinstance(gold, str) and normalize_text_answer(gold) for gold in golds):
        raise ValueError(
            "a text answer's ground truth is a non-empty str or number, or a non-empty list of them (aliases), "
            f"got {ground_truth!r}"
        )
    return golds


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_answer(answer: str, gold: str) -> bool:
    value = parse_number(gold)
    if value is not None:
        return parse_number(answer) == value
    return answer == normalize_text_answer(gold)


def _after_thinking(completion: str) -> str:
    """What a reasoning model answers: the text after its last `</think>`."""
    return completion[completion.rfind(THINK_END) + len(THINK_END) :] if THINK_END in completion else completion


def _bare_answer(completion: str) -> str | None:
    """The whole reply as the answer, when it is one short line with no marker."""
    text = prose(completion).strip()
    if not text or "\n" in text or len(text) > BARE_ANSWER_MAX_CHARS:
        return None
    return normalize_text_answer(text) or None
