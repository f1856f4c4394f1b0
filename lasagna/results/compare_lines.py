"""One line of `lasagna results compare RUN_A RUN_B`: a system of run A against its match in
run B on one metric, tested on per-question scores (lasagna.results.compare pairs the
systems; this module computes and adjusts the lines)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lasagna.metrics.corrections import ALPHA, adjust
from lasagna.results.model import TrialMeta
from lasagna.results.pairwise import question_means
from lasagna.results.question_diffs import Differences

if TYPE_CHECKING:
    from lasagna.results.runs import Run


@dataclass
class ComparisonLine:
    comparability_key: str
    system_a: str
    system_b: str
    metric: str
    mean_a: float
    mean_b: float
    diff: float  # mean_b - mean_a
    n: int  # paired questions (0: aggregate only)
    p_ttest: float | None
    p_permutation: float | None
    trials_a: int
    trials_b: int
    effect: float | None = None  # Cohen's d_z of the paired differences
    p_ttest_adj: float | None = None  # adjusted over the group's lines of this metric
    p_permutation_adj: float | None = None
    diff_low: float | None = None  # 95% paired bootstrap interval of diff
    diff_high: float | None = None
    slice: str | None = None  # `--by`: the slice's value (None: every question)
    questions: int | None = None  # `--by`: the slice's questions
    differences: Differences | None = None  # `--questions N`: the questions behind the line

    @property
    def significant(self) -> bool:
        return self.p_permutation_adj is not None and self.p_permutation_adj < ALPHA


def paired_line(
    ckey: str,
    run_a: Run,
    ta: list[TrialMeta],
    run_b: Run,
    tb: list[TrialMeta],
    metric: str,
    labels: dict[str, str],
    where: tuple[str, set[str]] | None = None,
) -> ComparisonLine:
    """A against B on the questions both scored; `where`: (a slice's value, its question
    ids) to test that slice alone (no per-question scores: no line's means, NaN)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from lasagna.metrics.stats import paired

    qa = question_means([(run_a, t) for t in ta], metric)
    qb = question_means([(run_b, t) for t in tb], metric)
    common = dict(
        comparability_key=ckey,
        system_a=labels[ta[0].system_id],
        system_b=labels[tb[0].system_id],
        metric=metric,
        trials_a=len(ta),
        trials_b=len(tb),
    )
    if where is not None:
        common |= {"slice": where[0], "questions": len(where[1])}
    if qa is not None and qb is not None:
        joined = qa.rename_columns(["id", "a"]).join(qb.rename_columns(["id", "b"]), "id")
        if where is not None:
            joined = joined.filter(pc.is_in(joined["id"], pa.array(sorted(where[1]))))
        joined = joined.sort_by("id")  # a join's order varies: the seeded tests need one
        a = joined["a"].to_numpy(zero_copy_only=False).astype(float)
        b = joined["b"].to_numpy(zero_copy_only=False).astype(float)
        test = paired(a, b)
        if test.n > 0:
            return ComparisonLine(
                **common,
                mean_a=test.mean_a,
                mean_b=test.mean_b,
                diff=test.diff,
                n=test.n,
                p_ttest=test.p_ttest,
                p_permutation=test.p_permutation,
                effect=test.effect,
                diff_low=test.diff_low,
                diff_high=test.diff_high,
            )
    if where is not None:  # a slice has no aggregate of its own
        nan = float("nan")
        return ComparisonLine(
            **common, mean_a=nan, mean_b=nan, diff=nan, n=0, p_ttest=None, p_permutation=None
        )
    mean_a = float(np.mean([t.metrics[metric] for t in ta]))
    mean_b = float(np.mean([t.metrics[metric] for t in tb]))
    return ComparisonLine(
        **common,
        mean_a=mean_a,
        mean_b=mean_b,
        diff=mean_b - mean_a,
        n=0,
        p_ttest=None,
        p_permutation=None,
    )


def correct_lines(lines: list[ComparisonLine], correction: str) -> None:
    """Adjust the p-values of each family: the lines of one group and metric (with `--by`,
    of every slice: slicing multiplies the comparisons, and the correction counts them)."""
    families: dict[tuple[str, str], list[ComparisonLine]] = {}
    for line in lines:
        families.setdefault((line.comparability_key, line.metric), []).append(line)
    for family in families.values():
        ts = adjust([x.p_ttest for x in family], correction)
        ps = adjust([x.p_permutation for x in family], correction)
        for line, t, p in zip(family, ts, ps, strict=True):
            line.p_ttest_adj, line.p_permutation_adj = t, p
