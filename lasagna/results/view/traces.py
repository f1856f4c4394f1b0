"""Traces of SDK trials for `lasagna view`: find the run holding a trace id, and lay its
spans out as a tree (EVALUATION -> EXECUTOR -> LLM / tool spans -> EVALUATOR) with the
offsets and widths of a waterfall, inputs, outputs, tokens and scores.

Spans live in a `spans` table: run-level in an `evaluate()` run folder (see
`lasagna.results.evaluations`), or a trial's own table; both are searched. Only the
`trace_id` column is read to find a trace, and only its row groups to lay it out.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime
from typing import Any

from lasagna.results import evaluations as ev
from lasagna.results.evaluation_views import judgement
from lasagna.results.layout import read_parquet
from lasagna.results.runs import Run, evaluation_info

SPANS = ev.SPANS
HIDDEN = ("lasagna.span.input", "lasagna.span.output")  # shown as input / output
TEXT = 20_000  # characters of an input or output shown


def span_sources(run: Run) -> list[tuple[str, str | None]]:
    """(Parquet path, trial key or None) of every spans table of a run."""
    out: list[tuple[str, str | None]] = []
    path = run.table_path(SPANS)
    if path:
        out.append((path, None))
    for t in run.trials:
        trial_spans = run.trial_table_path(t.key, SPANS)
        if trial_spans:
            out.append((trial_spans, t.key))
    return out


def _read(run: Run, path: str, columns: list[str] | None = None, trace_id: str | None = None):
    filters = [("trace_id", "==", trace_id)] if trace_id else None
    return read_parquet(run.store, path, columns, filters)


class TraceFinder:
    """trace id -> (run, spans table path), learnt run by run (runs never change)."""

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, str]] = {}  # run id -> {trace id: path}
        self._lock = threading.Lock()

    def _traces_of(self, run: Run) -> dict[str, str]:
        with self._lock:
            known = self._seen.get(run.run_id)
        if known is not None:
            return known
        found: dict[str, str] = {}
        for path, _key in span_sources(run):
            try:
                ids = _read(run, path, ["trace_id"])["trace_id"].to_pylist()
            except (OSError, ValueError):
                continue  # a damaged table: its traces are not offered
            found.update(dict.fromkeys((str(i) for i in ids if i), path))
        with self._lock:
            self._seen[run.run_id] = found
        return found

    def find(self, runs: list[Run], trace_id: str) -> tuple[Run, str] | None:
        for run in runs:
            path = self._traces_of(run).get(trace_id)
            if path:
                return run, path
        return None


def _text(value: Any) -> str | None:
    """A span's input or output for people: JSON pretty-printed, a JSON string unquoted."""
    if value is None:
        return None
    text = str(value)
    try:
        parsed = json.loads(text)
        text = parsed if isinstance(parsed, str) else json.dumps(parsed, indent=2)
    except ValueError:
        pass
    return text if len(text) <= TEXT else text[:TEXT] + " …"


def _attrs(raw: Any) -> dict[str, str]:
    items = raw.items() if isinstance(raw, dict) else (raw or [])  # Arrow maps read as pairs
    return {str(k): str(v) for k, v in items}


def degenerate_rows(run: Run, trace_ids: list[str]) -> dict[str, dict[str, str]]:
    """trace id -> {score dimension: why its LLM judge did not judge that row}, for the rows
    of `trace_ids`: read from their EVALUATOR spans, only the row groups that hold them."""
    out: dict[str, dict[str, str]] = {}
    wanted = [t for t in trace_ids if t]
    if not wanted:
        return out
    columns = ["trace_id", "name", "span_type", "attributes"]
    for path, _key in span_sources(run):
        try:
            table = read_parquet(run.store, path, columns, [("trace_id", "in", wanted)])
        except (OSError, ValueError, KeyError):
            continue  # a damaged or older table: no marks, the scores still show
        for row in table.to_pylist():
            judge = judgement(_attrs(row.get("attributes")))
            if row.get("span_type") == "EVALUATOR" and judge and judge["degenerate"]:
                why = judge["degenerate_reason"] or "nothing judged"
                out.setdefault(str(row["trace_id"]), {})[str(row["name"])] = why
    return out


