"""`rlenvs.testing`'s reward-function kit: rlenvs' own reward functions held to it, and the
kit itself shown to catch planted bugs, each with the property that should catch it."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings

import rlenvs.rewards.math as math_rewards
from rlenvs.rewards.math import extract_final_answer, gold_value, numeric_answer_score, parse_number
from rlenvs.rewards.math.extraction import boxed_contents, hash_answers
from rlenvs.testing import PROPERTY_NAMES, check_reward, check_time_budget, properties
from rlenvs.testing.strategies import (
    CONFUSABLE_RENDERINGS,
    DEFAULT_RENDERINGS,
    Case,
    as_truth,
    cases,
    correct_answers,
    hedges,
    near_miss_values,
    numeric_truths,
)

# --- rlenvs' own reward functions, every one of them ----------------------------------------


def reward_functions() -> list[tuple[str, Callable, str]]:
    """Every public reward function of `rlenvs.rewards.math`: `*_score` take
    (completion, ground_truth), `*_reward` are TRL-shaped."""
    found = []
    for name in math_rewards.__all__:
        if name.endswith("_score"):
            found.append((name, getattr(math_rewards, name), "plain"))
        elif name.endswith("_reward"):
            found.append((name, getattr(math_rewards, name), "trl"))
    return found


REWARD_FUNCTIONS = reward_functions()
THOUSANDS = re.compile(r"\d(,|\{,\})\d")


def test_every_reward_function_is_found() -> None:
    assert {name for name, _, _ in REWARD_FUNCTIONS} >= {
        "math_answer_score",
        "numeric_answer_score",
        "math_answer_reward",
        "numeric_answer_reward",
    }


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize("name,function,shape", REWARD_FUNCTIONS, ids=[name for name, _, _ in REWARD_FUNCTIONS])
def test_reward_function_keeps_every_property(name: str, function: Callable, shape: str) -> None:
    report = check_reward(
        function,
        shape=shape,
        conversational=shape == "trl",
        truths=numeric_truths(),
        renderings=DEFAULT_RENDERINGS + CONFUSABLE_RENDERINGS,  # docs/rewards.md: fullwidth digits, unicode minus
        examples=40,
    )
    assert [r.name for r in report.reports] == list(PROPERTY_NAMES)
    assert report.passed, f"\n{report}"


# --- planted bugs: each caught by its property, and only by it ------------------------------


def returns_two(completion: str, ground_truth: str) -> float:
    """Bug: rewards a correct answer 2.0 in a declared [0, 1]."""
    return 2.0 * numeric_answer_score(completion, ground_truth)


def raises_on_unicode(completion: str, ground_truth: str) -> float:
    """Bug: assumes ASCII."""
    completion.encode("ascii")
    return numeric_answer_score(completion, ground_truth)


def random_on_wrong_answers(completion: str, ground_truth: str) -> float:
    """Bug: a wrong answer sometimes earns a little (still in range, still below correct)."""
    score = numeric_answer_score(completion, ground_truth)
    return score if score else random.choice([0.0, 0.1])


def accepts_hedges(completion: str, ground_truth: str) -> float:
    """Bug: any boxed or #### answer equal to the truth counts, as in match-anywhere verifiers."""
    gold = gold_value(ground_truth)
    stated = [parse_number(answer) for answer in boxed_contents(completion) + hash_answers(completion)]
    return 1.0 if numeric_answer_score(completion, ground_truth) or gold in stated else 0.0


def rejects_thousands_separators(completion: str, ground_truth: str) -> float:
    """Bug: reads `1,234` as no number."""
    return 0.0 if THOUSANDS.search(completion) else numeric_answer_score(completion, ground_truth)


def tolerates_off_by_one(completion: str, ground_truth: str) -> float:
    """Bug: a final answer within 1 of the truth counts."""
    extraction = extract_final_answer(completion)
    answer = extraction.answer
    if extraction.hedged or answer is None or answer.value is None:
        return 0.0
    return 1.0 if abs(answer.value - gold_value(ground_truth)) <= 1 else 0.0


def returns_nan_on_empty(completion: str, ground_truth: str) -> float:
    """Bug: 0/0 on an empty completion."""
    return float("nan") if not completion.strip() else numeric_answer_score(completion, ground_truth)


def is_correct_answer(case: Case) -> bool:
    return numeric_answer_score(case.completion, case.truth) == 1.0


