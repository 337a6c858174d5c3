"""Second answers a reply offers right after one: the hedges a box or an "answer is" does not
show by itself.

A policy paid for any of its answers learns to offer two ("\\boxed{7} or 8"), so every
answer offered next to the final one must agree with it (`extraction`). What counts as
offered: a marker right after an answer ("or", "maybe", "perhaps", "possibly", "either",
"also", "alternatively", "could be", "might be", "/", "(8 if ...)"), at most two words
(a unit) away from it, then a number, a math span, a parenthesised group or, where the
answer is a word or a choice letter, a word or letter; and the first number of the next
sentence when that sentence takes the answer back ("Or $8$.", "Wait, it is 8.", "Hmm,
actually 8.", "On second thought, 8.", "Final: 8"; not a premise: "OR: If there were two
more coins, ...") or calls another number right ("However, 8 is also correct."). An "or"
later in a sentence ("the values 1, 2, 4, or 8"), a rounding of the same value ("or about
16.8") and a remark in parentheses ("or bits (with place values ...)") offer nothing.

The text is read as it shows: invisible characters dropped, Cyrillic letters that look
Latin read as Latin (`оr`), markdown bold, `\\text{ or }` and display delimiters removed,
number words as digits (`or eight`).
"""

from __future__ import annotations

import re
import unicodedata

from rlenvs.rewards.math.equivalence import PROSE_WORD
from rlenvs.rewards.math.numbers import parse_number

MAX_WORDS_BEFORE = 6
"""Words a sentence that takes an answer back may have before its new answer ("Wait, that's
wrong: it is $8$")."""
WINDOW_CHARS = 1000
"""How far after an answer its sentence and the next are read."""

_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_HOMOGLYPHS = str.maketrans("аеорсухіѕјАВЕКМНОРСТХοΟ", "aeopcyxisjABEKMHOPCTXoO")
"""Cyrillic and Greek letters drawn like Latin ones: `оr` (with a Cyrillic о) reads as "or"."""
_MARKUP = re.compile(r"\*\*|__|\\text\s*\{\s*([^{}]*?)\s*\}|\\\[|\\\]|\$\$")
_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90"}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)

_STATED = re.compile(
    r"\$[^$\n]+\$|\\\([^\n]*?\\\)|\((?!\s*[A-Za-z]{2,}\b)[^()\n]{1,60}\)|[-+]?\\?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?"
)
"""A math span, a parenthesised group (a tuple, `(8)`, `(D)`; not a remark: "(with place values
...)") or a number."""
_SENTENCE_END = re.compile(r"\.(?=\s|$)|\?(?=\s|$)|(?<=[A-Za-z])!")
_OTHER_LANGUAGES_OR = ("o", "oder", "ou", "или", "eller", "oppure", "veya", "lub", "atau", "ή", "ofwel")
_MARKER = (
    r"(?:\b(?:or|maybe|perhaps|possibly|either|also|alternatively|otherwise|could\s+be|might\s+be|vs|versus|unless"
    r"|if\s+not|" + "|".join(_OTHER_LANGUAGES_OR) + r")\b|或|または|/(?=\s*[$\d])|\|(?=\s*[$\d])|\\lor\b|∨)"
)
"""What offers a second answer: "or" (in the languages models answer in too: "oder", "ou",
"или", "或"), its symbols (`/`, `|`, `\\lor`, `∨`), "maybe", "vs", "unless", ..."""
_OFFERED = re.compile(
    r"[\s,.;:*$)\-–—]*(?:[A-Za-z]+[\s,]+){0,2}?(?:\(\s*)?"
    + _MARKER
    + r"[\s,:]*(?:[A-Za-z']+[\s,:]+){0,2}?(?P<answer>"
    + _STATED.pattern
    + r")"
    r"|[\s,.;:*$\-–—]*\(\s*(?P<conditional>" + _STATED.pattern + r")\s+if\b",
    re.IGNORECASE,
)
_OFFERED_WORD = re.compile(r"[\s,.;:*$)\-–—]*\(?\s*" + _MARKER + r"\s+(?P<word>\(?[A-Ea-e]\)|[A-Za-z]+)", re.IGNORECASE)
"""A second word or choice letter, offered after an answer that is one (`\\boxed{(C)} or (D)`)."""
_NOT_OFFERED = re.compile(
    r"\\(?:boxed|fbox|framebox)|\b(?:about|approximately|roughly|around|nearly|else|so|more|less)\b|\\approx",
    re.IGNORECASE,
)
"""What makes an "or" after an answer no second answer: a box (it counts itself), a rounding
of the same value ("or about 16.8 cm"), "or else ...", "or so", "or more"."""
_TAKING_BACK = re.compile(
    r"(?:or|maybe|perhaps|possibly|wait|actually|no|correction|sorry|oops|hmm+|on second thought|final|ans|result"
    r"|edit|update|revised|revision|p\.?\s?s\.?|alternatively|otherwise|alternative|second guess|another guess"
    r"|answer 2)"
    r"\b(?![ \t]*\n)",
    re.IGNORECASE,
)
"""A sentence that opens like this, right after an answer, may offer another one: its first
number is read as such, if it comes within a few words. ("Alternatively, ...", "Also, ...",
"However, ..." open a second method or a remark in worked solutions: not these.)"""

