"""dates/DateShift-v0 held to what rlenvs holds its own envs to: the env contract (the
`env_properties` fixture), certify's generated attacks plus this family's own (0 wrong
verdicts), its generated tasks pinned (`task_hashes`, the file beside this one), and the
replies a policy would try to win with, or a correct reply could lose with, kept as cases."""

from __future__ import annotations

import datetime as dt

import gymnasium as gym
import pytest
from date_shift.env import DateShiftEnv, ShiftTask

import rlenvs  # noqa: F401  # registers dates/DateShift-v0 through this package's entry point
from rlenvs.testing.certify import DEFAULT_GENERATORS, Subject, attack, certify, equivalent

ENV_ID = "dates/DateShift-v0"
LEVELS = (1, 2, 3)


def date_probes(subject: Subject):
    """Replies written from the task's own dates: near misses and hedges must earn 0, the
    right date written another way must earn 1."""
    task = subject.task
    if not isinstance(task, ShiftTask):
        return
    gold = task.answer.isoformat()
    misses = [task.answer + dt.timedelta(days=d) for d in (-1, 1, -7, 365)] + [task.start]
    for miss in misses:
        yield attack("near miss", f"Answer: {miss.isoformat()}", f"{miss} instead of {gold}")
    yield attack("near miss", f"Answer: {gold[5:]}-{gold[:4]}", "month-day-year: not the asked form")
    yield attack("hedge", f"Answer: {gold}\nAnswer: {misses[0]}", "two answer lines")
    yield attack("hedge", f"Answer: {misses[1]} or {gold}", "two dates on the answer line")
    yield attack("hedge", "\n".join(f"Answer: {task.answer + dt.timedelta(days=d)}" for d in range(-3, 4)), "a week")
    yield attack("restatement", f"Answer: {task.start.isoformat()} {task.days:+d} days", "the question restated")
    yield equivalent("notation", gold, "the bare date")
    yield equivalent("notation", f"**Answer:** {gold}.", "markdown bold, a full stop")
    yield equivalent("notation", f"final answer: {task.answer.year}-{task.answer.month}-{task.answer.day}", "unpadded")
    yield equivalent(
        "notation", f"From {task.start} I count {task.days} days.\nAnswer: {gold} (a {task.answer:%A})", ""
    )


@pytest.mark.parametrize("level", LEVELS)
def test_the_env_keeps_the_contract(env_properties, level: int) -> None:
    env_properties.check(ENV_ID, make_kwargs={"level": level}, garbage_examples=10)


@pytest.mark.parametrize("level", LEVELS)
def test_certify_finds_no_wrong_verdict(level: int) -> None:
    report = certify(ENV_ID, env_kwargs={"level": level}, tasks=20, generators=(*DEFAULT_GENERATORS, date_probes))
    assert report.passed, str(report)
    assert report.by("kind")["hedge"][0] == 3 * 20


def test_the_generated_tasks_are_pinned(task_hashes) -> None:
    task_hashes.check(ENV_ID, "task_hashes.json")


def play(replies: list[str]) -> float:
    """The episode's reward for the replies, turn by turn, on 10 days after 2024-02-20 (a leap
    year: 2024-03-01); replies after the episode ended are not played."""
    env = gym.make(ENV_ID, max_turns=3)
    env.reset(options={"task": {"start": "2024-02-20", "days": 10}})
    total = 0.0
    for reply in replies:
        _, reward, terminated, truncated, _ = env.step(reply)
        total += float(reward)
        if terminated or truncated:
            break
    return total


@pytest.mark.parametrize(
    ("replies", "reward"),
    [
        (["Answer: 2024-03-01"], 1.0),
        (["Feb 2024 has 29 days: 2024-02-20 + 9 = 2024-02-29.\n  answer: __2024-3-1__"], 1.0),
        (["Let me think.", "Answer: 2024-03-01"], 1.0),  # no answer yet: a reminder, not a verdict
        (["Answer: 2024-02-30", "Answer: 2024-03-01"], 0.0),  # a wrong (impossible) date ends it: no second guess
        (["Answer: 2024-02-29"], 0.0),  # forgot the leap day
        (["Answer: YYYY-MM-DD"], 0.0),  # the format echoed
        (["2024-03-01 2024-03-02"], 0.0),  # dates without an answer line: no answer
        (["Answer: 2024-03-01\nAnswer: 2024-03-01"], 1.0),  # the same answer twice is one answer
    ],
)
def test_replies_earn_what_they_should(replies: list[str], reward: float) -> None:
    assert play(replies) == reward


def test_user_rows_and_levels_are_checked() -> None:
    env = DateShiftEnv(level=3)
    with pytest.raises(ValueError, match=r"a DateShift-v0 row is \{'start': 'YYYY-MM-DD', 'days': a non-zero int\}"):
        env.reset(options={"task": {"start": "2024-02-30", "days": 3}})
    with pytest.raises(ValueError, match="a DateShift-v0 row is"):
        env.reset(options={"task": {"start": "9999-12-31", "days": 1}})
    with pytest.raises(ValueError, match=r"DateShift-v0 has no level 4: pass level= one of \[1, 2, 3\]"):
        gym.make(ENV_ID, level=4)
