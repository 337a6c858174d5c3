"""CONTRIBUTING.md's promise, kept: a procedural env is one file (tests/support/reverse_words.py) plus
one catalog entry, and with nothing else it keeps the whole env contract.

The entry is registered here the way `rlenvs.envs.catalog.register_envs` registers the
catalog's, and taken out of gymnasium's registry afterwards, so that the suite's other
tests, which walk the rlenvs ids, do not meet an example env.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import pytest

from rlenvs.core.registration import EnvEntry, register
from rlenvs.testing.envs import check_text_env
from tests.support.reverse_words import REVERSE, ReverseWordsEnv, reverse_task

ENTRY = EnvEntry(
    id="rlenvs/ReverseWords-v0",
    entry_point="tests.support.reverse_words:ReverseWordsEnv",
    family="example",
    summary="Spell words backwards, in 2 procedural levels (the example of CONTRIBUTING.md).",
    observes="a word or a phrase",
    acts="the words spelled backwards",
    reward="1 iff the reply is the reversed text",
    turns="1 (max_turns=k: retries with feedback)",
)


@pytest.fixture(scope="module")
def env_id():
    register([ENTRY])
    yield ENTRY.id
    del gym.registry[ENTRY.id]


@pytest.mark.parametrize("level", [1, 2])
def test_the_example_env_keeps_the_contract(env_id: str, level: int) -> None:
    report = check_text_env(env_id, make_kwargs={"level": level}, garbage_examples=10)
    assert report.passed, f"\n{report}"
    assert not [check.name for check in report.checks if check.skipped], f"\n{report}"  # as for catalog ids


def test_its_ids_rebuild_their_tasks_and_its_levels_are_checked(env_id: str) -> None:
    env = gym.make(env_id, level=2)
    _, info = env.reset(seed=3)
    index = int(info["task_id"].removeprefix("reverse/L2/"))
    first = env.unwrapped.task
    env.reset(seed=4)
    env.reset(options={"task_id": info["task_id"]})
    assert env.unwrapped.task == first == reverse_task(2, index) == ReverseWordsEnv.task_of("reverse", 2, index)
    assert pickle.loads(pickle.dumps(env.unwrapped)).task == env.unwrapped.task
    with pytest.raises(ValueError, match=r"ReverseWords-v0 has no level 3: pass level= one of \[1, 2\] \(1 = one word"):
        gym.make(env_id, level=3)
    with pytest.raises(TypeError, match="ReverseWords-v0 level must be an int"):
        ReverseWordsEnv(level="1")
    with pytest.raises(ValueError, match="family reverse has no level 3"):
        REVERSE.scenario(3, 0)
