"""orgchart/ManagerChain-v0 held to what rlenvs holds its own envs to: the env contract
(`env_properties`), certify's generated attacks plus this env's own (0 wrong verdicts), its
generated charts pinned (`task_hashes`, the file beside this one), and the replies a policy
would try to win with, or a correct reply could lose with, kept as cases."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import gymnasium as gym
import pytest
from org_chart.directory import MAX_CALLS_PER_REPLY, find_lookups
from org_chart.env import ChainTask

import rlenvs  # noqa: F401  # registers orgchart/ManagerChain-v0 through this package's entry point
from rlenvs.testing.certify import DEFAULT_GENERATORS, EQUIVALENT, Probe, Subject, attack, certify

ENV_ID = "orgchart/ManagerChain-v0"
RECORD_MANAGER = re.compile(r"manager: ([^|<]+)</record>")


def lookup(name: str) -> str:
    return f"<lookup>{name}</lookup>"


def last_manager(observations: Sequence[str]) -> str:
    """The manager named by the last record the agent was shown ("none" if no record)."""
    found = RECORD_MANAGER.findall(observations[-1])
    return found[-1].strip() if found else "none"


def follow_chain(person: str, hops: int, answer: str = "Answer: {}"):
    """An adaptive policy that does the task: look up the person, then each manager a record
    names, and answer with the last record's manager (written with `answer`)."""

    def turn(number: int):
        if number == 0:
            return lookup(person)
        if number == hops:
            return lambda observations: answer.format(last_manager(observations))
        return lambda observations: lookup(last_manager(observations))

    return tuple(turn(number) for number in range(hops + 1))


def chart_probes(subject: Subject) -> Iterator[Probe]:
    """Replies written from the task's own chart: other people, hedges, second guesses, the
    tool's output echoed or half-followed must earn 0; the chain followed, however the answer
    is written, must earn 1."""
    task = subject.task
    if not isinstance(task, ChainTask):
        return
    gold, path, names = task.answer, task.path, [person.name for person in task.people]
    lookups = tuple(lookup(name) for name in path[:-1])
    above = next((p.manager for p in task.people if p.name == gold and p.manager), None)
    for name, why in (
        (path[1], "the direct manager"),
        (task.person, "the person asked about"),
        (above, "a level too far"),
    ):
        if name is not None:
            yield attack("near miss", (*lookups, f"Answer: {name}"), f"{why}, after the right lookups")
    yield attack("near miss", f"Answer: {gold.split()[0]}", "the first name only")
    yield attack("hedge", f"Answer: {gold}\nAnswer: {path[1]}", "two answer lines")
    yield attack("hedge", f"Answer: {path[1]} or {gold}", "two names on the answer line")
    yield attack("hedge", "\n".join(f"Answer: {name}" for name in names), "everyone in the chart")
    yield attack("second guess", (f"Answer: {path[1]}", f"Answer: {gold}"), "a wrong answer, then the right one")
    yield attack("tool", lookup(f"Answer: {gold}"), "the answer inside a lookup")
    yield attack("tool", lookup(f"manager of the manager of {task.person}"), "the question as a lookup")
    yield attack("echo", (lookup(task.person), lambda seen: seen[-1]), "the record echoed back")
    yield attack("echo", (lookup(task.person), lambda seen: f"Answer: {seen[-1]}"), "the record as the answer")
    yield attack("greedy", follow_chain(task.person, 1), "one lookup, then the manager it shows")
    yield Probe("chain", EQUIVALENT, follow_chain(task.person, task.hops), "the chain followed from the records")
    yield Probe(
        "chain", EQUIVALENT, follow_chain(task.person, task.hops, "**Answer:** {}."), "the answer in bold, a full stop"
    )
    yield Probe(
        "chain", EQUIVALENT, (*lookups, f"{task.person} reports up to...\nanswer: {gold.upper()}"), "upper case"
    )
    yield Probe(
        "chain", EQUIVALENT, (lookup(task.person.lower()), *lookups[1:], f"Answer: {gold}"), "a lower-case lookup"
    )


