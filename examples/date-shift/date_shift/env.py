"""dates/DateShift-v0: what date is N days after (or before) a date? Three procedural levels,
exact ground truth (`datetime`'s Gregorian calendar). The verdict: each line `Answer: <date>`
(or a reply that is only a date) gives the YYYY-MM-DD dates on it. One date in all is the
answer, and right or wrong it ends the episode; several are a hedge (0); none gets a reminder.
"""

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from rlenvs.core import Judgement, Task, TextEnv
from rlenvs.core.draw import coin, draw_int
from rlenvs.core.procedural import Family, Level, ProceduralEnv
from rlenvs.core.task import content_task_id

# --- the family: what each level asks, and its generator -------------------------------------


class Shift(NamedTuple):
    start: dt.date
    days: int  # negative: before `start`


def shift_in(years: tuple[int, int], most_days: int, back: bool, rng: np.random.Generator) -> Shift:
    first, last = dt.date(years[0], 1, 1), dt.date(years[1], 12, 31)
    start = first + dt.timedelta(days=draw_int(rng, 0, (last - first).days))
    days = draw_int(rng, 1, most_days)
    return Shift(start, -days if back and coin(rng) else days)


SHIFT = Family.of_levels(
    "shift",
    "Shift a date by a number of days.",
    {
        1: Level("1 to 40 days forward, years 2000-2030", partial(shift_in, (2000, 2030), 40, False)),
        2: Level("up to 2 years forward or back, across leap days", partial(shift_in, (1990, 2030), 730, True)),
        3: Level("up to 10 years either way, years 1890-2110", partial(shift_in, (1890, 2110), 3650, True)),
    },
)

# --- the task ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShiftTask(Task):
    start: dt.date
    days: int
    answer: dt.date


def pose(task_id: str, shift: Shift) -> ShiftTask:
    way = "after" if shift.days > 0 else "before"
    prompt = (
        f"What date is {abs(shift.days)} days {way} {shift.start}? End your reply with a line `Answer: YYYY-MM-DD`."
    )
    answer = shift.start + dt.timedelta(days=shift.days)
    return ShiftTask(task_id=task_id, prompt=prompt, start=shift.start, days=shift.days, answer=answer)


def shift_task(level: int, index: int) -> ShiftTask:
    """Task `index` at `level`; module level so that an env holding it pickles."""
    return pose(SHIFT.task_id(level, index), SHIFT.scenario(level, index))


# --- the env -----------------------------------------------------------------------------------

ANSWER_LINE = re.compile(r"^[ \t*_#]*(?:final[ \t]+)?answer[ \t*_]*:(.*)$", re.IGNORECASE | re.MULTILINE)
DATE = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
REMINDER = "I found no answer: end your reply with a line `Answer: YYYY-MM-DD`."


def answers(reply: str) -> set[dt.date | str]:
    """Every date the reply's answer lines give (a date that does not exist, as written)."""
    lines = ANSWER_LINE.findall(reply) or ([reply] if DATE.fullmatch(reply.strip()) else [])
    found: set[dt.date | str] = set()
    for match in (m for line in lines for m in DATE.finditer(line)):
        try:
            found.add(dt.date(*map(int, match.groups())))
        except ValueError:
            found.add(match.group())
    return found


class DateShiftEnv(ProceduralEnv, TextEnv[ShiftTask]):
    """Reward 1.0 iff the reply's one answer is the shifted date (module docstring)."""

    env_name = "DateShift-v0"
    task_families = {SHIFT.name: SHIFT}

    @classmethod
    def task_of(cls, family: str, level: int, index: int) -> ShiftTask:
        return shift_task(level, index)

    def __init__(self, level: int = 1, max_turns: int = 1, render_mode: str | None = None) -> None:
        super().__init__(self.level_source(level, shift_task), max_turns=max_turns, render_mode=render_mode)

    def task_from_row(self, row: Mapping[str, Any]) -> ShiftTask:
        try:
            shift = Shift(dt.date.fromisoformat(row["start"]), row["days"])
            if type(shift.days) is int and shift.days:
                return pose(content_task_id(SHIFT.name, row), shift)
        except (KeyError, TypeError, ValueError, OverflowError):
            pass
        raise ValueError(f"a DateShift-v0 row is {{'start': 'YYYY-MM-DD', 'days': a non-zero int}}, got {dict(row)!r}")

    def judge(self, task: ShiftTask, reply: str) -> Judgement:
        given = answers(reply)
        if not given:
            return Judgement(0.0, resolved=False, correct=None, feedback=REMINDER)
        correct = given == {task.answer}
        return Judgement(float(correct), True, correct, stop_reason="answered", info={"hedged": len(given) > 1})

    def oracle_reply(self, task: ShiftTask, turn: int) -> str:
        return f"Answer: {task.answer.isoformat()}"
