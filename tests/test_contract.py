"""The env contract, checked for every registered id.

Parametrised over the catalog, so an env is held to the contract the moment it is
registered. See ../shared/DESIGN.md ("The env contract").
"""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rlenvs
from rlenvs.core import TextEnv, UnicodeText
from tests.conftest import MAKE_KWARGS

ENV_IDS = [entry.id for entry in rlenvs.CATALOG]

# Replies a model might send that are not answers: empty, huge, unicode, control and
# binary-looking characters, lone surrogates, markup.
GARBAGE = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec=None), max_size=50),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.sampled_from(["", " ", "\n" * 1000, "\ud800", "\\boxed{", "}" * 100, "####", "x" * 100_000,
                     "\\boxed{" * 3000, "The answer is", "\x00\x1b[31m", "😀" * 5000]),
)


@pytest.fixture(params=ENV_IDS)
def env_id(request: pytest.FixtureRequest) -> str:
    return request.param


def make(env_id: str, **kwargs) -> TextEnv:
    return gym.make(env_id, **MAKE_KWARGS.get(env_id, {}), **kwargs).unwrapped


def run_episode(env: gym.Env, seed: int, policy) -> tuple[float, int, dict]:
    obs, info = env.reset(seed=seed)
    total, steps, terminated, truncated = 0.0, 0, False, False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(policy(env))
        total += reward
        steps += 1
        assert not (terminated and truncated), "terminated and truncated are never both set"
    return total, steps, info


def test_gymnasium_check_env_passes(env_id: str) -> None:
    env = gym.make(env_id, **MAKE_KWARGS.get(env_id, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning is a contract failure
        check_env(env.unwrapped, skip_render_check=False)


def test_spaces_are_unicode_text(env_id: str) -> None:
    env = make(env_id)
    assert isinstance(env.observation_space, UnicodeText) and isinstance(env.action_space, UnicodeText)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_same_seed_same_task_and_observation(env_id: str, seed: int) -> None:
    first, second = make(env_id), make(env_id)
    obs_a, info_a = first.reset(seed=seed)
    obs_b, info_b = second.reset(seed=seed)
    assert obs_a == obs_b and info_a == info_b
    first.reset(seed=seed)  # and again on the same instance
    assert first.reset(seed=seed)[0] == obs_a


def test_different_seeds_draw_different_tasks(env_id: str) -> None:
    env = make(env_id)
    ids = {env.reset(seed=seed)[1]["task_id"] for seed in range(20)}
    assert len(ids) > min(10, len(env.tasks) // 2 if env.tasks.sized else 10)


@pytest.mark.parametrize("seed", range(25))
def test_oracle_reaches_the_maximum_reward(env_id: str, seed: int) -> None:
    env = make(env_id)
    total, steps, info = run_episode(env, seed, lambda e: e.oracle_action())
    assert total == env.reward_range[1]
    assert info["correct"] is True
    assert steps <= env.max_turns


@pytest.mark.parametrize("max_turns", [1, 3])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_text_action_is_valid(env_id: str, max_turns: int, data: st.DataObject) -> None:
    env = make(env_id, max_turns=max_turns)
    env.reset(seed=data.draw(st.integers(0, 1000)))
    low, high = env.reward_range
    terminated = truncated = False
    steps = 0
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(data.draw(GARBAGE))
        steps += 1
        assert isinstance(obs, str) and env.observation_space.contains(obs)
        assert isinstance(reward, float) and math.isfinite(reward) and low <= reward <= high
        assert not (terminated and truncated)
        assert steps <= max_turns
    assert info["stop_reason"]
    assert obs == "" and info["messages"] == []


def test_episode_ends_within_max_turns(env_id: str) -> None:
    env = make(env_id, max_turns=4)
    total, steps, info = run_episode(env, 0, lambda e: "no idea")
    assert steps <= 4
    if steps == 4:
        assert info["stop_reason"] == "max_turns"


def test_single_turn_budget_always_terminates(env_id: str) -> None:
    env = make(env_id, max_turns=1)
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step("no idea")
    assert terminated and not truncated and info["stop_reason"]


def test_info_and_messages_are_fresh_objects(env_id: str) -> None:
    env = make(env_id, max_turns=3)
    _, info_a = env.reset(seed=0)
    _, info_b = env.reset(seed=0)
    assert info_a is not info_b and info_a["messages"] is not info_b["messages"]
    info_a["messages"].append({"role": "user", "content": "tampered"})
    info_a["messages"][0]["content"] = "tampered"
    assert "tampered" not in env.transcript_text()
    _, _, _, _, step_a = env.step("no idea")
    env.reset(seed=0)
    _, _, _, _, step_b = env.step("no idea")
    assert step_a is not step_b and step_a["messages"] is not step_b["messages"]


def test_messages_follow_the_chat_format(env_id: str) -> None:
    env = make(env_id, max_turns=2)
    obs, info = env.reset(seed=3)
    assert info["messages"][-1] == {"role": "user", "content": obs}
    assert all(m["role"] in ("system", "user") for m in info["messages"])
    assert info["max_turns"] == 2 and isinstance(info["task_id"], str)


def test_misuse_raises_clear_errors(env_id: str) -> None:
    env = make(env_id)
    with pytest.raises(ResetNeeded, match="reset"):
        env.step("hello")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="str"):
        env.step(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str"):
        env.step(None)  # type: ignore[arg-type]
    env.step(env.oracle_action())
    with pytest.raises(ResetNeeded, match="ended"):
        env.step(env.oracle_action())


def test_render_modes(env_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    env = make(env_id, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    env.step("my reply")
    text = env.render()
    assert obs in text and "my reply" in text
    env = make(env_id, render_mode="human")
    env.reset(seed=0)
    env.step("my reply")
    assert env.render() is None
    assert "my reply" in capsys.readouterr().out
    with pytest.raises(ValueError, match="render_mode"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's own warning about the same mistake
        make(env_id, render_mode="rgb_array")


def test_env_pickles_and_deepcopies(env_id: str) -> None:
    env = make(env_id)
    obs, _ = env.reset(seed=5)
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert clone.task == env.task
        _, reward, *_ = clone.step(clone.oracle_action())
        assert reward == env.reward_range[1]


@pytest.mark.parametrize("mode,kwargs", [("sync", {}), ("async", {"shared_memory": False})])
def test_vector_envs_run_an_episode(env_id: str, mode: str, kwargs: dict) -> None:
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode=mode, vector_kwargs=kwargs, **MAKE_KWARGS.get(env_id, {}))
    try:
        observations, infos = envs.reset(seed=11)
        single = make(env_id)
        expected = [single.reset(seed=11 + i)[0] for i in range(3)]
        assert list(observations) == expected
        actions = tuple(envs.call("oracle_action"))
        _, rewards, terminated, truncated, _ = envs.step(actions)
        assert np.all(rewards == single.reward_range[1])
        assert np.all(terminated) and not np.any(truncated)
    finally:
        envs.close()
