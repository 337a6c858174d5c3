"""Ready-made property checks for any reward function, with shrunk counterexamples.

    from rlenvs.testing import check_reward

    report = check_reward(my_reward)                                  # f(completion, ground_truth)
    report = check_reward(my_trl_reward, shape="trl", truth_column="answer")
    assert report.passed, report

The properties, each run by hypothesis over the completions of `strategies`:

- range: every reward is a real number inside `bounds`, never NaN;
- totality: no exception on any string;
- determinism: the same completion scores the same, call after call;
- invariance: every correct rendering scores what the canonical `\\boxed{truth}` scores;
- sensitivity: near-miss wrong answers and injected ones score below the correct answer;
- anti_hedging: a completion stating several final answers scores below the correct one;
- time_budget: every call returns within `time_budget` seconds.

Range, totality, determinism and time_budget first try the empty completion, whitespace
alone and the canonical answer, then what hypothesis draws. A failing property reports
the smallest completion hypothesis could shrink the failure to. Only totality reports
exceptions and only range reports rewards that are not numbers: the other properties pass
over such completions, so one bug is reported once. A call that does not return within
`max(10 s, 5 x time_budget)` fails whichever property made it, and is left running on
its own daemon thread (no call can hang the check).

Hypothesis runs without its example database (no failing examples are stored between runs);
`seed=` or `derandomize=True` make a run reproducible.
"""

from __future__ import annotations

import functools
import math
import numbers
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# First: without hypothesis, importing the strategies raises the install hint.
from rlenvs.testing import strategies as completions  # isort: skip

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning
from hypothesis.strategies import SearchStrategy

from rlenvs.testing.calls import Outcome, RewardUnderTest, Shape
from rlenvs.testing.strategies import Case, Rendering

DEFAULT_EXAMPLES = 50
DEFAULT_TIME_BUDGET = 2.0
"""Seconds one call may take. Generous on purpose: it catches hangs and blow-ups (a regex
backtracking on 100 KB, sympy building a power tower), not ordinary slowness."""
SHRINK_SECONDS = 10.0
"""Once a property fails, how long hypothesis may spend shrinking the counterexample."""
REPEATS = 3
"""Calls per completion in the determinism check."""


