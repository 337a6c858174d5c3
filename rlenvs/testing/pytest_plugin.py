"""rlenvs' pytest plugin: the testing kit as fixtures, so one line in a user's test suite
holds a reward function or an env to its properties.

    from hypothesis import strategies as st

    def test_my_reward(reward_properties):
        reward_properties.check(my_reward, truth_strategy=st.integers(0, 10**6))

    @pytest.mark.rlenvs_examples(200)
    def test_my_env(env_properties):
        env_properties.check("my_pkg:MyEnv-v0")

`reward_properties.check` runs `rlenvs.testing.check_reward`, `env_properties.check` runs
`rlenvs.testing.check_text_env`; both take the kit function's keyword arguments. A failing
check fails the test with the kit's report (every failing property with its shrunk
counterexample) and no traceback, because the report is what says what went wrong; a
passing check returns the report.

The number of hypothesis examples per check (`examples=` of `check_reward`,
`garbage_examples=` of `check_text_env`) is, first to last: the argument given to `check`,
the test's `@pytest.mark.rlenvs_examples(n)`, the `--rlenvs-examples N` option, the kit's
default. CI can run more examples than a laptop without editing a test.

pytest loads this module through the `pytest11` entry point in every session of every
project that has rlenvs installed, so it imports only pytest and the standard library. The
kit, and hypothesis with it, is imported by the fixtures: a project without hypothesis
sees the kit's ImportError, which names the install command, only in a test that asks for
`reward_properties` (`env_properties` runs without hypothesis, on its fixed corpus).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rlenvs.testing.envs import EnvReport
    from rlenvs.testing.properties import RewardReport

MARKER = "rlenvs_examples"
OPTION = "--rlenvs-examples"


def _example_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of examples: pass a whole number, at least 1, e.g. {OPTION} 200"
        )
    return count


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rlenvs", "rlenvs property checks (reward_properties, env_properties)")
    group.addoption(
        OPTION,
        dest="rlenvs_examples",
        type=_example_count,
        default=None,
        metavar="N",
        help="hypothesis examples per check for the reward_properties and env_properties fixtures, in tests "
        "without @pytest.mark.rlenvs_examples (default: the kit's own)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(n): run n hypothesis examples per check in this test's reward_properties and "
        f"env_properties fixtures (overrides {OPTION})",
    )


def _examples(request: pytest.FixtureRequest) -> int | None:
    """The example count in effect for this test: its closest marker, else the option,
    else None (the kit's default)."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        return request.config.getoption("rlenvs_examples")
    args = marker.args
    if marker.kwargs or len(args) != 1 or isinstance(args[0], bool) or not isinstance(args[0], int) or args[0] < 1:
        written = ", ".join([*map(repr, args), *(f"{key}={value!r}" for key, value in marker.kwargs.items())])
        pytest.fail(
            f"@pytest.mark.{MARKER}({written}) on {request.node.nodeid}: the marker takes one whole number, "
            f"at least 1, the examples per check, e.g. @pytest.mark.{MARKER}(200)",
            pytrace=False,
        )
    return args[0]


@dataclass(frozen=True)
class RewardProperties:
    """What the `reward_properties` fixture gives a test."""

    examples: int | None
    """Examples per property from the marker or the option; None for the kit's default."""
    check_reward: Callable[..., RewardReport]

    def check(self, function: Callable[..., Any], truth_strategy: Any = None, **options: Any) -> RewardReport:
        """Run `check_reward(function, truths=truth_strategy, **options)`; fail the test with
        the report if a property fails, return the report if all pass."""
        if truth_strategy is not None:
            if "truths" in options:
                raise TypeError(
                    "reward_properties.check got both truth_strategy= and truths=, which are the same "
                    "argument: pass one of them"
                )
            options["truths"] = truth_strategy
        if self.examples is not None:
            options.setdefault("examples", self.examples)
        report = self.check_reward(function, **options)
        if not report.passed:
            pytest.fail(str(report), pytrace=False)
        return report


@dataclass(frozen=True)
class EnvProperties:
    """What the `env_properties` fixture gives a test."""

    examples: int | None
    """Hypothesis garbage episodes per `max_turns` variant from the marker or the option;
    None for the kit's default."""
    check_text_env: Callable[..., EnvReport]

    def check(self, env_or_id: Any, **options: Any) -> EnvReport:
        """Run `check_text_env(env_or_id, **options)`; fail the test with the report if a
        check fails, return the report if none does (skipped checks do not fail)."""
        if self.examples is not None:
            options.setdefault("garbage_examples", self.examples)
        report = self.check_text_env(env_or_id, **options)
        if not report.passed:
            pytest.fail(str(report), pytrace=False)
        return report


@pytest.fixture
def reward_properties(request: pytest.FixtureRequest) -> RewardProperties:
    """`reward_properties.check(my_reward, truth_strategy=...)`: the seven reward-function
    properties of `rlenvs.testing.check_reward`; the test fails with the counterexamples."""
    examples = _examples(request)
    from rlenvs.testing.properties import check_reward  # needs hypothesis; its ImportError says how to install it

    return RewardProperties(examples, check_reward)


@pytest.fixture
def env_properties(request: pytest.FixtureRequest) -> EnvProperties:
    """`env_properties.check("my_pkg:MyEnv-v0")`: the env contract of
    `rlenvs.testing.check_text_env`; the test fails with the report."""
    examples = _examples(request)
    from rlenvs.testing.envs import check_text_env

    return EnvProperties(examples, check_text_env)
