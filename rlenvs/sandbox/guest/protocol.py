"""How the host frames a request to the zygote: the one definition both sides read.

Imports only `struct`: the guest imports this module by its bare name (`zygote`), and the
host as `rlenvs.sandbox.guest.protocol` (`worker`).

A request is `REQUEST_HEADER` (the header's length), the header (JSON: the kind, the code,
the limits, ...) and, for a test run, `PROGRAM_BYTES` more bytes: the test program (JSON),
which the zygote reads into a buffer of its own, hands to the test runner and zeroes before
the solution is forked. The test program (set-up, every test, hidden ones too, with their
expected values) must never be in the zygote's memory when it forks the solution: the
solution's process is a copy of that memory, and reads what it finds there (a frame's
locals, `gc.get_objects()`, or raw memory through ctypes). Lengths, not lines, so that the
zygote never reads past the header into the program with objects it cannot wipe.

An answer is one JSON line and, for a test run, `VERDICT_BYTES` more bytes: the test
runner's records as it wrote them, one JSON line per test, which the host parses. The zygote
only copies them from the runner's file through a buffer it wipes: a verdict parsed in its
memory stayed there, freed but readable, and the next solution forked on the worker read
which of the last run's answers had passed (another episode of the same task, in a GRPO
group, then replays them).
"""

import struct

REQUEST_HEADER = struct.Struct(">Q")
"""The first bytes of a request: its JSON header's length in bytes."""
PROGRAM_BYTES = "program_bytes"
"""The header's field for the length of the test program that follows it (test runs only)."""
VERDICT_BYTES = "verdict_bytes"
"""The answer's field for the length of the test records that follow its line (test runs only)."""
