"""orgchart/ManagerChain-v0: who is two (or three) levels above a person in a company's chart?
The chart is generated per task and hidden: the agent sees only the person's name and must
look people up, one hop a reply, with the directory tool (`org_chart.directory`).

It reads as every rlenvs env does: the family (levels and their generator), the task, then
the env in two parts. `ManagerChainVerdict` is the task's verdict on a reply; `ManagerChainEnv`
adds tool turns (`rlenvs.envs.tools.turns.ToolTurns`), which read a reply in this order:

1. a line `Answer: Full Name` is the final answer: it ends the episode, right or wrong, and
   lookups in the same reply are not run (an answer cannot rest on records it has not seen).
   Names compare whatever their case, spacing and markdown; answer lines naming two or more
   people are a hedge and earn 0;
2. otherwise the reply's `<lookup>` calls are run and the next observation holds the records;
3. otherwise a reminder of both formats. Truncated after `max_turns` replies (default 6).

Why the tool is needed and does not give the answer away: the chart exists only in the task,
a record holds one person's direct manager, and the names are drawn from 400 for every task.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from org_chart.directory import USAGE, Directory, Person, normal
from rlenvs.core import Judgement, Task, TextEnv
from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family, Level, ProceduralEnv
from rlenvs.core.task import content_task_id
from rlenvs.envs.tools.turns import ToolTurns

FIRST = (
    "Ada", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun",
    "Kemal", "Lena", "Mateo", "Nia", "Omar", "Priya", "Quinn", "Ravi", "Sofia", "Tomas",
)  # fmt: skip
LAST = (
    "Abara", "Berg", "Costa", "Dahl", "Eze", "Fischer", "Garcia", "Haas", "Ito", "Jensen",
    "Kowal", "Lind", "Moreau", "Novak", "Okafor", "Petrov", "Quist", "Rossi", "Sato", "Tan",
)  # fmt: skip
NAMES = tuple(f"{first} {last}" for first in FIRST for last in LAST)
TITLES = ("Chief Executive", "Vice President", "Director", "Manager", "Team Lead", "Engineer")
"""By depth in the chart; deeper than the list: its last title."""

# --- the family: a chart, a person in it, and how far up to go -------------------------------


class Chart(NamedTuple):
    people: tuple[Person, ...]
    person: str
    hops: int


def chart(hops: int, fewest: int, most: int, rng: np.random.Generator) -> Chart:
    """A chart of `fewest`..`most` people under one chief, whose first `hops` + 1 people form a
    chain (so someone is `hops` levels down); the rest report to anyone above depth 4."""
    names = draw_sample(rng, NAMES, draw_int(rng, fewest, most))
    depth = {names[0]: 0}
    managers: dict[str, str | None] = {names[0]: None}
    for index, name in enumerate(names[1:], start=1):
        manager = names[index - 1] if index <= hops else draw_from(rng, [n for n in names[:index] if depth[n] < 4])
        managers[name], depth[name] = manager, depth[manager] + 1
    people = tuple(Person(n, TITLES[min(depth[n], len(TITLES) - 1)], managers[n]) for n in names)
    return Chart(people, draw_from(rng, [n for n in names if depth[n] >= hops]), hops)


MANAGER_CHAIN = Family.of_levels(
    "manager-chain",
    "Find the person some levels above another in a hidden company chart, by looking people up.",
    {
        1: Level("2 levels up, a chart of 8 to 12 people", partial(chart, 2, 8, 12)),
        2: Level("3 levels up, a chart of 12 to 20 people", partial(chart, 3, 12, 20)),
    },
)

# --- the task ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainTask(Task):
    people: tuple[Person, ...]
    person: str
    hops: int
    path: tuple[str, ...]
    """The person, then each manager up to the answer: what the oracle looks up."""
    answer: str


def pose(task_id: str, scenario: Chart) -> ChainTask:
    managers = {person.name: person.manager for person in scenario.people}
    path = [scenario.person]
    for _ in range(scenario.hops):
        manager = managers.get(path[-1])
        if manager is None:
            raise ValueError(
                f"{path[-1]} has no manager in the chart: {scenario.person} is not {scenario.hops} levels down"
            )
        path.append(manager)
    question = "the manager of " * (scenario.hops - 1) + f"{scenario.person}'s manager"
    prompt = (
        f"Who is {question}, {scenario.hops} levels above {scenario.person} in the company's chart? {USAGE} "
        "When you know, end your reply with a line `Answer: Full Name`."
    )
    return ChainTask(task_id, prompt, scenario.people, scenario.person, scenario.hops, tuple(path), path[-1])


def chain_task(level: int, index: int) -> ChainTask:
    """Task `index` at `level`; module level so that an env holding it pickles."""
    return pose(MANAGER_CHAIN.task_id(level, index), MANAGER_CHAIN.scenario(level, index))


# --- the verdict -------------------------------------------------------------------------------

ANSWER_LINE = re.compile(r"^[ \t*_#]*(?:final[ \t]+)?answer[ \t*_]*:(.*)$", re.IGNORECASE | re.MULTILINE)
REMINDER = (
    "I found neither a final answer nor a lookup in your reply. To look someone up, write "
    "<lookup>Full Name</lookup>; to answer, end your reply with a line `Answer: Full Name`."
)


def answers(reply: str) -> set[str]:
    """The names the reply's answer lines give, as compared (`normal`); empty lines are none."""
    return {normal(line) for line in ANSWER_LINE.findall(reply)} - {""}


