"""Isolated execution of untrusted code and shell commands (bubblewrap + warm workers).

    from rlenvs.sandbox import Sandbox, TestProgram
    with Sandbox(workers=2) as sandbox:
        sandbox.run_python("print(6 * 7)").stdout            # '42\\n'
        program = TestProgram(tests=("assert add(2, 3) == 5",), remote={"add": "add"})
        sandbox.run_tests("def add(a, b): return a + b", program).all_passed   # True

See `launch` for what the sandbox isolates, `pool` for the worker pool, `guest/` for the
code that runs inside, and `requests` / `results` for what goes in and comes out.
"""

from rlenvs.sandbox.launch import SandboxUnavailable
from rlenvs.sandbox.pool import Sandbox
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