PLANTED = [
    # (bug, the property that must catch it, what its counterexample must be, words in the message)
    (returns_two, "range", is_correct_answer, "returned 2.0, outside the declared bounds"),
    (raises_on_unicode, "totality", lambda case: not case.completion.isascii() and len(case.completion) < 50,
     "raised UnicodeEncodeError"),
    (random_on_wrong_answers, "determinism", lambda case: not is_correct_answer(case), "for the same completion"),
    (accepts_hedges, "anti_hedging", lambda case: case.kind == "hedge", "scored 1.0, not below"),
    (rejects_thousands_separators, "invariance", lambda case: THOUSANDS.search(case.completion),
     "scored 0.0, the canonical"),
    (tolerates_off_by_one, "sensitivity", lambda case: case.kind == "near_miss", "scored 1.0, not below"),
    (returns_nan_on_empty, "range", lambda case: not case.completion.strip(), "returned NaN"),
]  # fmt: skip


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize("bug,caught_by,counterexample_is,message", PLANTED, ids=[p[0].__name__ for p in PLANTED])
def test_a_planted_bug_is_caught_by_its_property(bug, caught_by: str, counterexample_is, message: str) -> None:
    report = check_reward(bug, examples=50)
    assert [r.name for r in report.failures] == [caught_by], f"\n{report}"
    failure = report[caught_by]
    assert message in failure.message
    assert counterexample_is(failure.counterexample), failure.counterexample
    assert f"FAIL  {caught_by}" in str(report)
    assert all(line in str(report) for line in failure.counterexample.describe().splitlines())


def sleeps_on_long_completions(completion: str, ground_truth: str) -> float:
    """Bug: slow on long inputs (as a backtracking regex would be)."""
    if len(completion) > 10_000:
        time.sleep(0.5)
    return numeric_answer_score(completion, ground_truth)


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_a_sleeping_function_fails_the_time_budget() -> None:
    failure = check_time_budget(sleeps_on_long_completions, time_budget=0.2, examples=30)
    assert not failure.passed and "still running after 0.2 s" in failure.message
    assert len(failure.counterexample.completion) > 10_000


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_a_hanging_function_fails_the_time_budget_without_hanging_the_check() -> None:
    release = threading.Event()

    def hangs_on_long_completions(completion: str, ground_truth: str) -> float:
        """Bug: never returns on long inputs (until this test ends)."""
        if len(completion) > 10_000:
            release.wait()
        return numeric_answer_score(completion, ground_truth)

    try:
        failure = check_time_budget(hangs_on_long_completions, time_budget=0.2, examples=30)
    finally:
        release.set()
    assert not failure.passed and "still running after 0.2 s" in failure.message
    assert len(failure.counterexample.completion) > 10_000


def test_a_one_off_start_up_cost_is_not_held_against_the_function() -> None:
    started: list[bool] = []

    def slow_first_call(completion: str, ground_truth: str) -> float:
        if not started:
            started.append(True)
            time.sleep(0.5)
        return 0.0

    assert check_time_budget(slow_first_call, time_budget=0.3, examples=10).passed


def test_counterexamples_are_shrunk() -> None:
    failure = check_reward(raises_on_unicode, properties=["totality"], examples=50)["totality"]
    assert len(failure.counterexample.completion) <= 12, failure.counterexample


def test_a_seeded_run_is_reproducible() -> None:
    def completions_seen(seed: int) -> list[str]:
        seen: list[str] = []

        def recording(completion: str, ground_truth: str) -> float:
            seen.append(completion)
            return numeric_answer_score(completion, ground_truth)

        assert check_reward(recording, properties=["range"], examples=20, seed=seed).passed
        return seen

    assert completions_seen(7) == completions_seen(7) != completions_seen(8)


# --- TRL shape ------------------------------------------------------------------------------


def test_a_trl_shaped_bug_is_caught_too() -> None:
    def doubled_trl(completions: list, answer: list, **_columns) -> list[float]:
        return [2.0 * score for score in math_rewards.numeric_answer_reward(completions, answer)]

    report = check_reward(doubled_trl, shape="trl", properties=["range", "sensitivity"], examples=20)
    assert not report["range"].passed and report["sensitivity"].passed


def test_a_trl_function_must_return_one_reward_per_completion() -> None:
    def one_reward_for_all(completions: list, answer: list, **_columns) -> list[float]:
        return [1.0]

    with pytest.raises(TypeError, match="one reward per completion"):
        check_reward(one_reward_for_all, shape="trl")


def test_the_truth_column_is_the_one_named() -> None:
    def reads_solution(completions: list, solution: list, **_columns) -> list[float]:
        return math_rewards.numeric_answer_reward(completions, solution)

    assert check_reward(reads_solution, shape="trl", truth_column="solution", examples=10).passed
    with pytest.raises(TypeError, match="solution"):
        check_reward(reads_solution, shape="trl")


def test_a_wrong_shape_is_an_error_that_names_the_right_one() -> None:
    with pytest.raises(TypeError, match="shape='trl'"):
        check_reward(math_rewards.numeric_answer_reward)
    with pytest.raises(TypeError, match="shape='plain'"):
        check_reward(math_rewards.numeric_answer_score, shape="trl")


def test_bad_arguments_are_errors_that_name_the_fix() -> None:
    with pytest.raises(ValueError, match="choose from"):
        check_reward(numeric_answer_score, properties=["speed"])
    with pytest.raises(ValueError, match="at least 1"):
        check_reward(numeric_answer_score, examples=0)
    with pytest.raises(ValueError, match="low < high"):
        check_reward(numeric_answer_score, bounds=(1.0, 0.0))
    with pytest.raises(ValueError, match="two numbers"):
        check_reward(numeric_answer_score, bounds=(0.0,))
    with pytest.raises(ValueError, match="'plain' for"):
        check_reward(numeric_answer_score, shape="batch")
    with pytest.raises(TypeError, match="hypothesis strategy"):
        check_reward(numeric_answer_score, truths=[1, 2, 3])
    with pytest.raises(KeyError, match="no property"):
        check_reward(numeric_answer_score, properties=["range"], examples=5)["speed"]


