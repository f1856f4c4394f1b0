"""Span scores are numbers: an evaluator's 0.0 is found by `= '0'` (one spelling per
number) and by the typed `score` column; the evaluation-concepts query, written with
`lmnr.span.*` keys, returns the failing traces as written; a query naming an attribute key
no span has is warned about."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from lasagna.cli import main
from lasagna.results.evaluations import SPANS, spans_table
from lasagna.results.sql import sql

SPEC_QUERY = """
SELECT trace_id, input, output
FROM spans
WHERE span_type = 'EXECUTOR'
  AND evaluation_id = '<evaluation_id>'
  AND trace_id IN (
    SELECT trace_id FROM spans
    WHERE span_type = 'EVALUATOR'
      AND name = 'accuracy'
      AND attributes['lmnr.span.output'] = '0'
  )
"""


def _span(trace: str, n: int, kind: str, name: str, output: str) -> dict:
    return {
        "trace_id": trace,
        "span_id": f"{n:016x}",
        "parent_span_id": None,
        "name": name,
        "kind": "INTERNAL",
        "span_type": kind,
        "start_ns": 1_000 * n,
        "end_ns": 1_000 * n + 500,
        "status": "OK",
        "status_message": None,
        "attributes": {"lasagna.span.type": kind, "lasagna.span.output": output},
    }


def _evaluation(root: Path) -> None:
    """Three trials: accuracy 0.0 (a float), 1 and False, as evaluators return them."""
    spans = []
    for i, (answer, score) in enumerate((("Lyon", "0.0"), ("Tokyo", "1"), ("Kyoto", "false"))):
        trace = f"{i:032x}"
        spans += [
            _span(trace, 3 * i, "EXECUTOR", "capital", json.dumps(answer)),
            _span(trace, 3 * i + 1, "EVALUATOR", "accuracy", score),
        ]
    folder = root / "ev1"
    (folder / "tables").mkdir(parents=True)
    pq.write_table(spans_table("ev1", spans), folder / "tables" / "spans.parquet")
    manifest = {
        "run_id": "ev1",
        "kind": "evaluation",
        "created_at": "2026-01-01T00:00:00+00:00",
        "trials": [],
        "tables": {SPANS: "tables/spans.parquet"},
        "evaluation": {"evaluation_id": "ev1", "name": "caps", "group_name": "caps"},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_failing_traces_by_text_by_number_and_by_the_spec_query(tmp_path: Path) -> None:
    _evaluation(tmp_path)
    failing = [f"{0:032x}", f"{2:032x}"]
    ours = "SELECT trace_id FROM spans WHERE attributes['lasagna.span.output'] = '0' ORDER BY 1"
    assert sql(tmp_path, ours)["trace_id"].to_pylist() == failing
    typed = "SELECT trace_id FROM spans WHERE score = 0 ORDER BY 1"
    assert sql(tmp_path, typed)["trace_id"].to_pylist() == failing
    spec = sql(tmp_path, SPEC_QUERY.replace("<evaluation_id>", "ev1") + " ORDER BY 1")
    assert spec["trace_id"].to_pylist() == failing
    assert spec["output"].to_pylist() == ['"Lyon"', '"Kyoto"']
    scores = sql(tmp_path, "SELECT output, score FROM spans WHERE span_type = 'EVALUATOR'")
    assert scores.to_pylist() == [
        {"output": "0", "score": 0.0},
        {"output": "1", "score": 1.0},
        {"output": "0", "score": 0.0},
    ]


def test_an_attribute_key_no_span_has_is_said(tmp_path: Path, capsys) -> None:
    _evaluation(tmp_path)
    heard: list[str] = []
    typo = "SELECT * FROM spans WHERE attributes['lasagna.span.outptu'] = '0'"
    assert sql(tmp_path, typo, warn=heard.append).num_rows == 0
    (line,) = heard
    assert "'lasagna.span.outptu'" in line and "matches nothing" in line
    assert not sql(tmp_path, SPEC_QUERY, warn=heard.append).num_rows and len(heard) == 1
    assert main(["results", "sql", typo, "--output", str(tmp_path)]) == 0
    assert "note: no span has the attribute 'lasagna.span.outptu'" in capsys.readouterr().err
