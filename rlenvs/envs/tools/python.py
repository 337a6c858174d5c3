"""A Python tool any env can give the model (a rlenvs.envs.tools.turns `Tool`): it writes code,
the sandbox runs it, it reads the output.

Call format (the one tool-integrated reasoning models are trained on): each ```python
fenced block in a reply is one call; the env's next message holds one ```output block per
call, in order, with what the code printed, then any error (the last lines of stderr) or
the limit it hit. Each call is a fresh script in the sandbox: nothing carries over between
calls, so a call that needs an earlier result recomputes it (or the model copies the
printed value). At most `max_calls` blocks of a reply run; the rest are reported skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlenvs.core.checks import check_int
from rlenvs.envs.tools.turns import ToolCalls
from rlenvs.rewards.code import python_blocks
from rlenvs.sandbox import ExecResult, Limits
from rlenvs.sandbox.execution.shared import shared_sandbox

DEFAULT_LIMITS = Limits(timeout_s=5.0, memory_mb=512, output_bytes=16 * 1024)

USAGE = (
    "To run Python, write a ```python code block and stop; the next message shows what it printed "
    "in an ```output block (use print). Each block runs on its own, standard library only, "
    "with no network and a {timeout:g} s limit."
)


@dataclass(frozen=True)
class PythonTool:
    limits: Limits = field(default=DEFAULT_LIMITS)
    max_calls: int = 3
    max_output_chars: int = 2000
    """Per call, in the observation: the head of stdout and the tail of stderr are kept."""
    unsafe_sandbox: bool = False

    def __post_init__(self) -> None:
        check_int("PythonTool.max_calls", self.max_calls, at_least=1)
        check_int("PythonTool.max_output_chars", self.max_output_chars, at_least=1)
        shared_sandbox(unsafe=self.unsafe_sandbox)  # bubblewrap missing fails here, not mid-episode

    @property
    def usage(self) -> str:
        """The sentence a system prompt uses to explain the tool."""
        return USAGE.format(timeout=self.limits.timeout_s)

    def find_calls(self, reply: str) -> ToolCalls:
        """The reply's ```python blocks, in order: the first `max_calls` run, the rest are skipped."""
        blocks = python_blocks(reply)
        return ToolCalls(tuple(blocks[: self.max_calls]), max(len(blocks) - self.max_calls, 0))

    def run(self, found: ToolCalls) -> tuple[str, int]:
        """The observation for a reply's calls (one ```output block each), and how many failed."""
        sandbox = shared_sandbox(unsafe=self.unsafe_sandbox)
        parts, failures = [], 0
        for code in found.calls:
            result = sandbox.run_python(code, limits=self.limits)
            failures += not result.ok
            parts.append(f"```output\n{self.render(result)}\n```")
        if found.skipped:
            parts.append(f"(only the first {self.max_calls} code blocks of a reply run; {found.skipped} skipped)")
        return "\n".join(parts), failures

    def render(self, result: ExecResult) -> str:
        """One call's output as the model sees it."""
        cap = self.max_output_chars
        text = result.stdout if len(result.stdout) <= cap else result.stdout[:cap] + "\n[... output truncated]"
        notes = {
            "timeout": f"[stopped: the {self.limits.timeout_s:g} s time limit]",
            "memory": f"[stopped: the {self.limits.memory_mb} MB memory limit]",
            "output_limit": f"[stopped: more than {self.limits.output_bytes} bytes of output]",
            "crash": "[the process crashed]",
            "sandbox_error": "[the sandbox failed; run it again]",
        }
        if result.status in ("error", "memory") and result.stderr.strip():
            text += result.stderr.strip()[-cap:]
        if result.status in notes:
            text += ("\n" if text else "") + notes[result.status]
        return text.strip("\n") or "(no output)"
