"""The numbers of an evaluation: pass@k and confidence intervals.

pass@k is the unbiased estimator of Chen et al. (2021, the Codex paper): with n samples of a
task of which c are correct, the chance that k of them drawn without replacement hold at least
one correct is 1 - C(n-c, k) / C(n, k), averaged over tasks. It is computed as the product
1 - prod_{i=n-c+1}^{n} (1 - k/i), which stays exact in floats where the binomials overflow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z_95 = 1.959963984540054
"""The standard normal's 97.5% quantile: a two-sided 95% interval."""
BOOTSTRAP_RESAMPLES = 2000


def pass_at_k(n: int, c: int, k: int) -> float:
    """The probability that k of n samples (c of them correct), drawn without replacement,
    hold a correct one. The one estimator `rlenvs eval` and `rlenvs-train eval` report."""
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"pass_at_k: {name} must be an int, got {value!r}")
    if not 1 <= k <= n:
        raise ValueError(
            f"pass_at_k needs 1 <= k <= n (k samples out of n), got n={n}, k={k}: draw --samples {k} or more per task"
        )
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n (successes among the n samples), got n={n}, c={c}")
    if n - c < k:
        return 1.0  # every draw of k holds a success
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion: unlike the normal approximation it
    stays inside [0, 1] and is not empty at 0% or 100% (an oracle's 100% of 164 tasks is
    [97.7%, 100%], not a point)."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    return (low, 1.0 if successes == trials else min(1.0, centre + half))


def task_bootstrap_interval(per_task: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """A 95% percentile bootstrap interval of the mean of per-task success rates, resampling
    tasks: with several samples per task the samples of one task are not independent trials,
    so a binomial interval over episodes would be too narrow."""
    values = np.asarray(per_task, dtype=float)
    if values.size == 0:
        return (0.0, 1.0)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(values.size, size=(BOOTSTRAP_RESAMPLES, values.size))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    if low == high:  # every task alike (all solved, or none): no spread to resample
        return wilson_interval(round(float(values.mean()) * values.size), values.size)
    return (float(low), float(high))