@dataclass(frozen=True)
class PropertyReport:
    """The outcome of one property: passed, or the shrunk counterexample and what went wrong."""

    name: str
    passed: bool
    counterexample: Case | None
    message: str
    examples_run: int
    seconds: float = 0.0

    def __str__(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        line = f"{status}  {self.name:<13} {self.examples_run:>5} examples {self.seconds:>7.2f} s   {self.message}"
        if self.counterexample is None:
            return line
        details = self.counterexample.describe()
        return line + "\n" + "\n".join("        " + row for row in details.splitlines())


@dataclass(frozen=True)
class RewardReport:
    """Every property's report for one reward function; `str()` is the readable summary."""

    target: str
    shape: str
    bounds: tuple[float, float]
    reports: tuple[PropertyReport, ...]

    @property
    def passed(self) -> bool:
        return all(report.passed for report in self.reports)

    @property
    def failures(self) -> list[PropertyReport]:
        return [report for report in self.reports if not report.passed]

    def __getitem__(self, name: str) -> PropertyReport:
        for report in self.reports:
            if report.name == name:
                return report
        raise KeyError(f"no property {name!r} in this report; it has {[r.name for r in self.reports]}")

    def __str__(self) -> str:
        form = "f(completion, ground_truth)" if self.shape == "plain" else "f(completions, **columns)"
        header = f"{self.target}  ({self.shape}: {form}; rewards in [{self.bounds[0]}, {self.bounds[1]}])"
        failed = len(self.failures)
        footer = (
            f"all {len(self.reports)} properties passed"
            if not failed
            else f"{failed} of {len(self.reports)} properties failed"
        )
        return "\n".join([header, *(str(report) for report in self.reports), footer])


@dataclass
class _Options:
    truths: SearchStrategy[Any] | None = None
    renderings: Sequence[Rendering] = completions.DEFAULT_RENDERINGS
    examples: int = DEFAULT_EXAMPLES
    time_budget: float = DEFAULT_TIME_BUDGET
    derandomize: bool = False
    seed: int | None = None
    shrink_seconds: float = SHRINK_SECONDS
    canonical_scores: dict[tuple[str, str], Outcome] = field(default_factory=dict)

    @functools.cached_property
    def basic_cases(self) -> list[Case]:
        """`strategies.basic_cases` for the first truth `truths` draws: hypothesis draws the
        simplest first (0 for integers), and without shrinking this takes milliseconds."""
        simplest = hypothesis.find(
            completions.truth_strategy(self.truths),
            lambda _: True,
            settings=hypothesis.settings(
                database=None, max_examples=1, phases=[Phase.generate], suppress_health_check=list(HealthCheck)
            ),
        )
        return completions.basic_cases(simplest)

    @property
    def hang_timeout(self) -> float:
        return max(10.0, 5 * self.time_budget)

    def cases(self, kind: Callable[..., SearchStrategy[Case]], **options: Any) -> SearchStrategy[Case]:
        return completions.cases(kind, self.truths, **options)


@dataclass(frozen=True)
class _Verdict:
    failure: str | None = None
    """Why the case falsifies the property; None if it holds."""
    checked: bool = True
    """False when the function raised and the case said nothing about this property."""


_HOLDS = _Verdict()
_PASSED_OVER = _Verdict(checked=False)


# --- the properties -------------------------------------------------------------------------


def _hung(options: _Options) -> _Verdict:
    return _Verdict(
        f"the call did not return within {options.hang_timeout:g} s (see time_budget); it was abandoned, still running"
    )


def _range(subject: RewardUnderTest, options: _Options, case: Case) -> _Verdict:
    outcome = subject.call(case.completion, case.truth, options.hang_timeout)
    if outcome.hung:
        return _hung(options)
    if not outcome.returned:
        return _PASSED_OVER
    problem = subject.reward_problem(outcome.value)
    return _HOLDS if problem is None else _Verdict(f"f {problem}")


def _totality(subject: RewardUnderTest, options: _Options, case: Case) -> _Verdict:
    outcome = subject.call(case.completion, case.truth, options.hang_timeout)
    if outcome.hung:
        return _hung(options)
    if outcome.error is not None:
        return _Verdict(f"f raised {outcome.describe_error()}")
    return _HOLDS


def _determinism(subject: RewardUnderTest, options: _Options, case: Case) -> _Verdict:
    values = []
    for _ in range(REPEATS):
        outcome = subject.call(case.completion, case.truth, options.hang_timeout)
        if outcome.hung:
            return _hung(options)
        if not outcome.returned:
            return _PASSED_OVER
        values.append(outcome.value)
    if all(_same(values[0], value) for value in values[1:]):
        return _HOLDS
    return _Verdict(f"f returned {', '.join(map(repr, values))} for the same completion in {REPEATS} calls")


def _same(a: Any, b: Any) -> bool:
    both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return both_nan or (type(a) is type(b) and a == b)


def _canonical(subject: RewardUnderTest, options: _Options, case: Case) -> Outcome:
    key = (case.canonical, case.truth)
    if key not in options.canonical_scores:
        options.canonical_scores[key] = subject.call(case.canonical, case.truth, options.hang_timeout)
    return options.canonical_scores[key]


def _compare_with_canonical(subject: RewardUnderTest, options: _Options, case: Case) -> tuple[float, float] | _Verdict:
    """(the case's reward, the canonical answer's reward), or the verdict if either call
    hung, raised or returned something that is not a valid reward."""
    scored = subject.call(case.completion, case.truth, options.hang_timeout)
    canonical = _canonical(subject, options, case)
    if scored.hung or canonical.hung:
        return _hung(options)
    if not (scored.returned and canonical.returned):
        return _PASSED_OVER
    reward, correct = _as_number(scored.value), _as_number(canonical.value)
    if reward is None or correct is None:
        return _PASSED_OVER  # no number to compare: the range property reports it
    return reward, correct


def _as_number(value: Any) -> float | None:
    """The reward as a float, or None if it is not a real number (None, NaN, a list, ...);
    a number outside the bounds is still compared (range reports that)."""
    if not isinstance(value, numbers.Real) or math.isnan(float(value)):
        return None
    return float(value)


def _invariance(subject: RewardUnderTest, options: _Options, case: Case) -> _Verdict:
    compared = _compare_with_canonical(subject, options, case)
    if isinstance(compared, _Verdict):
        return compared
    reward, canonical = compared
    if reward == canonical:
        return _HOLDS
    return _Verdict(
        f"this correct rendering ({case.label}) scored {reward!r}, the canonical {case.canonical[-60:]!r} "
        f"scored {canonical!r}"
    )


def _scores_below_correct(subject: RewardUnderTest, options: _Options, case: Case, what: str) -> _Verdict:
    compared = _compare_with_canonical(subject, options, case)
    if isinstance(compared, _Verdict):
        return compared
    reward, canonical = compared
    if reward < canonical:
        return _HOLDS
    if canonical <= subject.bounds[0]:
        return _Verdict(
            f"the canonical correct answer {case.canonical[-60:]!r} scored {canonical!r}, the lowest reward, so "
            f"{what} cannot score below it: does f accept a boxed answer equal to the ground truth?"
        )
    return _Verdict(f"{what} ({case.label}) scored {reward!r}, not below the correct answer's {canonical!r}")


def _sensitivity(subject: RewardUnderTest, options: _Options, case: Case) -> _Verdict:
    return _scores_below_correct(subject, options, case, "this wrong answer")


def _anti_hedging(subject: RewardUnderTest, options: _Options, case: Case) -> _Verdict:
    return _scores_below_correct(subject, options, case, "this hedge")


def _time_budget(subject: RewardUnderTest, options: _Options, case: Case) -> _Verdict:
    """A call over budget is timed once more and fails only if it is over again, so a
    one-off start-up cost (a lazy import, a worker process starting) is not held against f."""
    budget = options.time_budget
    for _ in range(2):
        outcome = subject.call(case.completion, case.truth, budget)
        if not outcome.hung and outcome.seconds <= budget:
            return _HOLDS
    if outcome.hung:
        return _Verdict(f"the call was still running after {budget:g} s (twice); it was abandoned")
    return _Verdict(f"the call took {outcome.seconds:.3f} s (twice over), over the budget of {budget:g} s")


@dataclass(frozen=True)
class _Property:
    name: str
    summary: str
    cases: Callable[[_Options], SearchStrategy[Case]]
    evaluate: Callable[[RewardUnderTest, _Options, Case], _Verdict]
    tries_basic_cases: bool = False
    """Whether the empty, blank and canonical completions are tried before drawn ones."""


def _any_completion(options: _Options) -> SearchStrategy[Case]:
    return options.cases(completions.any_completion)


def _adversarial_first(options: _Options) -> SearchStrategy[Case]:
    """Half adversarial sizes, where slowness hides, half anything."""
    return st.one_of(options.cases(completions.adversarial_sizes), options.cases(completions.any_completion))


_PROPERTIES: tuple[_Property, ...] = (
    _Property("range", "every reward is a real number inside the bounds, never NaN",
              _any_completion, _range, tries_basic_cases=True),
    _Property("totality", "no exception on any string",
              _any_completion, _totality, tries_basic_cases=True),
    _Property("determinism", "the same completion scores the same every call",
              _any_completion, _determinism, tries_basic_cases=True),
    _Property("invariance", "every correct rendering scores what the canonical one does",
              lambda o: o.cases(completions.correct_answers, renderings=o.renderings), _invariance),
    _Property("sensitivity", "near-miss and injected wrong answers score below the correct one",
              lambda o: o.cases(completions.wrong_answers, renderings=o.renderings), _sensitivity),
    _Property("anti_hedging", "several final answers score below one correct answer",
              lambda o: o.cases(completions.hedges), _anti_hedging),
    _Property("time_budget", "every call returns within the time budget",
              _adversarial_first, _time_budget, tries_basic_cases=True),
)  # fmt: skip

PROPERTY_NAMES: tuple[str, ...] = tuple(p.name for p in _PROPERTIES)


# --- running a property with hypothesis -----------------------------------------------------


class _Falsified(Exception):
    """Raised inside the hypothesis test so that hypothesis shrinks the case."""


def _settings(options: _Options) -> hypothesis.settings:
    return hypothesis.settings(
        max_examples=options.examples,
        deadline=None,
        derandomize=options.derandomize,
        database=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
    )


def _run(prop: _Property, subject: RewardUnderTest, options: _Options) -> PropertyReport:
    """Run one property under hypothesis and report the shrunk counterexample.

    Each distinct case is evaluated once and its verdict remembered: hypothesis replays the
    minimal failing case at the end, and a random or slow function must not turn that replay
    into a different answer. Once shrinking has run `shrink_seconds`, cases not yet seen are
    let pass unevaluated, which ends the shrink at the smallest failure found so far.
    """
    verdicts: dict[Case, _Verdict] = {}
    last_failure: list[tuple[Case, str]] = []
    first_failure_at: list[float] = []
    started = time.monotonic()

    def test(case: Case) -> None:
        verdict = verdicts.get(case)
        if verdict is None:
            if first_failure_at and time.monotonic() - first_failure_at[0] > options.shrink_seconds:
                return
            verdict = verdicts[case] = prop.evaluate(subject, options, case)
        if verdict.failure is not None:
            first_failure_at[:] = first_failure_at or [time.monotonic()]
            last_failure[:] = [(case, verdict.failure)]
            raise _Falsified(verdict.failure)

    if prop.tries_basic_cases:
        for case in options.basic_cases:
            test = hypothesis.example(case)(test)
    runner = hypothesis.given(prop.cases(options))(test)
    runner = _settings(options)(runner)
    if options.seed is not None:
        runner = hypothesis.seed(options.seed)(runner)
    try:
        with warnings.catch_warnings():
            # Hypothesis builds the repr of a failing 100 KB case and warns about its size;
            # the report prints its own shortened description.
            warnings.simplefilter("ignore", HypothesisWarning)
            runner()
    except Exception:
        if not last_failure:
            raise
        case, message = last_failure[0]
        return PropertyReport(prop.name, False, case, message, len(verdicts), time.monotonic() - started)
    checked = sum(verdict.checked for verdict in verdicts.values())
    message = prop.summary
    if verdicts and checked == 0:
        return PropertyReport(
            prop.name,
            False,
            None,
            "f raised or returned no number on every case, so nothing could be checked (see totality and range)",
            len(verdicts),
            time.monotonic() - started,
        )
    if checked < len(verdicts):
        message += f" ({len(verdicts) - checked} passed over: f raised or returned no number; see totality and range)"
    return PropertyReport(prop.name, True, None, message, len(verdicts), time.monotonic() - started)


# --- the public checks ----------------------------------------------------------------------


def check_reward(
    function: Callable[..., Any],
    *,
    shape: Shape = "plain",
    truth_column: str = "answer",
    conversational: bool = False,
    bounds: tuple[float, float] = (0.0, 1.0),
    truths: SearchStrategy[Any] | None = None,
    renderings: Sequence[Rendering] = completions.DEFAULT_RENDERINGS,
    examples: int = DEFAULT_EXAMPLES,
    time_budget: float = DEFAULT_TIME_BUDGET,
    derandomize: bool = False,
    seed: int | None = None,
    properties: Sequence[str] = PROPERTY_NAMES,
) -> RewardReport:
    """Run the properties (default: all of them) on a reward function.

    `shape` says how `function` is called, and is never guessed: "plain" for
    `f(completion, ground_truth) -> float`; "trl" for TRL's `f(completions, **columns) ->
    list[float]`, called as `f(prompts=[...], completions=[...], <truth_column>=[...])`, with
    completions as chat messages if `conversational`. A function that does not take the
    declared shape is a `TypeError` naming the other shape, raised before any property runs.

    `truths` draws the ground truths: a strategy of ints, Fractions, Decimals, floats or
    `strategies.Truth` (default: integers). `renderings` are the correct renderings the
    function promises to accept (add `strategies.CONFUSABLE_RENDERINGS` where it reads
    unicode digits). `examples` cases are tried per property; `time_budget` is the seconds one
    call may take.
    """
    unknown = [name for name in properties if name not in PROPERTY_NAMES]
    if unknown or not properties:
        raise ValueError(f"unknown properties {unknown or list(properties)}: choose from {list(PROPERTY_NAMES)}")
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
        raise ValueError(f"examples={examples!r}: pass a whole number of cases per property, at least 1")
    if not (isinstance(time_budget, (int, float)) and time_budget > 0):
        raise ValueError(f"time_budget={time_budget!r}: pass the seconds one call may take, more than 0")
    if truths is not None and not isinstance(truths, SearchStrategy):
        raise TypeError(f"truths={truths!r}: pass a hypothesis strategy, e.g. hypothesis.strategies.integers(0, 100)")
    options = _Options(
        truths=truths,
        renderings=tuple(renderings),
        examples=examples,
        time_budget=float(time_budget),
        derandomize=derandomize,
        seed=seed,
    )
    subject = RewardUnderTest(function, shape, truth_column, conversational, _bounds(bounds))
    try:
        subject.probe(["\\boxed{72}", "\\boxed{3}"], ["72", "4"], options.hang_timeout)
        reports = tuple(_run(prop, subject, options) for prop in _PROPERTIES if prop.name in properties)
    finally:
        subject.close()
    return RewardReport(subject.name, shape, subject.bounds, reports)


def _bounds(bounds: Any) -> tuple[float, float]:
    try:
        low, high = (float(bound) for bound in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds={bounds!r}: pass two numbers (low, high), e.g. (0.0, 1.0)") from None
    return low, high


def _one(name: str) -> Callable[..., PropertyReport]:
    def check(function: Callable[..., Any], **options: Any) -> PropertyReport:
        return check_reward(function, properties=[name], **options)[name]

    summary = next(p.summary for p in _PROPERTIES if p.name == name)
    check.__name__ = check.__qualname__ = f"check_{name}"
    check.__doc__ = f"The {name} property alone: {summary}. Takes `check_reward`'s keyword arguments."
    return check


check_range = _one("range")
check_totality = _one("totality")
check_determinism = _one("determinism")
check_invariance = _one("invariance")
check_sensitivity = _one("sensitivity")
check_anti_hedging = _one("anti_hedging")
check_time_budget = _one("time_budget")
