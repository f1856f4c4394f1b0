"""`lasagna results compare RUN`: the systems of one run compared pairwise, group by group.

Per comparability group of the run and per metric (the group's main one unless named):
each system's mean, then every pair (or each system against `--baseline`) with B - A,
Cohen's d_z, the paired t-test and randomization test p-values, adjusted for the number of
pairs (Holm unless `--correction` says otherwise). Systems are in leaderboard order (best
first) and named by their label, their system id's start or a trial key's start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.metrics import catalog
from lasagna.metrics.corrections import DEFAULT_CORRECTION
from lasagna.results.leaderboard import default_metric, group_title, labels_by_system
from lasagna.results.model import TrialMeta, trials_by_system
from lasagna.results.pairwise import Pair, SystemScores, pairs_of, system_scores
from lasagna.results.question_diffs import Differences, pair_differences
from lasagna.results.runs import Run
from lasagna.results.slices import group_slices


@dataclass
class WithinGroup:
    comparability_key: str
    benchmark: dict[str, Any]
    track: str
    metric: str
    systems: list[SystemScores]  # best first
    pairs: list[Pair]  # one corrected family
    baseline: str | None = None  # its label
    # `--by`: the metadata key, this slice's value and its questions (None: every question)
    by: str | None = None
    value: str | None = None
    questions: int | None = None
    family: int | None = None  # `--by`: the tests corrected together (every slice's)
    # `--questions N`: the questions behind each pair (aligned with `pairs`)
    differences: list[Differences | None] = field(default_factory=list)

    @property
    def title(self) -> str:
        title = group_title(self.benchmark, self.track)
        if self.by is None:
            return title
        return f"{title} · {self.by}={self.value} ({self.questions} questions)"


@dataclass
class WithinRun:
    run_id: str
    correction: str
    groups: list[WithinGroup] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def find_system(
    name: str, systems: dict[str, list[TrialMeta]], labels: dict[str, str]
) -> list[str]:
    """The system ids `name` names: its label, else the start of a system id, else the
    start of one of its trial keys, else a label holding every word of `name` (a
    leaderboard's `bm25 k1=0.9` where the run says `bm25 k1=0.9 b=0.75`; two such labels
    are refused as ambiguous, with both named)."""
    exact = [sid for sid in systems if labels[sid] == name]
    if exact:
        return exact
    by_id = [sid for sid in systems if sid.startswith(name)]
    if by_id:
        return by_id
    by_key = [sid for sid, ts in systems.items() if any(t.key.startswith(name) for t in ts)]
    if by_key or not name.split():
        return by_key
    words = name.split()
    return [
        sid
        for sid in systems
        if labels[sid].split()[:1] == words[:1] and set(words) <= set(labels[sid].split())
    ]


def _metrics(trials: list[TrialMeta], asked: list[str], all_metrics: bool) -> list[str]:
    shared = [m for m in trials[0].metrics if all(m in t.metrics for t in trials)]
    if asked:
        return [m for m in asked if m in shared]
    if all_metrics:
        return shared
    main = default_metric(trials[0].track, trials)
    return [main] if main else []


def compare_within(
    run: Run,
    metrics: list[str] | None = None,
    all_metrics: bool = False,
    systems: list[str] | None = None,
    baseline: str | None = None,
    correction: str = DEFAULT_CORRECTION,
    by: str | None = None,
    questions: int = 0,
) -> WithinRun:
    """The run's systems compared pairwise in every group (see the module docstring);
    `by`: within each slice of that metadata key instead (lasagna.results.slices), the
    pairs of every slice of a metric corrected as one family; `questions`: the N questions
    each pair gains and loses most on (lasagna.results.question_diffs)."""
    if not run.trials:
        raise UserError(Problem("this run has no trials", file=run.path))
    asked = list(dict.fromkeys(metrics or []))
    names = list(dict.fromkeys((systems or []) + ([baseline] if baseline else [])))
    out = WithinRun(run.run_id, correction)
    problems: list[Problem] = []
    matched: set[str] = set()
    tried = keyed = 0  # `by`: groups sliced, and those with the key (none: refused)
    for ckey in dict.fromkeys(t.comparability_key for t in run.trials):
        trials = [t for t in run.trials if t.comparability_key == ckey]
        title = group_title(trials[0].benchmark, trials[0].track)
        by_system = trials_by_system(trials)
        labels = labels_by_system(trials)
        keep = list(by_system)
        base_id = None
        if names:
            keep = []
            for name in names:
                hits = find_system(name, by_system, labels)
                if len(hits) > 1:
                    problems.append(_ambiguous(name, hits, labels, title))
                elif hits:
                    matched.add(name)
                    keep.append(hits[0])
                    if name == baseline:
                        base_id = hits[0]
            if not systems:  # --baseline alone: it against every other system
                keep = list(dict.fromkeys([*keep, *by_system]))
            if baseline and base_id is None:
                out.notes.append(f"group {title}: no system {baseline!r}, not compared")
                continue
        if len(keep) < 2:
            out.notes.append(f"group {title}: fewer than two systems to compare")
            continue
        group_metrics = _metrics(trials, asked, all_metrics)
        slices = group_slices(run, trials, by) if by else None
        if by:
            tried += 1
            if not slices:
                out.notes.append(f"group {title}: no question has metadata key {by!r}")
                continue
            keyed += 1
        for m in asked:
            if m not in group_metrics:
                out.notes.append(f"group {title} has no metric {m!r} in every trial: not shown")
        for metric in group_metrics:
            scored = [
                system_scores(labels[sid], [(run, t) for t in by_system[sid]], metric)
                for sid in keep
            ]
            scored.sort(key=lambda s: (catalog.sort_key(metric, s.mean), s.label))
            if slices is not None:
                out.groups += _sliced(trials[0], metric, scored, base_id, labels, by, slices, out)
                continue
            base = None
            if base_id is not None:
                base = next(i for i, s in enumerate(scored) if s.system_id == base_id)
            out.groups.append(
                WithinGroup(
                    ckey,
                    dict(trials[0].benchmark),
                    trials[0].track,
                    metric,
                    scored,
                    pairs_of(scored, metric, correction, baseline=base),
                    labels[base_id] if base_id else None,
                )
            )
    problems += [_unknown(n, run) for n in names if n not in matched]
    if problems:
        raise UserError(problems, title="cannot pick the systems to compare")
    if tried and not keyed:
        from lasagna.results.slices import unknown_key

        raise unknown_key(by, run)
    for g in out.groups if questions else []:
        g.differences = pair_differences(run, g.systems, g.pairs, questions)
    if asked and not out.groups:
        shared = sorted({m for t in run.trials for m in t.metrics})
        raise UserError(
            Problem(
                f"no group of run {run.run_id} has the metric(s) {', '.join(asked)}",
                field="--metric",
                fix="use one of: " + ", ".join(shared),
            )
        )
    return out


def _ambiguous(name: str, hits: list[str], labels: dict[str, str], title: str) -> Problem:
    return Problem(
        f"{name!r} names {len(hits)} systems of group {title}: "
        + ", ".join(f"{labels[h]} ({h})" for h in hits),
        field="--systems",
        fix="give a label or a longer system id",
    )


def _unknown(name: str, run: Run) -> Problem:
    known = list(dict.fromkeys(labels_by_system(run.trials).values()))
    return Problem(
        f"no system of run {run.run_id} is named {name!r}",
        field="--systems / --baseline",
        fix="name a system by its label or the start of its system id; labels: "
        + ", ".join(known[:12]),
    )


def _sliced(
    first: TrialMeta,
    metric: str,
    scored: list[SystemScores],
    base_id: str | None,
    labels: dict[str, str],
    by: str,
    slices: dict[str, set[str]],
    out: WithinRun,
) -> list[WithinGroup]:
    """One group per slice (its systems best first on the slice), every slice's pairs
    adjusted together: slicing multiplies the comparisons, and the correction counts them."""
    from lasagna.results.pairwise import correct
    from lasagna.results.slices import compared, restricted

    shown = compared(slices, group_title(first.benchmark, first.track), out.notes)
    groups: list[WithinGroup] = []
    for value, ids in shown.items():
        systems = [restricted(s, ids) for s in scored]
        systems.sort(key=lambda s: (catalog.sort_key(metric, s.mean), s.label))
        base = None
        if base_id is not None:
            base = next(i for i, s in enumerate(systems) if s.system_id == base_id)
        pairs = pairs_of(systems, metric, "none", baseline=base)  # adjusted below, together
        groups.append(
            WithinGroup(
                first.comparability_key,
                dict(first.benchmark),
                first.track,
                metric,
                systems,
                pairs,
                labels[base_id] if base_id else None,
                by=by,
                value=value,
                questions=len(ids),
            )
        )
    family = [p for g in groups for p in g.pairs]
    correct(family, out.correction)
    for g in groups:
        g.family = sum(p.p_permutation is not None for p in family)
    return groups
