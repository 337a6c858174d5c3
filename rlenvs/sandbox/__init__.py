"""Isolated execution of untrusted code and shell commands (bubblewrap + warm workers).

    from rlenvs.sandbox import Sandbox, TestProgram
    with Sandbox(workers=2) as sandbox:
        sandbox.run_python("print(6 * 7)").stdout            # '42\\n'
        program = TestProgram(tests=("assert add(2, 3) == 5",), remote={"add": "add"})
        sandbox.run_tests("def add(a, b): return a + b", program).all_passed   # True

Two systems on one launcher: `execution/`, the pool of warm workers that run one program or
test run per call (`Sandbox`), and `shells/`, persistent shell sessions for an agent's episode
on the host, an image's root or a container, with the verdict that runs a task's tests there.
Both start their workers through `launch` (what the sandbox isolates), `worker` and `cgroups`
(the memory cap); `guest/` is the code that runs inside, `requests` / `results` what goes in
and comes out.
"""

from rlenvs.sandbox.execution.pool import Sandbox
from rlenvs.sandbox.launch import SandboxUnavailable
from rlenvs.sandbox.requests import Limits, TestProgram
from rlenvs.sandbox.results import STATUSES, ExecResult, TestOutcome, TestReport

__all__ = [
    "STATUSES",
    "ExecResult",
    "Limits",
    "Sandbox",
    "SandboxUnavailable",
    "TestOutcome",
    "TestProgram",
    "TestReport",
]
