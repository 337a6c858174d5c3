"""capitals/Capitals-v0 held to what rlenvs holds its own envs to: the env contract (the
`env_properties` fixture), certify's generated attacks and equivalent forms on every task (0
wrong verdicts), and the replies a policy would try to win with, or a right reply could lose
with, kept as cases."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401  # registers capitals/Capitals-v0 through this package's entry point
from rlenvs.testing.certify import certify

ENV_ID = "capitals/Capitals-v0"


def test_the_env_keeps_the_contract(env_properties) -> None:
    env_properties.check(ENV_ID, garbage_examples=10)


def test_certify_finds_no_wrong_verdict_on_any_task() -> None:
    report = certify(ENV_ID, every_task=True)
    assert report.passed, str(report)
    assert report.tasks == len(gym.make(ENV_ID).unwrapped.tasks)
    assert report.by("kind")["hedge"][0] >= 20 * report.tasks  # every way certify hedges, on every city


def reward(reply: str, country: str, capital: str | list[str]) -> float:
    """The reward for one reply to "What is the capital of <country>?", posed as a row of the
    env's own format (`options["task"]`), so a case reads without the data file."""
    env = gym.make(ENV_ID)
    env.reset(options={"task": {"country": country, "capital": capital}})
    return env.step(reply)[1]


@pytest.mark.parametrize(
    ("reply", "country", "capital", "paid"),
    [
        ("\\boxed{Paris}", "France", "Paris", 1.0),
        ("It is the city on the Seine.\n\n**Answer:** paris", "France", "Paris", 1.0),
        ("\\boxed{Reykjavik}", "Iceland", "Reykjavík", 1.0),  # accents are no part of the answer
        ("\\boxed{Kiev}", "Ukraine", ["Kyiv", "Kiev"], 1.0),  # any accepted spelling
        ("\\boxed{Washington DC}", "the United States", ["Washington, D.C.", "Washington"], 1.0),
        ("\\boxed{Paris} or \\boxed{Lyon}", "France", "Paris", 0.0),  # a hedge
        ("\\boxed{Port of Spain} or San Fernando", "Trinidad and Tobago", "Port of Spain", 0.0),
        ("\\boxed{Paris, Lyon, Marseille}", "France", "Paris", 0.0),  # every candidate in one box
        ("\\boxed{Kyiv}\nAnswer: Lviv", "Ukraine", ["Kyiv", "Kiev"], 0.0),  # two final answers
        ("The capital of France is Paris.", "France", "Paris", 0.0),  # no final answer: the prompt asks for a box
        ("What is the capital of France?", "France", "Paris", 0.0),  # the question echoed
    ],
)
def test_a_reply_earns_the_capital_once_and_nothing_for_two(reply, country, capital, paid) -> None:
    assert reward(reply, country, capital) == paid
