"""Agreement between a judge and human labels: pure functions of two equal-length lists.

- accuracy: share of exact matches; balanced accuracy: the mean of per-class recall over
  the classes present in the human labels (sklearn's `balanced_accuracy_score`).
- Cohen's kappa: (p_o - p_e) / (1 - p_e), p_e from the two marginals (sklearn's
  `cohen_kappa_score`, unweighted); 1.0 when both raters use one and the same class.
- Spearman rho: Pearson correlation of average ranks (ties get the mean rank), and
  Kendall tau-b (ties in either list corrected), as `scipy.stats` computes them; NaN when
  one list is constant (undefined).
- bootstrap_ci: percentile 95% interval of a statistic over `n_resamples` resamples of
  the pairs with a fixed seed (so a rerun prints the same interval).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np

Labels = Sequence[Hashable]


def accuracy(truth: Labels, predicted: Labels) -> float:
    _check(truth, predicted)
    return sum(1 for t, p in zip(truth, predicted, strict=True) if t == p) / len(truth)


def balanced_accuracy(truth: Labels, predicted: Labels) -> float:
    _check(truth, predicted)
    recalls = []
    for cls in sorted(set(truth), key=repr):
        idx = [i for i, t in enumerate(truth) if t == cls]
        recalls.append(sum(1 for i in idx if predicted[i] == cls) / len(idx))
    return sum(recalls) / len(recalls)


def confusion_matrix(
    truth: Labels, predicted: Labels, classes: Sequence[Hashable] | None = None
) -> tuple[list[Hashable], list[list[int]]]:
    """(classes, counts) with counts[i][j] = rows labelled classes[i], judged classes[j]."""
    _check(truth, predicted)
    classes = list(classes) if classes else sorted(set(truth) | set(predicted), key=repr)
    at = {c: i for i, c in enumerate(classes)}
    counts = [[0] * len(classes) for _ in classes]
    for t, p in zip(truth, predicted, strict=True):
        counts[at[t]][at[p]] += 1
    return classes, counts


def cohen_kappa(truth: Labels, predicted: Labels) -> float:
    classes, counts = confusion_matrix(truth, predicted)
    n = len(truth)
    observed = sum(counts[i][i] for i in range(len(classes))) / n
    rows = [sum(r) / n for r in counts]
    cols = [sum(counts[i][j] for i in range(len(classes))) / n for j in range(len(classes))]
    expected = sum(r * c for r, c in zip(rows, cols, strict=True))
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties sharing their mean rank (scipy.stats.rankdata 'average')."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    sorted_x = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    _check(a, b)
    ra, rb = average_ranks(a), average_ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = math.sqrt(float((ra * ra).sum() * (rb * rb).sum()))
    return float((ra * rb).sum() / denom) if denom > 0 else math.nan


def kendall_tau_b(a: Sequence[float], b: Sequence[float]) -> float:
    """(concordant - discordant) / sqrt((n0 - n1)(n0 - n2)) over all pairs."""
    _check(a, b)
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones((len(x), len(x)), dtype=bool), k=1)
    s = float((dx * dy)[upper].sum())
    untied_x = float((dx[upper] != 0).sum())
    untied_y = float((dy[upper] != 0).sum())
    denom = math.sqrt(untied_x * untied_y)
    return s / denom if denom > 0 else math.nan


def bootstrap_ci(
    statistic: Callable[[list, list], float],
    truth: Sequence,
    predicted: Sequence,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of `statistic` over resampled pairs; NaN resamples are skipped."""
    _check(truth, predicted)
    rng = np.random.default_rng(seed)
    n = len(truth)
    values = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, size=n)
        value = statistic([truth[i] for i in idx], [predicted[i] for i in idx])
        if not math.isnan(value):
            values.append(value)
    if not values:
        return math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _check(a: Sequence, b: Sequence) -> None:
    if len(a) != len(b):
        raise ValueError(f"the two lists differ in length ({len(a)} vs {len(b)})")
    if not a:
        raise ValueError("no pairs to compare")
