"""rlenvs' pytest plugin: the testing kit as fixtures, so one line in a user's test suite
holds a reward function or an env to its properties.

    from hypothesis import strategies as st

    def test_my_reward(reward_properties):
        reward_properties.check(my_reward, truth_strategy=st.integers(0, 10**6))

    @pytest.mark.rlenvs_examples(200)
    def test_my_env(env_properties):
        env_properties.check("my_pkg:MyEnv-v0")

    def test_my_tasks_are_pinned(task_hashes):
        task_hashes.check("my_ns/MyEnv-v0", "task_hashes.json")

`reward_properties.check` runs `rlenvs.testing.check_reward`, `env_properties.check` runs
`rlenvs.testing.check_text_env`; both take the kit function's keyword arguments.
`task_hashes.check` holds a procedural env's generated tasks to the hashes a JSON file beside
the test pins (`rlenvs.testing.task_hashes`): tasks that moved fail with the families and
levels that moved and the rule (bump the id's -vN, then re-pin); `--rlenvs-pin-hashes` writes
what is not pinned yet and never overwrites a pinned hash, and without it a missing file fails
with the command that creates it, so CI never pins anything. A failing
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
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rlenvs.testing.envs import EnvReport
    from rlenvs.testing.properties import RewardReport

MARKER = "rlenvs_examples"
OPTION = "--rlenvs-examples"
PIN_OPTION = "--rlenvs-pin-hashes"
"""Also `rlenvs.testing.task_hashes.PIN_OPTION`; spelled here so that this module imports no kit."""


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
    group = parser.getgroup("rlenvs", "rlenvs checks (reward_properties, env_properties, task_hashes)")
    group.addoption(
        OPTION,
        dest="rlenvs_examples",
        type=_example_count,
        default=None,
        metavar="N",
        help="hypothesis examples per check for the reward_properties and env_properties fixtures, in tests "
        "without @pytest.mark.rlenvs_examples (default: the kit's own)",
    )
    group.addoption(
        PIN_OPTION,
        dest="rlenvs_pin_hashes",
        action="store_true",
        default=False,
        help="task_hashes fixture: write the task hashes not pinned yet (a new file, id, family or level); "
        "pinned hashes are never overwritten (tasks that moved need a new -vN first)",
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


class TaskHashesPinned(pytest.PytestWarning):
    """Task hashes were written (`--rlenvs-pin-hashes`): commit the file."""


@dataclass(frozen=True)
class TaskHashes:
    """What the `task_hashes` fixture gives a test."""

    pin: bool
    """`--rlenvs-pin-hashes` was given: write what is not pinned yet."""
    folder: Path
    """The requesting test file's folder: a relative pinned path is read from there."""
    nodeid: str
    check_pinned: Callable[..., str]

    def check(self, env: Any, pinned_path: str | Path, *, env_id: str | None = None) -> str:
        """Hold the generated tasks of `env` (a registered id or a ProceduralEnv class) to the
        hashes `pinned_path` pins for its id (`rlenvs.testing.task_hashes.check_pinned`); fail
        the test with what moved and the rule. Returns what was checked or pinned."""
        path = Path(pinned_path)
        path = path if path.is_absolute() else self.folder / path
        from rlenvs.testing.task_hashes import TaskHashesError

        said, failure = "", None
        try:
            said = self.check_pinned(
                env, path, env_id=env_id, pin=self.pin, pin_command=f'pytest "{self.nodeid}" {PIN_OPTION}'
            )
        except TaskHashesError as error:
            failure = str(error)
        if failure is not None:  # failed outside the except block: the message is the report, not a chain
            pytest.fail(failure, pytrace=False)
        if said.startswith("pinned "):
            warnings.warn(TaskHashesPinned(f"{said}: commit it"), stacklevel=2)
        return said


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


@pytest.fixture
def task_hashes(request: pytest.FixtureRequest) -> TaskHashes:
    """`task_hashes.check("my_ns/MyEnv-v0", "task_hashes.json")`: the env's generated tasks are
    the ones the file beside the test pins; `--rlenvs-pin-hashes` pins what is new."""
    from rlenvs.testing.task_hashes import check_pinned

    return TaskHashes(
        request.config.getoption("rlenvs_pin_hashes"), Path(request.path).parent, request.node.nodeid, check_pinned
    )