@pytest.mark.parametrize("level", [1, 2])
def test_the_env_keeps_the_contract(env_properties, level: int) -> None:
    env_properties.check(ENV_ID, make_kwargs={"level": level}, garbage_examples=10)


@pytest.mark.parametrize("level", [1, 2])
def test_certify_finds_no_wrong_verdict(level: int) -> None:
    report = certify(ENV_ID, env_kwargs={"level": level}, tasks=20, generators=(*DEFAULT_GENERATORS, chart_probes))
    assert report.passed, str(report)
    assert report.by("kind")["chain"] == (4 * 20, 0)


def test_the_generated_charts_are_pinned(task_hashes) -> None:
    task_hashes.check(ENV_ID, "task_hashes.json")


CHART = {
    "people": [
        {"name": "Ada Berg", "title": "Chief Executive", "manager": None},
        {"name": "Bruno Costa", "title": "Director", "manager": "Ada Berg"},
        {"name": "Chen Dahl", "title": "Manager", "manager": "Bruno Costa"},
        {"name": "Dana Eze", "title": "Engineer", "manager": "Chen Dahl"},
    ],
    "person": "Dana Eze",
    "hops": 2,
}


def play(replies: list[str]) -> tuple[float, list[str]]:
    """The episode's reward and observations for the replies on CHART (answer: Bruno Costa);
    replies after the episode ended are not played."""
    env = gym.make(ENV_ID)
    env.reset(options={"task": CHART})
    total, seen = 0.0, []
    for reply in replies:
        observation, reward, terminated, truncated, _ = env.step(reply)
        total += float(reward)
        seen.append(observation)
        if terminated or truncated:
            break
    return total, seen


@pytest.mark.parametrize(
    ("replies", "reward"),
    [
        (["<lookup>Dana Eze</lookup>", "<lookup>chen dahl</lookup>", "Answer: Bruno Costa"], 1.0),
        (["Answer: Bruno Costa"], 1.0),  # the env pays the answer, not the tool use
        (["<lookup>Dana Eze</lookup> <lookup>Chen Dahl</lookup>", "Answer: Bruno Costa"], 1.0),  # names it guessed
        (["<lookup>Dana Eze</lookup>\nAnswer: Bruno Costa"], 1.0),  # an answer wins; its lookups are not run
        (["<lookup>Dana Eze</lookup>", "Answer: Chen Dahl"], 0.0),  # one level short
        (["Answer: Bruno"], 0.0),  # not a full name
        (["Bruno Costa"], 0.0),  # no answer line: a reminder, then nothing more
        (["Answer: Full Name"], 0.0),  # the format echoed
    ],
)
def test_replies_earn_what_they_should(replies: list[str], reward: float) -> None:
    assert play(replies)[0] == reward


def test_the_tool_shows_one_record_a_call_and_says_what_went_wrong() -> None:
    _, seen = play(["<lookup>Dana Eze</lookup><lookup>Nobody</lookup><lookup>Ada Berg", "no answer yet"])
    assert seen[0].splitlines() == [
        "<record>Dana Eze | title: Engineer | manager: Chen Dahl</record>",
        "<error>no one named 'Nobody' in the directory</error>",
        "<error><lookup> was not closed: write <lookup>Full Name</lookup></error>",
    ]
    assert "neither a final answer nor a lookup" in seen[1]
    calls = find_lookups(lookup("x") * (MAX_CALLS_PER_REPLY + 2))
    assert (len(calls.calls), calls.skipped) == (MAX_CALLS_PER_REPLY, 2)


def test_user_charts_are_checked() -> None:
    env = gym.make(ENV_ID)
    with pytest.raises(ValueError, match="Ada Berg has no manager in the chart: Dana Eze is not 4 levels down"):
        env.reset(options={"task": {**CHART, "hops": 4}})
    with pytest.raises(ValueError, match="names must differ"):
        env.reset(options={"task": {**CHART, "people": CHART["people"] * 2}})
    with pytest.raises(ValueError, match=r"a ManagerChain-v0 row is \{'people'"):
        env.reset(options={"task": {"person": "Dana Eze", "hops": 2}})
