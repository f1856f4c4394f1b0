"""The plain-Python t distribution equals SciPy's (so commands need not import SciPy)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from lasagna.metrics.stats import mean_ci, paired_ttest
from lasagna.metrics.tdist import betainc, t_cdf, t_ppf, t_sf

DFS = [1, 2, 3, 4, 5, 7, 10, 19, 30, 99, 1000, 100_000]


@pytest.mark.parametrize("df", DFS)
def test_quantiles_match_scipy(df: int) -> None:
    for p in (0.5, 0.6, 0.9, 0.95, 0.975, 0.995, 0.9995, 0.025, 1e-6):
        assert t_ppf(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("df", DFS)
def test_tails_match_scipy(df: int) -> None:
    for t in (-50.0, -3.2, -1.0, -1e-3, 0.0, 0.4, 1.96, 4.24, 12.0, 80.0):
        assert t_sf(t, df) == pytest.approx(stats.t.sf(t, df), rel=1e-9, abs=1e-300)
        assert t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), rel=1e-9, abs=1e-300)


def test_betainc_matches_scipy() -> None:
    from scipy.special import betainc as ref

    for a, b, x in [(0.5, 0.5, 0.3), (2.0, 3.0, 0.9), (50.0, 0.5, 0.99), (0.5, 200.0, 1e-4)]:
        assert betainc(a, b, x) == pytest.approx(ref(a, b, x), rel=1e-11)


def test_interval_and_paired_test_match_scipy() -> None:
    rng = np.random.default_rng(3)
    for n in (2, 3, 8, 40):
        x = rng.random(n)
        ci = mean_ci(list(x))
        half = stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / np.sqrt(n)
        assert ci.low == pytest.approx(x.mean() - half, rel=1e-10)
        a, b = rng.random(n), rng.random(n) + 0.1
        assert paired_ttest(a, b) == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-9)
