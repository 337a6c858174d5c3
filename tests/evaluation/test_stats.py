import math
from itertools import combinations

import pytest

from rlenvs.evaluation.stats import pass_at_k, task_bootstrap_interval, wilson_interval


@pytest.mark.parametrize("n,c,k", [(5, 2, 1), (5, 2, 3), (6, 0, 2), (6, 6, 6), (4, 1, 4), (10, 3, 5)])
def test_pass_at_k_is_the_share_of_k_subsets_holding_a_correct_sample(n: int, c: int, k: int) -> None:
    samples = [True] * c + [False] * (n - c)
    subsets = list(combinations(samples, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets), abs=1e-12)


def test_pass_at_k_stays_exact_where_binomials_overflow_floats() -> None:
    value = pass_at_k(2000, 3, 1000)
    assert value == pytest.approx(1 - math.comb(1997, 1000) / math.comb(2000, 1000), rel=1e-12)


def test_pass_at_k_refuses_k_over_n() -> None:
    with pytest.raises(ValueError, match="--samples 4 or more"):
        pass_at_k(2, 1, 4)


def test_wilson_interval_matches_the_formula_and_is_not_a_point_at_the_ends() -> None:
    low, high = wilson_interval(50, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    assert wilson_interval(164, 164)[0] == pytest.approx(0.9771, abs=1e-4) and wilson_interval(164, 164)[1] == 1.0
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(0, 10)[1] > 0.2


def test_task_bootstrap_interval_holds_the_mean_and_widens_with_spread() -> None:
    low, high = task_bootstrap_interval([0.0, 0.25, 0.5, 1.0] * 10)
    assert low < 0.4375 < high and high - low < 0.4
    assert task_bootstrap_interval([1.0] * 20) == wilson_interval(20, 20)
