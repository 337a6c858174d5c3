"""rlenvs/GSM8K-Tool-v0: GSM8K over several turns, with a calculator the model can call.

The tasks, data loading and reward are GSM8K-v0's (this env subclasses `GSM8KEnv`); what
differs is the turn structure. Each reply is read in this order:

1. A marked final answer (`\\boxed{N}`, `#### N`, "The answer is N": the markers of
   `rlenvs.rewards.math.extract_final_answer`) ends the episode and is scored exactly as in
   GSM8K-v0. It wins over calculator calls in the same reply, which are then not run: an
   answer cannot depend on results it has not seen.
2. Otherwise each calculator call `<calculator>EXPRESSION</calculator>`, anywhere in the
   reply, is evaluated in order (at most `MAX_CALLS_PER_REPLY`; more are reported as
   skipped) and the next observation holds one line per call, in the same order:
   `<result>24</result>`, or `<error>what was wrong</error>` for an expression the
   calculator refuses (see `rlenvs.envs.tools.calculator`) or a malformed call (a
   `<calculator>` never closed, a `</calculator>` never opened). Reward 0. Calls come
   before GSM8K-v0's unmarked "bare answer" rule, under which a short reply such as
   `<calculator>48 / 2</calculator>` would otherwise read as a (wrong) final answer.
3. Otherwise GSM8K-v0 judges the reply: a reply that is only a short bare answer ("18")
   ends the episode as there; anything else gets a reminder of both formats. Reward 0.

The tags are exact and lower-case; whitespace inside them is ignored. The episode is
truncated after `max_turns` replies (default 5) without a final answer.

`oracle_action` is GSM8K-v0's gold solution, which answers in one reply (the env contract
has every env's oracle finish in one step). With `oracle_uses_calculator=True` it first
calls the calculator on the gold solution's last `<<expression=result>>` annotation and
answers on the next turn: two-turn demonstrations of the tool for SFT data.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from rlenvs.core.checks import check_flag
from rlenvs.core.env import Judgement
from rlenvs.data import DataFiles
from rlenvs.envs.math.gsm8k import GSM8KEnv
from rlenvs.envs.math.tasks import MathTask
from rlenvs.envs.tools.calculator import CalculatorError, calculate
from rlenvs.rewards.math import extract_final_answer

CALL_OPEN = "<calculator>"
CALL_CLOSE = "</calculator>"
MAX_CALLS_PER_REPLY = 5
"""Enough for the steps of one GSM8K line of reasoning; bounds the work and the
observation of a reply that spams calls."""
DEFAULT_MAX_TURNS = 5

DEFAULT_SYSTEM_PROMPT = (
    "Solve the math word problem. You have a calculator: write "
    f"{CALL_OPEN}EXPRESSION{CALL_CLOSE} in a reply, e.g. {CALL_OPEN}48 / 2{CALL_CLOSE}, "
    "and stop there; the next message gives the result of each call in order, as "
    "<result>24</result> or <error>what was wrong</error>. Expressions use numbers (no "
    "thousands separators), + - * / // % ** and parentheses, and the functions abs, sqrt, "
    f"floor, ceil, round, min, max; at most {MAX_CALLS_PER_REPLY} calls per reply. When you "
    "know the answer, reason step by step and end your reply with the final answer, a number "
    "only, as \\boxed{N}. A reply with a final answer ends the episode: its calculator calls "
    "are not run."
)
TOOL_FORMAT_REMINDER = (
    "I found neither a final answer nor a calculator call in your reply. To compute, write "
    f"{CALL_OPEN}EXPRESSION{CALL_CLOSE}, e.g. {CALL_OPEN}48 / 2{CALL_CLOSE}; to answer, end "
    "your reply with the final answer, a number only, as \\boxed{N}."
)
UNCLOSED_CALL = f"{CALL_OPEN} was not closed: write {CALL_OPEN}EXPRESSION{CALL_CLOSE}"
UNOPENED_CALL = f"{CALL_CLOSE} without an opening {CALL_OPEN}: write {CALL_OPEN}EXPRESSION{CALL_CLOSE}"

_ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")


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


def last_annotated_calculation(solution: str) -> tuple[str, str] | None:
    """The (expression, result) of a GSM8K solution's last `<<expression=result>>`, if any."""
    matches = _ANNOTATION.findall(solution)
    return (matches[-1][0].strip(), matches[-1][1].strip()) if matches else None


class GSM8KToolEnv(GSM8KEnv):
    """GSM8K with a calculator tool: call `<calculator>...</calculator>`, answer `\\boxed{N}`."""

    def __init__(
        self,
        split: str = "train",
        data_files: DataFiles | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
        oracle_uses_calculator: bool = False,
    ) -> None:
        check_flag("oracle_uses_calculator", oracle_uses_calculator)
        super().__init__(
            split=split,
            data_files=data_files,
            max_turns=max_turns,
            system_prompt=system_prompt,
            render_mode=render_mode,
        )
        self.oracle_uses_calculator = oracle_uses_calculator
        self.tool_calls_total = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        self.tool_calls_total = 0
        return observation, info

    def judge(self, task: MathTask, reply: str) -> Judgement:
        found = find_calculator_calls(reply)
        if not found.calls or extract_final_answer(reply).answer is not None:
            verdict = super().judge(task, reply)
            feedback = verdict.feedback if verdict.resolved else TOOL_FORMAT_REMINDER
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

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        solution = super().oracle_reply(task, turn)
        if self.oracle_uses_calculator and turn == 0 and self.max_turns > 1:
            calculation = last_annotated_calculation(task.solution)  # the annotated gold
            if calculation is not None:
                expression = calculation[0]
                return f"Let me compute {expression} first.\n{CALL_OPEN}{expression}{CALL_CLOSE}"
        return solution
