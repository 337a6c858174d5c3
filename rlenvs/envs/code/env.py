"""`CodeEnv`: write a function, get it tested in the sandbox. The base of HumanEval and MBPP.

Turn structure: each reply is one attempt. The program is read out of it by
`rlenvs.rewards.code.extract_code` (the last block that defines a function the tests call,
with the definitions it needs from earlier blocks; else the last block, else the whole
reply) and, where the task gives starter code (a signature and docstring), joined with it.
The tests run in the sandbox (`rlenvs.sandbox`): the solution in one process, the tests in
another that calls it and gets plain values back, so exiting early, patching the tests or
returning an object that equals everything cannot pass.

- All tests pass: reward 1.0, the episode terminates ("solved").
- Otherwise, on the last turn: reward 0.0 (or the passed fraction with `partial=True`);
  on an earlier turn (`max_turns > 1`): reward 0.0 and the next observation says what
  failed (`feedback`): a failing test the prompt shows in full, the hidden tests only as
  counts of failures by kind, never their inputs or expected values. Only the attempt that
  ends the episode is scored, so repeated partial attempts cannot add up.
- The solution is imported, not run as a script (`__name__` is not "__main__", as in
  HumanEval's and MBPP's own harnesses): a demo under `if __name__ == "__main__":` never runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlenvs.core.checks import check_flag
from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.task import Task, TaskSource
from rlenvs.envs.code.feedback import failure_feedback
from rlenvs.rewards.code import complete_function, extract_code, tests_reward
from rlenvs.sandbox import Limits, Sandbox, TestProgram
from rlenvs.sandbox.execution.shared import shared_sandbox

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MEMORY_MB = 1024


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
    shown: int = 0
    """The first `shown` tests of `program` are the ones the prompt shows (`examples`): the
    feedback may quote them, and they run first, before any hidden test."""

    def __post_init__(self) -> None:
        count = len(self.program.tests)
        if isinstance(self.shown, bool) or not isinstance(self.shown, int) or not 0 <= self.shown <= count:
            raise ValueError(f"CodeTask.shown must count tests of the program (0-{count}), got {self.shown!r}")


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
        check_flag("partial", partial)
        check_flag("unsafe_sandbox", unsafe_sandbox)
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
        program = self.program_for(task, reply)
        report = self.sandbox.run_tests(program, task.program, limits=self.limits)
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
        feedback = "" if last_turn else failure_feedback(report, self.limits, shown=task.shown, program=program)
        return Judgement(reward, resolved=False, correct=False, feedback=feedback, info=info)

    def oracle_reply(self, task: CodeTask, turn: int) -> str:
        if not task.solution:
            raise RuntimeError(f"{type(self).__name__}.oracle_reply: task {task.task_id} has no reference solution")
        return task.solution
