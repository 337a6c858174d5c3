"""The pytest plugin as a user meets it: a test file in a fresh project, run by pytest with
rlenvs installed, gets `reward_properties`, `env_properties` and the `rlenvs_examples`
marker through the `pytest11` entry point alone (no conftest, no `-p`).

A run that uses the kit is a subprocess (`pytester.runpytest_subprocess`): an in-process
run drops the modules it imported when it ends, and hypothesis, re-imported in the next
run, then meets strategies built from its previous copy. Runs that stop before the kit is
imported (configuration, a bad marker or option) are in-process, which is faster."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest
from hypothesis import strategies as st  # imported here, in-process runs keep it (they drop what they import)

import rlenvs.testing.pytest_plugin as plugin

pytestmark = pytest.mark.slow  # its runs are whole pytest sessions, most in a subprocess as a user runs them

pytest_plugins = ["pytester"]

STRICT = ("--strict-markers", "-p", "no:cacheprovider")
SUBPROCESS_TIMEOUT_S = 240
RunFile = Callable[..., pytest.RunResult]

BUGGY_REWARDS = """
    import re

    import pytest
    from rlenvs.rewards.math import numeric_answer_score

    def crashes_on_empty(completion, ground_truth):
        if completion[-1] == ".":  # IndexError on ""
            completion = completion[:-1]
        return numeric_answer_score(completion, ground_truth)

    def accepts_any_box(completion, ground_truth):
        boxes = re.findall(r"\\\\boxed\\{([^{}]*)\\}", completion)
        return 1.0 if ground_truth in boxes else numeric_answer_score(completion, ground_truth)

    @pytest.mark.rlenvs_examples(10)
    def test_crashes_on_empty(reward_properties):
        reward_properties.check(crashes_on_empty, derandomize=True)

    @pytest.mark.rlenvs_examples(10)
    def test_accepts_any_box(reward_properties):
        reward_properties.check(accepts_any_box, derandomize=True)
"""


@pytest.fixture(scope="session")
def hypothesis_storage(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One folder for hypothesis' caches across the runs: each run's working folder is new,
    and hypothesis would rebuild its unicode tables (3 s) in every one."""
    return str(tmp_path_factory.mktemp("hypothesis"))


@pytest.fixture
def run(pytester: pytest.Pytester, hypothesis_storage: str, monkeypatch: pytest.MonkeyPatch) -> RunFile:
    """Write a test file and run pytest on it in a subprocess, as a user would."""
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", hypothesis_storage)

    def run_file(source: str, *args: str) -> pytest.RunResult:
        pytester.makepyfile(textwrap.dedent(source))
        return pytester.runpytest_subprocess(*STRICT, *args, timeout=SUBPROCESS_TIMEOUT_S)

    return run_file


def run_inprocess(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(textwrap.dedent(source))
    return pytester.runpytest_inprocess(*STRICT, *args)


def test_the_plugin_is_loaded_through_its_entry_point(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfigure()
    assert config.pluginmanager.get_plugin("rlenvs") is plugin
    distributions = {
        dist.metadata["Name"] for loaded, dist in config.pluginmanager.list_plugin_distinfo() if loaded is plugin
    }
    assert distributions == {"rlenvs"}
    traced = pytester.runpytest_inprocess("--trace-config", "--co")
    assert "rlenvs.testing.pytest_plugin" in traced.stdout.str()
    markers = pytester.runpytest_inprocess("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.rlenvs_examples(n): *"])


def test_loading_the_plugin_imports_neither_the_kit_nor_hypothesis() -> None:
    code = (
        "import sys, rlenvs.testing.pytest_plugin\n"
        "heavy = {'hypothesis', 'rlenvs.testing.properties', 'rlenvs.testing.strategies', "
        "'rlenvs.testing.envs'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr


def test_a_correct_reward_function_passes(run: RunFile) -> None:
    result = run("""
        import pytest
        from hypothesis import strategies as st
        from rlenvs.rewards.math import numeric_answer_score

        @pytest.mark.rlenvs_examples(10)
        def test_numeric_answer_score(reward_properties):
            report = reward_properties.check(numeric_answer_score, truth_strategy=st.integers(0, 10**6),
                                             derandomize=True)
            assert report.passed and len(report.reports) == 7
    """)
    result.assert_outcomes(passed=1)


def test_a_buggy_reward_function_fails_with_its_counterexample(run: RunFile) -> None:
    result = run(BUGGY_REWARDS)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_crashes_on_empty _*",
            "test_*:crashes_on_empty  (plain: *",
            "FAIL  totality * f raised IndexError: string index out of range",
            "        kind:        basic (empty)",
            "        completion:  ''",
            "1 of 7 properties failed",
            "*_ test_accepts_any_box _*",
            "FAIL  anti_hedging * this hedge (*) scored 1.0, not below the correct answer's 1.0",
            "        kind:        hedge (*)",
            "        completion:  *boxed*boxed*",
            "1 of 7 properties failed",
        ]
    )
    assert "reward_properties.check(" not in result.stdout.str(), "the report comes without a traceback"


