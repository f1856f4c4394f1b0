"""Agreement statistics against scipy / sklearn (reference implementations) and by hand."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from lasagna.metrics.agreement import (
    accuracy,
    average_ranks,
    balanced_accuracy,
    bootstrap_ci,
    cohen_kappa,
    confusion_matrix,
    kendall_tau_b,
    spearman,
)

TRUTH = ["yes", "yes", "no", "no", "yes", "no", "yes", "yes", "no", "yes"]
PRED = ["yes", "no", "no", "yes", "yes", "no", "yes", "no", "no", "yes"]
GRADED_A = [1, 2, 2, 3, 5, 4, 4, 1, 3, 5, 2]
GRADED_B = [0.1, 0.3, 0.2, 0.5, 0.9, 0.6, 0.7, 0.3, 0.3, 0.8, 0.1]


def test_binary_statistics_match_sklearn():
    sk = pytest.importorskip("sklearn.metrics", reason="sklearn gives the reference values")
    assert accuracy(TRUTH, PRED) == pytest.approx(sk.accuracy_score(TRUTH, PRED))
    assert balanced_accuracy(TRUTH, PRED) == pytest.approx(sk.balanced_accuracy_score(TRUTH, PRED))
    assert cohen_kappa(TRUTH, PRED) == pytest.approx(sk.cohen_kappa_score(TRUTH, PRED))
    classes, counts = confusion_matrix(TRUTH, PRED)
    assert counts == sk.confusion_matrix(TRUTH, PRED, labels=classes).tolist()
    three_t = [0, 1, 2, 2, 1, 0, 2, 1]
    three_p = [0, 2, 2, 1, 1, 0, 0, 1]
    assert cohen_kappa(three_t, three_p) == pytest.approx(sk.cohen_kappa_score(three_t, three_p))


def test_hand_values():
    # 6/10 agree; per class recall yes 4/6, no 3/4 -> balanced 0.7083
    assert accuracy(TRUTH, PRED) == 0.7
    assert balanced_accuracy(TRUTH, PRED) == pytest.approx((4 / 6 + 3 / 4) / 2)
    # p_o = 0.7, p_e = 0.6*0.5 + 0.4*0.5 = 0.5 -> kappa 0.4
    assert cohen_kappa(TRUTH, PRED) == pytest.approx(0.4)
    assert cohen_kappa(["a", "a"], ["a", "a"]) == 1.0


def test_rank_correlations_match_scipy():
    assert average_ranks([3, 1, 3, 2]).tolist() == stats.rankdata([3, 1, 3, 2]).tolist()
    assert spearman(GRADED_A, GRADED_B) == pytest.approx(stats.spearmanr(GRADED_A, GRADED_B)[0])
    tau = stats.kendalltau(GRADED_A, GRADED_B, variant="b")[0]
    assert kendall_tau_b(GRADED_A, GRADED_B) == pytest.approx(tau)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate():
    low, high = bootstrap_ci(accuracy, TRUTH, PRED, n_resamples=500, seed=1)
    assert low <= 0.7 <= high and 0 <= low < high <= 1
    assert (low, high) == bootstrap_ci(accuracy, TRUTH, PRED, n_resamples=500, seed=1)
    with pytest.raises(ValueError, match="differ in length"):
        accuracy([1], [1, 2])
