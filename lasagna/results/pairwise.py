"""Systems compared pairwise on per-question scores, with a multiple-comparison correction.

The one place that pairs two systems' questions and tests them: `lasagna results compare
RUN` (every pair of a run's systems, or each against a baseline), the report's within-run
matrix and the leaderboard's "not significantly different from the best" marks.

A system's score on a question is the mean over its trials (repeats, runs) of that
question's per-question column; questions are matched by id and pairs with a missing score
on either side are dropped. The tests of one family (the pairs compared on one metric of
one group) are adjusted together (lasagna.metrics.corrections); a pair is significant when
its adjusted randomization-test p-value is below 0.05.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna.metrics.corrections import ALPHA, DEFAULT_CORRECTION, adjust
from lasagna.results.model import TrialMeta, per_question_metrics

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.results.runs import Run


def question_means(parts: list[tuple[Run, TrialMeta]], metric: str) -> pa.Table | None:
    """(id, v_mean): each question's score averaged over the trials; None when a trial has
    no per-question column of `metric` (an aggregate-only metric)."""
    import pyarrow as pa

    tables = []
    for run, t in parts:
        rows = run.rows(t.key)
        values = _per_question(t, rows, metric)
        if values is None:
            return None
        tables.append(pa.table({"id": rows["id"].cast(pa.string()), "v": values}))
    if not tables:
        return None
    return pa.concat_tables(tables).group_by("id").aggregate([("v", "mean")])


SDK_SCORES = "evaluator_scores"  # an evaluate() trial's rows: score dimension -> value


def _per_question(meta: TrialMeta, rows: pa.Table, metric: str) -> pa.Array | None:
    """A trial's per-question values of `metric` (float64): its column, or an evaluate()
    row's score of that dimension; None when it has neither."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if metric in per_question_metrics(meta, rows.schema):
        return rows[metric].cast(pa.float64())
    if SDK_SCORES in rows.column_names and metric in meta.metrics:
        return pc.map_lookup(rows[SDK_SCORES], pa.scalar(metric), "first").cast(pa.float64())
    return None


@dataclass
class SystemScores:
    """One system of a group: its label, trials and (when it has them) per-question means."""

    label: str
    system_id: str
    trials: list[TrialMeta]
    mean: float  # the mean over its trials of the aggregate metric
    questions: dict[str, float] | None = None  # id -> score; None: aggregate only


def system_scores(label: str, parts: list[tuple[Run, TrialMeta]], metric: str) -> SystemScores:
    table = question_means(parts, metric)
    questions = None
    if table is not None:
        ids = table["id"].to_pylist()
        values = table["v_mean"].to_pylist()
        questions = {
            i: float(v) for i, v in zip(ids, values, strict=True) if v is not None and v == v
        }
    trials = [t for _, t in parts]
    values = [float(t.metrics[metric]) for t in trials if metric in t.metrics]
    mean = sum(values) / len(values) if values else math.nan
    return SystemScores(label, trials[0].system_id, trials, mean, questions)


@dataclass
class Pair:
    """A against B on one metric: means over the paired questions (B - A), the effect size,
    raw and adjusted p-values. n = 0: no per-question scores, the aggregate means only."""

    a: str  # labels
    b: str
    metric: str
    mean_a: float
    mean_b: float
    diff: float
    n: int
    p_ttest: float | None
    p_permutation: float | None
    effect: float | None = None
    p_ttest_adj: float | None = None
    p_permutation_adj: float | None = None
    diff_low: float | None = None  # 95% paired bootstrap interval of B - A
    diff_high: float | None = None

    @property
    def significant(self) -> bool:
        return self.p_permutation_adj is not None and self.p_permutation_adj < ALPHA


def pair_test(a: SystemScores, b: SystemScores, metric: str, interval: bool = True) -> Pair:
    """The paired tests of B against A (no correction yet); `interval`: with B - A's."""
    import numpy as np

    from lasagna.metrics.stats import paired

    if a.questions is not None and b.questions is not None:
        ids = sorted(a.questions.keys() & b.questions.keys())
        test = paired(
            np.array([a.questions[i] for i in ids], float),
            np.array([b.questions[i] for i in ids], float),
            interval,
        )
        if test.n > 0:
            return Pair(
                a.label,
                b.label,
                metric,
                test.mean_a,
                test.mean_b,
                test.diff,
                test.n,
                test.p_ttest,
                test.p_permutation,
                test.effect,
                diff_low=test.diff_low,
                diff_high=test.diff_high,
            )
    return Pair(a.label, b.label, metric, a.mean, b.mean, b.mean - a.mean, 0, None, None)


def correct(pairs: list[Pair], correction: str = DEFAULT_CORRECTION) -> list[Pair]:
    """Fill the adjusted p-values of one family (in place; returned for chaining)."""
    for p, t, r in zip(
        pairs,
        adjust([p.p_ttest for p in pairs], correction),
        adjust([p.p_permutation for p in pairs], correction),
        strict=True,
    ):
        p.p_ttest_adj, p.p_permutation_adj = t, r
    return pairs


def pairs_of(
    systems: list[SystemScores],
    metric: str,
    correction: str = DEFAULT_CORRECTION,
    baseline: int | None = None,
    interval: bool = True,
) -> list[Pair]:
    """Every pair (i < j, A = the earlier system) or, with `baseline`, that system (A)
    against each other one; one corrected family (`interval`: with B - A's intervals)."""
    if baseline is not None:
        index = [(baseline, j) for j in range(len(systems)) if j != baseline]
    else:
        index = [(i, j) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    tests = [pair_test(systems[i], systems[j], metric, interval) for i, j in index]
    return correct(tests, correction)


@dataclass
class BestTies:
    """The leaderboard's marks: per system id, the adjusted p-value of the best system
    against it (None: no paired test possible), and whether the two differ significantly."""

    best: str  # system id
    p: dict[str, float | None] = field(default_factory=dict)
    differs: dict[str, bool] = field(default_factory=dict)


def best_ties(
    systems: list[SystemScores], metric: str, correction: str = DEFAULT_CORRECTION
) -> BestTies | None:
    """The best system (the first) against each other one; None with fewer than two."""
    if len(systems) < 2:
        return None
    pairs = pairs_of(systems, metric, correction, baseline=0, interval=False)  # p-values only
    out = BestTies(systems[0].system_id)
    for s, pair in zip(systems[1:], pairs, strict=True):
        out.p[s.system_id] = pair.p_permutation_adj
        out.differs[s.system_id] = pair.significant
    return out


def summary(pairs: list[Pair]) -> dict[str, Any]:
    """How many of a family's pairs were tested and how many differ (for captions)."""
    tested = [p for p in pairs if p.p_permutation is not None]
    return {"tested": len(tested), "significant": sum(p.significant for p in tested)}