def test_the_marker_and_the_option_set_the_examples(run: RunFile) -> None:
    source = """
        import pytest
        from rlenvs.rewards.math import numeric_answer_score

        def cases_run(reward_properties, **options):
            report = reward_properties.check(numeric_answer_score, properties=["sensitivity"], derandomize=True,
                                             **options)
            return report["sensitivity"].examples_run

        @pytest.mark.rlenvs_examples(3)
        def test_marked(reward_properties):
            assert reward_properties.examples == 3
            assert cases_run(reward_properties) <= 3

        @pytest.mark.rlenvs_examples(3)
        def test_an_argument_beats_the_marker(reward_properties):
            assert 3 < cases_run(reward_properties, examples=20) <= 20

        def test_unmarked(reward_properties, request):
            option = request.config.getoption("rlenvs_examples")
            assert reward_properties.examples == option
            if option is None:
                assert cases_run(reward_properties) > 10  # the kit's default, 50
            else:
                assert cases_run(reward_properties) <= option
    """
    run(source).assert_outcomes(passed=3)
    run(source, "--rlenvs-examples", "4").assert_outcomes(passed=3)


@pytest.mark.parametrize(
    "marker,error",
    [
        (
            "rlenvs_examples('many')",
            "@pytest.mark.rlenvs_examples('many') on test_*: the marker takes one whole number",
        ),
        ("rlenvs_examples(0)", "*rlenvs_examples(0)*at least 1*"),
        ("rlenvs_examples", "@pytest.mark.rlenvs_examples() on *e.g. @pytest.mark.rlenvs_examples(200)"),
    ],
)
def test_a_bad_marker_is_an_error_that_shows_the_right_one(pytester: pytest.Pytester, marker: str, error: str) -> None:
    result = run_inprocess(
        pytester,
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_it(reward_properties):
            pass
    """,
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*{error}*"])


def test_a_bad_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--rlenvs-examples", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'0' is not a number of examples: pass a whole number, at least 1*"])


def test_the_env_contract_passes_on_arithmetic_and_the_marker_sets_its_garbage(run: RunFile) -> None:
    result = run("""
        import pytest
        from rlenvs.testing.envs import GARBAGE_CORPUS

        @pytest.mark.rlenvs_examples(2)
        def test_arithmetic(env_properties):
            report = env_properties.check("rlenvs/Arithmetic-v1", max_turns_to_try=(1,))
            assert report.passed and not any(check.skipped for check in report.checks)
            garbage = report["garbage_action_totality"].message
            assert garbage.startswith(f"{len(GARBAGE_CORPUS) + 2} garbage episodes"), garbage
    """)
    result.assert_outcomes(passed=1)


def test_a_broken_env_fails_with_the_report(run: RunFile) -> None:
    result = run("""
        from rlenvs.envs.math.arithmetic import ArithmeticEnv

        class CrashesOnEmpty(ArithmeticEnv):
            def judge(self, task, reply):
                reply[0]  # IndexError on ""
                return super().judge(task, reply)

        def test_crashes_on_empty(env_properties):
            env_properties.check(CrashesOnEmpty)
    """)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "factory CrashesOnEmpty: FAILED 1 of 14 checks *",
            "  FAIL  garbage_action_totality * step raised IndexError: string index out of range",
        ]
    )
    assert "counterexample: {'seed': 0, 'actions': [''], 'env': 'max_turns=1'}" in result.stdout.str()


def test_without_hypothesis_only_the_reward_fixture_fails_and_says_how_to_install_it(
    pytester: pytest.Pytester, hypothesis_storage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", hypothesis_storage)
    pytester.makeconftest("import sys\nsys.modules['hypothesis'] = None  # as if it were not installed")
    pytester.makepyfile(
        textwrap.dedent("""
        def test_without_the_kit():
            assert True

        def test_the_env_contract_runs_on_its_corpus(env_properties):
            report = env_properties.check("rlenvs/Arithmetic-v1", seeds=range(3), vector=False)
            assert "from the corpus only (hypothesis is not installed)" in report["garbage_action_totality"].message

        def test_the_reward_kit_needs_hypothesis(reward_properties):
            pass
    """)
    )
    # hypothesis' own pytest plugin would import it first; a user without hypothesis has none
    result = pytester.runpytest_subprocess(*STRICT, "-p", "no:hypothesispytest", timeout=SUBPROCESS_TIMEOUT_S)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["E *ImportError: the reward-function checks of rlenvs.testing need hypothesis: *"])
    assert 'need hypothesis: pip install "rlenvs[testing]"' in result.stdout.str()


def test_both_truth_arguments_is_an_error(reward_properties: plugin.RewardProperties) -> None:
    with pytest.raises(TypeError, match="both truth_strategy= and truths="):
        reward_properties.check(lambda completion, truth: 0.0, truth_strategy=st.integers(), truths=st.integers())
