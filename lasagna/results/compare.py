"""Compare two runs within one comparability group, with paired tests on per-question scores.

Systems are matched by their config hash within a shared comparability key; two runs of
one trial each are compared trial to trial (e.g. BM25 in run A vs dense in run B). Repeats of
a system are averaged per question first. Questions are matched by id; pairs with a missing
score on either side are dropped. Mean A / mean B are over the paired questions when a
paired test is possible, else the trials' aggregate metrics (no p-value). The p-values of
one group and metric are adjusted together (Holm unless told otherwise). The systems of one
run are compared with each other in lasagna.results.within.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.judges.degenerate import flagged
from lasagna.metrics import catalog
from lasagna.metrics.corrections import DEFAULT_CORRECTION
from lasagna.results.compare_lines import ComparisonLine, correct_lines, paired_line
from lasagna.results.leaderboard import group_title, labels_by_system
from lasagna.results.model import BENCHMARK_KEYS, TrialMeta, trials_by_system
from lasagna.results.question_diffs import runs_differences
from lasagna.results.store import DEFAULT_OUTPUT, Output, Run, open_run


@dataclass
class Comparison:
    run_a: str
    run_b: str
    benchmark: dict[str, Any]
    track: str
    lines: list[ComparisonLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # systems or groups only one run has
    # every shared group, in order: comparability key -> (benchmark fields, track)
    groups: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    correction: str = DEFAULT_CORRECTION
    by: str | None = None  # the metadata key the lines are sliced by (lasagna.results.slices)


def key_differences(a: TrialMeta, b: TrialMeta) -> list[str]:
    """What makes two trials incomparable, in words: 'split: test vs dev', ..."""
    out = []
    if a.track != b.track:
        out.append(f"track: {a.track} vs {b.track}")
    for name in BENCHMARK_KEYS:
        va, vb = a.benchmark.get(name), b.benchmark.get(name)
        if va != vb and name not in ("source", "format"):
            out.append(f"{name}: {va} vs {vb}")
    ea, eb = a.metric_definitions_version, b.metric_definitions_version
    if ea != eb:
        out.append(f"metric_definitions_version: {ea} vs {eb}")
    return out


def _refuse(run_a: Run, run_b: Run) -> UserError:
    ta, tb = run_a.trials[0], run_b.trials[0]
    diffs = key_differences(ta, tb) or ["another field of the comparability key"]
    problems = [
        Problem(
            f"run {run_a.run_id} is in group {ta.comparability_key} "
            f"({group_title(ta.benchmark, ta.track)}); run {run_b.run_id} is in group "
            f"{tb.comparability_key} ({group_title(tb.benchmark, tb.track)})",
            fix="compare runs on the same data revision, split, sample, filters, corpus and "
            "track; `lasagna results leaderboard` shows the groups",
        )
    ]
    problems += [Problem(f"differs: {d}") for d in diffs]
    return UserError(problems, title="these runs are not comparable (no shared group)")


def _metrics(
    ta: list[TrialMeta], tb: list[TrialMeta], metric: str | None, all_metrics: bool = False
) -> list[str]:
    """The metric named, else every shared one (all_metrics), else the track's main ones."""
    both = [m for m in ta[0].metrics if all(m in t.metrics for t in ta + tb)]
    if metric is None:
        if all_metrics:
            return both
        main = [m for m in catalog.main_metrics(ta[0].track) if m in both]
        return main or both
    if metric not in both:
        raise UserError(
            Problem(
                f"the metric {metric!r} is not in both runs",
                field="--metric",
                fix="use one of: " + (", ".join(both) or "(no shared metric)"),
            )
        )
    return [metric]


