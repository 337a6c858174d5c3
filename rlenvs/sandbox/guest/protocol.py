"""How the host and the zygote frame what passes between them: the one definition both sides
read.

Imports only `struct`: the guest imports this module by its bare name (`zygote`), and the
host as `rlenvs.sandbox.guest.protocol` (`worker`).

**The zygote never holds an execution's data in its own memory.** Every solution is forked
from the zygote, so its process starts as a copy of the zygote's memory, and it can read what
it finds there (a frame's locals, `gc.get_objects()`, raw memory through ctypes, freed
buffers): a test program, a verdict, or the output of the execution before it. So the data
travels as segments that the zygote moves from one file descriptor to another with
`os.splice`, inside the kernel, and never reads:

- a request is `REQUEST_HEADER` (the header's length), the header (JSON: the kind, the
  limits, the options; no data), then the segments of `REQUEST_SEGMENTS` whose lengths the
  header lists in `SEGMENT_BYTES`: the code, the stdin, for a test run the test program
  (JSON), and for a populate request the files' contents. The zygote splices each into a
  memfd of its own; the code's is read by the child that runs it, the stdin's is that child's
  fd 0, the program's goes to the test runner, and each file's bytes are copied from the
  files' memfd into the file by `os.copy_file_range` (or `os.sendfile`), in the kernel too;
- an answer is one JSON line (the status, exit fields, and the lengths `ANSWER_SEGMENTS`
  of what follows) and then those segments: the child's stdout and stderr, a shell
  session's state, and a test run's records, each spliced from the memfd the zygote
  collected it in (from the child's pipe, again by `os.splice`).

Where the interpreter has no `os.splice` (before Python 3.10: an image's own python3), a
segment is copied through one buffer that is zeroed after every chunk.
"""

import struct

REQUEST_HEADER = struct.Struct(">Q")
"""The first bytes of a request: its JSON header's length in bytes."""
SEGMENT_BYTES = "segment_bytes"
"""The header's field listing the lengths of the segments that follow it, in order."""
REQUEST_SEGMENTS = ("code", "stdin", "program", "files")
"""The request's data, in the order it follows the header (a length of 0 where there is none).
"files" is a populate request's file contents, one after another; each entry of its header
gives its file's `size` where it used to carry the data."""
ANSWER_SEGMENTS = ("stdout", "stderr", "state", "records")
"""The answer's data, in the order it follows the line; the line's `<name>_bytes` fields
give their lengths (absent: none)."""
VERDICT_BYTES = "records_bytes"
"""The answer's field for the length of a test run's records (the runner's JSON lines)."""


def segment_field(name: str) -> str:
    """The answer's field holding a segment's length."""
    return f"{name}_bytes"
