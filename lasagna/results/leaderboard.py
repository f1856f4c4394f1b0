"""The leaderboard: every trial of every run, grouped by comparability key, one line per system.

Groups never mix: a pooled_gold corpus and a real one, or two revisions of one file, have
different comparability keys. Within a group a system is its resolved config (hashed), so
two configs sharing a name stay apart, each with its label (unique in the group,
lasagna.systems.labels). A trial key seen in several runs of one group (restored by
--resume) counts once; the same key in two groups (one data file under two names) counts
in each.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lasagna.errors import Problem, UserError
from lasagna.judges.degenerate import about_metric, warnings_of
from lasagna.metrics import catalog
from lasagna.metrics.corrections import DEFAULT_CORRECTION
from lasagna.results.model import TrialMeta, trials_by_system
from lasagna.results.runs import is_evaluation
from lasagna.results.store import DEFAULT_OUTPUT, Output, Run, load_runs

T = TypeVar("T")


@dataclass
class LeaderboardLine:
    system: str
    system_id: str
    mean: float
    low: float | None  # 95% CI (see `interval`); None where there is none
    high: float | None
    n_trials: int
    runs: list[str]
    trial_keys: list[str]
    also: dict[str, float | None] = field(default_factory=dict)  # Group.also: mean per trial
    # degenerate-judgment flags of its trials about the ranked or a shown metric
    # (lasagna.judges.degenerate)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    # the best system (line 1) against this one on per-question scores: adjusted p-value,
    # and whether they differ at 0.05 (None: line 1 itself, or no paired test possible)
    p_vs_best: float | None = None
    differs_from_best: bool | None = None
    # what the interval is over: "questions" (a percentile bootstrap of the mean of the
    # per-question scores, each averaged over the system's trials) or "trials" (a
    # t-interval of the trial means: a metric without per-question scores, or the
    # manifests only)
    interval: str = "trials"

    @property
    def tie_with_best(self) -> bool:
        """Not significantly different from the best (tested, and no difference found)."""
        return self.differs_from_best is False


@dataclass
class Group:
    comparability_key: str
    track: str
    benchmark: dict[str, Any]
    metric: str
    lines: list[LeaderboardLine] = field(default_factory=list)
    also: list[str] = field(default_factory=list)  # metrics shown beside the ranked one
    correction: str = DEFAULT_CORRECTION  # of the tests against the best
    tested: bool = False  # the best was tested against the others
    shared: str | None = None  # settings every system holds, left out of the labels


def shown_beside(track: str, trials: list[TrialMeta], ranked: str) -> list[str]:
    """What a group's table shows beside the ranked metric: the track's next main metric
    (EM beside F1, recall@10 beside nDCG@10) and, in judged generation, the judges' scores."""
    have = {m for t in trials for m in t.metrics}
    mains = [m for m in catalog.main_metrics(track) if m in have and m != ranked][:1]
    if track == "judge":
        return mains
    judged = [m for m in catalog.judge_scores(have) if m != ranked]
    return mains + judged


def benchmark_runs(runs: list[Run]) -> list[Run]:
    """The runs leaderboards group: not evaluate() runs, which their group name compares
    (`results progression`, `compare`) and the report lists apart."""
    return [r for r in runs if not is_evaluation(r)]


def default_metric(track: str, trials: list[TrialMeta]) -> str | None:
    """The metric a group of `track` is ranked and compared by: the first of the catalog's
    primary metrics its trials have."""
    names = {m for t in trials for m in t.metrics}
    for name in catalog.primary_metrics(track):
        if name in names:
            return name
    return sorted(names)[0] if names else None


