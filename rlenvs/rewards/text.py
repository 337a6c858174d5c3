"""Short text answers (a city, a name, a word): the reply's one final answer, compared with the
gold answer, or any of its aliases, as text once both are normalised.

Why not "does the reply contain the answer": a policy lists every candidate ("Paris, Lyon or
Marseille") and is paid for the one that is right. Here a reply has exactly one final answer,
and a reply that states two which do not normalise to the same text hedges and scores 0:

1. The math verifier's final answer (`rlenvs.rewards.math.extraction`: the last `\\boxed{}`,
   else `#### X`, else "The answer is X" where X reads as math), with every other answer it
   finds stated (every box, an "or X" after one, ...);
2. answer lines ("Answer: Paris", "**Final answer:** Paris", R1's `<answer>Paris</answer>`),
   each read whole: every one must agree with the box, where there is one, and with each other;
3. with neither, the whole reply when it is one short line ("Paris" scores; "It is Paris or
   Lyon" is the answer "it is paris or lyon", which is not "paris");
4. after the final answer, every math span or inline code holding words (`$\\text{Lyon}$`,
   `` `Lyon` ``) and whatever an "or", "maybe", "alternatively", ... right after it offers
   ("\\boxed{Port of Spain} or Caracas"), in any script: the extraction's own rules for a
   second word are written for one or two Latin words, and a city is often longer, accented,
   or not Latin. A number there is no second text answer ("The tower is $324$ m tall").

A box holding a list ("\\boxed{Paris, Lyon}") is the answer "paris lyon", so no box can hedge
either. Code blocks, tool calls and tool results state no answer; a reasoning model's answer is
read after its last `</think>`. What a reply says in plain prose in a later sentence is not
read: it is not paid either, only the final answer is.

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
from collections.abc import Iterator, Sequence
from typing import Any

from rlenvs.rewards.code_blocks import THINK_END
from rlenvs.rewards.completions import completion_text
from rlenvs.rewards.math.extraction import BOX_OPEN, extract_final_answer, prose, unwrap_formatting
from rlenvs.rewards.math.hedging import visible
from rlenvs.rewards.math.numbers import Number, parse_number

BARE_ANSWER_MAX_CHARS = 200
"""The longest reply read as a bare answer (no marker): a short line, not a paragraph."""

_TEXT_WRAPPER = re.compile(
    r"\\(?:text|textbf|textit|textnormal|textrm|textsf|texttt|mathrm|mathbf|mathit|mathsf|mbox|emph)\s*\{([^{}]*)\}"
)
_MARKUP = re.compile(r"\*\*|__|`|\$|\\[ ,;:!]|~")
_QUOTES = re.compile(r"[\"'‘’“”«»]")
_POINT = re.compile(r"(?<!\d)[.,]|[.,](?!\d)")
"""A period or comma that is not between two digits (`D.C.`, `Washington,`; not `3.5`, `1,000`)."""
_DASHES = re.compile(r"(?<=[^\W\d])\s*[-‐‑‒–—_]+\s*(?=[^\W\d])")
"""A dash or underscore between two letters (`Port-au-Prince`, `Port - au - Prince`), not a minus
sign (`-5`, `1-2`)."""
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
_TAIL_CHARS = 1000
"""How far after the final answer a second one is looked for."""
_SPAN = re.compile(r"\$\$(.+?)\$\$|\$([^$]+)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
"""A math span (`prose` has made inline code one)."""
_CLOSING = re.compile(r"^[ \t]*(?:\$\$|\$|\\\)|\\\])")
"""The end of the math span the final box stands in (`$\\boxed{Paris}$`), which opens no other."""
_LETTER = re.compile(r"[^\W\d_]")
_OFFER = re.compile(
    r"[\s,.;:*$)\-–—]*\(?\s*(?:or|maybe|perhaps|possibly|alternatively|otherwise|either|unless|vs\.?|versus|if not)\b"
    r"[\s,:]*(?P<offer>[^.,;:!?()\n$`]*[^\W\d_][^.,;:!?()\n$`]*)",
    re.IGNORECASE,
)
"""A second answer offered in words right after the final one: "or Caracas", "(maybe Lima)"."""


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
    completion = without_accents(completion)
    shown = prose(visible(_after_thinking(completion)))
    lines = list(_ANSWER_LINE.finditer(shown))
    extraction = extract_final_answer(completion)
    if extraction.answer is not None:
        stated = [extraction.answer.text, *(other.text for other in extraction.stated)]
    elif extraction.hedged:
        return None
    elif not lines:
        return _bare_answer(shown)
    else:
        stated = []
    stated += [line["answer"] for line in lines]
    answers = {normalize_text_answer(text) for text in stated}
    if len(answers) != 1 or "" in answers:
        return None
    answer = answers.pop()
    if parse_number(answer) is None and any(other != answer for other in _offered_after(shown, lines)):
        return None
    return answer


def _offered_after(shown: str, lines: list[re.Match[str]]) -> Iterator[str]:
    """The text answers stated after the final one (its box or answer line), normalised: each
    math span or inline code holding words (`$\\text{Lyon}$`, `` `Lyon` ``), and what an "or",
    "maybe", ... right after it offers ("\\boxed{Port of Spain} or Caracas"). The extraction
    reads these for answers of one or two Latin words only; a city is often longer."""
    ends = [line.end() for line in lines]
    if (box := _last_box_end(shown)) is not None:
        ends.append(box)
    if not ends:
        return
    tail = _CLOSING.sub("", shown[max(ends) : max(ends) + _TAIL_CHARS], count=1)
    if offer := _OFFER.match(tail):
        yield normalize_text_answer(offer["offer"])
    for span in _SPAN.finditer(tail):
        text = next(group for group in span.groups() if group is not None)
        if "box" not in text.lower() and _LETTER.search(text):
            yield normalize_text_answer(text)


def _last_box_end(text: str) -> int | None:
    """Where the last box's argument ends (after its closing brace), or None without a box."""
    opening = max(BOX_OPEN.finditer(text), key=lambda match: match.start(), default=None)
    if opening is None:
        return None
    position, depth = opening.end(), 0
    for position in range(opening.end(), min(len(text), opening.end() + _TAIL_CHARS)):
        char = text[position]
        if char == "{" and text[position - 1] != "\\":
            depth += 1
        elif char == "}" and text[position - 1] != "\\":
            depth -= 1
        if depth <= 0:
            return position + 1
    return position + 1


