"""The env contract, checked for every registered id.

The contract itself is the public kit, `rlenvs.testing.envs.check_text_env` (see
docs/design.md, "The env contract"): one parametrised test runs it on every catalog id,
so an env is held to the contract the moment it is registered, with the same checks users
run on their own envs. What is rlenvs' own promise rather than every text env's stays here.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlenvs
from rlenvs.core import UnicodeText
from rlenvs.testing.envs import check_text_env
from tests.conftest import MAKE_KWARGS, SANDBOX_ENV_IDS

ENV_IDS = [
    pytest.param(entry.id, marks=[pytest.mark.sandbox] if entry.id in SANDBOX_ENV_IDS else [])
    for entry in rlenvs.CATALOG
]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_env_keeps_the_contract(env_id: str) -> None:
    report = check_text_env(env_id, make_kwargs=MAKE_KWARGS.get(env_id, {}))
    assert report.passed, f"\n{report}"
    # Every rlenvs env has an oracle, max_turns, the chat convention, render modes and an id,
    # so no check may be skipped: a skip here means the env lost one of them.
    skipped = [check.name for check in report.checks if check.skipped]
    assert not skipped, f"checks skipped for {env_id}: {skipped}\n{report}"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spaces_are_unicode_text_and_both_text_render_modes_exist(env_id: str) -> None:
    # rlenvs' own choice of space (cheap to deep-copy, any str a member) and render modes;
    # the kit accepts any Text space that admits every reply, and whichever modes exist.
    env = gym.make(env_id, **MAKE_KWARGS.get(env_id, {})).unwrapped
    assert isinstance(env.observation_space, UnicodeText) and isinstance(env.action_space, UnicodeText)
    assert env.metadata["render_modes"] == ["ansi", "human"]