_PREMISE = re.compile(r"\b(?:if|when|since|because|suppose|assume|let|consider|given)\b", re.IGNORECASE)
"""A word that makes the number after a taking-back opener a premise, not an answer: "OR: If
there were two more coins, ..." opens a second method."""

_ALSO_RIGHT = re.compile(
    r"\b(?:also|too|as well)\b[^.\n]{0,30}?"
    r"\b(?:correct|right|valid|works?|acceptable|accept|possible|plausible|likely|reasonable|true"
    r"|an? (?:answer|solution))\b"
    r"|\b(?:correct|right|valid|acceptable)\b[^.\n]{0,12}?\b(?:too|as well)\b",
    re.IGNORECASE,
)
"""A next sentence (read to its line's end) that calls another number right too ("However, 8 is
also correct."): that number is offered; a box there counts itself."""
_MIGHT_BE = re.compile(
    r"\b(?:could|might|may)\s+(?:also\s+|alternatively\s+|instead\s+|equally\s+|well\s+)?be\b[\s:,]*(?P<answer>"
    + _STATED.pattern
    + r")",
    re.IGNORECASE,
)
"""A next sentence that says another answer might be right: "The answer could also be $8$.",
"It might be 8."."""
_CALLED_HINT = re.compile(
    r"correct|right|valid|plausib|possib|likely|reasonable|true|acceptable|answer|solution|alternative"
)
"""A word `_CALLED_RIGHT` needs: without one, its scan (a value tried at every position) is skipped."""
_CALLED_RIGHT = re.compile(
    r"(?P<answer>"
    + _STATED.pattern
    + r")[\s*]+(?:is|was|would be|could be|seems|looks)\s+(?:also\s+|too\s+|equally\s+)?"
    r"(?:correct|right|valid|plausible|possible|likely|reasonable|true|acceptable|an? (?:answer|solution)"
    r"|another (?:possibility|option|answer)|an alternative)\b",
    re.IGNORECASE,
)
"""Another value called right where it stands: "; $8$ is also plausible", "8 would be correct too"."""

_JOINED_BEFORE = re.compile(
    r"[\s*]*(?:\\text\s*\{\s*)?(?:\bor\b|\beither\b|/)(?:\s*\})?"
    r"[\s,:]*(?:\b(?:maybe|perhaps|possibly|rather|even|just)\b[\s,:]*)?[\s$*(]*$",
    re.IGNORECASE,
)
"""What joins an answer to the box right after it: "or" or "/" (`$7$ or $\\boxed{8}$`)."""
_NUMBER_BEFORE = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:/\d+)?$")
JOINER_CHARS = 40
"""The most characters an "or" and its spacing take between an answer and a box."""


