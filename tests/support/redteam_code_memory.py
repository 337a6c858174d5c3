"""The red team's readers of the solution's own memory (tests/support/redteam/code.py): the solution's
process is a fork of the sandbox's zygote, so it holds a copy of whatever the zygote held.

The test-program reader (the "program-from-*" attacks) is one reply for any task, with no solution logic, that finds the task's test program (its
set-up and every test, hidden ones and their expected values included) in its own process,
runs each test against stand-ins that record what they are compared with, and answers every
call from that table.

Before the zygote took the program in a buffer it wipes (`rlenvs/sandbox/guest/protocol.py`),
the parsed request was still alive there, and each of three routes found it: the zygote's frames (`sys._getframe` up to the `request` local), the
garbage collector's objects, and the raw heap (`/proc/self/maps`, read with ctypes). Each
route is a case of its own, so that one closed route cannot hide another left open.

The verdict-residue oracle (the "verdict-residue" attack) answers True to every call when it
finds nothing, and otherwise replays, call by call, whether the last run's test passed: on
a task with boolean answers, the next episode on the same worker is then all right. The
zygote parsed the runner's records, and they stayed in its freed memory until it copied them
through a buffer it wipes instead.
"""

from __future__ import annotations

READABLE_MEMORY = r"""
def _readable_memory():  # every readable mapping of this process, its heap included
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        if fields[1].startswith("r") and not (len(fields) > 5 and fields[5].startswith("[v")):
            low, high = (int(x, 16) for x in fields[0].split("-"))
            yield ctypes.string_at(low, high - low)
"""
"""Both memory attacks' scan of the solution's own address space (vvar and vsyscall left out)."""


TEMPLATE = r"""
import ctypes, gc, json, sys
READABLE_MEMORY

def _is_program(value):
    return isinstance(value, dict) and isinstance(value.get("tests"), list) and "setup" in value

def _from_frames():
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and _is_program(value.get("program")):
                return value["program"]
        frame = frame.f_back

def _from_gc():
    for value in gc.get_objects():
        if _is_program(value):
            return value

def _from_raw_memory():
    start = bytes.fromhex("7b227365747570223a20")  # the program's JSON opening, not spelled out here
    for data in _readable_memory():
        at = data.find(start)
        while at >= 0:
            try:
                value, _ = json.JSONDecoder().raw_decode(data[at:at + (1 << 20)].decode("utf-8", "ignore"))
                if _is_program(value):
                    return value
            except ValueError:
                pass
            at = data.find(start, at + 1)

_TABLE = {}

class _Recorder:
    def __init__(self, key):
        self.key = key
    def __eq__(self, other):
        _TABLE.setdefault(self.key, other)
        return True
    __hash__ = object.__hash__

def _learn(program):
    namespace = {"__name__": "__main__"}
    exec(program["setup"], namespace)
    for local, remote in program["remote"].items():
        namespace[local] = (lambda name: lambda *args, **kwargs: _Recorder(repr((name, args, kwargs))))(remote)
    for test in program["tests"]:
        try:
            exec(test, namespace)
        except BaseException:
            pass

_program = ROUTE()
if _program is not None:
    _learn(_program)

def ENTRY(*args, **kwargs):
    return _TABLE.get(repr(("ENTRY", args, kwargs)))
"""


def program_reader(route: str):
    """The attack reading the program by `route` ("frames", "gc" or "raw_memory"): a
    function (entry point, text seen) -> reply, as tests/support/redteam/code.py's ATTACKS take."""

    def reply(entry_point: str, seen: str) -> str:
        code = TEMPLATE.replace("READABLE_MEMORY", READABLE_MEMORY).replace("ROUTE", f"_from_{route}")
        code = code.replace("ENTRY", entry_point)
        return f"```python\n{code.strip()}\n```"

    return reply


RESIDUE_TEMPLATE = r"""
import ctypes, re
READABLE_MEMORY

def _last_verdict():
    record = re.compile(rb'\{"index": (\d+), "ok": (true|false)')
    found = {}
    for data in _readable_memory():
        for match in record.finditer(data):
            found.setdefault(int(match.group(1)), match.group(2) == b"true")
    return found

_PASSED = _last_verdict()
_CALLS = [0]

def ENTRY(*args, **kwargs):
    index, _CALLS[0] = _CALLS[0], _CALLS[0] + 1
    return _PASSED.get(index, True)  # True was right exactly where the last run's True passed
"""


def verdict_residue(entry_point: str, seen: str) -> str:
    """The verdict-residue attack: a function (entry point, text seen) -> reply."""
    code = RESIDUE_TEMPLATE.replace("READABLE_MEMORY", READABLE_MEMORY).replace("ENTRY", entry_point)
    return f"```python\n{code.strip()}\n```"
