"""One tool protocol (rlenvs.envs.tools.turns): an env given several tools runs each one's
calls in a reply, tool by tool; a marked final answer still wins over every call."""

from __future__ import annotations

from dataclasses import dataclass

from rlenvs.envs.math.arithmetic import ArithmeticEnv
from rlenvs.envs.tools.calculator_calls import Calculator, calculator_call
from rlenvs.envs.tools.turns import ToolCalls, ToolTurns


@dataclass(frozen=True)
class Upper:
    """A tool of the test's own: `<upper>text</upper>` answers with the text in capitals."""

    usage: str = "Write <upper>TEXT</upper> to get TEXT in capitals."

    def find_calls(self, reply: str) -> ToolCalls:
        calls, start = [], reply.find("<upper>")
        while start != -1:
            end = reply.find("</upper>", start)
            if end == -1:
                break
            calls.append(reply[start + len("<upper>") : end])
            start = reply.find("<upper>", end)
        return ToolCalls(tuple(calls))

    def run(self, found: ToolCalls) -> tuple[str, int]:
        return "\n".join(f"<upper>{text.upper()}</upper>" for text in found.calls), 0


class TwoToolEnv(ToolTurns, ArithmeticEnv):
    tools = (Calculator(), Upper())
    tool_format_reminder = "Call a tool or answer as \\boxed{N}."


def test_every_tools_calls_run_in_one_reply_and_a_final_answer_wins() -> None:
    env = TwoToolEnv(max_turns=3)
    env.reset(seed=0, options={"task_index": 0})
    observation, reward, terminated, _, info = env.step(f"{calculator_call('6 * 7')} and <upper>done</upper>")
    assert observation == "<result>42</result>\n<upper>DONE</upper>" and reward == 0.0 and not terminated
    assert (info["tool_calls"], info["tool_errors"], info["tool_calls_total"]) == (2, 0, 2)
    _, _, _, _, info = env.step("nothing to run here, and no answer")
    assert info["tool_calls"] == 0 and env.tool_format_reminder in info["messages"][-1]["content"]
    env.reset(seed=0, options={"task_index": 0})
    _, reward, terminated, _, info = env.step(f"<upper>x</upper> \\boxed{{{env.current_task.answer}}}")
    assert terminated and reward == 1.0 and info["tool_calls"] == 0 and info["tool_calls_total"] == 0