def offered_before(text: str, start: int, limit: int = 0) -> list[str]:
    """The answer a reply offers right before the box that starts at `start` (read back to
    `limit` and to the start of its line), joined to it by "or" or "/" with no comma between
    (", or" restates: "half of $1$, or $\\boxed{\\frac12}$"): `17 or \\boxed{18}`,
    `$7$ / $\\boxed{8}$`, `$\\begin{pmatrix}..\\end{pmatrix}$ or $\\boxed{..}$`. Read
    backwards from the box, so it costs what the answer's length costs."""
    line_start = max(limit, text.rfind("\n", limit, start) + 1)
    window_start = max(line_start, start - JOINER_CHARS)
    tail = text[window_start:start]
    if "or" not in tail and "/" not in tail and "either" not in tail and "OR" not in tail and "Or" not in tail:
        return []  # no joiner: the common case, decided without a regex scan
    joiner = _JOINED_BEFORE.search(text, window_start, start)
    if joiner is None:
        return []
    head = text[line_start : joiner.start()].rstrip(" \t*")
    if head.endswith((",", ";", ",$", ";$")):
        return []  # "the reciprocal of $\\frac54$, or $\\boxed{-\\frac45}$": ", or" says the same thing again
    if head.endswith("$"):
        opening = head.rfind("$", 0, len(head) - 1)
        return [head[opening:]] if opening != -1 else []
    if head.endswith(")"):
        depth = 0
        for index in range(len(head) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(head[index], 0)
            if depth == 0:
                return [head[index:]]
        return []
    number = _NUMBER_BEFORE.search(head)
    return [number.group()] if number else []


def visible(text: str) -> str:
    """The text as it shows: invisible characters and combining accents out, Latin-looking
    Cyrillic and Greek as Latin, letters in other styles as plain ones (fullwidth `ｏｒ`,
    mathematical sans-serif `𝗈𝗋`)."""
    if text.isascii():
        return text
    text = _INVISIBLE.sub("", text).translate(_HOMOGLYPHS)
    if _STYLED.search(text):
        text = "".join(_plain_letter(char) for char in text)
    return text


_STYLED = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u20d0-\u20ff\uff01-\uff5e\U0001d400-\U0001d7ff]")
"""Combining accents, fullwidth and mathematical letters: the characters `_plain_letter` folds
(found with one regex scan, not a Python loop over every character)."""


def _plain_letter(char: str) -> str:
    if unicodedata.category(char) == "Mn":
        return ""  # a combining accent over the letter before it
    if char.isalpha() and ord(char) > 0xFF00:
        folded = unicodedata.normalize("NFKC", char)
        return folded if folded.isascii() else char
    return char


def _plain(text: str) -> str:
    text = _MARKUP.sub(lambda m: f" {m.group(1)} " if m.group(1) is not None else " ", text)
    return _NUMBER_WORD.sub(lambda m: _NUMBER_WORDS[m.group(1).lower()], text)


_ALONE = re.compile(
    r"(?:or[ \t]*\n\s*)?\(?\s*(?P<answer>\$[^$\n]+\$|\\\([^\n]*?\\\)|[-+]?\d[\d,]*(?:\.\d+)?(?:/\d+)?)\s*\)?"
    r"[ \t.]*(?:\n|$)",
    re.IGNORECASE,
)
"""A line after the answer holding nothing but another value (`8`, `$8$`), maybe after a line "or"."""
_OPERATOR = re.compile(r"\s*(?:[-+*/=^×÷]|\\cdot|\\times|\\div)")
_OPERATOR_BEFORE = re.compile(r"(?:[-+*/=^×÷]|\\cdot|\\times|\\div)\s*$")


_WORD_SPAN = re.compile(r"(?:\$|\\\()\s*(?:\\text\w*\s*\{\s*)?[A-Za-z0-9][A-Za-z0-9 ]*\}?\s*(?:\$|\\\))")
_ANOTHER_WAY = re.compile(r"alternatively|otherwise|alternative", re.IGNORECASE)
"""Openers that may begin a second method ("Alternatively, we can view ... 5 times", "...,
one can note"): a value right after them that ends its clause is offered ("Alternatively,
20."); one further into the sentence is working."""
_CLAUSE_END = re.compile(r"\s*(?:[.,;:!?)]|$)")
_DECLARING = re.compile(r"edit|update|revised|revision|p\.?\s?s|correction|final|ans|result", re.IGNORECASE)
"""Openers that declare a new answer ("EDIT:", "Update:"): any value after them is offered. After
the others ("Or", "Wait", "Hmm") only a number is: "Or we know that $84^\\circ$ is coterminal
with ..." explains."""


def _a_number(stated: re.Match[str]) -> bool:
    return parse_number(stated.group().strip("()")) is not None


_LATEX_NAMES = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}|\\[A-Za-z]+")
_LONE_NAME = re.compile(r"\$?\s*[A-Za-z](?:_\{?\w+\}?)?\s*\$?")


def _a_value(stated: str, word_answer: bool = False) -> bool:
    """A number, or a math span that states a value: not a heading (`$\\emph{Solution 2}$`,
    words), not a lone name (`$x$`); where the answer is a word, a word in a span is one too."""
    text = stated.strip()
    if parse_number(text.strip("()")) is not None:
        return True
    if word_answer and _WORD_SPAN.fullmatch(text):
        return True
    if not text.startswith(("$", "\\(")) or _LONE_NAME.fullmatch(text):
        return False
    return not PROSE_WORD.search(_LATEX_NAMES.sub(" ", text))  # a heading: `$\\emph{Solution 2: ...}$`


