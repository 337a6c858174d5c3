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
"""

import struct

REQUEST_HEADER = struct.Struct(">Q")
"""The first bytes of a request: its JSON header's length in bytes."""
PROGRAM_BYTES = "program_bytes"
"""The header's field for the length of the test program that follows it (test runs only)."""
