"""Ctrl-C as a terminal delivers it, for tests that send SIGINT to a command they started.

A process started in the background by a non-interactive shell (`bash .ci/run &`, a job under
nohup) has SIGINT ignored, and its children inherit that: Python then never installs its
KeyboardInterrupt handler, and a command under test ignores the test's SIGINT and exits 0.
`preexec_fn=sigint_as_at_a_terminal` gives the child the default disposition a terminal's
foreground job has, so the test measures the command, not how the suite was launched."""

from __future__ import annotations

import signal


def sigint_as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
