"""Run the reference solution and its mutants on many inputs in one sandbox execution.

The script this writes is the only code `build` runs; it runs in the sandbox like any other
(the reference is the data set's code, the mutants are its edits, and either may loop or
raise). Each program is executed in its own namespace; each call gets a copy of its inputs and
a wall-clock alarm, and its result goes out as one JSON line `[program, call, repr]` (or
`[program, call, null]` where it raised or answered with something that has no literal form), with, for the first program (the reference), the lines of it that call ran.
A program's first call past its time ends that program's run: one that loops forever would
otherwise cost the alarm on every input. Output printed by the programs themselves is kept out of that stream.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence

from rlenvs.envs.code.strengthen.inputs import Call
from rlenvs.sandbox import Limits, Sandbox

CALL_SECONDS = 0.5
"""How long one call of the reference or a mutant may take."""
MAX_RESULT_CHARS = 2_000
"""Longest result kept: a test is data committed beside the task, and a small one."""
LIMITS = Limits(timeout_s=120.0, memory_mb=1024, output_bytes=16 * 1024 * 1024)

_SCRIPT = """
import copy, io, json, signal, sys

class _Expired(BaseException):
    pass

def _alarm(signum, frame):
    raise _Expired()

signal.signal(signal.SIGALRM, _alarm)
_out = sys.stdout
PROGRAMS = json.loads({programs!r})
CALLS = {calls!r}
REMOTE = {remote!r}
_lines = set()

def _trace(frame, event, arg):
    if frame.f_code.co_filename != "<reference>":
        return None
    if event == "line":
        _lines.add(frame.f_lineno)
    return _trace

for _p, _source in enumerate(PROGRAMS):
    _namespace = {{"__name__": "reference"}}
    _expired = False
    sys.stdout = io.StringIO()
    try:
        signal.setitimer(signal.ITIMER_REAL, {seconds})
        exec(compile(_source, "<reference>", "exec"), _namespace)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException:
        signal.setitimer(signal.ITIMER_REAL, 0)
        continue
    for _c, (_name, _args) in enumerate(CALLS):
        _text = None
        if _expired:
            break
        try:
            _lines.clear()
            signal.setitimer(signal.ITIMER_REAL, {seconds})
            if _p == 0:
                sys.settrace(_trace)
            _value = _namespace[REMOTE[_name]](*copy.deepcopy(_args))
            sys.settrace(None)
            signal.setitimer(signal.ITIMER_REAL, 0)
            _text = repr(_value)
        except _Expired:
            sys.settrace(None)
            _expired = True
        except BaseException:
            sys.settrace(None)
            signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout = io.StringIO()
        if _text is not None and len(_text) > {max_chars}:
            _text = None
        _out.write(json.dumps([_p, _c, _text, sorted(_lines) if _p == 0 else None]) + "\\n")
        _out.flush()
"""


def run_programs(
    sandbox: Sandbox, programs: Sequence[str], calls: Sequence[Call], remote: dict[str, str]
) -> tuple[dict[tuple[int, int], object], dict[int, frozenset[int]]]:
    """{(program, call): result} for every call that returned a literal value, and {call: the
    lines of the first program it ran}. A missing key is a call that raised, timed out or
    returned something else; a program whose run died (memory, the overall limit) is missing
    from its failing call on."""
    script = _SCRIPT.format(
        programs=json.dumps(list(programs)),
        calls=[(name, args) for name, args in calls],
        remote=remote,
        seconds=CALL_SECONDS,
        max_chars=MAX_RESULT_CHARS,
    )
    result = sandbox.run_python(script, limits=LIMITS)
    values: dict[tuple[int, int], object] = {}
    lines: dict[int, frozenset[int]] = {}
    for line in result.stdout.splitlines():
        try:
            program, call, text, covered = json.loads(line)
        except (ValueError, TypeError):
            continue
        if covered is not None:
            lines[call] = frozenset(covered)
        if text is None:
            continue
        try:
            values[(program, call)] = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return values, lines
