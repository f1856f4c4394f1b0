"""Where an evaluation's `evaluations`, `evaluation_trials` and `spans` come from, for
every reader (SQL, compare, report, traces): one place that knows both run layouts.

- an evaluation run of now: its one trial (the `sdk` track) holds the rows
  (`trials/<key>.parquet`, lasagna.results.evaluations.ROW_SCHEMA) and the spans
  (`trials/<key>.spans.parquet`); its summary is the manifest's `evaluation`;
- an evaluation run written before the SDK ran on the engine: the three tables under
  `tables/` (the manifest's `tables`), no trial.
Both read as the same columns (`evaluations.SCHEMAS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lasagna.results import evaluations as ev
from lasagna.results.layout import read_parquet

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.results.runs import Run


def trial_of(run: Run) -> Any | None:
    """The trial holding an evaluation's rows (None: a run of the old layout, or not an
    evaluation)."""
    from lasagna.results.runs import is_evaluation

    if not is_evaluation(run) or run.table_path(ev.TRIALS):
        return None
    return run.trials[0] if run.trials else None


def record(run: Run) -> dict[str, Any]:
    """The evaluation's row of `evaluations` (from its manifest)."""
    from lasagna.results.runs import evaluation_info

    info = dict(evaluation_info(run))
    info.pop("trial_key", None)
    return info | {"evaluation_id": info.get("evaluation_id") or run.run_id, "path": run.path}


def table(run: Run, name: str) -> pa.Table | None:
    """One of the three tables of an evaluation run, in `evaluations.SCHEMAS[name]`
    columns; None when the run has none (not an evaluation)."""
    import pyarrow as pa

    old = run.table_path(name)
    if old:
        return read_parquet(run.store, old)
    trial = trial_of(run)
    if trial is None:
        return None
    if name == ev.EVALUATIONS:
        return ev.evaluations_table(record(run))
    if name == ev.TRIALS:
        rows = run.rows(trial.key)
        n = rows.num_rows
        out = rows.drop_columns(["id"]).rename_columns(
            ["scores" if c == ev.SCORES_COLUMN else c for c in rows.column_names if c != "id"]
        )
        out = out.add_column(0, "evaluation_id", pa.array([run.run_id] * n, pa.string()))
        return out.select(ev.SCHEMAS[ev.TRIALS].names).cast(ev.SCHEMAS[ev.TRIALS])
    path = run.trial_table_path(trial.key, ev.SPANS)
    if path is None:
        return ev.empty(ev.SPANS)
    spans = read_parquet(run.store, path)
    ids = pa.array([run.run_id] * spans.num_rows, pa.string())
    return spans.set_column(spans.schema.get_field_index("evaluation_id"), "evaluation_id", ids)


def sql_source(run: Run, name: str) -> str | None:
    """A duckdb SELECT of one table of an evaluation run over its Parquet (read lazily),
    in the view's columns; None when the run has no such table."""

    def lit(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    old = run.table_path(name)
    if old:
        return f"SELECT * FROM read_parquet({lit(run.store.url(old))})"
    trial = trial_of(run)
    if trial is None or name == ev.EVALUATIONS:
        return None  # evaluations of now: registered from their manifests (`table`)
    rid = lit(run.run_id)
    if name == ev.TRIALS:
        cols = [
            f"{ev.SCORES_COLUMN} AS scores" if c == "scores" else c
            for c in ev.SCHEMAS[ev.TRIALS].names
            if c != "evaluation_id"
        ]
        url = lit(run.store.url(run.rows_path(trial.key)))
        return f"SELECT {rid} AS evaluation_id, {', '.join(cols)} FROM read_parquet({url})"
    path = run.trial_table_path(trial.key, ev.SPANS)
    if path is None:
        return None
    url = lit(run.store.url(path))
    return f"SELECT * REPLACE ({rid} AS evaluation_id) FROM read_parquet({url})"


def judgements(run: Run) -> dict[str, dict[str, dict[str, Any]]]:
    """trace id -> {evaluator: what its LLM judge said of the row}: `benchmark`, `reason`,
    `passed`, `degenerate` (the row scored without being judged) and `degenerate_reason`,
    as evaluation.judge.LLMJudge.annotate put them on the EVALUATOR span. Evaluators that
    are not LLM judges have none."""
    import pyarrow.compute as pc

    spans = table(run, ev.SPANS)
    if spans is None or not spans.num_rows:
        return {}
    spans = spans.filter(pc.equal(spans["span_type"], "EVALUATOR"))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for s in spans.select(["trace_id", "name", "attributes"]).to_pylist():
        said = judgement(dict(s["attributes"] or []))
        if said is not None:
            out.setdefault(s["trace_id"], {})[s["name"]] = said
    return out


def judgement(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """An LLM judge's judgement from its EVALUATOR span's attributes (as recorded, or as
    stored: text), or None for an evaluator that is not an LLM judge."""
    from lasagna.common.tracing import JUDGE

    said = {k[len(JUDGE) :]: v for k, v in attributes.items() if k.startswith(JUDGE)}
    if "benchmark" not in said:
        return None
    return {
        "benchmark": said["benchmark"],
        "metric": said.get("metric"),
        "reason": said.get("reason"),
        "passed": _flag(said.get("passed")),
        "degenerate": _flag(said.get("degenerate")) or False,
        "degenerate_reason": said.get("degenerate_reason"),
    }


def _flag(value: Any) -> bool | None:
    """A span attribute's bool, as recorded (a bool) or as stored (JSON text: "true")."""
    return None if value is None else value is True or str(value).lower() == "true"
