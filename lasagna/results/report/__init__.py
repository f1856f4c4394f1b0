"""`lasagna report`: one self-contained HTML page of the runs under a results root.

Sections per comparability group: leaderboard (with 95% intervals and the systems not
significantly different from the best), the newest run's systems compared pairwise (the
within-run matrix), progression over run time, side-by-side of two runs (paired tests),
failed trials and rows, and a filterable per-question drill-down. `build_report` gathers
the data, `render_page` writes the HTML.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.results.report.charts import leaderboard_figure, progression_figure
from lasagna.results.report.collect import (
    failed_data,
    leaderboard_data,
    metric_info,
    progression_data,
    select_groups,
)
from lasagna.results.report.evaluations import evaluation_group, group_evaluations
from lasagna.results.report.matrix import matrix_data
from lasagna.results.report.page import render_page
from lasagna.results.report.questions import MAX_RECORDS, References, drilldown_data
from lasagna.results.report.side_by_side import check_pair, compare_data
from lasagna.results.report.slices import slices_data
from lasagna.results.store import DEFAULT_OUTPUT, Output, Run, load_runs, open_run


@dataclass
class ReportSummary:
    path: str
    bytes: int
    runs: int
    groups: int
    notes: list[str]


def pick_runs(refs: list[str] | None, output_dir: Output) -> list[Run]:
    """The runs named (ids, prefixes, 'latest' or folders), or every run; newest first."""
    if refs:
        runs = list({r.run_id: r for r in (open_run(ref, output_dir) for ref in refs)}.values())
        runs.sort(key=lambda r: (str(r.manifest.get("created_at", "")), r.run_id), reverse=True)
    else:
        runs = load_runs(output_dir)
    if not runs:
        raise UserError(
            Problem(
                f"no runs under {os.fspath(output_dir)}",
                field="--output",
                fix="run `lasagna benchmark run` first, or pass --output where your results are",
            )
        )
    return runs


def build_report(
    runs: list[Run],
    group: str | None = None,
    compare: tuple[str, str] | None = None,
    max_records: int = MAX_RECORDS,
    drill: bool = True,
    by: list[str] | None = None,
) -> dict[str, Any]:
    """The page's data: JSON-able, one entry per group (see the module docstring); `by`:
    metadata keys whose slices each group's newest run is shown by.

    `drill=False` leaves the drill-down rows out (`lasagna view` serves each group's on
    request: `build_drill`). A run whose rows cannot be read leaves its group's side by
    side out with a note, not the page."""
    evals = group_evaluations(runs)
    if group is not None:
        evals = {k: v for k, v in evals.items() if k == group} or {
            k: v for k, v in evals.items() if k.startswith(group)
        }
    try:
        views = select_groups(runs, group)
    except UserError:
        if not evals:
            raise
        views = []
    refs = References()
    groups = []
    for i, view in enumerate(views):
        board = leaderboard_data(view)
        prog = progression_data(view)
        groups.append(
            {
                "id": f"g{i}",
                "kind": "benchmark",
                "key": view.key,
                "title": view.title,
                "track": view.track,
                "benchmark": view.benchmark,
                "pooled_gold": view.pooled_gold,
                "runs": [r.run_id for r in view.runs],
                "leaderboard": board,
                "progression": prog,
                "matrix": _or_note(lambda v=view: matrix_data(v), refs.notes),
                "slices": [
                    s
                    for key in by or []
                    if (s := _or_note(lambda v=view, k=key: slices_data(v, k), refs.notes))
                ],
                "compare": _or_note(lambda v=view: compare_data(v, compare), refs.notes),
                "failed": failed_data(view),
                "drill": drilldown_data(view, max(0, max_records // len(views)), refs)
                if drill
                else LAZY,
                "figures": {
                    "leaderboard": leaderboard_figure(board) if board else None,
                    "progression": progression_figure(prog) if prog["series"] else None,
                },
            }
        )
    for g in groups:  # a key the newest run's questions lack: said where the page is written
        refs.notes += [f"{g['title']}: {s['note']}" for s in g["slices"] if "note" in s]
    for i, (name, eval_runs) in enumerate(sorted(evals.items())):
        entry = evaluation_group(i, name, eval_runs, compare)
        entry["drill"] = entry["drill"] if drill else LAZY
        prog = entry["progression"]
        entry["figures"] = {
            "leaderboard": None,
            "progression": progression_figure(prog) if prog["series"] else None,
        }
        groups.append(entry)
    return {
        "runs": [{"id": r.run_id, "time": str(r.manifest.get("created_at", ""))} for r in runs],
        "groups": groups,
        "docs": refs.docs,
        "metrics": metric_info(list(dict.fromkeys(m for v in views for m in v.metrics))),
        "notes": refs.notes,
        "compare_requested": list(compare) if compare else None,
    }


LAZY: dict[str, Any] = {"questions": {}, "runs": [], "notes": [], "lazy": True}


def _or_note(make: Any, notes: list[str]) -> Any:
    """`make()`, or None with the error as a note when a run's rows are unreadable."""
    try:
        return make()
    except UserError as err:
        notes.append(str(err).splitlines()[0])
        return None


def build_drill(runs: list[Run], kind: str, key: str) -> dict[str, Any] | None:
    """One group's drill-down rows and the passage texts they show (`{"drill", "docs"}`),
    by its kind ("benchmark" or "evaluation") and key; None when `runs` have no such group."""
    if kind == "evaluation":
        evals = group_evaluations(runs).get(key)
        if not evals:
            return None
        return {"drill": evaluation_group(0, key, evals)["drill"], "docs": {}}
    views = [v for v in select_groups(runs) if v.key == key] if runs else []
    if not views:
        return None
    refs = References()
    drill = drilldown_data(views[0], MAX_RECORDS, refs)
    drill["notes"] = refs.notes + drill["notes"]
    return {"drill": drill, "docs": refs.docs}


def write_report(
    out: str | os.PathLike[str],
    run_refs: list[str] | None = None,
    output_dir: Output = DEFAULT_OUTPUT,
    group: str | None = None,
    compare: tuple[str, str] | None = None,
    by: list[str] | None = None,
) -> ReportSummary:
    """Build the page and write it atomically to `out` (a temp file renamed into place)."""
    runs = pick_runs(run_refs, output_dir)
    if compare:
        check_pair(runs, compare)
    data = build_report(runs, group, compare, by=by)
    _refuse_unknown_keys(data, by or [], runs)
    html = render_page(data).encode("utf-8")
    path = os.fspath(out)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(html)
        os.replace(tmp, path)
    except OSError as err:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise UserError(
            Problem(f"cannot write the report: {err.strerror}", file=path, fix="pick another --out")
        ) from err
    notes = list(data["notes"]) + [n for g in data["groups"] for n in g["drill"]["notes"]]
    return ReportSummary(path, len(html), len(runs), len(data["groups"]), notes)


def _refuse_unknown_keys(data: dict[str, Any], by: list[str], runs: list[Run]) -> None:
    """A `--by` key no group's questions have (a typo): refused as `results show --by` does;
    a key some groups lack is a note on the page."""
    from lasagna.results.slices import unknown_key

    for key in by:
        shown = [s for g in data["groups"] for s in g.get("slices", []) if s["by"] == key]
        if shown and all("note" in s for s in shown):
            raise unknown_key(key, runs[0])


__all__ = ["ReportSummary", "build_drill", "build_report", "pick_runs", "write_report"]
