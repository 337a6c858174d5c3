"""The calculator as a tool (`Calculator`, a rlenvs.envs.tools.turns `Tool`): its calls in a reply
and their results. GSM8K-Tool-v1 and Arithmetic-Tool-v1 give it to the model through
`ToolTurns`, which reads a marked final answer first and runs the calls only without one.

Each call `<calculator>EXPRESSION</calculator>`, anywhere in the reply, is evaluated in order
(at most `MAX_CALLS_PER_REPLY`; more are reported as skipped) and the observation holds one
line per call, in the same order: `<result>24</result>`, or `<error>what was wrong</error>` for
an expression the calculator refuses (see `rlenvs.envs.tools.calculator`) or a malformed call
(a `<calculator>` never closed, a `</calculator>` never opened). Calls come before an env's
unmarked "bare answer" rule, under which a short reply such as `<calculator>48 / 2</calculator>`
would otherwise read as a (wrong) final answer. The tags are exact and lower-case; whitespace
inside them is ignored.
"""

from __future__ import annotations

import dataclasses

from rlenvs.envs.tools.calculator import CalculatorError, calculate
from rlenvs.envs.tools.turns import ToolCalls

__all__ = [
    "CALL_CLOSE",
    "CALL_OPEN",
    "MAX_CALLS_PER_REPLY",
    "Calculator",
    "CalculatorCall",
    "calculator_call",
    "find_calculator_calls",
    "run_calculator_calls",
]

CALL_OPEN = "<calculator>"
CALL_CLOSE = "</calculator>"
MAX_CALLS_PER_REPLY = 5
"""Enough for the steps of one GSM8K line of reasoning; bounds the work and the
observation of a reply that spams calls."""


def calculator_call(expression: str) -> str:
    """The call as a reply writes it: `<calculator>48 / 2</calculator>`."""
    return f"{CALL_OPEN}{expression}{CALL_CLOSE}"


UNCLOSED_CALL = f"{CALL_OPEN} was not closed: write {calculator_call('EXPRESSION')}"
UNOPENED_CALL = f"{CALL_CLOSE} without an opening {CALL_OPEN}: write {calculator_call('EXPRESSION')}"


@dataclasses.dataclass(frozen=True)
class CalculatorCall:
    """One call found in a reply: its expression, or why it is malformed."""

    expression: str | None
    malformed: str | None = None


def find_calculator_calls(reply: str) -> ToolCalls:
    """Every `<calculator>...</calculator>` in the reply, in order, up to the cap.

    A `<calculator>` opened again before the previous one closed counts as an unclosed
    call. Linear in the reply's length, however many tags it holds.
    """
    calls: list[CalculatorCall] = []
    start = reply.find(CALL_OPEN)
    while start != -1 and len(calls) < MAX_CALLS_PER_REPLY:
        body = start + len(CALL_OPEN)
        close = reply.find(CALL_CLOSE, body)
        following = reply.find(CALL_OPEN, body)
        if close == -1 or (following != -1 and following < close):
            calls.append(CalculatorCall(None, UNCLOSED_CALL))
        else:
            calls.append(CalculatorCall(reply[body:close]))
            following = reply.find(CALL_OPEN, close + len(CALL_CLOSE))
        start = following
    skipped = reply.count(CALL_OPEN, start) if start != -1 else 0
    if not calls and CALL_CLOSE in reply:
        calls.append(CalculatorCall(None, UNOPENED_CALL))
    return ToolCalls(tuple(calls), skipped)


def run_calculator_calls(found: ToolCalls) -> tuple[str, int]:
    """The observation for the calls (one line each, in order) and how many failed."""
    lines, errors = [], 0
    for call in found.calls:
        if call.expression is None:
            lines.append(f"<error>{call.malformed}</error>")
            errors += 1
            continue
        try:
            lines.append(f"<result>{calculate(call.expression)}</result>")
        except CalculatorError as error:
            lines.append(f"<error>{error}</error>")
            errors += 1
    if found.skipped:
        lines.append(
            f"<error>only the first {MAX_CALLS_PER_REPLY} calculator calls in a reply are run; "
            f"{found.skipped} more were skipped</error>"
        )
    return "\n".join(lines), errors


USAGE = (
    f"You have a calculator: write {calculator_call('EXPRESSION')} in a reply, e.g. {calculator_call('48 / 2')}, "
    "and stop there; the next message gives the result of each call in order, as "
    "<result>24</result> or <error>what was wrong</error>. Expressions use numbers (no "
    "thousands separators), + - * / // % ** and parentheses, and the functions abs, sqrt, "
    f"floor, ceil, round, min, max; at most {MAX_CALLS_PER_REPLY} calls per reply."
)


@dataclasses.dataclass(frozen=True)
class Calculator:
    """The calculator as a `Tool`: `<calculator>EXPRESSION</calculator>` calls, `<result>` lines."""

    usage: str = USAGE

    def find_calls(self, reply: str) -> ToolCalls:
        return find_calculator_calls(reply)

    def run(self, found: ToolCalls) -> tuple[str, int]:
        return run_calculator_calls(found)