def _epoch_ms(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp() * 1000
    return float(value or 0) / 1e6  # nanoseconds


def span_tree(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Spans of one trace in tree order (parents first, siblings by start), each with its
    depth and its place on the trace's time line (percent of the whole)."""
    if not rows:
        return {"spans": [], "duration_ms": 0.0, "start": None}
    starts = {r["span_id"]: _epoch_ms(r["start_time"]) for r in rows}
    ends = {r["span_id"]: _epoch_ms(r["end_time"]) for r in rows}
    t0, t1 = min(starts.values()), max(ends.values())
    whole = max(t1 - t0, 1e-6)
    ids = set(starts)
    children: dict[str | None, list[dict[str, Any]]] = {}
    for r in rows:
        parent = r.get("parent_span_id")
        children.setdefault(parent if parent in ids else None, []).append(r)
    for kids in children.values():
        kids.sort(key=lambda r: (starts[r["span_id"]], r["span_id"]))
    out: list[dict[str, Any]] = []

    def walk(parent: str | None, depth: int) -> None:
        for r in children.get(parent, []):
            attrs = _attrs(r.get("attributes"))
            start, end = starts[r["span_id"]] - t0, ends[r["span_id"]] - t0
            out.append(
                {
                    "id": r["span_id"],
                    "parent": r.get("parent_span_id"),
                    "name": r["name"],
                    "type": r.get("span_type") or "DEFAULT",
                    "depth": depth,
                    "start_ms": start,
                    "duration_ms": end - start,
                    "left": 100 * start / whole,
                    "width": max(100 * (end - start) / whole, 0.3),
                    "status": r.get("status") or "UNSET",
                    "status_message": r.get("status_message"),
                    "input": _text(r.get("input")),
                    "output": _text(r.get("output")),
                    "tokens_in": attrs.get("gen_ai.usage.input_tokens"),
                    "tokens_out": attrs.get("gen_ai.usage.output_tokens"),
                    "model": attrs.get("gen_ai.request.model"),
                    "attributes": {k: v for k, v in sorted(attrs.items()) if k not in HIDDEN},
                    "judge": judgement(attrs),
                }
            )
            walk(r["span_id"], depth + 1)

    walk(None, 0)
    return {"spans": out, "duration_ms": t1 - t0, "start": datetime.fromtimestamp(t0 / 1000)}


def trace_data(run: Run, path: str, trace_id: str) -> dict[str, Any]:
    """The page of one trace: its run, its trial (task, scores, error, tokens) and spans."""
    rows = _read(run, path, trace_id=trace_id).to_pylist()
    tree = span_tree(rows)
    trial: dict[str, Any] = {}
    from lasagna.results import evaluation_views

    rel = (run.manifest.get("tables") or {}).get(ev.TRIALS)
    holder = evaluation_views.trial_of(run)
    rows_at = f"{run.path}/{rel}" if rel else run.rows_path(holder.key) if holder else None
    if rows_at:
        try:
            found = _read(run, rows_at, trace_id=trace_id).to_pylist()
        except (OSError, ValueError):
            found = []
        if found and ev.SCORES_COLUMN in found[0]:
            found[0]["scores"] = found[0].pop(ev.SCORES_COLUMN)
        if found:
            trial = found[0]
            trial["scores"] = _attrs(trial.get("scores"))
    info = evaluation_info(run)
    tokens_in = sum(int(s["tokens_in"] or 0) for s in tree["spans"] if s["type"] == "LLM")
    tokens_out = sum(int(s["tokens_out"] or 0) for s in tree["spans"] if s["type"] == "LLM")
    return {
        "trace_id": trace_id,
        "run": run.run_id,
        "name": info.get("name") or run.run_id,
        "group": info.get("group_name"),
        "trial": trial,
        "tokens": {"in": tokens_in, "out": tokens_out},
        # score dimension -> why its judge did not judge this row (marked beside the score)
        "degenerate": {
            s["name"]: s["judge"]["degenerate_reason"] or "nothing judged"
            for s in tree["spans"]
            if s["type"] == "EVALUATOR" and s["judge"] and s["judge"]["degenerate"]
        },
        **tree,
    }