# --- the strategies -------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(truth=numeric_truths())
def test_near_misses_are_wrong(truth) -> None:
    misses = near_miss_values(truth.value)
    assert misses and all(wrong != truth.value for _, wrong in misses)


@settings(max_examples=50, deadline=None)
@given(case=cases(hedges, truths=numeric_truths()))
def test_hedges_hold_the_truth_and_score_zero(case: Case) -> None:
    assert numeric_answer_score(case.completion, case.truth) == 0.0


@settings(max_examples=50, deadline=None)
@given(case=cases(correct_answers, truths=numeric_truths()))
def test_correct_answers_score_one(case: Case) -> None:
    assert numeric_answer_score(case.completion, case.truth) == 1.0


def test_truths_are_written_as_data_sets_write_them() -> None:
    assert as_truth(72).text == "72"
    assert as_truth(Fraction(3, 4)).text == "0.75"
    assert as_truth(Fraction(-7, 3)).text == "-\\frac{7}{3}"
    assert as_truth(0.1).value == Fraction(1, 10)
    with pytest.raises(TypeError, match="truths="):
        as_truth("72")
    with pytest.raises(ValueError, match="finite"):
        as_truth(float("nan"))


def test_a_long_counterexample_is_described_shortly() -> None:
    case = Case("x" * 100_000 + "\\boxed{1}", "1", "adversarial", "long_line", "\\boxed{1}")
    description = case.describe()
    assert len(description) < 600 and "100,009 chars" in description and "\\\\boxed{1}" in description


# --- imports and the command line -----------------------------------------------------------


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_importing_rlenvs_never_imports_hypothesis() -> None:
    result = run_python("import sys, rlenvs, rlenvs.cli, rlenvs.testing\nassert 'hypothesis' not in sys.modules")
    assert result.returncode == 0, result.stderr


def test_without_hypothesis_the_kit_says_how_to_install_it() -> None:
    result = run_python("import sys; sys.modules['hypothesis'] = None\nfrom rlenvs.testing import check_reward")
    assert result.returncode == 1
    assert 'pip install "rlenvs[testing]"' in result.stderr


def rlenvs_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlenvs.cli", *args], check=False, capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.mark.slow
def test_cli_passes_a_correct_reward_function() -> None:
    result = rlenvs_cli("check-reward", "rlenvs.rewards.math:math_answer_score", "--examples", "10")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all 7 properties passed" in result.stdout and "PASS  invariance" in result.stdout


@pytest.mark.slow
def test_cli_checks_a_trl_shaped_function() -> None:
    result = rlenvs_cli(
        "check-reward",
        "rlenvs.rewards.math:numeric_answer_reward",
        "--shape",
        "trl",
        "--truths",
        "numbers",
        "--examples",
        "10",
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_cli_exits_1_with_the_counterexample_when_a_property_fails(tmp_path: Path) -> None:
    (tmp_path / "my_rewards.py").write_text(
        textwrap.dedent("""
        from rlenvs.rewards.math import numeric_answer_score

        def doubled(completion, ground_truth):
            return 2.0 * numeric_answer_score(completion, ground_truth)
    """)
    )
    result = rlenvs_cli(
        "check-reward", "my_rewards.py:doubled", "--examples", "20", "--property", "range", cwd=tmp_path
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL  range" in result.stdout and "returned 2.0" in result.stdout and "completion:" in result.stdout
    by_module = rlenvs_cli("check-reward", "my_rewards:doubled", "--examples", "5", "--property", "range", cwd=tmp_path)
    assert by_module.returncode == 1, by_module.stderr


@pytest.mark.parametrize(
    "target,extra,error",
    [
        ("rlenvs.no_such_module:score", [], "cannot import 'rlenvs.no_such_module'"),
        ("rlenvs.rewards.math:no_such_function", [], "has no attribute 'no_such_function'"),
        ("math_answer_score", [], "is not MODULE:FUNCTION"),
        ("missing_file.py:score", [], "no file 'missing_file.py'"),
        ("rlenvs.rewards.math:numeric_answer_reward", [], "--shape trl"),
        ("rlenvs.rewards.math:numeric_answer_score", ["--property", "speed"], "choose from"),
    ],
)
@pytest.mark.slow
def test_cli_exits_2_on_bad_input(target: str, extra: list[str], error: str) -> None:
    result = rlenvs_cli("check-reward", target, "--examples", "5", *extra)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "rlenvs check-reward: error:" in result.stderr and error in result.stderr


def test_the_property_table_is_the_documented_one() -> None:
    assert PROPERTY_NAMES == (
        "range",
        "totality",
        "determinism",
        "invariance",
        "sensitivity",
        "anti_hedging",
        "time_budget",
    )
    assert all(callable(getattr(properties, f"check_{name}")) for name in PROPERTY_NAMES)
