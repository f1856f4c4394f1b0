"""`results sql` on a results root that cannot answer says which root it read and why it is
empty (no runs: exit 2; runs but no evaluate() run for an evaluation table: a note), and the
hint `evaluate()` prints names the `--output` it wrote to."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from rich.console import Console

from lasagna.cli import main
from lasagna.evaluation.api import EvaluationResult
from lasagna.evaluation.summary import render_result
from lasagna.results import TrialResult, new_run_id, write_run


def _one_benchmark_run(out: Path) -> None:
    trial = TrialResult(
        key="k" * 20,
        comparability_key="c" * 12,
        track="retrieval",
        system="bm25",
        config={"kind": "bm25"},
        benchmark={"name": "local/x@0123456789ab", "revision": "0" * 64},
        metrics={"ndcg@10": 0.5},
        rows=pa.table({"id": ["q1"], "doc_ids": [["d1"]], "scores": [[1.0]], "ndcg@10": [0.5]}),
    )
    write_run(out, new_run_id(), {}, [trial])


@pytest.mark.parametrize("made", [True, False], ids=["empty-folder", "missing-folder"])
def test_a_root_without_runs_is_named_and_refused(tmp_path, monkeypatch, capsys, made):
    monkeypatch.chdir(tmp_path)
    if made:
        (tmp_path / "results").mkdir()
    code = main(["results", "sql", "SELECT * FROM trials"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    what = "holds no runs" if made else "does not exist"
    assert f"the results root {tmp_path / 'results'} {what}" in err, err
    assert "--output" in err


def test_a_root_without_evaluations_says_so_for_evaluation_tables(tmp_path, capsys):
    out = tmp_path / "results"
    _one_benchmark_run(out)
    for table in ("evaluation_trials", "spans"):
        code = main(["results", "sql", f"SELECT * FROM {table}", "--output", str(out)])
        err = " ".join(capsys.readouterr().err.split())
        assert code == 0
        assert f"note: the results root {out} holds 1 run(s) and no evaluate() run" in err, err
        assert f"so {table} is empty" in err
    # the benchmark tables have rows: no note
    assert main(["results", "sql", "SELECT count(*) FROM trials", "--output", str(out)]) == 0
    assert "note:" not in capsys.readouterr().err
    # a root holding an evaluate() run: a query matching none of its rows gets no note
    from test_report_data import write_evaluation

    write_evaluation(out, "E1", "2026-01-01T00:00:00+00:00", [0.0, 1.0])
    query = "SELECT task_id FROM evaluation_trials WHERE evaluation_id = 'x'"
    assert main(["results", "sql", query, "--output", str(out)]) == 0
    assert "no evaluate() run" not in capsys.readouterr().err


@pytest.mark.parametrize("output", [None, "runs here", "s3://bucket/res"])
def test_the_evaluate_hint_names_the_output(tmp_path, monkeypatch, output):
    monkeypatch.chdir(tmp_path)
    result = EvaluationResult("ev1", "demo", None, {"exact": 1.0}, 1, 0, "somewhere", [])
    console = Console(record=True, width=300)
    render_result(result, 1.0, console, output=output)
    text = console.export_text()
    shown = {None: str(tmp_path / "results"), "runs here": f"'{tmp_path / 'runs here'}'"}
    expected = shown.get(output, output)
    assert "evaluation_id = 'ev1'\" --output " + expected + ")" in text, text


def test_each_distinct_error_is_said_once_with_its_count() -> None:
    """A model that cannot load fails every trial alike: one line with the count, not three
    identical lines; brackets in an error are text."""
    same = "executor: ModelLoadError: model 'm' failed to load: bad [type=value_error]"
    rows = [{"task_id": str(i), "trial_index": 0, "error": same} for i in range(8)]
    rows += [
        {"task_id": f"x{i}", "trial_index": 1, "error": f"evaluator e: E{i}"} for i in range(4)
    ]
    result = EvaluationResult("ev1", "demo", None, {}, 12, 12, "somewhere", rows)
    console = Console(record=True, width=300)
    render_result(result, 1.0, console)
    lines = console.export_text().splitlines()
    assert f"  8 trials (task 0 trial 0 first): {same}" in lines, lines
    assert (
        "  task x0 trial 1: evaluator e: E0" in lines
        and "  task x1 trial 1: evaluator e: E1" in lines
    )
    assert not any("E2" in line for line in lines)
    assert any(line.startswith("  and 2 other error(s)") for line in lines), lines


def test_a_trials_several_errors_are_indented_under_it() -> None:
    both = "evaluator bad: ScoreError: not a number\nevaluator raising: RuntimeError: boom"
    rows = [{"task_id": "france", "trial_index": 0, "error": both}]
    result = EvaluationResult("ev1", "demo", None, {}, 1, 1, "somewhere", rows)
    console = Console(record=True, width=300)
    render_result(result, 1.0, console)
    lines = console.export_text().splitlines()
    assert "  task france trial 0: evaluator bad: ScoreError: not a number" in lines, lines
    assert "    evaluator raising: RuntimeError: boom" in lines, lines