def _operand(text: str, start: int, end: int) -> bool:
    """The value at text[start:end] is an operand of arithmetic written around it (`3 + 4`)."""
    return bool(_OPERATOR.match(text, end) or _OPERATOR_BEFORE.search(text[max(0, start - 12) : start]))


def _statement(line: str, start: int) -> re.Match[str] | None:
    """The first value from `start` on that is not an operand: in "Hmm, 3 + 4 is indeed 7."
    the sentence states 7, and checks the answer rather than offering 3."""
    for stated in _STATED.finditer(line, start):
        if not _operand(line, stated.start(), stated.end()):
            return stated
    return None


def offered_after(text: str, end: int, *, word_answer: bool = False, limit: int | None = None) -> list[str]:
    """The other answers a reply offers right after the one that ends at `end` (module
    docstring), read up to `limit` at most. `word_answer`: the answer is a word or a choice
    letter, so another word offered after it is a second answer too."""
    stop = end + WINDOW_CHARS if limit is None else min(limit, end + WINDOW_CHARS)
    window = _plain(visible(text[end:stop]))
    sentence_end = _SENTENCE_END.search(window)
    line_end = window.find("\n")
    cut = min(sentence_end.end() if sentence_end else len(window), line_end if line_end != -1 else len(window))
    found = []
    offered = _OFFERED.match(window[:cut])
    if offered and _operand(window[:cut], offered.start("answer"), offered.end("answer")):
        offered = None  # "or 3 + 4": the working, not a second answer
    if offered and not _NOT_OFFERED.search(offered.group()):
        found.append(offered.group("answer") or offered.group("conditional"))
    elif word_answer and (word := _OFFERED_WORD.match(window[:cut])) and not _NOT_OFFERED.search(word.group()):
        found.append(word.group("word"))
    might_here = _MIGHT_BE.search(window[:cut]) if not found and "be" in window[:cut] else None
    if might_here and _a_value(might_here.group("answer"), word_answer):
        found.append(might_here.group("answer"))  # `\\boxed{18}, though it might be 20`
    segment = window[: cut + WINDOW_CHARS // 4]
    hinted = (
        " is " in segment or " be " in segment or "seems" in segment or "looks" in segment or " was " in segment
    ) and (_CALLED_HINT.search(segment) is not None)
    called = _CALLED_RIGHT.search(segment) if hinted else None
    if not found and called and "box" not in called.group() and _a_value(called.group("answer"), word_answer):
        found.append(called.group("answer"))  # `\\boxed{7}; $8$ is also plausible`
    following = window[cut:].lstrip(" \t\n.")
    alone = _ALONE.match(following)
    if (
        alone
        and "box" not in alone.group()
        and not alone.group("answer").lstrip("$\\( ").startswith("=")  # `$= 8 + 4 = 12$`: working
        and _a_value(alone.group("answer"), word_answer)
    ):
        found.append(alone.group("answer"))  # a line that is only another value: `\\boxed{7}\n\n8`
    taking_back = _TAKING_BACK.match(following)
    next_sentence = following.split("\n", 1)[0]
    next_sentence = next_sentence[: match.end()] if (match := _SENTENCE_END.search(next_sentence)) else next_sentence
    might_be = _MIGHT_BE.search(next_sentence) if not taking_back and "box" not in next_sentence else None
    if might_be:
        found.append(might_be.group("answer"))
    elif not taking_back and _ALSO_RIGHT.search(next_sentence) and "box" not in next_sentence:
        stated = _STATED.search(next_sentence)
        if stated and parse_number(stated.group().strip("()")) is not None:
            found.append(stated.group())
    if taking_back:
        line = following[: following.find("\n")] if "\n" in following else following
        stated = _statement(line, taking_back.end())
        between = line[taking_back.end() : stated.start()] if stated else ""
        words_before = len(re.findall(r"[A-Za-z']+", between))
        if (
            stated
            and (
                words_before <= MAX_WORDS_BEFORE
                if not _ANOTHER_WAY.match(taking_back.group())
                else words_before <= 1 and _CLAUSE_END.match(line, stated.end()) is not None
            )
            and not _PREMISE.search(between)
            and (
                _a_value(stated.group(), word_answer)
                if _DECLARING.match(taking_back.group()) or _ANOTHER_WAY.match(taking_back.group())
                else _a_number(stated)
            )
        ):
            found.append(stated.group())
    return [answer.strip() for answer in found]