class ManagerChainVerdict(ProceduralEnv, TextEnv[ChainTask]):
    """The task and its verdict on a reply, without tools: 1.0 iff its one answer names the
    person `hops` levels up. (`ToolTurns` calls this `judge` for replies with an answer.)"""

    env_name = "ManagerChain-v0"
    task_families = {MANAGER_CHAIN.name: MANAGER_CHAIN}

    @classmethod
    def task_of(cls, family: str, level: int, index: int) -> ChainTask:
        return chain_task(level, index)

    def task_from_row(self, row: Mapping[str, Any]) -> ChainTask:
        """A chart of your own: {"people": [{"name", "title", "manager"}, ...], "person", "hops"}."""
        try:
            people = tuple(Person(p["name"], p["title"], p.get("manager")) for p in row["people"])
            if len({normal(p.name) for p in people}) != len(people) or type(row["hops"]) is not int or row["hops"] < 1:
                raise ValueError("names must differ and hops must be an int of at least 1")
            return pose(content_task_id(MANAGER_CHAIN.name, row), Chart(people, row["person"], row["hops"]))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(
                "a ManagerChain-v0 row is {'people': [{'name': str, 'title': str, 'manager': str or None}, ...], "
                f"'person': a name in people, 'hops': int >= 1, that many managers above them}}: {error}"
            ) from None

    def judge(self, task: ChainTask, reply: str) -> Judgement:
        given = answers(reply)
        if not given:
            return Judgement(0.0, resolved=False, feedback=REMINDER)
        correct = given == {normal(task.answer)}
        info = {"parsed_answer": " | ".join(sorted(given)), "hedged": len(given) > 1}
        return Judgement(float(correct), True, correct, stop_reason="answered", info=info)

    def oracle_reply(self, task: ChainTask, turn: int) -> str:
        return f"Answer: {task.answer}"


class ManagerChainEnv(ToolTurns, ManagerChainVerdict):
    """ManagerChain-v0 with the directory tool: look up, one hop a reply, then answer."""

    tool_format_reminder = REMINDER

    def __init__(self, level: int = 1, max_turns: int = 6, render_mode: str | None = None) -> None:
        super().__init__(self.level_source(level, chain_task), max_turns=max_turns, render_mode=render_mode)

    def tools_for(self, task: ChainTask) -> tuple[Directory]:
        return (Directory(task.people),)  # each task has its own chart

    def final_answer_marked(self, reply: str) -> bool:
        return bool(answers(reply))

    def oracle_reply(self, task: ChainTask, turn: int) -> str:
        """One lookup a turn up the chain, then the answer; the answer at once where the turns
        could not hold the lookups."""
        if turn >= task.hops or self.max_turns <= task.hops:
            return f"Answer: {task.answer}"
        return f"<lookup>{task.path[turn]}</lookup>"
