"""rlenvs/GSM8K-Python-v2: GSM8K over several turns, with a sandboxed Python interpreter.

Tasks, data and reward are GSM8K-v1's (this env subclasses `GSM8KEnv`); the model may run
Python (`rlenvs.envs.tools.python.PythonTool`, in the sandbox) before answering, through
`rlenvs.envs.tools.turns.ToolTurns`. Each reply is read in this order:

1. A marked final answer (`\\boxed{N}`, `#### N`, "The answer is N") ends the episode and is
   scored as in GSM8K-v1; code blocks in the same reply are not run (an answer cannot
   depend on output it has not seen).
2. Otherwise each ```python block is run and the next observation holds its output. Reward 0.
3. Otherwise GSM8K-v1 judges the reply (a short bare number ends the episode), and anything
   else gets a reminder of both formats. Reward 0.

The episode is truncated after `max_turns` replies (default 5) without a final answer.
`oracle_action` is the gold solution; with `oracle_uses_python=True` it first prints the
gold solution's last `<<expression=result>>` calculation with Python, then answers.
"""

from __future__ import annotations

from rlenvs.core.checks import check_flag
from rlenvs.data import DataFiles
from rlenvs.envs.math.gsm8k import GSM8KEnv
from rlenvs.envs.math.gsm8k_tool import last_annotated_calculation
from rlenvs.envs.math.tasks import MathTask
from rlenvs.envs.tools.python import PythonTool
from rlenvs.envs.tools.turns import ToolTurns

DEFAULT_MAX_TURNS = 5
ANSWER_FORMAT = (
    "When you know the answer, end your reply with the final answer, a number only, as \\boxed{N}. "
    "A reply with a final answer ends the episode: its code blocks are not run."
)


class GSM8KPythonEnv(ToolTurns, GSM8KEnv):
    """GSM8K with a Python tool: run ```python blocks in the sandbox, answer `\\boxed{N}`."""

    def __init__(
        self,
        split: str = "train",
        data_files: DataFiles | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        system_prompt: str | None = None,
        render_mode: str | None = None,
        oracle_uses_python: bool = False,
        unsafe_sandbox: bool = False,
    ) -> None:
        check_flag("oracle_uses_python", oracle_uses_python)
        check_flag("unsafe_sandbox", unsafe_sandbox)
        self.tool = PythonTool(unsafe_sandbox=unsafe_sandbox)
        self.tools = (self.tool,)
        if system_prompt is None:
            system_prompt = f"Solve the math word problem. {self.tool.usage} {ANSWER_FORMAT}"
        super().__init__(
            split=split,
            data_files=data_files,
            max_turns=max_turns,
            system_prompt=system_prompt,
            render_mode=render_mode,
        )
        self.oracle_uses_python = oracle_uses_python
        self.tool_format_reminder = (
            f"I found neither a final answer nor a code block in your reply. {self.tool.usage} {ANSWER_FORMAT}"
        )

    def oracle_reply(self, task: MathTask, turn: int) -> str:
        solution = super().oracle_reply(task, turn)
        if self.oracle_uses_python and turn == 0 and self.max_turns > 1:
            calculation = last_annotated_calculation(task.solution)  # the annotated gold
            if calculation is not None:
                return f"Let me compute it.\n```python\nprint({calculation[0]})\n```"
        return solution
