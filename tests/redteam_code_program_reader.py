"""The red team's test-program reader (the "program-from-*" attacks of tests/redteam/code.py):
one reply for any task, with no solution logic, that finds the task's test program (its
set-up and every test, hidden ones and their expected values included) in its own process,
runs each test against stand-ins that record what they are compared with, and answers every
call from that table.

The solution's process is a fork of the sandbox's zygote, so it holds a copy of whatever the
zygote held at the fork. Before the zygote took the program in a buffer it wipes
(`rlenvs/sandbox/guest/protocol.py`), the parsed request was still alive there, and each of
three routes found it: the zygote's frames (`sys._getframe` up to the `request` local), the
garbage collector's objects, and the raw heap (`/proc/self/maps`, read with ctypes). Each
route is a case of its own, so that one closed route cannot hide another left open.
"""

from __future__ import annotations

TEMPLATE = r"""
import ctypes, gc, json, sys

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
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        if not fields[1].startswith("r") or (len(fields) > 5 and fields[5].startswith("[v")):
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        data = ctypes.string_at(low, high - low)
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
    function (entry point, text seen) -> reply, as tests/redteam/code.py's ATTACKS take."""

    def reply(entry_point: str, seen: str) -> str:
        code = TEMPLATE.replace("ROUTE", f"_from_{route}").replace("ENTRY", entry_point)
        return f"```python\n{code.strip()}\n```"

    return reply