def without_accents(text: str) -> str:
    """`text` with the accents of its letters taken off (`Reykjavík`: `Reykjavik`). Done to the
    whole reply before its answers are read, not only to the answers compared: the extraction's
    rules for a second word offered after an answer ("or ...", "Alternatively, ...") are written
    for Latin letters, and an accent hid the second word from them."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def normalize_text_answer(text: str) -> str:
    """`text` with what does not change which answer is meant taken out (module docstring)."""
    text = unwrap_formatting(visible(text))
    for _ in range(8):  # nested wrappers: \textbf{\text{Paris}}
        unwrapped = _TEXT_WRAPPER.sub(r"\1", text)
        if unwrapped == text:
            break
        text = unwrapped
    text = _MARKUP.sub(" ", text)
    text = without_accents(unicodedata.normalize("NFKC", text)).casefold()
    text = _POINT.sub("", _QUOTES.sub("", text))
    text = _SPACES.sub(" ", _DASHES.sub(" ", text)).strip()
    return _ARTICLE.sub("", _END_PUNCTUATION.sub("", text))


def text_answer_reward(completions: list[Any], answer: list[Any], **_columns: Any) -> list[float]:
    """`text_answer_score` in TRL's reward-function shape (plain or conversational completions);
    `answer` is the dataset column with each gold answer or list of aliases."""
    if len(completions) != len(answer):
        raise ValueError(f"got {len(completions)} completions but {len(answer)} answers: they must pair up")
    return [text_answer_score(completion_text(c), a) for c, a in zip(completions, answer)]


def _golds(ground_truth: Any) -> tuple[tuple[Number | None, str], ...]:
    """The accepted answers (a str or number, or a list of them: aliases), each read once as
    a number (None when it is none) and as normalised text."""
    items = tuple(ground_truth) if isinstance(ground_truth, (list, tuple)) else (ground_truth,)
    texts = tuple(str(item) if _is_number(item) else item for item in items)
    golds = tuple((parse_number(text), normalize_text_answer(text)) for text in texts if isinstance(text, str))
    if not golds or len(golds) != len(texts) or not all(normalized for _, normalized in golds):
        raise ValueError(
            "a text answer's ground truth is a non-empty str or number, or a non-empty list of them (aliases), "
            f"got {ground_truth!r}"
        )
    return golds


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_answer(answer: str, gold: tuple[Number | None, str]) -> bool:
    value, normalized = gold
    if value is not None:
        return parse_number(answer) == value
    return answer == normalized


def _after_thinking(completion: str) -> str:
    """What a reasoning model answers: the text after its last `</think>`."""
    return completion[completion.rfind(THINK_END) + len(THINK_END) :] if THINK_END in completion else completion


def _bare_answer(shown: str) -> str | None:
    """The whole reply (as `prose` shows it) as the answer, when it is one short line with no marker."""
    text = shown.strip()
    if not text or "\n" in text or len(text) > BARE_ANSWER_MAX_CHARS:
        return None
    return normalize_text_answer(text) or None
