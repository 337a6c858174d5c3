"""Calculator turns: the tool protocol shared by GSM8K-Tool-v1 and Arithmetic-Tool-v1.

A math env that mixes in `CalculatorTurns` reads each reply in this order:

1. A marked final answer (`\\boxed{N}`, `#### N`, "The answer is N": the markers of
   `rlenvs.rewards.math.extract_final_answer`) ends the episode and is scored by the env's
   own judge. It wins over calculator calls in the same reply, which are then not run: an
   answer cannot depend on results it has not seen.
2. Otherwise each calculator call `<calculator>EXPRESSION</calculator>`, anywhere in the
   reply, is evaluated in order (at most `MAX_CALLS_PER_REPLY`; more are reported as
   skipped) and the next observation holds one line per call, in the same order:
   `<result>24</result>`, or `<error>what was wrong</error>` for an expression the
   calculator refuses (see `rlenvs.envs.tools.calculator`) or a malformed call (a
   `<calculator>` never closed, a `</calculator>` never opened). Reward 0. Calls come
   before an env's unmarked "bare answer" rule, under which a short reply such as
   `<calculator>48 / 2</calculator>` would otherwise read as a (wrong) final answer.
3. Otherwise the env's own judge decides; a reply it does not resolve gets
   `tool_format_reminder`, which names both formats. Reward 0.

The tags are exact and lower-case; whitespace inside them is ignored. Why a mixin and not a
wrapper: the tool changes what a reply means before the env's verdict reads it, and the
env's oracle needs to know the tool exists (its demonstrations call it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from rlenvs.core.env import Judgement
from rlenvs.envs.tools.calculator import CalculatorError, calculate
from rlenvs.rewards.math import extract_final_answer

__all__ = [
    "CALL_CLOSE",
    "CALL_OPEN",
    "MAX_CALLS_PER_REPLY",
    "CalculatorCall",
    "CalculatorCalls",
    "CalculatorTurns",
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


@dataclasses.dataclass(frozen=True)
class CalculatorCalls:
    calls: tuple[CalculatorCall, ...]
    skipped: int
    """Calls past `MAX_CALLS_PER_REPLY`, which are not run."""


def find_calculator_calls(reply: str) -> CalculatorCalls:
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
    return CalculatorCalls(tuple(calls), skipped)


def run_calculator_calls(found: CalculatorCalls) -> tuple[str, int]:
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


class CalculatorTurns:
    """Mixin for a math `TextEnv` (list it first): calculator calls as tool turns before
    the env's own judge (see the module docstring). `info` gains `tool_calls`,
    `tool_errors` (this reply's) and `tool_calls_total` (the episode's)."""

    tool_format_reminder: ClassVar[str]
    """Feedback for a reply with neither a final answer nor a call: names both formats."""
    tool_calls_total: int = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)  # type: ignore[misc]
        self.tool_calls_total = 0
        return observation, info

    def judge(self, task: Any, reply: str) -> Judgement:
        found = find_calculator_calls(reply)
        if not found.calls or extract_final_answer(reply).answer is not None:
            verdict: Judgement = super().judge(task, reply)  # type: ignore[misc]
            feedback = verdict.feedback if verdict.resolved else self.tool_format_reminder
            return dataclasses.replace(verdict, feedback=feedback, info=self._tool_info(verdict.info, 0, 0))
        observation, errors = run_calculator_calls(found)
        self.tool_calls_total += len(found.calls)
        return Judgement(
            0.0,
            resolved=False,
            correct=False,
            feedback=observation,
            info=self._tool_info({"parsed_answer": None, "hedged": False}, len(found.calls), errors),
        )

    def _tool_info(self, info: Mapping[str, Any], calls: int, errors: int) -> dict[str, Any]:
        return {**info, "tool_calls": calls, "tool_errors": errors, "tool_calls_total": self.tool_calls_total}
