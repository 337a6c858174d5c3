"""Finding the one final answer of a completion.

Why not "find a matching answer anywhere": math-verify and similar checkers accept a
completion if any extracted candidate matches, so reasoning that mentions the right number
on the way to a wrong final answer is rewarded. Here a completion has exactly one final
answer, found by a fixed precedence, and a completion that commits to several different
final answers (a hedge) scores 0.

Markers, highest precedence first; within a kind the *last* occurrence is the final answer:

1. `\\boxed{...}` / `\\fbox{...}` (balanced braces; escaped `\\{ \\}` and `\\left\\{` are not
   braces; spaces or a newline may come before `{`; `\\boxed 2`, TeX's one-token argument,
   is 2). A box inside another box is part of it, not a second answer, and formatting
   around the content is not part of the answer (`\\boxed{\\boxed{18}}`, `\\boxed{\\fbox{18}}`,
   `\\textbf`, `\\mathbf`, `{\\bf ..}`, `\\color{red}{..}`, `\\textcolor{red}{..}` are 18).
   A placeholder (`\\boxed{}`, `\\boxed{\\ }`, `\\boxed{\\phantom{2}}`, `\\boxed{?}`) or a box
   quoted from the problem (`quoted`) is no answer.
2. `#### N` (GSM8K's own format), where N, starting the rest of the line, is a number:
   exactly four `#`, so markdown headings (`#### Step 1: Find x`, `##### Final`) are text.
3. "The answer is ...", "Final answer: ...", "Answer: ...", "The answers are ..." (spelt
   answer, Answer or ANSWER), to the end of the sentence, when what follows is a number, a
   math span, or math written without `$` ("The answer is: [-2,2]", MetaMath's style), or
   leads with a number ("The answer is 18, since 9 * 2 = 18" states 18); math spans joined by
   "and", "," or "or" are one list answer ("The answer is $2$ and $3$"). Prose such as "the
   answer is not obvious" is no answer, and neither is a check ("we may check our answer").

Which answers must agree (a disagreement is a hedge): every box and every `#### N`; the
"answer is" phrases, all of them if the reply has no box, else only those after its last
box (one before it is intermediate work: "our answer is 1/115, so m + n = \\boxed{116}");
and every second answer offered right after one of those (`hedging`: "or 8",
"$7$ / $8$", "(8 if we count zero)", "maybe $8$", a next sentence that takes the answer
back). Answers agree when their values are equal: numbers exactly, other answers when they
read the same once normalised; `scoring` compares the rest symbolically.

Every step is linear in the completion's length, whatever it holds.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from rlenvs.rewards.code_blocks import THINK_END, outside_fences
from rlenvs.rewards.math.equivalence import read_form
from rlenvs.rewards.math.hedging import offered_after, offered_before, visible
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
BOX_OPEN = re.compile(r"\\(?:boxed|fbox|framebox)(?![A-Za-z])\s*")
_ANSWER_TAIL = re.compile(
    r"(?:s[ \t]+(?:are|ARE)\b[ \t*:：]*|s?\**[ \t]*(?:\([^)\n]{0,30}\)[ \t]*)?(?:(?:is\b|IS\b|:|：|=|[ \t][-–—][ \t])"
    r"[ \t*:]*(?:\n[ \t]*)?|[ \t]+(?=\$|\\\(|\\\[)|\**[ \t]*\n[ \t]*(?=\S)))"
)
"""After "answer": "is", ":" or "=", or just a space before a math span ("Answer $9$"), or
the end of a heading line ("**Final Answer**" and the answer on the next line)."""
_MATH_SPAN = re.compile(r"\$\$.+\$\$|\$(?:[^$\\]|\\.)+\$|\\\(.+\\\)|\\\[.+\\\]", re.DOTALL)
"""A text that is wholly one `$...$`, `$$...$$`, `\\(...\\)` or `\\[...\\]` span (`\\$`, an
escaped dollar sign, does not end a `$` span)."""
_BRACE = re.compile(r"\\*[{}]")
"""A brace with the backslashes before it: an odd number of them escapes it (`\\{`)."""
_HASH_MARK = re.compile(r"(?<!#)####(?!#)")
# "The answer is 18. Then ..." -> "18": a period ends the sentence unless a digit follows.
_SENTENCE_END = re.compile(r"\.(?=\s|$)|\?(?=\s|$)|(?<=[A-Za-z])!")
"""A period before a space or the end (not in `a.m.` or `3.5`), `?`, or `!` after a word (not
LaTeX's `\\!` spacing, not a factorial `2004!`). A `;` goes on: "7; 8" states two answers."""
_CLAUSE = re.compile(
    r"\s*(?:[,;(—–]|\s-\s|\b(?:because|since|as|which|so|that|where|when|given|from|for|by|hence|thus)\b)"
)
"""What may follow an answer's number in a sentence ("18, since ...", "18 dollars because ...")."""
_FRAMES = re.compile(
    r"\\fcolorbox\s*\{[^{}]*\}\s*\{[^{}]*\}|\\colorbox\s*\{[^{}]*\}|(?<=\\boxed)\*"
    r"|\\(?:bbox|tcbox|framebox|fbox)\s*(?:\[[^\[\]{}]*\]\s*){1,2}(?=\{)"
    r"|\\(?:bbox|ovalbox|Ovalbox|doublebox|shadowbox|cfbox|tcbox|Boxed)(?![A-Za-z])"
)
"""Other ways to draw a box (`\\fcolorbox{red}{white}{8}`, `\\boxed*{8}`, MathJax's
`\\bbox[border: 1px solid]{8}`, fancybox's `\\ovalbox{8}`, `\\framebox[2cm]{8}`): read as `\\fbox`."""
_OTHER_MARKERS = re.compile(r"(?im)(?:^|(?<=[\s*]))(?:final|ans|result|答案)\**\s*(?:\([^)\n]{0,30}\))?\s*[:：]\**\s*")
"""Answer markers besides "answer": "Final: 8", "Ans: 8", "Result: 8", "答案：8"."""
_WRAPPED = re.compile(r"^(?:\*\*|`|\\\(|\(|\[|\$)\s*(.*?)\s*(?:\*\*|`|\\\)|\)|\]|\$)$")
_FIRST_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")
_NUMBER_JOINER = re.compile(r"\s*(?:to|and|or|,|;|-|\s\d)")
"""What joins a `####` line's first number to another: `#### 7 to 8`, `#### 7 and 8`, `#### 7 8`."""
_LEADING_NUMBER = re.compile(r"[-+]?\\?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?(?![\d.,/!])")
_REJECTING = re.compile(
    r"\b(?:not|no|never|reject\w*|wrong|invalid|incorrect|extraneous|discard\w*|exclud\w*|fail\w*|but|however|"
    r"instead|actually|only|rather|mistake|oops|wait|impossible|ignor\w*|cannot)\b|n't\b",
    re.IGNORECASE,
)
"""Words that take a box back: in the sentence a box ends or the one the next box is in ("$\\boxed{2}$,
which is rejected, so $\\boxed{3}$", "$\\boxed{2}$, but not $\\boxed{3}$")."""
_BOX_SENTENCE_END = re.compile(r"[.?!](?=[\s$]|$)|\n\s*\n")
"""Where the sentence around a box ends: also before a closing `$` and at a blank line."""
_WORD_ANSWER = re.compile(r"\(?[A-Ea-e]\)?|[A-Za-z]{2,}(?: [A-Za-z0-9]+)?")
MAX_PHRASES = 64
"""A reply with more "the answer is" phrases (or "Final:" markers) than this hedges (and costs
no more reading)."""
_ADVERB = re.compile(
    r"^(?:actually|really|indeed|instead|then|now|clearly|obviously|definitely|certainly|probably|simply|"
    r"therefore|thus|so|in fact|either|maybe|perhaps|possibly|likely)\b,?\s*",
    re.IGNORECASE,
)
"""Words between "the answer is" and the answer: "the answer is actually $8$"."""
_SPAN_JOINER = re.compile(r"[ \t]*(?:,|\band\b|\bor\b|/)[ \t]*(?:and[ \t]+)?")
_SPAN_MARKS = re.compile(r"^\$\$|\$\$$|^\$|\$$|^\\\(|\\\)$|^\\\[|\\\]$")
_CHOICE_PHRASE = re.compile(r"\(?[A-E]\)\s+[A-Za-z][\w ,.'-]*")
"""`(C) Plane`: a multiple-choice letter with its option's text, an answer too."""
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
MATH_WORDS = frozenset({
    "sqrt", "pi", "sin", "cos", "tan", "sec", "csc", "cot", "ln", "log", "exp", "inf", "infty", "infinity",
})  # fmt: skip
"""Words that are math, not prose, when they stand without a backslash (`sqrt(2)`, `pi/2`)."""
_LIST_WORDS = frozenset({"and", "or"})
_LATEX_WORDS = re.compile(r"\\(?:text|textbf|mathrm|mbox|operatorname|begin|end)\s*\{[^{}]*\}")
"""Words of LaTeX's, not the reply's: text wrappers' contents and environment names."""
_TWO_LETTER_WORDS = frozenset({
    "is", "it", "we", "so", "be", "as", "at", "by", "in", "on", "to", "of", "if", "an", "no", "do", "my", "me",
    "up", "us", "am", "he", "go", "or",
})  # fmt: skip
_CHECKING = frozenset({"check", "checking", "verify", "verifying", "confirm", "confirming", "test", "testing"})
"""Words that, just before "answer", make it the object of a check, not a statement of one."""

# Formatting a box's content may carry: unwrapped until none is left.
_WRAPPERS = re.compile(
    r"\\(?:boxed|fbox|framebox|textbf|mathbf|bm|boldsymbol|underline|emph|textit|mathit)\s*\{(?P<body>.*)\}"
    r"|\\(?:textcolor|colorbox)\s*\{[^{}]*\}\s*\{(?P<colored>.*)\}"
    r"|\\color\s*\{[^{}]*\}\s*(?:\{(?P<color_group>.*)\}|(?P<color_rest>.*))"
    r"|\{\s*\\(?:bf|it|rm|bfseries)\b\s*(?P<declared>.*)\}"
    r"|\{(?P<group>.*)\}",
    re.DOTALL,
)
_PLACEHOLDER_PARTS = re.compile(
    r"\\(?:[hv]?phantom|hspace\*?|vspace\*?)\s*\{[^{}]*\}|\\text\s*\{\s*\}|\\(?:quad|qquad|square|Box|"
    r"blacksquare|underline\{\s*\}|dots|ldots|cdots)(?![A-Za-z])|\\[ ,;:!]|[\s~?_]|\\_|\.\.\."
)


class FinalAnswer(NamedTuple):
    text: str
    """The answer as written, formatting removed, e.g. the inside of `\\boxed{}`."""
    kind: str
    """Which marker it came from: "boxed", "hash" or "answer_is"."""
    value: Number | None
    """Its numeric value, or None if it is not a single number."""


class Extraction(NamedTuple):
    answer: FinalAnswer | None
    """The final answer by precedence; None if the completion has no final-answer marker."""
    hedged: bool
    """The completion states final answers that visibly disagree (different numbers, or
    texts that differ once normalised); `scoring` clears a hedge whose answers it proves
    equal (`\\boxed{\\frac{\\sqrt3}{2}}` and `\\boxed{\\dfrac{\\sqrt{3}}{2}}`)."""
    stated: tuple[FinalAnswer, ...] = ()
    """Every answer that must agree with the final one (see the module docstring)."""
    listed: bool = True
    """No box is taken back where it stands ("..., which is rejected"): with a list gold the
    boxes may be its items (`_listed`)."""


NO_ANSWER = Extraction(None, False)

TOOL_TAGS = (
    "calculator", "result", "error", "tool_call", "tool_response", "tool_result", "function_call",
    "function_results", "output", "observation",
)  # fmt: skip
"""Tags around a tool's call or output: what they hold is the tool's, never the reply's answer."""
_TOOL_TAG = re.compile(r"<(/?)(" + "|".join(TOOL_TAGS) + r")\b[^<>]{0,200}>", re.IGNORECASE)


_FRAME_HINTS = ("colorbox", "boxed*", "bbox", "framebox", "fbox", "ovalbox", "doublebox", "shadowbox", "tcbox", "Boxed")
"""Substrings one of which every command `_FRAMES` rewrites contains: without one (most
replies: their only boxes are `\\boxed{`) the rewrite's scan is skipped."""
_WORKING_AFTER = re.compile(r"^\s*(.+?)\s*\((?=[^()]*[-+*/×=])[^()]*\)\s*$")


def _without_working(phrase: str) -> str:
    """A number with its working in parentheses after it states the number: "Answer: 540 (9 *
    60)", "Answer: \\frac{4}{3} (2 + \\frac{4}{3} - 2)"."""
    working = _WORKING_AFTER.fullmatch(phrase)
    return working[1] if working and parse_number(working[1]) is not None else phrase


TOOL_MARK = "\x1f"
"""What `prose` leaves where a code block or a tool span was: a reply's "the answer is" before
its last one is working the tool finishes ("so the answer is 9 × 60 = <calculator>9*60</calculator>")."""
_INLINE_CODE = re.compile(r"(?<!`)`([^`\n]{1,200})`(?!`)")
_ANSWER_TAG = re.compile(r"<answer>([^<>]{0,1000})</answer>")
"""An R1-style `<answer>18</answer>`: a final-answer marker, read as "Answer: 18"."""


def prose(completion: str) -> str:
    """The reply as a final answer is read from it: fenced code blocks (`code_blocks`'
    Markdown rules, an unclosed one running to the end) and tool calls and results
    (`TOOL_TAGS`, opening to closing tag) blanked. Code, a tool's input and a tool's output,
    forged or real, are no final answer: `<result>18</result>` or a ```` ``` ```` block
    holding `\\boxed{18}` states nothing."""
    if "```" in completion or "~~~" in completion:
        completion = outside_fences(completion, TOOL_MARK)
    if "</" in completion and _TOOL_TAG.search(completion):
        completion = _without_tool_spans(completion)  # a tag never closed holds no span to blank
    if "<answer>" in completion:
        completion = _ANSWER_TAG.sub(lambda m: f"\nAnswer: {m[1].strip()}\n", completion)
    if "`" in completion:
        # `540`: inline code is how chat shows a value, read as the math it holds
        completion = _INLINE_CODE.sub(lambda m: m[1] if "$" in m[1] else f"${m[1]}$", completion)
    return completion


def _without_tool_spans(text: str) -> str:
    """`text` with each tool tag and what it encloses up to its closing tag blanked (a tag
    never closed blanks itself only); one pass over the tags, linear in the text."""
    spans: list[tuple[int, int]] = []
    open_at: dict[str, int] = {}
    for tag in _TOOL_TAG.finditer(text):
        name = tag.group(2).lower()
        if not tag.group(1):
            open_at.setdefault(name, tag.start())
        elif name in open_at:
            spans.append((open_at.pop(name), tag.end()))
    pieces, position = [], 0
    for start, end in sorted(spans):
        if end <= position:
            continue  # inside a span already blanked
        pieces.append(text[position : max(start, position)])
        pieces.append(f" {TOOL_MARK} ")
        position = end
    pieces.append(text[position:])
    return _TOOL_TAG.sub(" ", "".join(pieces))


def extract_final_answer(completion: str, quoted: frozenset[str] = frozenset()) -> Extraction:
    """The completion's one final answer by the module's precedence, and whether it hedges.

    `quoted` holds the normalised contents of the boxes the problem itself shows (a blank
    to fill in, an operator written as a box): such a box in the reply is quoted, not an
    answer, unless the reply has no other box. A reasoning model's answer follows its
    thinking: where the reply has a `</think>`, the text after the last one is read, and the
    whole reply only if that text neither answers nor calls a tool."""
    if THINK_END in completion:
        answered = completion[completion.rfind(THINK_END) + len(THINK_END) :]
        read_after = extract_final_answer(answered, quoted)
        if read_after.answer is not None or read_after.hedged or TOOL_MARK in prose(answered):
            return read_after
    completion = prose(visible(completion))
    more_boxes = completion.count("box") > completion.count("\\boxed{") or "Boxed" in completion
    if more_boxes and any(hint in completion for hint in _FRAME_HINTS):
        completion = _FRAMES.sub(lambda m: "" if m.group() == "*" else "\\fbox", completion)
    if completion.count("nswer") + completion.count("NSWER") > MAX_PHRASES:
        return Extraction(None, True)  # that many "the answer is" commit to nothing
    boxes = all_boxes = _boxes(completion) if "\\" in completion else []
    if quoted and any(normalize_answer(text) not in quoted for _, _, text in boxes):
        boxes = [box for box in boxes if normalize_answer(box[2]) not in quoted]
    boxed = [_final(text, BOXED) for _, _, text in boxes]
    words = bool(boxed) and boxed[-1].value is None and _is_word(boxed[-1].text)
    # What a box or `####` offers is read up to the next one, which states itself: a reply of
    # 10,000 boxes reads each gap once, not 1,000 characters after every box.
    next_starts = [start for start, _, _ in boxes[1:]] + [len(completion)]
    offered = [
        other
        for (start, end, content), limit, previous in zip(boxes, next_starts, [0] + [end for _, end, _ in boxes[:-1]])
        for other in [offer for offer in offered_before(completion, start, previous) if _rivals(offer, content)]
        + offered_after(completion, end, word_answer=words, limit=limit)
    ]
    hashed = []
    for answer, end, others in hash_answers(completion, with_ends=True):
        hashed.append(_final(answer, HASH))
        next_mark = completion.find("####", end)
        offered.extend(others + offered_after(completion, end, limit=next_mark if next_mark != -1 else len(completion)))
    after = boxes[-1][0] if boxes else -1
    phrased = []
    phrases = _answer_phrases(completion, [start for start, _, _ in all_boxes])
    if len(phrases) > MAX_PHRASES:
        return Extraction(None, True)  # "Final: ..." lines count as "the answer is" do
    last_tool = completion.rfind(TOOL_MARK)
    for start, phrase, end in phrases:
        if start < after or start < last_tool:
            continue  # an "answer is" before the last box, or before a tool call or code, is working
        phrase = _without_working(_ADVERB.sub("", phrase, count=1))  # "the answer is actually $8$"
        candidate = _final(phrase, ANSWER_IS)
        if (
            candidate.value is not None
            or is_math_span(candidate.text)
            or reads_as_math(candidate.text)
            or _CHOICE_PHRASE.fullmatch(candidate.text)
        ):
            phrased.append(candidate)
            offered.extend(offered_after(completion, end, word_answer=_is_word(candidate.text)))
        elif (lead := _leading_number(candidate.text)) is not None:
            # "The answer is 18, since 9 * 2 = 18": the number it leads with; what follows may hedge.
            phrased.append(_final(lead, ANSWER_IS))
            offered.extend(offered_after(candidate.text, len(lead)))
        elif boxes and (number := _LEADING_NUMBER.match(candidate.text)):
            # After a box, "Answer: 7 or possibly 8" states 7 and offers 8: no answer, but a hedge.
            offered.extend([number.group(), *offered_after(candidate.text, number.end())])
    answers = boxed or hashed or phrased
    if not answers:
        return NO_ANSWER
    answer = answers[-1]
    stated = tuple(boxed + hashed + phrased + [_final(other, ANSWER_IS) for other in offered])
    hedged = any(not agree(candidate, answer) for candidate in stated)
    return Extraction(answer, hedged, stated, _listed(completion, boxes))


def _rivals(offer: str, box: str) -> bool:
    """Whether an answer written with "or" right before a box offers a second answer: one of
    the box's own kind (a number or expression before a boxed value, a matrix before a boxed
    matrix). Worked solutions put other things there that state no rival: the same value
    unworked in a chain ("$3 \\ast 7 = \\cfrac{3+7}{2}$ or $\\boxed{5}$"), the name of what
    is asked ("$t$, or $\\boxed{0.5}$"), a choice's option ("$\\sqrt[8]{8}$ or $\\boxed{C}$");
    an offer equal in value to the box is no hedge either (`scoring` clears it)."""
    text = offer.strip().strip("$").strip()
    if _is_word(box):
        return _is_word(text)  # another letter or word rivals a boxed choice; its option's text does not
    if parse_number(text) is not None:
        return True
    offered, boxed = read_form(normalize_answer(text)), read_form(normalize_answer(box))
    if offered.kind != boxed.kind:
        return False
    # A letter the box does not have makes the offer a name or a general form, not a rival
    # value: "$y=mx+b$ or $\\boxed{y=10x-4}$", "$PP'$ or $\\boxed{2\\pi}$".
    return _letters(text) <= _letters(box)


def _letters(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", " ", text)))


def _listed(completion: str, boxes: list[tuple[int, int, str]]) -> bool:
    """No box is taken back: neither the rest of the sentence a box ends nor the part of the
    next box's sentence before it says so. Worked solutions box a list's items sentences
    apart ("If $x = 1$, ... $\\boxed{2}$. If $x = -1$, ... $\\boxed{4}$."), so prose alone
    does not part them."""
    if len(boxes) < 2:
        return True
    starts = [start for start, _, _ in boxes[1:]] + [len(completion)]
    for (_, end, _), start, last in zip(boxes, starts, [False] * (len(boxes) - 1) + [True]):
        gap = completion[end:start]
        ends = list(_BOX_SENTENCE_END.finditer(gap))
        after = gap[: ends[0].start()] if ends else gap
        before = "" if last or not ends else gap[ends[-1].end() :]
        if _REJECTING.search(after) or _REJECTING.search(before):
            return False
    return True


def _leading_number(text: str) -> str | None:
    """The number a sentence states before a clause ("18, since ...", "18 dollars because
    ..."); None if what follows the number is not a clause ("18 squared", "3 + 4")."""
    text = text.lstrip()
    if not text or text[0] not in "-+$\\0123456789":
        return None  # no number leads (and no clause is searched for: `#### ` * 30,000 took 2.7 s)
    clause = _CLAUSE.search(text)
    head = (text[: clause.start()] if clause else text).strip()
    return head if parse_number(head) is not None else None


def _is_word(text: str) -> bool:
    """An answer that is a word or a choice letter (`\\text{even}`, `(C)`)."""
    return bool(_WORD_ANSWER.fullmatch(normalize_answer(text)))


def agree(a: FinalAnswer, b: FinalAnswer) -> bool:
    """The same value: equal numbers, or the same text once normalised (`$x=1$`, `x = 1`)."""
    if a.value is not None and b.value is not None:
        return a.value == b.value
    return a.text == b.text or _hedge_key(a.text) == _hedge_key(b.text)


def _hedge_key(text: str) -> str:
    return normalize_answer(text).replace(" ", "")


def is_math_span(text: str) -> bool:
    return _MATH_SPAN.fullmatch(text.strip()) is not None


def reads_as_math(text: str) -> bool:
    """Math written without `$`: no prose words (`x^2+33x-33`, `[-2,2]`, `\\sqrt{2}`, `C`,
    `3qr + 6q`), words only from `MATH_WORDS`, joining a list (`2 or 3`), inside `\\text{}`
    (`\\text{even}`, `8\\sqrt{2} \\text{ cm}`) or naming an environment (`pmatrix`). A word
    of two letters is prose only if it is an English one (`is`, `we`); else it is a product
    of variables."""
    text = text.strip()
    if not text or len(text) > MAX_ANSWER_CHARS:
        return False
    words = _PROSE_WORD.findall(_LATEX_WORDS.sub(" ", text))
    return all(
        word.lower() in MATH_WORDS or word in _LIST_WORDS or (len(word) == 2 and word.lower() not in _TWO_LETTER_WORDS)
        for word in words
    )


def _final(text: str, kind: str) -> FinalAnswer:
    text = unwrap_formatting(text.strip().strip("*").strip())  # markdown bold: `**Answer: C**`
    return FinalAnswer(text, kind, parse_number(text))


def unwrap_formatting(text: str) -> str:
    """The content without formatting around it: `\\boxed{\\textbf{18}}`, `{\\bf 18}`,
    `\\color{red}{18}` and `\\textcolor{red}{18}` are `18` (but `\\mathbb{R}` is the reals)."""
    text = text.strip()
    for _ in range(MAX_ANSWER_CHARS):
        match = _WRAPPERS.fullmatch(text)
        if match is None:
            return text
        inner = next(group for group in match.groups() if group is not None)
        if match.group("body") is not None or match.group("colored") is not None or match.group("group") is not None:
            if not _balanced(inner):
                return text  # `{a} + {b}`: the braces are not one group around everything
        text = inner.strip()
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for brace in _BRACE.finditer(text):
        token = brace.group()
        if (len(token) - 1) % 2:
            continue  # escaped
        depth += 1 if token[-1] == "{" else -1
        if depth < 0:
            return False
    return depth == 0


def is_placeholder(text: str) -> bool:
    """A blank, not an answer: empty, spacing, `\\phantom{..}`, `?`, `\\square`, underscores."""
    return not _PLACEHOLDER_PARTS.sub("", text).strip()


def _rest_of_line(text: str, start: int) -> str:
    """From `start` to the end of its line, bounded so a huge one-line reply stays linear."""
    end = text.find("\n", start, start + 2 * MAX_ANSWER_CHARS)
    return text[start : end if end != -1 else start + 2 * MAX_ANSWER_CHARS]


def hash_answers(text: str, *, with_ends: bool = False) -> list:
    """The number after each `####` (exactly four) on its line; a `####` not followed by a
    number is a markdown heading, not an answer. The number may be wrapped (`(8)`, `**8**`,
    `\\(8\\)`), and a line that goes on after it (`#### 72 (maybe 73)`, `#### 7, 8`) states
    it and any other number on the line. With `with_ends`, (answer, where it ends, the other
    numbers of the line) triples."""
    if "####" not in text:
        return []
    answers = []
    for mark in _HASH_MARK.finditer(text):
        line = _rest_of_line(text, mark.end())
        rest = line.strip()
        wrapped = _WRAPPED.fullmatch(rest)
        rest = wrapped.group(1) if wrapped else rest
        if parse_number(rest) is not None:
            answer, end, others = rest, mark.end() + len(line), []
        elif (lead := _leading_number(rest)) is not None:
            tail = rest[len(lead) :]
            answer, end = lead, mark.end() + line.find(lead) + len(lead)
            others = re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?(?:/\d+)?", tail)
        elif (first := _FIRST_NUMBER.match(rest)) and _NUMBER_JOINER.match(rest, first.end()):
            # `#### 7 to 8`, `#### 7 and 8`, `#### 7 8`: the first number, and the others with it
            answer, end = first.group(), mark.end() + len(line)
            others = _FIRST_NUMBER.findall(rest, first.end())
        else:
            continue
        answers.append((answer, end, others) if with_ends else answer)
    return answers


def _answer_phrases(text: str, box_starts: list[int]) -> list[tuple[int, str, int]]:
    """(position, the answer after it, where that answer ends) for each "answer is" /
    "answer:" / "answers are" (answer, Answer or ANSWER), in order. The answer is the rest of
    the sentence; or, when the sentence starts with a math span, that span and any spans
    joined to it by a comma, "and", "or" or "/" (`$2$ and $3$` is the list 2, 3). One with
    a box in it (`box_starts`, in order) is left out: "The answer is \\boxed{18}" or
    "$x \\in \\boxed{...}$", the box counts itself."""

    def boxed(start: int, end: int) -> bool:
        index = bisect.bisect_left(box_starts, start)
        return index < len(box_starts) and box_starts[index] < end

    markers = ":" in text or "：" in text  # "Final: 8", "Ans: 8", "答案：8"
    if "nswer" not in text and "NSWER" not in text and not markers:
        return []
    phrases = []
    for spelling in ("nswer", "NSWER"):
        start = text.find(spelling)
        while start != -1:
            head = start - 1
            if head >= 0 and text[head] in "aA" and (head == 0 or not text[head - 1].isalnum()):
                match = _ANSWER_TAIL.match(text, start + len(spelling))
                if match and _states_an_answer(text, head, spaced=not match.group().strip(" \t*sS")):
                    after = match.end()
                    # A math span may run over lines ("Answer \\[\n 9 \n\\]"); prose ends with its line.
                    if text.startswith(("$", "\\(", "\\["), after):
                        phrase, end = _joined_spans(text, after)
                    else:
                        phrase = _first_sentence(_rest_of_line(text, after))
                        end = after + len(phrase)
                    if not boxed(after, end):
                        phrases.append((head, phrase, end))
            start = text.find(spelling, start + 1)
    for marker in _OTHER_MARKERS.finditer(text) if markers else ():
        if len(phrases) > MAX_PHRASES:
            break  # the caller refuses that many; reading more costs without changing that
        phrase = _first_sentence(_rest_of_line(text, marker.end()))
        if phrase.strip() and not boxed(marker.end(), marker.end() + len(phrase)):
            phrases.append((marker.start(), phrase, marker.end() + len(phrase)))
    phrases.sort()
    return phrases


def _joined_spans(text: str, start: int) -> tuple[str, int]:
    """The math span at `start` and those joined to it (", $3$", " and $3$", " or $x=3$"):
    one span as written, several as the list of their insides; and where they end."""
    spans = []
    position = start
    while True:
        span = _first_sentence(text[position : position + MAX_ANSWER_CHARS])
        if not is_math_span(span):
            break
        spans.append(span)
        position += len(span)
        joiner = _SPAN_JOINER.match(text, position)
        if joiner is None or not text.startswith(("$", "\\("), joiner.end()):
            break
        position = joiner.end()
    if len(spans) <= 1:
        phrase = spans[0] if spans else _first_sentence(text[start : start + MAX_ANSWER_CHARS])
        return phrase, start + len(phrase)
    return ", ".join(_SPAN_MARKS.sub("", span).strip() for span in spans), position


def _states_an_answer(text: str, head: int, spaced: bool) -> bool:
    """Whether the "answer" at `head` introduces the reply's answer: not when checking one
    ("We can check our answer: ..."), and, in the form without "is" or ":" ("Answer $9$"),
    only at the start of a line or after "final" ("a calculator gives the answer $33.98$"
    is prose)."""
    line_start = text.rfind("\n", 0, head) + 1
    before = text[max(line_start, head - 60) : head].lower()
    words = re.findall(r"[a-z]+", before)
    if any(word in _CHECKING for word in words[-3:]):
        return False
    if not spaced:
        return True
    return not before.strip(" *#_") or (bool(words) and words[-1] == "final")


def _first_sentence(text: str) -> str:
    """The phrase up to the end of its sentence; a leading math span is kept whole, so a
    period inside `$x = 5.$` does not cut it."""
    for opening, closing in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opening):
            end = text.find(closing, len(opening))
            while end > 0 and closing == "$" and text[end - 1] == "\\":  # `\$` is a dollar sign
                end = text.find(closing, end + 1)
            if end != -1 and not (closing == "$" and "\n" in text[:end]):
                return text[: end + len(closing)]
            break  # `$18.` with no `$` to close it on its line: a dollar sign, and prose
    stop = _SENTENCE_END.search(text)
    return text[: stop.start()] if stop else text


def boxed_contents(text: str) -> list[str]:
    """The content of every outermost box that is an answer (placeholders left out), in order."""
    return [content for _, _, content in _boxes(text)]


def _boxes(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every outermost `\\boxed{...}` / `\\fbox{...}` / `\\boxed X`, in order."""
    found: list[tuple[int, int, str]] = []
    braces: dict[int, int] | None = None  # all matching braces, computed once, from the first box on
    covered = -1  # the end of the last box taken: boxes before it are nested inside it
    for opening in BOX_OPEN.finditer(text):
        if opening.start() < covered:
            continue
        begin = opening.end()
        if text.startswith("{", begin):
            braces = braces if braces is not None else _matching_braces(text, opening.start())
            close = braces.get(begin)
            if close is None:
                continue  # never closed: a cut-off reply states no answer
            # Cut past the length any answer has, so that thousands of nested boxes do not
            # copy the reply thousands of times; a cut content never parses.
            content, covered = text[begin + 1 : min(close, begin + 1 + MAX_ANSWER_CHARS + 1)], close
        elif begin < len(text) and text[begin].isalnum():
            content, covered = text[begin], begin + 1  # TeX's one-token argument: `\boxed 2`
        else:
            continue
        if not is_placeholder(content):
            found.append((opening.start(), covered + 1, content))
    return found


def unclosed_box(text: str) -> str | None:
    """What follows the last box opening if its brace is never closed (a cut-off reply, or a
    typo in a data set's solution), else None."""
    openings = list(BOX_OPEN.finditer(text)) if "\\" in text else []
    if not openings or not text.startswith("{", openings[-1].end()):
        return None
    begin = openings[-1].end()
    return None if begin in _matching_braces(text, openings[-1].start()) else text[begin + 1 :]


def _matching_braces(text: str, begin: int) -> dict[int, int]:
    """Index of each unescaped `{` from `begin` on -> index of its `}`: one pass over the
    braces, so nested or unbalanced boxes in a huge reply cost linear time."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for match in _BRACE.finditer(text, begin):
        token = match.group()
        if (len(token) - 1) % 2:
            continue  # `\{` or `\}`: a set brace, not a group
        position = match.end() - 1
        if token[-1] == "{":
            stack.append(position)
        elif stack:
            pairs[stack.pop()] = position
    return pairs
