"""What checks report: `CheckReport` for one check, `EnvReport` for all of them, the two
exceptions a check body ends with (`_Failed`, `_Skipped`), and the text helpers they use."""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from typing import Any

_KIT = os.path.join(os.path.dirname(__file__), "")
"""This package's folder: frames in files under it are the kit's own, left out of a summary."""


@dataclass(frozen=True)
class CheckReport:
    """The outcome of one named check. `counterexample` is the smallest input that broke it
    (an action, a seed, the two values that differ), None when it passed or had none."""

    name: str
    passed: bool
    message: str
    counterexample: Any = None
    skipped: bool = False
    seconds: float = 0.0

    @property
    def status(self) -> str:
        return "SKIP" if self.skipped else "PASS" if self.passed else "FAIL"

    def __str__(self) -> str:
        head = f"{self.status}  {self.name:<24} {self.seconds:6.2f} s  "
        lines = self.message.splitlines() or [""]
        text = head + lines[0] + "".join("\n" + " " * len(head) + line for line in lines[1:])
        if not self.passed and self.counterexample is not None:
            text += "\n" + " " * len(head) + "counterexample: " + _shorten(repr(self.counterexample), 400)
        return text


@dataclass(frozen=True)
class EnvReport:
    """Every check's outcome for one env; `passed` when none failed (skips do not fail)."""

    subject: str
    checks: tuple[CheckReport, ...]
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    @property
    def failures(self) -> tuple[CheckReport, ...]:
        return tuple(check for check in self.checks if not check.passed)

    def __getitem__(self, name: str) -> CheckReport:
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(f"no check named {name!r} in this report: it has {[c.name for c in self.checks]}")

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        skipped = sum(check.skipped for check in self.checks)
        verdict = "passed" if self.passed else f"FAILED {len(self.failures)} of"
        head = f"{self.subject}: {verdict} {len(self.checks)} checks ({skipped} skipped) in {self.seconds:.1f} s"
        return "\n".join([head, *(f"  {check}".replace("\n", "\n  ") for check in self.checks)])


class _Failed(Exception):
    def __init__(self, message: str, counterexample: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.counterexample = counterexample


class _Skipped(Exception):
    pass


REFUSALS = frozenset({"CAPACITY_REACHED", "CLIENT_CAPACITY_REACHED"})
"""Error codes (an exception's `code`, as `RemoteEnvError` has) of a server that would not
open one more session: the check could not run, which says nothing of the env."""


class _NotRun(Exception):
    """A check met a refusal of capacity (`REFUSALS`): reported as not run, with the fix, and
    not as whatever the env call it came from would have made of it."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(
            f"not run: {_shorten(str(error), 300)}. A server at its session limit refused the check a "
            "session, which says nothing about the env: raise `rlenvs serve --max-sessions` (each check "
            "holds a few sessions, all closed when it ends) or check while fewer clients hold sessions"
        )


def _refused(error: BaseException) -> _NotRun | None:
    """The `_NotRun` for a refusal of capacity anywhere in `error`'s chain, else None."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, _NotRun):
            return seen
        if getattr(seen, "code", None) in REFUSALS:
            return _NotRun(seen)
        seen = seen.__cause__ or seen.__context__
    return None


def _exception_summary(error: BaseException, frames: int = 3) -> str:
    """`Type: message` and the last few frames outside this package, so a report shows where
    the env raised rather than where the check called it."""
    text = f"{type(error).__name__}: {_shorten(str(error), 300)}"
    if frames:
        stack = [frame for frame in traceback.extract_tb(error.__traceback__) if not frame.filename.startswith(_KIT)]
        text += "".join(f"\n  at {frame.filename}:{frame.lineno} in {frame.name}" for frame in stack[-frames:])
    return text


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 30]}... ({len(text)} characters)"
