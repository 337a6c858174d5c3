"""`CodeEnv`: write a function, get it tested in the sandbox. The base of HumanEval and MBPP.

Turn structure: each reply is one attempt. The program is read out of it by
`rlenvs.rewards.code.extract_code` (the last block that defines a function the tests call,
with the definitions it needs from earlier blocks; else the last block, else the whole
reply) and, where the task gives starter code (a signature and docstring), joined with it. The tests run in the sandbox
(`rlenvs.sandbox`): the solution in one process, the tests in another that calls it and
gets plain values back, so exiting early, patching the tests or returning an object that
equals everything cannot pass.

- All tests pass: reward 1.0, the episode terminates ("solved").
- Otherwise, on the last turn: reward 0.0 (or the passed fraction with `partial=True`);
  on an earlier turn (`max_turns > 1`): reward 0.0 and the next observation names the
  first failing test, its error and the solution's traceback (truncated), so the model can
  fix its code. Only the attempt that ends the episode is scored, so repeated partial
  attempts cannot add up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.task import Task, TaskSource
from rlenvs.rewards.code import complete_function, extract_code, tests_reward
from rlenvs.sandbox import Limits, Sandbox, TestProgram, TestReport
from rlenvs.sandbox.shared import shared_sandbox

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MEMORY_MB = 1024
FEEDBACK_TRACEBACK_CHARS = 1500
FEEDBACK_OUTPUT_CHARS = 500
RETRY_REQUEST = "Fix the code and reply with the complete corrected solution in one ```python block."


@dataclass(frozen=True)
class CodeTask(Task):
    program: TestProgram
    """The tests, run in the sandbox against the solution."""
    solution: str
    """A gold reply (the reference code in a ```python block): what `oracle_action` returns."""
    entry_point: str
    """The function the tests call."""
    starter: str = field(default="")
    """Code the reply is completed against (HumanEval's signature and docstring); empty if none."""


class CodeEnv(TextEnv[CodeTask]):
    """Shared judging for the code envs; subclasses supply the tasks and the prompt."""

    def __init__(
        self,
        tasks: TaskSource[CodeTask],
        *,
        max_turns: int,
        partial: bool,
        timeout_s: float,
        memory_mb: int,
        unsafe_sandbox: bool,
        system_prompt: str | None,
        render_mode: str | None,
    ) -> None:
        for name, flag in (("partial", partial), ("unsafe_sandbox", unsafe_sandbox)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        super().__init__(tasks, max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode)
        self.partial = partial
        self.limits = Limits(timeout_s=timeout_s, memory_mb=memory_mb)
        self.unsafe_sandbox = unsafe_sandbox
        shared_sandbox(unsafe=unsafe_sandbox)  # fails at make time, not mid-episode, without bubblewrap

    @property
    def sandbox(self) -> Sandbox:
        """The process's shared pool, looked up on use: the env stays cheap to copy and pickle."""
        return shared_sandbox(unsafe=self.unsafe_sandbox)

    def program_for(self, task: CodeTask, reply: str) -> str:
        """The program the tests run against: the reply's code, completed against the starter code."""
        code = extract_code(reply, calls=(task.entry_point, *task.program.remote.values()))
        return complete_function(code, task.starter, task.entry_point) if task.starter else code

    def judge(self, task: CodeTask, reply: str) -> Judgement:
        report = self.sandbox.run_tests(self.program_for(task, reply), task.program, limits=self.limits)
        solved = report.all_passed
        last_turn = self.turn >= self.max_turns
        info = {
            "tests_passed": report.passed,
            "tests_total": len(report.tests),
            "run_status": report.status,
            "reward_breakdown": {"tests_passed": report.passed, "tests_total": len(report.tests)},
        }
        if solved:
            return Judgement(1.0, resolved=True, correct=True, stop_reason="solved", info=info)
        reward = tests_reward(report, partial=self.partial) if last_turn else 0.0
        return Judgement(reward, resolved=False, correct=False, feedback=failure_feedback(report, self.limits), info=info)

    def oracle_action(self) -> str:
        if self.task is None:
            raise RuntimeError(f"{type(self).__name__}.oracle_action: call reset() first; there is no task yet")
        if not self.task.solution:
            raise RuntimeError(f"{type(self).__name__}.oracle_action: task {self.task.task_id} has no reference solution")
        return self.task.solution


def failure_feedback(report: TestReport, limits: Limits) -> str:
    """What a failed attempt tells the model: the first failing test and why it failed."""
    total = len(report.tests)
    lines = [f"{report.passed} of {total} tests passed."]
    if report.status == "timeout":
        lines.append(f"The run was stopped at its time limit ({limits.timeout_s:g} s): look for an endless loop.")
    elif report.status == "output_limit":
        lines.append(f"The run was stopped for printing more than {limits.output_bytes} bytes.")
    elif report.status == "sandbox_error":
        lines.append("The sandbox failed while running your code; try again.")
    failure = report.first_failure()
    if failure is not None:
        lines += ["The first failing test:", f"```python\n{failure.name}\n```", f"Error: {failure.error}"]
        if failure.traceback:
            lines.append(f"Traceback (from your code):\n{failure.traceback[-FEEDBACK_TRACEBACK_CHARS:]}")
    if report.stderr.strip():
        lines.append(f"Your program wrote to stderr:\n{report.stderr[-FEEDBACK_OUTPUT_CHARS:]}")
    lines.append(RETRY_REQUEST)
    return "\n".join(lines)
