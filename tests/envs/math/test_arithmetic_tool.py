"""Arithmetic-Tool-v1: calculator turns over Arithmetic-v1's problems, and the oracle that
demonstrates the calculator on a chosen share of them (the quickstart's SFT data)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.envs.math.arithmetic_tool import TOOL_FORMAT_REMINDER, ArithmeticToolEnv, calculator_expression
from rlenvs.envs.tools.calculator_calls import CALL_OPEN


def make(**kwargs) -> ArithmeticToolEnv:
    return gym.make("rlenvs/Arithmetic-Tool-v1", **kwargs).unwrapped


def oracle_episode(env: ArithmeticToolEnv, seed: int) -> tuple[list[str], float]:
    env.reset(seed=seed)
    replies, total, done = [], 0.0, False
    while not done:
        replies.append(env.oracle_action())
        _, reward, terminated, truncated, _ = env.step(replies[-1])
        total, done = total + float(reward), terminated or truncated
    return replies, total


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_the_oracle_solves_every_level_and_calls_wherever_the_result_is_the_answer(level: int) -> None:
    env = make(level=level)
    calls = 0
    for seed in range(40):
        replies, total = oracle_episode(env, seed)
        assert total == 1.0, (level, seed, replies)
        uses = replies[0].startswith(CALL_OPEN)
        assert uses == (calculator_expression(env.current_task) is not None), replies
        assert len(replies) == (2 if uses else 1)
        calls += uses
    if level <= 3:  # "What is 97 × (-9)?": every problem is an expression with an integer answer
        assert calls == 40
    else:  # word problems and fractions are answered in one reply
        assert 0 < calls < 40


def test_the_share_picks_demonstrations_by_task_and_the_same_on_every_env() -> None:
    quarter, again, none = (
        make(oracle_calculator_share=0.25),
        make(oracle_calculator_share=0.25),
        make(oracle_calculator_share=0.0),
    )
    used = []
    for seed in range(400):
        replies, total = oracle_episode(quarter, seed)
        assert total == 1.0
        used.append(replies[0].startswith(CALL_OPEN))
        assert oracle_episode(again, seed)[0] == replies
        assert not oracle_episode(none, seed)[0][0].startswith(CALL_OPEN)
    assert 0.18 < sum(used) / len(used) < 0.32, sum(used)


def test_a_call_gets_its_result_and_pays_nothing_until_the_answer() -> None:
    env = make()
    env.reset(seed=0, options={"task": {"question": "What is 7 + 9?", "answer": "16"}})
    observation, reward, terminated, truncated, info = env.step("<calculator>7 + 9</calculator>")
    assert (observation, reward, terminated, truncated) == ("<result>16</result>", 0.0, False, False)
    assert (info["tool_calls"], info["tool_errors"], info["tool_calls_total"]) == (1, 0, 1)
    observation, reward, terminated, truncated, info = env.step("I am not sure.")
    assert (observation, reward, terminated, truncated) == (TOOL_FORMAT_REMINDER, 0.0, False, False)
    observation, reward, terminated, truncated, info = env.step("\\boxed{16}")
    assert (reward, terminated, info["in_form"], info["tool_calls_total"]) == (1.0, True, True, 1)


def test_one_turn_leaves_no_room_for_a_call() -> None:
    env = make(max_turns=1)
    replies, total = oracle_episode(env, 0)
    assert total == 1.0 and not replies[0].startswith(CALL_OPEN)


@pytest.mark.parametrize("share", [-0.1, 1.5, True, "0.25", None])
def test_a_share_outside_0_to_1_is_refused_by_name(share: object) -> None:
    with pytest.raises(ValueError, match="oracle_calculator_share must be a number from 0 to 1"):
        make(oracle_calculator_share=share)
