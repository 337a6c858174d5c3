"""The env-contract kit closes every env it makes, whether its check passes or fails, and a
server's refusal of capacity is reported as a check not run. Over `RemoteEnv` the kit held
15 server sessions after it returned, and against `rlenvs serve --max-sessions 4` 8 of its
14 checks failed with CAPACITY_REACHED instead of their own findings (issue 42)."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import ClassVar

import pytest

from rlenvs.testing.envs import check_text_env
from tests.testing.test_envs import AsciiOnlyEnv, WordEnv

for _module in ("fastapi", "uvicorn", "websockets"):
    pytest.importorskip(_module, reason=f"the env server's tests need {_module}: pip install -e '.[dev]'")

from rlenvs.remote import RemoteEnv  # noqa: E402
from rlenvs.remote.server import EnvServer, serving  # noqa: E402

ARITHMETIC = "rlenvs/Arithmetic-v1"
QUICK = {"seeds": range(8), "garbage_examples": 2}


class CountedCrashEnv(AsciiOnlyEnv):
    """Counts the instances made and not closed; its verifier crashes on non-ASCII replies, so a check fails."""

    open: ClassVar[int] = 0

    def __init__(self, max_turns: int = 1, render_mode: str | None = None) -> None:
        super().__init__(max_turns=max_turns, render_mode=render_mode)
        type(self).open += 1
        self._closed = False

    def __setstate__(self, state: dict) -> None:  # a deep copy or an unpickled clone is one more
        self.__dict__.update(state)
        type(self).open += 1

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            type(self).open -= 1
        super().close()


class CloseRaisesEnv(WordEnv):
    def close(self) -> None:
        raise OSError("the connection was already gone")


def test_every_env_a_check_makes_is_closed_even_when_the_check_fails() -> None:
    CountedCrashEnv.open = 0
    report = check_text_env(CountedCrashEnv, **QUICK)
    assert "garbage_action_totality" in {check.name for check in report.failures}
    assert CountedCrashEnv.open == 0


def test_a_close_that_raises_fails_the_check_and_says_so() -> None:
    report = check_text_env(CloseRaisesEnv, **QUICK)
    assert not report["spaces"].passed
    assert "closing an env raised CloseRaisesEnv.close: OSError: the connection was already gone" in (
        report["spaces"].message
    )


def _active_sessions(url: str) -> int:
    with urllib.request.urlopen(url + "/health", timeout=10) as response:
        return json.loads(response.read())["active_sessions"]


def _settles_at(url: str, sessions: int) -> bool:
    """The server ends a closed session on its own thread: wait a moment for the count."""
    deadline = time.monotonic() + 10
    while _active_sessions(url) != sessions and time.monotonic() < deadline:
        time.sleep(0.05)
    return _active_sessions(url) == sessions


def test_over_a_server_at_four_sessions_every_check_runs_and_none_stays_open() -> None:
    with serving(EnvServer(ARITHMETIC, max_sessions=4, allow_oracle=True)) as url:
        report = check_text_env(lambda: RemoteEnv(url), **QUICK)
        assert report.passed, f"\n{report}"
        assert _settles_at(url, 0)


def test_a_server_at_its_session_limit_is_reported_as_checks_not_run() -> None:
    with serving(EnvServer(ARITHMETIC, max_sessions=1, allow_oracle=True)) as url:
        holder = RemoteEnv(url)
        holder.reset(seed=0)  # another client holds the only session
        try:
            report = check_text_env(lambda: RemoteEnv(url), **QUICK)
        finally:
            holder.close()
        assert _settles_at(url, 0)
    refused = [check for check in report.checks if "CAPACITY_REACHED" in check.message]
    assert len(refused) >= 8, f"\n{report}"
    for check in refused:
        assert not check.passed and check.message.startswith("not run: "), f"\n{check}"
        assert "rlenvs serve --max-sessions" in check.message and "raised" not in check.message
