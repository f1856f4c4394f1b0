"""The report's "By KEY" sections (`lasagna report --by KEY`, `lasagna view ?by=KEY`): the
group's newest run by slice of a metadata key, as `lasagna results show RUN --by KEY`
prints it (lasagna.results.slice_table)."""

from __future__ import annotations

from typing import Any

from lasagna.metrics import catalog
from lasagna.results.report.collect import GroupView, num


def slices_data(view: GroupView, by: str) -> dict[str, Any]:
    """The group's newest run by slice of the metadata key `by` (`lasagna report --by`):
    each system's main metric per slice, the best of each line marked (as `lasagna results
    show RUN --by` prints it); a note instead when no question of the run has the key."""
    from lasagna.results.slice_table import slice_group
    from lasagna.results.slices import group_slices

    metric = view.primary_metric
    run = view.runs[0]
    trials = view.trials[run.run_id]
    slices = group_slices(run, trials, by) if metric else None
    group = slice_group(run, trials, by, metric, slices) if metric and slices else None
    if group is None:
        return {"by": by, "run": run.run_id, "note": f"no question has metadata key {by!r}"}
    return {
        "by": by,
        "run": run.run_id,
        "metric": metric,
        "systems": group.systems,
        "lines": [
            {
                "value": ln.value,
                "n": ln.questions,
                "means": [num(m) for m in ln.means],
                "best": catalog.best_index(metric, ln.means),
            }
            for ln in group.lines
        ],
        "left_out": group.left_out,
        "warnings": group.warnings,
    }
