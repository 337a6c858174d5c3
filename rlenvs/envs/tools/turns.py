"""Tool turns: one protocol every tool implements (`Tool`) and one mixin (`ToolTurns`) that
gives a `TextEnv` any tuple of them.

An env's tools are `tools`, or made per task by `tools_for(task)`. A tool declares how a
prompt explains it (`usage`), finds its calls in a reply
(`find_calls`: the calls in order, capped, and how many past the cap were skipped) and runs
calls it is handed (`run`: the observation, one part per call in order, and how many
failed). Finding and running are apart on purpose: calls written in a reply's text
(`<calculator>2+2</calculator>`, a ```python block) are found by the tool; calls a chat API
hands over already parsed (JSON-schema tools, OpenAI-style tool messages) can be given to the
same `run` without another redesign.

A `ToolTurns` env reads each reply in this order:

1. A marked final answer (`final_answer_marked`: `\\boxed{N}`, `#### N`, "The answer is N")
   ends the episode and is scored by the env's own judge; calls in the same reply are not
   run (an answer cannot depend on results it has not seen).
2. Otherwise the calls every tool finds are run, tool by tool, and the next observation holds
   their outputs. Reward 0.
3. Otherwise the env's own judge decides; a reply it does not resolve gets
   `tool_format_reminder`, which names the answer format and the tools'. Reward 0.

`info` gains `tool_calls`, `tool_errors` (this reply's) and `tool_calls_total` (the
episode's). Why a mixin and not a wrapper: the tools change what a reply means before the
env's verdict reads it, and the env's oracle needs to know them (its demonstrations call them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Protocol

from rlenvs.core.env import Judgement
from rlenvs.rewards.math import extract_final_answer


@dataclasses.dataclass(frozen=True)
class ToolCalls:
    """The calls a tool found in one reply, in order, up to its cap."""

    calls: tuple[Any, ...]
    """Each call as the tool reads it (an expression, a code block, a malformed call)."""
    skipped: int = 0
    """Calls past the tool's cap, which are not run (its observation says so)."""


class Tool(Protocol):
    """What `ToolTurns` needs of a tool."""

    @property
    def usage(self) -> str:
        """The sentence a system prompt explains the tool with."""
        ...

    def find_calls(self, reply: str) -> ToolCalls:
        """The tool's calls in `reply` (none: `ToolCalls(())`)."""
        ...

    def run(self, found: ToolCalls) -> tuple[str, int]:
        """The observation for `found` (one part per call, in order; then any skipped) and how
        many calls failed."""
        ...


class ToolTurns:
    """Mixin for a `TextEnv` (list it first) whose replies may call `tools` before answering
    (see the module docstring)."""

    tools: tuple[Tool, ...] = ()
    """The env's tools when every task has the same ones, set by its class or its `__init__`."""
    tool_format_reminder: str
    """Feedback for a reply with neither a final answer nor a call: names every format."""
    tool_calls_total: int = 0
    """Calls run in this episode (reset to 0 by `reset`)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)  # type: ignore[misc]  # the TextEnv's
        self.tool_calls_total = 0
        return observation, info

    def tools_for(self, task: Any) -> tuple[Tool, ...]:
        """The tools a reply on `task` may call: `tools` unless overridden, for an env whose
        every task brings its own (a hidden chart to look people up in, a stock list): the
        tool is made from the task where the reply is read, with no state kept on the env."""
        return self.tools

    def final_answer_marked(self, reply: str) -> bool:
        """Whether the reply marks a final answer, which wins over its calls."""
        return extract_final_answer(reply).answer is not None

    def judge(self, task: Any, reply: str) -> Judgement:
        found = [(tool, tool.find_calls(reply)) for tool in self.tools_for(task)]
        called = [(tool, calls) for tool, calls in found if calls.calls]
        if not called or self.final_answer_marked(reply):
            verdict: Judgement = super().judge(task, reply)  # type: ignore[misc]  # the TextEnv's
            feedback = verdict.feedback if verdict.resolved else self.tool_format_reminder
            return dataclasses.replace(verdict, feedback=feedback, info=self._tool_info(verdict.info, 0, 0))
        parts, calls, errors = [], 0, 0
        for tool, calls_of_tool in called:
            observation, failed = tool.run(calls_of_tool)
            parts.append(observation)
            calls += len(calls_of_tool.calls)
            errors += failed
        self.tool_calls_total += calls
        info = self._tool_info({"parsed_answer": None, "hedged": False}, calls, errors)
        return Judgement(0.0, resolved=False, correct=False, feedback="\n".join(parts), info=info)

    def _tool_info(self, info: Mapping[str, Any], calls: int, errors: int) -> dict[str, Any]:
        return {**info, "tool_calls": calls, "tool_errors": errors, "tool_calls_total": self.tool_calls_total}