def pick_groups(
    items: list[T], wanted: str, key: Callable[[T], str], name: Callable[[T], str]
) -> list[T]:
    """The groups `wanted` names (`--group`): a comparability key, else the groups whose key
    starts with it, else a benchmark name, else the start of one (a file's name with or
    without its `local/`); UserError naming a few."""
    picked = [i for i in items if key(i) == wanted]
    picked = picked or [i for i in items if key(i).startswith(wanted)]
    picked = picked or [i for i in items if name(i) == wanted]
    picked = picked or [i for i in items if name(i).startswith(wanted)]
    picked = picked or [i for i in items if name(i).removeprefix("local/").startswith(wanted)]
    if not picked:
        raise UserError(
            Problem(
                f"no comparability group matches {wanted!r}",
                field="--group",
                fix="give a comparability key (or its start) or a benchmark name; groups: "
                + ", ".join(key(i) for i in items[:8])
                + (f" and {len(items) - 8} more (lasagna results list)" if len(items) > 8 else ""),
            )
        )
    return picked


def group_keys(runs: list[Run]) -> list[tuple[str, str]]:
    """(comparability key, benchmark name) of every group of `runs`, from the manifests."""
    seen = {
        t.comparability_key: str(t.benchmark.get("name", ""))
        for r in benchmark_runs(runs)
        for t in r.trials
    }
    return sorted(seen.items(), key=lambda kv: (kv[1], kv[0]))


def build_leaderboard(
    runs: list[Run],
    metric: str | None = None,
    tests: bool = True,
    correction: str = DEFAULT_CORRECTION,
    only: set[str] | None = None,
) -> list[Group]:
    """Group the trials of `runs` (most recent first) and rank systems by `metric`.
    `tests`: test the best system of each group against every other one on per-question
    scores (reads those trials' rows; lasagna.results.pairwise); False reads manifests only.
    `only`: these comparability keys (`pick_groups`), the others not read."""
    from lasagna.metrics.stats import mean_ci
    from lasagna.systems.labels import shared_line

    seen: dict[tuple[str, str], TrialMeta] = {}  # (group, trial key): a trial once a group
    trial_runs: dict[tuple[str, str], list[str]] = {}
    holders: dict[tuple[str, str], Run] = {}
    for run in benchmark_runs(runs):
        for t in run.trials:
            if only is not None and t.comparability_key not in only:
                continue
            at = (t.comparability_key, t.key)
            seen.setdefault(at, t)
            holders.setdefault(at, run)
            trial_runs.setdefault(at, []).append(run.run_id)
    by_group: dict[str, list[TrialMeta]] = {}
    for t in seen.values():
        by_group.setdefault(t.comparability_key, []).append(t)

    groups = []
    for ckey, trials in by_group.items():
        track = trials[0].track
        name = metric or default_metric(track, trials)
        scored = [t for t in trials if name and _finite(t.metrics.get(name))]
        if not scored:
            continue
        by_system = trials_by_system(scored)
        labels = labels_by_system(trials)
        also = shown_beside(track, scored, name)
        lines = []
        for sid, ts in by_system.items():
            ci = mean_ci([float(t.metrics[name]) for t in ts])
            runs_of = list(dict.fromkeys(r for t in ts for r in trial_runs[ckey, t.key]))
            line = LeaderboardLine(
                labels[sid], sid, ci.mean, ci.low, ci.high, ci.n, runs_of, [t.key for t in ts]
            )
            line.also = {m: _mean([t.metrics.get(m) for t in ts]) for m in also}
            flags = [w for t in ts for w in warnings_of(t.extra)]
            line.warnings = [
                w
                for w in flags
                if about_metric([w], name, track) or any(about_metric([w], m, track) for m in also)
            ]
            lines.append(line)
        lines.sort(key=lambda line: (catalog.sort_key(name, line.mean), line.system))
        group = Group(ckey, track, dict(trials[0].benchmark), name, lines, also, correction)
        group.shared = shared_line([t.config for t in scored])
        if tests:
            holder = {t.key: holders[ckey, t.key] for t in scored}
            _from_questions(group, {t.key: t for t in scored}, holder)
        groups.append(group)

    if metric and not groups and seen:
        available = sorted({m for t in seen.values() for m in t.metrics})
        raise UserError(
            Problem(
                f"no trial has the metric {metric!r}",
                field="--metric",
                fix="use one of: " + ", ".join(available),
            )
        )
    groups.sort(key=lambda g: (str(g.benchmark.get("name", "")), g.track, g.comparability_key))
    return groups


