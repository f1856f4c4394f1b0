"""The tables of an SDK evaluation run: `evaluations`, `evaluation_trials` and `spans`.

An `evaluate()` call is one run of one trial of the `sdk` track (executor x data); the
manifest has `kind: "evaluation"` and the evaluation's summary under `evaluation`. The
trial's *rows* are the spec's trials (datapoint x trial index, one row each, built by
`row_record`, the one builder, in the columns `ROW_SCHEMA` fixes) and its `spans` table the
traces; the SQL views read them from there (lasagna.results.evaluation_views). Runs written
before (their tables under `tables/`, lasagna 0.x) still open. The evaluation id is the run
id. Schemas are fixed here so `lasagna results sql` has the same columns whether zero or
many runs exist.
JSON-valued columns (data, target, metadata, output) are JSON text; `scores` and
`attributes` are maps (`scores['accuracy']`, `attributes['lasagna.span.output']`); an
evaluator span's score is also a number (`spans.score`), and its text has one spelling per
number (`attributes['lasagna.span.output'] = '0'` finds a score of 0.0).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from lasagna.results.runs import EVALUATION

KIND = EVALUATION
EVALUATIONS = "evaluations"
TRIALS = "evaluation_trials"
SPANS = "spans"
ALIASES = {"evaluation_datapoints": TRIALS}

_TS = pa.timestamp("us", tz="UTC")
SCHEMAS: dict[str, pa.Schema] = {
    EVALUATIONS: pa.schema(
        [
            ("evaluation_id", pa.string()),
            ("name", pa.string()),
            ("group_name", pa.string()),
            ("metadata", pa.string()),
            ("created_at", pa.string()),
            ("finished_at", pa.string()),
            ("executor", pa.string()),
            ("n_datapoints", pa.int64()),
            ("n_trials", pa.int64()),
            ("n_errors", pa.int64()),
            ("averages", pa.map_(pa.string(), pa.float64())),
            ("path", pa.string()),
        ]
    ),
    TRIALS: pa.schema(
        [
            ("evaluation_id", pa.string()),
            ("task_id", pa.string()),
            ("trial_index", pa.int64()),
            ("data", pa.string()),
            ("target", pa.string()),
            ("metadata", pa.string()),
            ("output", pa.string()),
            ("scores", pa.map_(pa.string(), pa.float64())),
            ("error", pa.string()),
            ("error_type", pa.string()),
            ("trace_id", pa.string()),
            ("started_at", pa.string()),
            ("duration_s", pa.float64()),
            ("tokens_in", pa.int64()),
            ("tokens_out", pa.int64()),
            ("cost", pa.float64()),
        ]
    ),
    SPANS: pa.schema(
        [
            ("evaluation_id", pa.string()),
            ("trace_id", pa.string()),
            ("span_id", pa.string()),
            ("parent_span_id", pa.string()),
            ("name", pa.string()),
            ("span_type", pa.string()),
            ("kind", pa.string()),
            ("start_time", _TS),
            ("end_time", _TS),
            ("duration_ms", pa.float64()),
            ("input", pa.string()),
            ("output", pa.string()),
            ("score", pa.float64()),  # an EVALUATOR span's score as a number (None: not one)
            ("status", pa.string()),
            ("status_message", pa.string()),
            ("attributes", pa.map_(pa.string(), pa.string())),
        ]
    ),
}


# the sdk trial's rows: `evaluation_trials` without the evaluation id (the run's), with a
# row `id`, and the scores map named so it never meets the retrieval rows' `scores` list
SCORES_COLUMN = "evaluator_scores"
ROW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        *(
            (SCORES_COLUMN, f.type) if f.name == "scores" else (f.name, f.type)
            for f in SCHEMAS[TRIALS]
            if f.name != "evaluation_id"
        ),
    ]
)
RECORD_KEYS = tuple(f.name for f in SCHEMAS[TRIALS] if f.name != "evaluation_id")


def row_record(
    point: Any,
    *,
    output: str | None = None,
    scores: dict[str, float | None] | None = None,
    error: str | None = None,
    error_type: str | None = None,
    trace_id: str | None = None,
    started_at: str | None = None,
    duration_s: float | None = None,
) -> dict[str, Any]:
    """The record of one row of an sdk trial (a datapoint x trial index: the spec's trial),
    from the row's spec (`order`, `task_id`, `trial_index`, `data`, `target`, `metadata`):
    the only place such a record is built, finished or lost alike. Keys: `order` (its place
    in the evaluation) and `RECORD_KEYS`; tokens are filled in from the LLM spans."""
    from lasagna.common import tracing

    return {
        "order": point.order,
        "task_id": point.task_id,
        "trial_index": point.trial_index,
        "data": tracing.as_text(point.data, limit=None),
        "target": None if point.target is None else tracing.as_text(point.target, limit=None),
        "metadata": tracing.to_json(point.metadata or {}),
        "output": output,
        "scores": dict(scores or {}),
        "error": error,
        "error_type": error_type,
        "trace_id": trace_id,
        "started_at": started_at,
        "duration_s": duration_s,
        "tokens_in": None,
        "tokens_out": None,
        "cost": None,
    }


def with_tokens(records: list[dict[str, Any]], spans: list[dict]) -> list[dict[str, Any]]:
    """The records with `tokens_in` / `tokens_out` summed over their LLM spans (cost: None
    locally)."""
    tokens: dict[str, list[int]] = {}
    for s in spans:
        if s["span_type"] == "LLM":
            t = tokens.setdefault(s["trace_id"], [0, 0])
            t[0] += int(s["attributes"].get("gen_ai.usage.input_tokens", 0) or 0)
            t[1] += int(s["attributes"].get("gen_ai.usage.output_tokens", 0) or 0)
    out = []
    for r in records:
        used = tokens.get(r["trace_id"] or "")
        out.append(r | {"tokens_in": used[0], "tokens_out": used[1]} if used else dict(r))
    return out


def row_id(task_id: str, trial_index: int) -> str:
    return f"{task_id}#{trial_index}"


def rows_table(records: list[dict[str, Any]]) -> pa.Table:
    """The sdk trial's rows table (ROW_SCHEMA) from its records, in their order; a NaN
    score becomes missing."""
    rows = []
    for r in records:
        scores = {
            k: (None if v is not None and math.isnan(v) else v) for k, v in r["scores"].items()
        }
        rows.append(
            {k: r[k] for k in RECORD_KEYS if k != "scores"}
            | {"id": row_id(r["task_id"], r["trial_index"]), SCORES_COLUMN: list(scores.items())}
        )
    return pa.Table.from_pylist(rows, schema=ROW_SCHEMA)


def records_of(rows: pa.Table) -> list[dict[str, Any]]:
    """The records back from a rows table (what `EvaluationResult.trials` lists)."""
    out = []
    for i, r in enumerate(rows.to_pylist()):
        r.pop("id", None)
        r["scores"] = dict(r.pop(SCORES_COLUMN) or [])
        out.append({"order": i, **r})
    return out


def _attr_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _ts(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)


def _scores_map(scores: dict[str, float | None]) -> list[tuple[str, float | None]]:
    return list(scores.items())


def trials_table(evaluation_id: str, trials: list[dict[str, Any]], spans: list[dict]) -> pa.Table:
    """One row per record (`row_record`), tokens summed over its LLM spans: the
    `evaluation_trials` table of one run."""
    rows = [
        {"evaluation_id": evaluation_id, **{k: t.get(k) for k in RECORD_KEYS}}
        | {"scores": _scores_map(t["scores"])}
        for t in with_tokens(trials, spans)
    ]
    return pa.Table.from_pylist(rows, schema=SCHEMAS[TRIALS])


OUTPUT = "lasagna.span.output"


def span_score(span_type: str, output: Any) -> float | None:
    """An EVALUATOR span's output as a number (`0`, `0.0`, `true`), else None."""
    if span_type != "EVALUATOR" or output is None:
        return None
    text = str(output).strip()
    if text in ("true", "false"):
        return float(text == "true")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def number_text(value: float) -> str:
    """One spelling per number, so `= '0'` finds a score of 0.0: `0`, `1`, `0.5`."""
    return str(int(value)) if value.is_integer() else repr(value)


def spans_table(evaluation_id: str, spans: list[dict[str, Any]]) -> pa.Table:
    """One row per span; an evaluator's numeric output is written in one spelling (0.0, 0
    and False all as `0`) and kept as a number in `score`."""
    rows = []
    for s in sorted(spans, key=lambda r: (r["trace_id"], r["start_ns"])):
        attrs = s["attributes"]
        score = span_score(s["span_type"], attrs.get(OUTPUT))
        if score is not None:
            attrs = {**attrs, OUTPUT: number_text(score)}
        rows.append(
            {
                "evaluation_id": evaluation_id,
                **{k: s[k] for k in ("trace_id", "span_id", "parent_span_id", "name")},
                "span_type": s["span_type"],
                "kind": s["kind"],
                "start_time": _ts(s["start_ns"]),
                "end_time": _ts(s["end_ns"]),
                "duration_ms": (s["end_ns"] - s["start_ns"]) / 1e6,
                "input": attrs.get("lasagna.span.input"),
                "output": attrs.get(OUTPUT),
                "score": score,
                "status": s["status"],
                "status_message": s["status_message"],
                "attributes": [(k, _attr_text(v)) for k, v in attrs.items()],
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMAS[SPANS])


def evaluations_table(record: dict[str, Any]) -> pa.Table:
    row = dict(record)
    row["metadata"] = json.dumps(row.get("metadata") or {}, sort_keys=True, default=str)
    row["averages"] = list((row.get("averages") or {}).items())
    return pa.Table.from_pylist([row], schema=SCHEMAS[EVALUATIONS])


def empty(name: str) -> pa.Table:
    return SCHEMAS[name].empty_table()
