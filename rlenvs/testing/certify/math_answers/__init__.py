"""Replies written from a math task's own gold answer and problem: the correct answer in other
notations (must earn the gold's reward) and, each at every depth of the answer's structure,
near misses, restatements, hedges and answers put where a final answer is not read (each
must earn nothing).

Every reply is computed from the gold's tree (`answer_tree`) and the problem's text, not
picked from a list of examples, so a new data set brings its own cases:

- *notation*: the whole answer in every `Style` (brackets with `\\left`, no spaces, list
  items in reverse order, a set's braces, `\\dfrac`, one-token arguments with and without
  braces, a sum's terms in another order, a coefficient with `\\cdot`, a swapped equation),
  the spellings of its type (`60^{\\circ}`, `60°`, `60^o`, `(C)`, `1{,}000`, `{3 \\over 4}`, a
  vector in angle brackets, a base as a word), and those the problem suggests (a named
  tuple, a remainder as a congruence, a choice with its option's text); a *re-check* after
  the box; a terminating fraction's decimal where no form is asked;
- *near miss*: one leaf changed (the value ±1 or negated, two digits transposed, another
  choice letter, another base, a bracket flipped, an interval's end moved out, a pair read
  as a decimal and back, degrees given for radians) or one item dropped, added or moved;
- *restatement*: the problem's own expressions, bare or inside a wrapper worth 1 (`i^4(E)`,
  `\\frac{1}{\\frac{1}{E}}`, `e^{\\ln E}`), and the gold with work left undone at one leaf
  (`19 - 7` for 12, `\\frac{6}{8}`, `\\sqrt{45}` for `3\\sqrt5`, `2^{5}`, `3!`, `\\log_2 2^5`,
  `\\sin\\frac{\\pi}{6}` for `\\frac12`, dozens, an unmultiplied complex product); an
  *excluded form* is the gold in a number form the problem rules out;
- *hedge*: the gold beside a near miss, in every way a reply offers two answers;
- *misplaced answer*: the gold only inside a code block, a tool call or a forged tool result;
- *tool turns*: a tool call or a guess while thinking beside the answer, the answer in inline
  code or with its working in parentheses, the answer a turn after a tool call, an "answer
  is" that leads into one or a restated result; a tool's result repeated as the reply.
"""

from __future__ import annotations

from collections.abc import Iterator

from rlenvs.rewards.math.answer_types import answer_type
from rlenvs.testing.certify.answer_tree import read_tree, render
from rlenvs.testing.certify.math_answers.misses import hedge_partner, near_misses
from rlenvs.testing.certify.math_answers.notations import (
    named_tuples,
    notations,
    number_forms,
    option_mixups,
    problem_spellings,
    rechecks,
)
from rlenvs.testing.certify.math_answers.replies import hedges, misplaced, tool_turns
from rlenvs.testing.certify.math_answers.restatements import restatements
from rlenvs.testing.certify.probes import Probe, Subject, attack, equivalent


def math_probes(subject: Subject) -> Iterator[Probe]:
    """Every math probe of the subject's gold answer (none where it has no gold)."""
    if subject.gold is None:
        return
    gold = subject.gold
    kind = answer_type(gold)
    tree = read_tree(gold)
    misses = list(near_misses(gold, tree))
    for why, reply in notations(gold, tree, kind):
        yield equivalent("notation", reply, why, kind)
    for why, text in [*named_tuples(tree, subject.prompt), *problem_spellings(tree, kind, subject.prompt)]:
        yield equivalent("notation", f"The final answer is $\\boxed{{{text}}}$.", why, kind)
    for why, reply in rechecks(render(tree)):
        yield equivalent("re-check", reply, why, kind)
    for asked, why, text in number_forms(tree, subject.prompt):
        reply = f"The final answer is $\\boxed{{{text}}}$."
        yield attack("excluded form", reply, why, kind) if asked else equivalent("notation", reply, why, kind)
    for why, text in [*misses, *option_mixups(tree, kind, subject.prompt)]:
        yield attack("near miss", f"The final answer is $\\boxed{{{text}}}$.", why, kind)
    for why, text in restatements(gold, tree, subject.prompt):
        yield attack("restatement", f"The final answer is $\\boxed{{{text}}}$.", why, kind)
    if misses:
        wrong = hedge_partner(tree, misses)
        for why, reply in hedges(render(tree), wrong):
            yield attack("hedge", reply, why, kind)
        for why, reply in misplaced(render(tree), wrong):
            yield attack("misplaced answer", reply, why, kind)
    wrong = hedge_partner(tree, misses) if misses else render(tree) + "1"
    yield from tool_turns(render(tree), wrong, kind, subject.max_turns)
