"""A run's facts and a trial's rows page by page, for `lasagna view`.

A page of rows reads only the Parquet row groups it lies in (`Run.rows_page`), so the
first page of a 100k-question trial costs one row group. An evaluation run lists its
trials with a link to each one's trace."""

from __future__ import annotations

from typing import Any

from lasagna.results.model import failed_rows, per_question_metrics
from lasagna.results.report.collect import num
from lasagna.results.report.evaluation_drill import shown_text
from lasagna.results.report.evaluations import group_name, trials_rows
from lasagna.results.runs import Run, is_evaluation
from lasagna.results.view.traces import degenerate_rows

PAGE_ROWS = 50
SHORT = 160  # characters of a question or an answer in a table cell
TOP_DOCS = 3


def _short(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= SHORT else text[:SHORT] + " …"


def pages(total: int, size: int = PAGE_ROWS) -> int:
    return max(1, -(-total // size))


def run_facts(run: Run) -> dict[str, Any]:
    """What the run page shows above the report's views: the manifest's facts, each trial
    (with a link to its rows), failed trials and, for an evaluation, its trials."""
    m = run.manifest
    evaluation = is_evaluation(run)
    trials = []
    for t in run.trials:
        trials.append(
            {
                "key": t.key,
                "system": t.system,
                "track": t.track,
                "benchmark": t.benchmark.get("name"),
                # an evaluation's trial is shown in its evaluation group
                "group": group_name(run) if evaluation else t.comparability_key,
                "repeat": t.repeat,
                "rows": t.counts.get("rows"),
                "failed": failed_rows(t.counts),
                "seconds": num(t.timings.get("total")),
                "metrics": [(k, num(v)) for k, v in list(t.metrics.items())[:4]],
            }
        )
    return {
        "run": run.run_id,
        "location": run.location,
        "kind": m.get("kind") or "benchmark",
        "created_at": m.get("created_at"),
        "finished_at": m.get("finished_at"),
        "command": m.get("command"),
        "profile": m.get("profile"),
        "machine": m.get("machine") or {},
        "restored": len(m.get("restored_trials") or []),
        "failed_trials": m.get("failed_trials") or [],
        "trials": trials,
        "evaluation": m.get("evaluation"),
    }


def evaluation_page(run: Run, page: int) -> dict[str, Any]:
    """One page of an evaluation run's trials, each with its trace id."""
    rows = trials_rows(run)
    page = min(max(page, 1), pages(len(rows)))
    shown = rows[(page - 1) * PAGE_ROWS : page * PAGE_ROWS]
    marks = degenerate_rows(run, [str(r.get("trace_id") or "") for r in shown])
    out = []
    for r in shown:
        raw = r.get("scores") or {}
        scores = raw.items() if isinstance(raw, dict) else raw
        out.append(
            {
                "task": r.get("task_id"),
                "trial": r.get("trial_index"),
                "output": _short(shown_text(r.get("output"))),
                "scores": [(k, num(v)) for k, v in scores],
                "error": r.get("error"),
                "trace": r.get("trace_id"),
                # score dimension -> why its LLM judge did not judge this row
                "degenerate": marks.get(str(r.get("trace_id") or ""), {}),
                "seconds": num(r.get("duration_s")),
                "tokens": (r.get("tokens_in"), r.get("tokens_out")),
            }
        )
    return {"rows": out, "page": page, "pages": pages(len(rows)), "total": len(rows)}


def _judged(case: Any) -> tuple[str, str]:
    """A judge row's test case (JSON text) as (what was asked, what was judged): its input
    and actual output, or a conversation's last turn."""
    import json

    try:
        found = json.loads(case) if isinstance(case, str) else dict(case or {})
    except ValueError:
        return "", ""
    turns = found.get("turns") or []
    asked = found.get("input") or (turns[-1].get("content", "") if turns else "")
    return str(asked or ""), str(found.get("actual_output") or "")


def trial_page(run: Run, key: str, page: int) -> dict[str, Any]:
    """Rows of one trial, `PAGE_ROWS` at a time (page 1 first). An evaluation's rows are its
    datapoints: data, output, and a question link by task id in the evaluation group."""
    meta = run.trial(key)
    evaluation = is_evaluation(run)
    _, total = run.rows_page(key, 0, 0)  # the row count: Parquet metadata only
    page = min(max(page, 1), pages(total))
    table, _ = run.rows_page(key, (page - 1) * PAGE_ROWS, PAGE_ROWS)
    metrics = per_question_metrics(meta, table.schema)
    cols = {n: table[n].to_pylist() for n in table.column_names}
    rows = []
    for i in range(table.num_rows):

        def cell(name: str, i: int = i) -> Any:
            return cols[name][i] if name in cols else None

        question, prediction = (
            (shown_text(cell("data")), shown_text(cell("output")))
            if evaluation
            else _judged(cell("case"))
            if "case" in cols
            else (cell("question"), cell("prediction"))
        )
        rows.append(
            {
                "id": str(cell("id")),
                "qid": str(cell("task_id") if evaluation else cell("id")),
                "question": _short(question),
                "prediction": _short(prediction),
                "error": cell("error"),
                "docs": [str(d) for d in (cell("doc_ids") or [])[:TOP_DOCS]],
                "metrics": [num(cell(m)) for m in metrics],
            }
        )
    return {
        "run": run.run_id,
        "key": key,
        "system": meta.system,
        "track": meta.track,
        "group": group_name(run) if evaluation else meta.comparability_key,
        "benchmark": meta.benchmark.get("name"),
        "metrics": metrics,
        "rows": rows,
        "page": page,
        "pages": pages(total),
        "total": total,
        "has_prediction": "prediction" in cols or "case" in cols or evaluation,
        "has_docs": "doc_ids" in cols,
    }
