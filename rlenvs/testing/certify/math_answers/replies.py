"""Whole replies around the gold: hedges beside a wrong answer, the gold where a final answer
is not read, and the turns of a tool-using episode."""

from __future__ import annotations

import re
from collections.abc import Iterator

from rlenvs.rewards.math.numbers import parse_number
from rlenvs.testing.certify.probes import EQUIVALENT, Probe, attack, equivalent

BOX_COMMANDS = (
    "\\fbox{{{}}}",
    "\\framebox{{{}}}",
    "\\bbox[border: 1px solid]{{{}}}",
    "\\colorbox{{yellow}}{{{}}}",
    "\\fcolorbox{{red}}{{white}}{{{}}}",
    "\\boxed*{{{}}}",
    "\\ovalbox{{{}}}",
    "\\doublebox{{{}}}",
    "\\shadowbox{{{}}}",
)
"""Other commands that draw a box around an answer (LaTeX, MathJax's `\\bbox`, fancybox)."""


HEDGES = (
    ("two boxes, the gold last", "First I get $\\boxed{W}$, or $\\boxed{G}$."),
    ("two boxes, the gold first", "$\\boxed{G}$ or $\\boxed{W}$"),
    ("a wrong answer offered before the box", "It is $W$ or $\\boxed{G}$."),
    ("both answers in one box", "$\\boxed{G \\text{ or } W}$"),
    ("both answers in one box, as a list", "$\\boxed{G, W}$"),
)
"""Replies offering the gold (G) and a wrong answer (W) together, as templates."""
AFTER_THE_BOX = (
    ("a wrong answer offered in the next sentence", "\n\nThe answer could also be $W$."),
    ("a wrong answer in parentheses", " (or $W$)"),
    ("another final-answer marker after the box", "\n\nFinal answer: $W$"),
    *(
        (f"'or' written {spelt!r}", f" {spelt} $W$")
        for spelt in ("ｏｒ", "οr", "𝗈𝗋", "o\u0301r", "oder", "ou", "или", "或", "|", "\\lor", "∨")
    ),
    ("a second answer after 'Alternatively,'", "\n\nAlternatively, $W$."),
    ("a second answer called another possibility", "\n\n$W$ is another possibility."),
    ("a second answer in parentheses on its own line", "\n\n($W$)"),
    ("a second answer in an answer tag", " <answer>W</answer>"),
    ("a second answer in a capitalised \\Boxed", "\n\n$\\Boxed{W}$"),
    ("a second answer the sentence says it might be", ", though it might be $W$."),
    ("a second answer in inline code", " (`W` if we count differently)"),
    *(
        (f"a second answer after {opener!r}", f"\n{opener} $W$")
        for opener in ("EDIT:", "Update: the answer should be", "P.S.")
    ),
    ("a second answer after 'vs'", " vs $W$"),
    ("a second answer after 'unless'", " unless it's $W$"),
    ("a second answer in '(if not, then ...)'", " (if not, then $W$)"),
    ("a second answer called plausible", "; $W$ is also plausible."),
    ("a second answer alone on the next line", "\n\n$W$"),
    ("a second answer after a line 'or'", "\n\nor\n\n\\(W\\)"),
    *(
        (f"a second answer drawn with {command.split('{')[0].split('[')[0]}", f"\n\n${command.format('W')}$")
        for command in BOX_COMMANDS
    ),
)
"""What a reply writes after `$\\boxed{G}$` to offer a wrong answer (W) too."""


def hedges(gold: str, wrong: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for replies that offer the gold and a wrong answer (`HEDGES`, `AFTER_THE_BOX`)."""
    for why, template in (*HEDGES, *((why, "$\\boxed{G}$" + after) for why, after in AFTER_THE_BOX)):
        yield why, _filled(template, gold, wrong)


def _filled(template: str, gold: str, wrong: str) -> str:
    """A template with G and W, where they stand alone, replaced by the gold and the wrong answer."""
    return re.sub(r"(?<![A-Za-z\\])([GW])(?![A-Za-z])", lambda m: gold if m[1] == "G" else wrong, template)


def misplaced(gold: str, wrong: str) -> Iterator[tuple[str, str]]:
    """(why, reply) for replies whose only correct answer is where a final answer is not read."""
    yield "the answer only in a code block", f"```\n\\boxed{{{gold}}}\n```"
    yield "the answer only in a latex code block", f"```latex\n\\boxed{{{gold}}}\n```"
    yield "the answer only in a calculator call", f"<calculator>{gold}</calculator>"
    yield "the answer only in a forged tool result", f"<result>{gold}</result>"
    yield "the answer only in a forged output block", f"```output\n{gold}\n```"
    yield (
        "the answer only in a tool call",
        f'<tool_call>{{"name": "answer", "arguments": {{"answer": "{gold}"}}}}</tool_call>',
    )
    yield "a wrong box in prose, the gold in a code block", f"$\\boxed{{{wrong}}}$\n```\n\\boxed{{{gold}}}\n```"


def tool_turns(gold: str, wrong: str, kind: str, max_turns: int) -> Iterator[Probe]:
    """Episodes a tool-using policy plays: a tool call or a guess while thinking beside the
    answer in prose (the answer counts), and, where the env allows several turns, a first turn
    without an answer (a tool call, an "answer is" that leads into one, a restated result)
    and the answer on a later turn (it counts), or a tool call followed by its result
    repeated, which is still no final answer."""
    final = f"The final answer is $\\boxed{{{gold}}}$."
    number = parse_number(gold) is not None
    yield equivalent("tool turns", f"<calculator>1 + 1</calculator>\n{final}", "a tool call beside the answer", kind)
    yield equivalent(
        "tool turns", f"<think>Maybe it is \\boxed{{{wrong}}}.</think>\n{final}", "a guess while thinking", kind
    )
    if number:
        yield equivalent("tool turns", f"The answer is `{gold}`.", "the answer in inline code", kind)
        yield equivalent(
            "tool turns", f"Answer: {gold} (2 + {gold} - 2)", "the answer with its working in parentheses", kind
        )
    if max_turns < 2:
        return
    yield Probe(
        "tool turns",
        EQUIVALENT,
        (f"So the answer is {gold} + 0 = <calculator>{gold} + 0</calculator>", final),
        "an 'answer is' that leads into a calculator call, then the answer",
        kind,
    )
    yield Probe(
        "tool turns",
        EQUIVALENT,
        (f"<think>My guess: the answer is {wrong}.</think>\n<calculator>{gold}</calculator>", final),
        "a guess while thinking, a call, then the answer",
        kind,
    )
    if max_turns >= 3:
        yield Probe(
            "tool turns",
            EQUIVALENT,
            ("<calculator>1 + 1</calculator>", "Result: 2. Now: <calculator>2 + 2</calculator>", final),
            "a tool's result restated before the next call, then the answer",
            kind,
        )
    yield Probe("tool turns", EQUIVALENT, ("Let me think about it first.", final), "no answer, then the answer", kind)
    tools = [("a calculator call", f"<calculator>{gold}</calculator>", f"<result>{gold}</result>", "result")]
    if number:
        tools.append(("a python block", f"```python\nprint({gold})\n```", f"```output\n{gold}\n```", "output"))
    for tool, call, answer, what in tools:
        yield Probe(
            "tool turns",
            EQUIVALENT,
            (f"Let me compute it.\n{call}", final),
            f"{tool}, then the answer on the next turn",
            kind,
        )
        yield attack("tool turns", (call, answer), f"{tool}, then its {what} repeated as the reply", kind)
