"""rlenvs/GSM8K-Tool-v1: GSM8K over several turns, with a calculator the model can call.

The tasks, data loading and reward are GSM8K-v1's (this env subclasses `GSM8KEnv`); what
differs is the turn structure, `rlenvs.envs.tools.turns` with the calculator of
`rlenvs.envs.tools.calculator_calls`: a reply with a marked
final answer is scored exactly as in GSM8K-v1; otherwise its calculator calls
`<calculator>EXPRESSION</calculator>` are run and the next observation holds their results
(`<result>24</result>` or `<error>what was wrong</error>`, one line each); otherwise
GSM8K-v1 judges the reply: a reply that is only a short bare answer ("18") ends the episode
as there; anything else gets a reminder of both formats. The episode is truncated after
`max_turns` replies (default 5) without a final answer.

`oracle_action` is GSM8K-v1's gold solution, which answers in one reply (the env contract
has every env's oracle finish in one step). With `oracle_uses_calculator=True` it first
calls the calculator on the gold solution's last `<<expression=result>>` annotation and
answers on the next turn: two-turn demonstrations of the tool for SFT data.
"""

from __future__ import annotations

import re

from rlenvs.core.checks import check_flag
from rlenvs.data import DataFiles
from rlenvs.envs.math.gsm8k import GSM8KEnv
from rlenvs.envs.math.tasks import MathTask
from rlenvs.envs.tools.calculator_calls import USAGE, Calculator, calculator_call
from rlenvs.envs.tools.turns import ToolTurns

DEFAULT_MAX_TURNS = 5

DEFAULT_SYSTEM_PROMPT = (
    f"Solve the math word problem. {USAGE} When you know the answer, reason step by step and end your "
    "reply with the final answer, a number only, as \\boxed{N}. A reply with a final answer ends the "
    "episode: its calculator calls are not run."
)
TOOL_FORMAT_REMINDER = (
    "I found neither a final answer nor a calculator call in your reply. To compute, write "
    f"{calculator_call('EXPRESSION')}, e.g. {calculator_call('48 / 2')}; to answer, end "
    "your reply with the final answer, a number only, as \\boxed{N}."
)
_ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")


def last_annotated_calculation(solution: str) -> tuple[str, str] | None:
    """The (expression, result) of a GSM8K solution's last `<<expression=result>>`, if any."""
    matches = _ANNOTATION.findall(solution)
    return (matches[-1][0].strip(), matches[-1][1].strip()) if matches else None


class GSM8KToolEnv(ToolTurns, GSM8KEnv):
    """GSM8K with a calculator tool: call `<calculator>...</calculator>`, answer `\\boxed{N}`."""

    tools = (Calculator(),)
    tool_format_reminder = TOOL_FORMAT_REMINDER

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

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        solution = super().oracle_reply(task, turn)
        if self.oracle_uses_calculator and turn == 0 and self.max_turns > 1:
            calculation = last_annotated_calculation(task.solution)  # the annotated gold
            if calculation is not None:
                expression = calculation[0]
                return f"Let me compute {expression} first.\n{calculator_call(expression)}"
        return solution
