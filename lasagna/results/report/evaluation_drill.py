"""The drill-down of `evaluate()` runs in the report: each run's trials as the page's
question records (a task id is a question, a trial index a repeat, a score dimension a
metric), with the data, target and output, and what each LLM judge said of the row."""

from __future__ import annotations

import json
from typing import Any

from lasagna.results.evaluation_views import judgements
from lasagna.results.report.collect import num
from lasagna.results.report.questions import MAX_RECORDS
from lasagna.results.runs import evaluation_info
from lasagna.results.store import Run

TEXT = 2_000  # characters of data / target / output shown per trial


def summary(run: Run) -> dict[str, Any]:
    return dict(evaluation_info(run))


def trial_label(s: dict[str, Any]) -> str:
    """What a drill-down column of an evaluation's trials is called: the name it was given,
    else its executor's (the default name `<group>-<run id>` only repeats the run picked)."""
    eid, group, name = s.get("evaluation_id"), s.get("group_name"), s.get("name")
    if name and name not in (eid, f"{group}-{eid}"):
        return str(name)
    return str(s.get("executor") or name or "trial")


def _scores(row: dict[str, Any]) -> dict[str, float | None]:
    raw = row.get("scores") or {}
    items = raw.items() if isinstance(raw, dict) else raw  # arrow maps read as pairs
    return {str(k): num(v) for k, v in items}


def shown_text(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value)
    try:  # JSON text: a string shown without its quotes
        parsed = json.loads(text)
        if isinstance(parsed, str):
            text = parsed
    except ValueError:
        pass
    return text if len(text) <= TEXT else text[:TEXT] + " …"


def drill(
    runs: list[Run], rows: dict[str, list], dims: list[str], budget: int = MAX_RECORDS
) -> dict[str, Any]:
    """Each run's trials (newest runs first) as drill-down records, at most `budget`."""
    questions: dict[str, Any] = {}
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    for run in runs:
        if budget <= 0:
            notes.append(f"run {run.run_id} and older ones are not in the drill-down (page limit)")
            break
        if len(rows[run.run_id]) > budget:
            notes.append(
                f"run {run.run_id}: the first {budget} of {len(rows[run.run_id])} trials are "
                "shown (page limit)"
            )
        by_trial: dict[int, dict[str, Any]] = {}
        notes = judgements(run)
        kept = rows[run.run_id][:budget]
        budget -= len(kept)
        for row in kept:
            tid = str(row.get("task_id"))
            questions.setdefault(
                tid,
                {
                    "question": shown_text(row.get("data")),
                    "answers": [shown_text(row.get("target"))]
                    if row.get("target") not in (None, "null")
                    else [],
                },
            )
            scores = _scores(row)
            rec: dict[str, Any] = {
                "m": [scores.get(d) for d in dims],
                "prediction": shown_text(row.get("output")),
            }
            if row.get("error"):
                kind, error = row.get("error_type"), str(row["error"])
                rec["error"] = error if not kind or kind in error else f"{kind}: {error}"
            fields = {  # each LLM judge's reason first: why the row scored what it did
                f"{name} judge": note
                for name, said in notes.get(str(row.get("trace_id")), {}).items()
                if (note := judge_note(said))
            } | {
                k: row[k]
                for k in ("trace_id", "duration_s", "tokens_in", "tokens_out")
                if row.get(k) is not None
            }
            if fields:
                rec["fields"] = fields
            idx = int(row.get("trial_index") or 0)
            by_trial.setdefault(
                idx,
                {
                    "key": f"{run.run_id}#{idx}",
                    "system": trial_label(summary(run)),
                    "repeat": idx,
                    "metrics": dims,
                    "rows": {},
                },
            )["rows"][tid] = rec
        out.append(
            {
                "run": run.run_id,
                "time": str(run.manifest.get("created_at", "")),
                "trials": [by_trial[k] for k in sorted(by_trial)],
            }
        )
    # the datapoint's own words in the drill-down: data, target, output
    words = {"question": "data", "answers": "target", "prediction": "output"}
    return {"questions": questions, "runs": out, "notes": notes, "words": words}


def judge_note(said: dict[str, Any]) -> str:
    """What an LLM judge said of a row, in a line: its reason, led by "not judged (no
    claims found)" when it scored the row without judging it."""
    note = said.get("reason") or ""
    if said.get("degenerate"):
        why = said.get("degenerate_reason") or "nothing found"
        note = f"not judged ({why})" + (f": {note}" if note else "")
    return note
