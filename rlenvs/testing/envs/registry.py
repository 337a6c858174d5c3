"""`CHECKS`, every check by name, and `_check`, the decorator that registers a check body
and turns what it returns or raises into a `CheckReport`."""

from __future__ import annotations

import contextlib
import functools
import io
import time
from collections.abc import Callable
from typing import Any

from rlenvs.testing.envs.reports import (
    CheckReport,
    _exception_summary,
    _Failed,
    _refused,
    _Skipped,
)
from rlenvs.testing.envs.subjects import _Target

_CheckBody = Callable[[_Target], str]
CHECKS: dict[str, Callable[[_Target], CheckReport]] = {}
"""Every check by name, in the order a report lists them."""


def _check(name: str) -> Callable[[_CheckBody], Callable[[_Target], CheckReport]]:
    """Register a check. Its body returns what it verified, or raises `_Failed` (with a
    counterexample) or `_Skipped`; any other exception is a failure reported with where it
    was raised, so one broken check never stops the rest of the report, and a server's
    refusal of capacity is reported as the check not run (`_NotRun`). Every env the check
    made is closed when it ends, however it ends: an env may hold a server session (a
    `RemoteEnv`), worker processes or a sandbox, and a check that left them open made the
    next checks fail at the server's session limit instead of on their own findings."""

    def decorate(body: _CheckBody) -> Callable[[_Target], CheckReport]:
        @functools.wraps(body)
        def run(target: _Target) -> CheckReport:
            start = time.perf_counter()
            outcome: dict[str, Any]
            try:
                # An env made with render_mode="human" prints; the report should not.
                with contextlib.redirect_stdout(io.StringIO()):
                    outcome = {"passed": True, "message": body(target)}
            except _Skipped as skip:
                outcome = {"passed": True, "skipped": True, "message": f"skipped: {skip}"}
            except _Failed as failure:
                outcome = {"passed": False, "message": failure.message, "counterexample": failure.counterexample}
            except Exception as error:  # reported, with its traceback
                refused = _refused(error)
                message = refused.args[0] if refused is not None else f"raised {_exception_summary(error)}"
                outcome = {"passed": False, "message": message}
            finally:
                unclosed = target.close_made()
            if unclosed and outcome["passed"] and not outcome.get("skipped"):
                outcome = {"passed": False, "message": "closing an env raised " + "; ".join(unclosed)}
            return CheckReport(name=name, seconds=time.perf_counter() - start, **outcome)

        CHECKS[name] = run
        return run

    return decorate