def compare_runs(
    run_a: Run,
    run_b: Run,
    metric: str | None = None,
    all_metrics: bool = False,
    correction: str = DEFAULT_CORRECTION,
    labels: dict[str, str] | None = None,
    by: str | None = None,
    questions: int = 0,
) -> Comparison:
    """Pure over two opened runs (see the module docstring). `labels`: system id -> label
    when a wider group than the two runs names the systems (the report's). `by`: a line per
    slice of that metadata key (lasagna.results.slices) instead of one over every question.
    `questions`: each line's N largest gains and losses, question by question."""
    if not run_a.trials or not run_b.trials:
        empty = run_a if not run_a.trials else run_b
        raise UserError(Problem("this run has no trials", file=empty.path))
    groups_a = {t.comparability_key for t in run_a.trials}
    groups_b = {t.comparability_key for t in run_b.trials}
    shared = [k for k in dict.fromkeys(t.comparability_key for t in run_a.trials) if k in groups_b]
    if not shared:
        raise _refuse(run_a, run_b)
    notes = [f"group {k} is only in run {run_a.run_id}" for k in sorted(groups_a - groups_b)]
    notes += [f"group {k} is only in run {run_b.run_id}" for k in sorted(groups_b - groups_a)]

    labels = {
        sid: label
        for ckey in shared
        for sid, label in labels_by_system(
            [t for t in run_a.trials + run_b.trials if t.comparability_key == ckey]
        ).items()
    } | (labels or {})
    pairs: list[tuple[str, list[TrialMeta], list[TrialMeta]]] = []
    if len(run_a.trials) == 1 and len(run_b.trials) == 1:
        pairs.append((shared[0], run_a.trials, run_b.trials))
    else:
        for ckey in shared:
            sys_a = trials_by_system(t for t in run_a.trials if t.comparability_key == ckey)
            sys_b = trials_by_system(t for t in run_b.trials if t.comparability_key == ckey)
            for sid, ta in sys_a.items():
                if sid in sys_b:
                    pairs.append((ckey, ta, sys_b[sid]))
                else:
                    notes.append(f"system {labels[sid]} ({sid}) is only in run {run_a.run_id}")
            for sid in sys_b:
                if sid not in sys_a:
                    notes.append(f"system {labels[sid]} ({sid}) is only in run {run_b.run_id}")
    if not pairs:
        raise UserError(
            Problem(
                f"runs {run_a.run_id} and {run_b.run_id} share a group but no system config",
                fix="compare runs that evaluated the same system, or runs of one trial each",
            )
        )
    first = next(t for t in run_a.trials if t.comparability_key == shared[0])
    comparison = Comparison(
        run_a.run_id,
        run_b.run_id,
        dict(first.benchmark),
        first.track,
        notes=notes,
        correction=correction,
        by=by,
    )
    for ckey, ta, tb in pairs:
        comparison.groups.setdefault(ckey, (dict(ta[0].benchmark), ta[0].track))
        names = _metrics(ta, tb, None, all_metrics) if metric is None else [metric]
        if metric is not None and not all(metric in t.metrics for t in ta + tb):
            continue  # e.g. --metric ndcg@10 over a generation group: said in a note
        slices = _slices(run_a, ta, by, comparison) if by else None
        for m in names:
            for where in slices.items() if slices is not None else [None]:
                line = paired_line(ckey, run_a, ta, run_b, tb, m, labels, where)
                if questions:  # the questions behind the line (lasagna.results.question_diffs)
                    ids = where[1] if where else None
                    line.differences = runs_differences((run_a, ta), (run_b, tb), m, questions, ids)
                comparison.lines.append(line)
    if by and not any(x.slice is not None for x in comparison.lines):
        from lasagna.results.slices import unknown_key

        raise unknown_key(by, run_a)
    if metric is not None and not comparison.lines:
        _metrics(pairs[0][1], pairs[0][2], metric)  # refuses, listing the shared metrics
    comparison.notes += _judge_warnings(comparison.lines, pairs, (run_a, run_b), labels)
    correct_lines(comparison.lines, correction)
    skipped = [
        k for k in comparison.groups if not any(x.comparability_key == k for x in comparison.lines)
    ]
    for k in skipped:
        title = group_title(*comparison.groups[k])
        comparison.notes.append(f"group {k} ({title}) has no metric {metric!r}: not shown")
    return comparison


def _judge_warnings(
    lines: list[ComparisonLine],
    pairs: list[tuple[str, list[TrialMeta], list[TrialMeta]]],
    runs: tuple[Run, Run],
    labels: dict[str, str],
) -> list[str]:
    """The compared trials' degenerate-judgment flags on shown metrics (no real difference)."""
    out = []
    for ckey, *sides in pairs:
        shown = [x.metric for x in lines if x.comparability_key == ckey]
        for run, trials in zip(runs, sides, strict=True):
            said = flagged(((labels[t.system_id], t) for t in trials), shown)
            out += [f"run {run.run_id}: {line}" for line in said]
    return list(dict.fromkeys(out))


def _slices(
    run: Run, trials: list[TrialMeta], by: str, comparison: Comparison
) -> dict[str, set[str]] | None:
    """The compared slices of run A's trials (both runs hold the same data revision); None
    when no question has the key (a note says so)."""
    from lasagna.results.slices import compared, group_slices

    title = group_title(trials[0].benchmark, trials[0].track)
    slices = group_slices(run, trials, by)
    if slices is None:
        comparison.notes.append(f"group {title}: no question has metadata key {by!r}")
        return None
    return compared(slices, title, comparison.notes)


def compare(
    run_a: str | Run,
    run_b: str | Run,
    output_dir: Output = DEFAULT_OUTPUT,
    metric: str | None = None,
    all_metrics: bool = False,
    correction: str = DEFAULT_CORRECTION,
    by: str | None = None,
    questions: int = 0,
) -> Comparison:
    """Compare two runs given by id, id prefix, "latest" or folder (see `compare_runs`)."""
    a = run_a if isinstance(run_a, Run) else open_run(run_a, output_dir)
    b = run_b if isinstance(run_b, Run) else open_run(run_b, output_dir)
    return compare_runs(a, b, metric, all_metrics, correction, by=by, questions=questions)