def _mean(values: list[Any]) -> float | None:
    got = [float(v) for v in values if _finite(v)]
    return sum(got) / len(got) if got else None


def _from_questions(group: Group, trials: dict[str, TrialMeta], holder: dict[str, Run]) -> None:
    """What the per-question scores give each line (the trials' rows are read): its 95%
    interval over questions, and whether it differs significantly from the best."""
    from lasagna.metrics.stats import bootstrap_mean_ci
    from lasagna.results.pairwise import best_ties, system_scores

    scored = [
        system_scores(line.system, [(holder[k], trials[k]) for k in line.trial_keys], group.metric)
        for line in group.lines
    ]
    for line, scores in zip(group.lines, scored, strict=True):
        by_id = sorted(scores.questions.items()) if scores.questions else []  # one order
        ci = bootstrap_mean_ci([v for _, v in by_id]) if by_id else None
        if ci is not None and ci.low is not None and ci.high is not None:
            line.low, line.high, line.interval = ci.low, ci.high, "questions"
    ties = best_ties(scored, group.metric, group.correction)
    if ties is None:
        return
    group.tested = any(p is not None for p in ties.p.values())
    for line in group.lines[1:]:
        line.p_vs_best = ties.p.get(line.system_id)
        if line.p_vs_best is not None:
            line.differs_from_best = ties.differs[line.system_id]


def labels_by_system(trials: list[TrialMeta]) -> dict[str, str]:
    """Each system id of `trials` (one group) -> the label tables show, unique among them
    (lasagna.systems.labels)."""
    from lasagna.systems.labels import system_labels

    first = {t.system_id: t.config for t in trials}
    return dict(zip(first, system_labels(list(first.values())), strict=True))


def unranked_groups(runs: list[Run], metric: str, only: set[str] | None = None) -> list[str]:
    """The groups `--metric` leaves out (no trial has it), as "title (key ...)" lines, so a
    leaderboard never drops a group without a word (`only`: among these keys)."""
    out: dict[str, str] = {}
    scored: set[str] = set()
    for run in benchmark_runs(runs):
        for t in run.trials:
            if only is not None and t.comparability_key not in only:
                continue
            out.setdefault(
                t.comparability_key,
                f"{group_title(t.benchmark, t.track)} (key {t.comparability_key})",
            )
            if _finite(t.metrics.get(metric)):
                scored.add(t.comparability_key)
    return [line for key, line in out.items() if key not in scored]


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def leaderboard(
    output_dir: Output = DEFAULT_OUTPUT, metric: str | None = None, tests: bool = True
) -> list[Group]:
    """The leaderboard of every run under `output_dir` (metric None: ndcg@10 / f1 per track)."""
    return build_leaderboard(load_runs(output_dir), metric, tests)


# how a group title says where the searched documents came from (schema: corpus_provenance)
PROVENANCE = {"corpus": "full corpus", "pooled_gold": "pooled gold"}


def group_title(benchmark: dict[str, Any], track: str) -> str:
    parts = [str(benchmark.get("name", "?"))]
    if benchmark.get("split"):
        parts.append(f"split {benchmark['split']}")
    if benchmark.get("n_samples"):
        parts.append(f"n={benchmark['n_samples']}")
    if benchmark.get("filters"):
        parts.append(f"filters {benchmark['filters']}")
    parts.append(track)
    provenance = benchmark.get("corpus_provenance")
    if provenance:
        parts.append(PROVENANCE.get(provenance, f"corpus {provenance}"))
    return " · ".join(parts)
