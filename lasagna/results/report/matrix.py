"""The report's within-run matrix: the systems of a group's newest run (with at least two
of them) compared pairwise on the group's main metric, as `lasagna results compare RUN`
does (lasagna.results.pairwise: paired randomization test, Holm-adjusted over the pairs).

Cell (row R, column C) holds R - C on the per-question scores and the adjusted p-value;
the page sets it in bold where the difference is significant at 0.05."""

from __future__ import annotations

from typing import Any

from lasagna.metrics import catalog
from lasagna.metrics.corrections import DEFAULT_CORRECTION, describe
from lasagna.results.model import TrialMeta
from lasagna.results.pairwise import pairs_of, system_scores
from lasagna.results.report.collect import GroupView, num

MATRIX_SYSTEMS = 12  # the best ones of the run; a note says how many are left out


def _newest_with_pairs(view: GroupView) -> tuple[Any, dict[str, list[TrialMeta]]] | None:
    for run in view.runs:  # newest first
        by_system: dict[str, list[TrialMeta]] = {}
        for t in view.trials[run.run_id]:
            by_system.setdefault(t.system_id, []).append(t)
        if len(by_system) >= 2:
            return run, by_system
    return None


def matrix_data(view: GroupView, correction: str = DEFAULT_CORRECTION) -> dict[str, Any] | None:
    """The matrix of the group's newest run holding two systems or more; None without one."""
    metric = view.primary_metric
    found = _newest_with_pairs(view)
    if metric is None or found is None:
        return None
    run, by_system = found
    scored = [
        system_scores(view.labels[sid], [(run, t) for t in ts], metric)
        for sid, ts in by_system.items()
        if all(metric in t.metrics for t in ts)
    ]
    if len(scored) < 2:
        return None
    scored.sort(key=lambda s: (catalog.sort_key(metric, s.mean), s.label))
    notes = []
    if len(scored) > MATRIX_SYSTEMS:
        notes.append(
            f"the best {MATRIX_SYSTEMS} of {len(scored)} systems are shown; all of them: "
            f"lasagna results compare {run.run_id}"
        )
        scored = scored[:MATRIX_SYSTEMS]
    pairs = pairs_of(scored, metric, correction)
    index = {s.label: i for i, s in enumerate(scored)}
    cells: list[list[dict[str, Any] | None]] = [[None] * len(scored) for _ in scored]
    for p in pairs:
        a, b = index[p.a], index[p.b]
        cell = {"p": num(p.p_permutation_adj), "n": p.n, "significant": p.significant}
        low, high = num(p.diff_low), num(p.diff_high)  # of B - A: row b minus column a
        flipped = (-high, -low) if low is not None and high is not None else (None, None)
        cells[a][b] = cell | {"diff": num(-p.diff), "low": flipped[0], "high": flipped[1]}
        cells[b][a] = cell | {"diff": num(p.diff), "low": low, "high": high}
    tested = sum(p.p_permutation is not None for p in pairs)
    return {
        "run": run.run_id,
        "metric": metric,
        "systems": [{"system": s.label, "mean": num(s.mean)} for s in scored],
        "cells": cells,
        "caption": describe(correction, tested),
        "significant": sum(p.significant for p in pairs),
        "notes": notes,
    }
