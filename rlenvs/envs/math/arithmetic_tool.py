"""rlenvs/Arithmetic-Tool-v1: Arithmetic-v1's problems over several turns, with a calculator.

The tasks, levels, task ids and reward are Arithmetic-v1's; the turn structure is the
calculator protocol of `rlenvs.envs.tools.turns` and `.calculator_calls` (as in GSM8K-Tool-v1): a reply
with a final answer is scored as in Arithmetic-v1, a reply with calculator calls gets their
results as the next observation (`<result>16</result>`), and anything else gets a reminder
of both formats. Truncated after `max_turns` replies (default 3) without a final answer.

Why it exists: it is the smallest task on which RL can teach a behaviour that carries over
to problems it never trained on. A tiny model cannot do sums it has not memorised, but it
can copy an expression into a call and a result into `\\boxed{}`, and that works on any
problem. The offline quickstart trains it (`examples/quickstart.yaml`).

`oracle_action` calls the calculator on the problem's expression ("What is 7 + 9?" ->
`<calculator>7 + 9</calculator>`) and then answers `\\boxed{16}`, wherever the calculator's
result is the exact answer as written (every problem of levels 1-3, the expressions of
level 4 and the decimals of level 5); elsewhere (word problems, fractions) it answers in
one reply with Arithmetic-v1's worked solution. `oracle_calculator_share` < 1 keeps the
calculator out of the rest of the demonstrations: the tasks whose id hashes to a point
below the share (in 0..1) use it, the others answer directly. The choice is a fixed
function of the task id, so a task's oracle episode is the same on every run.
"""

from __future__ import annotations

import hashlib
import re

from rlenvs.core.checks import check_share
from rlenvs.envs.math.arithmetic import DEFAULT_LEVEL, ArithmeticEnv
from rlenvs.envs.math.procedural import boxed
from rlenvs.envs.math.tasks import MathTask
from rlenvs.envs.tools.calculator import CalculatorError, calculate
from rlenvs.envs.tools.calculator_calls import Calculator, calculator_call
from rlenvs.envs.tools.turns import ToolTurns

DEFAULT_MAX_TURNS = 3
"""A call, one more if the first went wrong, an answer."""
DEFAULT_SYSTEM_PROMPT = (
    f"Solve the arithmetic problem. To compute, write {calculator_call('EXPRESSION')}; the reply is "
    "<result>N</result>. End with the exact answer as \\boxed{...}."
)
"""Short on purpose: every GRPO step of the quickstart reads it in each of its episodes."""
TOOL_FORMAT_REMINDER = (
    "I found neither a final answer nor a calculator call in your reply. To compute, write "
    f"{calculator_call('EXPRESSION')}; to answer, end your reply with the exact answer as \\boxed{{...}}."
)
_EXPRESSION_PROMPT = re.compile(r"What is (.+)\?")


def calculator_expression(task: MathTask) -> str | None:
    """The expression of a "What is EXPRESSION?" prompt whose calculator result is the exact
    answer as written; None for any other task (a word problem, a fraction)."""
    match = _EXPRESSION_PROMPT.fullmatch(task.prompt)
    if match is None:
        return None
    try:
        return match.group(1) if calculate(match.group(1)) == task.answer else None
    except CalculatorError:
        return None


def share_point(task_id: str) -> float:
    """A fixed point in [0, 1) for the task id: the same on every run and machine."""
    digest = hashlib.sha256(task_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class ArithmeticToolEnv(ToolTurns, ArithmeticEnv):
    """Arithmetic with a calculator tool: call `<calculator>...</calculator>`, answer `\\boxed{N}`."""

    env_name = "Arithmetic-Tool-v1"
    tools = (Calculator(),)
    tool_format_reminder = TOOL_FORMAT_REMINDER

    def __init__(
        self,
        level: int = DEFAULT_LEVEL,
        max_turns: int = DEFAULT_MAX_TURNS,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
        oracle_calculator_share: float = 1.0,
    ) -> None:
        check_share(
            "oracle_calculator_share", oracle_calculator_share, meaning="of the tasks whose oracle calls the calculator"
        )
        super().__init__(level, max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode)
        self.oracle_calculator_share = oracle_calculator_share

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        expression = calculator_expression(task)
        if expression is None or self.max_turns < 2 or share_point(task.task_id) >= self.oracle_calculator_share:
            return task.solution
        return calculator_call(expression) if turn == 0 else boxed(task.answer)
