"""Statistics for results: confidence intervals (over trials, or bootstrapped over questions)
and paired tests over questions.

Pure functions of numbers (corrections for many tests: lasagna.metrics.corrections). The
randomization test uses a fixed seed, so the same scores always give the same p-value.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

PERMUTATIONS = 10_000
MIN_PERMUTATIONS = 1_000
SIGN_FLIP_BUDGET = 200_000_000  # questions x permutations per test (~3 s on 2 CPUs)
PERMUTATION_SEED = 0


def permutations_for(n: int) -> int:
    """10,000 sign flips, fewer (down to 1,000) for huge n, where the t-test agrees anyway."""
    return max(MIN_PERMUTATIONS, min(PERMUTATIONS, SIGN_FLIP_BUDGET // max(n, 1)))


@dataclass(frozen=True)
class MeanCI:
    mean: float
    low: float | None  # None when n < 2: one trial has no interval
    high: float | None
    n: int


def mean_ci(values: list[float] | np.ndarray, confidence: float = 0.95) -> MeanCI:
    """Mean and a t-distribution confidence interval over trial means (n=1: no interval).

    Plain Python (a handful of trial means): the leaderboard then needs neither NumPy nor
    SciPy (see tdist.py).
    """
    x = [float(v) for v in values]
    x = [v for v in x if not math.isnan(v)]
    n = len(x)
    if n == 0:
        return MeanCI(math.nan, None, None, 0)
    mean = statistics.fmean(x)
    if n < 2:
        return MeanCI(mean, None, None, n)
    from lasagna.metrics.tdist import t_ppf  # plain Python: SciPy costs ~1 s to import

    half = t_ppf((1 + confidence) / 2, n - 1) * statistics.stdev(x) / math.sqrt(n)
    return MeanCI(mean, mean - half, mean + half, n)


BOOTSTRAP_RESAMPLES = 1_000
BOOTSTRAP_SEED = 0


def bootstrap_mean_ci(
    values: list[float] | np.ndarray,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> MeanCI:
    """Mean and a percentile bootstrap interval of it: the mean of `resamples` question sets
    drawn with replacement (NaN left out; n=1: no interval). Unlike the t-interval it stays
    inside the scores' range (a mean of 0/1 scores never gets a bound above 1). Seeded, so
    the same scores give the same interval. Past the sign-flip test's budget (n x resamples
    > 2e8: over 200,000 questions) the t-interval, which the bootstrap then matches."""
    import numpy as np

    x = np.asarray(values, float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n * resamples > SIGN_FLIP_BUDGET:
        return mean_ci(x, confidence)
    if n == 0:
        return MeanCI(math.nan, None, None, 0)
    mean = float(x.mean())
    if n < 2:
        return MeanCI(mean, None, None, n)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, 5_000_000 // n))
    means = np.empty(resamples)
    for start in range(0, resamples, chunk):  # a few MB of indices at a time
        k = min(chunk, resamples - start)
        means[start : start + k] = x[rng.integers(0, n, size=(k, n))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return MeanCI(mean, float(low), float(high), n)


@dataclass(frozen=True)
class PairedTest:
    n: int  # questions scored in both
    mean_a: float
    mean_b: float
    diff: float  # mean_b - mean_a
    p_ttest: float | None  # paired t-test (None: n < 2 or no variance)
    p_permutation: float | None  # two-sided sign-flip randomization test
    permutations: int = 0  # sign flips drawn (2^n when exact)
    effect: float | None = None  # Cohen's d_z: mean(b - a) / sd(b - a) (None: n < 2 or sd 0)
    # 95% interval of diff: a paired percentile bootstrap over the questions (None: n < 2)
    diff_low: float | None = None
    diff_high: float | None = None


def effect_size(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cohen's d_z of paired scores: the mean difference over the differences' standard
    deviation (ddof 1); 0 when nothing differs, None when it is undefined (n < 2, or every
    question moved by the same non-zero amount)."""
    import numpy as np

    d = np.asarray(b, float) - np.asarray(a, float)
    if d.size < 2:
        return None
    sd = float(d.std(ddof=1))
    if sd == 0:
        return 0.0 if float(d.mean()) == 0 else None
    return float(d.mean()) / sd


def paired_ttest(a: np.ndarray, b: np.ndarray) -> float | None:
    import numpy as np

    d = np.asarray(b, float) - np.asarray(a, float)
    if d.size < 2:
        return None
    if np.all(d == d[0]):
        return 1.0 if d[0] == 0 else 0.0
    from lasagna.metrics.tdist import t_sf

    n = d.size
    t = float(d.mean() / (d.std(ddof=1) / math.sqrt(n)))
    return min(1.0, 2.0 * t_sf(abs(t), n - 1))  # two-sided, as scipy.stats.ttest_rel


def permutation_test(
    a: np.ndarray, b: np.ndarray, n_perm: int = PERMUTATIONS, seed: int = PERMUTATION_SEED
) -> float | None:
    """Two-sided paired randomization test: flip the sign of each question's difference.

    p = (1 + #{|mean of flipped d| >= |mean d|}) / (1 + n_perm), the usual unbiased estimate;
    exact (all 2^n sign vectors) when 2^n <= n_perm.
    """
    import numpy as np

    d = np.asarray(b, float) - np.asarray(a, float)
    n = d.size
    if n == 0:
        return None
    observed = abs(d.mean())
    if observed == 0:
        return 1.0
    tol = 1e-12 * max(1.0, observed)
    if 2**n <= n_perm:  # few questions: enumerate every sign vector, the exact p-value
        codes = np.arange(2**n)[:, None] >> np.arange(n)[None, :] & 1
        means = np.abs((codes * 2 - 1) @ d) / n
        return float(np.count_nonzero(means >= observed - tol)) / 2**n
    rng = np.random.default_rng(seed)
    total = d.sum()
    hits = 0
    chunk = max(1, min(n_perm, 5_000_000 // max(n, 1)))
    done = 0
    while done < n_perm:
        k = min(chunk, n_perm - done)
        plus = rng.integers(0, 2, size=(k, n), dtype=bool)
        means = np.abs(2 * (plus @ d) - total) / n  # sum(+d) - sum(-d), 5x faster than +-1
        hits += int(np.count_nonzero(means >= observed - tol))
        done += k
    return (hits + 1) / (n_perm + 1)


def paired(a: np.ndarray, b: np.ndarray, interval: bool = True) -> PairedTest:
    """Both tests on scores already matched question by question (NaN pairs dropped);
    `interval`: with B - A's bootstrap interval (the leaderboard's marks need none)."""
    import numpy as np

    a = np.asarray(a, float)
    b = np.asarray(b, float)
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    n = int(a.size)
    if n == 0:
        return PairedTest(0, math.nan, math.nan, math.nan, None, None)
    ci = bootstrap_mean_ci(b - a) if interval else None  # the questions resampled in pairs
    return PairedTest(
        n=n,
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        diff=float(b.mean() - a.mean()),
        p_ttest=paired_ttest(a, b),
        p_permutation=permutation_test(a, b, n_perm=permutations_for(n)),
        permutations=min(permutations_for(n), 2**n if n < 63 else permutations_for(n)),
        effect=effect_size(a, b),
        diff_low=ci.low if ci else None,
        diff_high=ci.high if ci else None,
    )
