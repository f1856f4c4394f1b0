"""TREC run export and SQL over runs."""

from __future__ import annotations

import io
import os
from pathlib import Path

import fsspec
import pyarrow as pa
import pytest
from rich.console import Console
from test_results_store import make_trial

from lasagna.errors import UserError
from lasagna.results import TrialResult, export_trec, open_run, render_table, sql, write_run
from lasagna.results.export import sanitize_tag, trec_lines


def _ranked_trial(key: str, system: str) -> TrialResult:
    t = make_trial(key, [1.0, 0.5], system=system, config={"kind": system})
    rows = pa.table(
        {
            "id": ["q1", "q2"],
            "doc_ids": [["d3", "d1", "d2"], ["d9"]],
            "scores": [[3.25, 0.1, 0.1], [1e-5]],
            "ndcg@10": [1.0, 0.5],
        }
    )
    return TrialResult.of(t.meta, rows)


def test_trec_lines_and_trec_eval_reads_them(tmp_path: Path) -> None:
    write_run(tmp_path / "out", "r1", {}, [_ranked_trial("k1", "hybrid(bm25+dense:MiniLM)")])
    target = tmp_path / "run.trec"
    assert export_trec("r1", target, output_dir=tmp_path / "out") == [str(target)]
    tag = "hybrid_bm25+dense:MiniLM"
    assert target.read_text().splitlines() == [
        f"q1 Q0 d3 1 3.25 {tag}",
        f"q1 Q0 d1 2 0.1 {tag}",
        f"q1 Q0 d2 3 0.1 {tag}",
        f"q2 Q0 d9 1 0.00001 {tag}",
    ]
    for line in target.read_text().splitlines():
        assert len(line.split()) == 6
    run_obj = open_run("r1", tmp_path / "out")
    blocks = list(trec_lines(run_obj, run_obj.trials[0], tag, chunk=1))  # sliced batches
    assert len(blocks) == 2 and b"".join(blocks) == target.read_bytes()
    pytrec_eval = pytest.importorskip(
        "pytrec_eval", reason="pytrec_eval (the dev extra) is not installed"
    )
    with open(target) as fh:
        run = pytrec_eval.parse_run(fh)
    assert run == {"q1": {"d3": 3.25, "d1": 0.1, "d2": 0.1}, "q2": {"d9": 1e-5}}
    qrels = {"q1": {"d3": 1}, "q2": {"d4": 1}}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    assert scores["q1"]["ndcg_cut_10"] == 1.0 and scores["q2"]["ndcg_cut_10"] == 0.0


def test_trec_several_trials(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_run(out, "r1", {}, [_ranked_trial("k1", "bm25"), _ranked_trial("k2", "dense")])
    stream = io.StringIO()
    with pytest.raises(UserError, match="--trial") as info:
        export_trec("r1", stream, output_dir=out)
    assert "or write them all with --out FOLDER" in info.value.render()
    export_trec(open_run("r1", out), stream, trial="dense", tag="mine")
    assert stream.getvalue().splitlines()[0] == "q1 Q0 d3 1 3.25 mine"
    spaced = io.StringIO()  # a tag with a space would make a seventh field
    export_trec(open_run("r1", out), spaced, trial="dense", tag="my run")
    assert spaced.getvalue().splitlines()[0] == "q1 Q0 d3 1 3.25 my_run"
    raw = io.BytesIO()
    export_trec(open_run("r1", out), raw, trial="k1")
    assert raw.getvalue().decode().splitlines()[-1] == "q2 Q0 d9 1 0.00001 bm25"
    written = export_trec("r1", tmp_path / "trec", output_dir=out)
    assert sorted(Path(p).name for p in written) == [
        "local_toy@aaaaaaaaaaaa__bm25.trec",
        "local_toy@aaaaaaaaaaaa__dense.trec",
    ]  # the toy trials name no data file: no qrels, and the export still succeeds
    assert not [p for p in os.listdir(tmp_path / "trec") if p.startswith(".")]
    with pytest.raises(UserError, match="matches no"):
        export_trec("r1", stream, trial="nope", output_dir=out)


def test_trec_refuses_whitespace_ids(tmp_path: Path) -> None:
    t = _ranked_trial("k1", "bm25")
    rows = t.rows.set_column(0, "id", pa.array(["q 1", "q2"]))
    write_run(tmp_path, "r1", {}, [TrialResult.of(t.meta, rows)])
    with pytest.raises(UserError, match="whitespace"):
        export_trec("r1", tmp_path / "x.trec", output_dir=tmp_path)
    assert not (tmp_path / "x.trec").exists()
    assert sanitize_tag("a b/c") == "a_b_c"


def _two_runs(root: str | Path) -> None:
    write_run(
        root,
        "r1",
        {"profile": "speed", "created_at": "2026-01-01T00:00:00+00:00"},
        [make_trial("k1", [0.5, 1.0]), make_trial("k2", [0.0, 0.25, 0.5], system="dense")],
    )
    gen = make_trial("k3", [1.0], metric="f1")
    gen.track = "generation"
    gen = TrialResult.of(gen.meta, pa.table({"id": ["q0"], "prediction": ["yes"], "f1": [1.0]}))
    write_run(root, "r2", {"profile": "rag", "created_at": "2026-01-02T00:00:00+00:00"}, [gen])


def test_sql_over_two_runs(tmp_path: Path) -> None:
    _two_runs(tmp_path)
    runs = sql(tmp_path, "SELECT run_id, profile, n_trials FROM runs ORDER BY run_id")
    assert runs.to_pylist() == [
        {"run_id": "r1", "profile": "speed", "n_trials": 2},
        {"run_id": "r2", "profile": "rag", "n_trials": 1},
    ]
    trials = sql(tmp_path, 'SELECT trial_key, system, "ndcg@10", f1 FROM trials ORDER BY 1')
    assert trials.to_pylist() == [
        {"trial_key": "k1", "system": "bm25", "ndcg@10": 0.75, "f1": None},
        {"trial_key": "k2", "system": "dense", "ndcg@10": 0.25, "f1": None},
        {"trial_key": "k3", "system": "bm25", "ndcg@10": None, "f1": 1.0},
    ]
    per_run = sql(
        tmp_path,
        'SELECT run_id, count(*) AS n, avg("ndcg@10") AS ndcg, max(prediction) AS pred '
        "FROM rows GROUP BY run_id ORDER BY run_id",
    )
    assert per_run.to_pylist() == [
        {"run_id": "r1", "n": 5, "ndcg": pytest.approx(0.45), "pred": None},
        {"run_id": "r2", "n": 1, "ndcg": None, "pred": "yes"},
    ]
    joined = sql(
        tmp_path,
        "SELECT t.system, count(*) AS n FROM rows r JOIN trials t "
        "ON r.run_id = t.run_id AND r.trial_key = t.trial_key GROUP BY 1 ORDER BY 1",
    )
    assert joined.to_pylist() == [{"system": "bm25", "n": 3}, {"system": "dense", "n": 3}]
    # the rows name their system: no join needed for "the worst questions of bm25"
    direct = sql(tmp_path, "SELECT system, count(*) AS n FROM rows GROUP BY 1 ORDER BY 1")
    assert direct.to_pylist() == joined.to_pylist()
    assert sql(tmp_path / "none", "SELECT system FROM rows").num_rows == 0
    out = io.StringIO()
    render_table(per_run, Console(file=out, width=120), title="q")
    assert "r2" in out.getvalue() and "yes" in out.getvalue()
    lines = out.getvalue().splitlines()
    header, first = [line for line in lines if "r1" in line or "run_id" in line]
    assert first.index("0.4500") + 6 == header.index("ndcg") + 4  # numbers end at the right edge
    with pytest.raises(UserError, match="query failed"):
        sql(tmp_path, "SELECT nope FROM runs")


def test_a_select_star_too_wide_for_the_terminal_prints_one_block_per_row() -> None:
    """`SELECT * FROM trials` (49 columns) printed a grid of empty one-character columns in
    an 80-column terminal; it now prints each row as `column  value` lines."""
    import pyarrow as pa

    names = ["run_id", "system", "comparability_key"] + [f"ndcg@{k}" for k in range(1, 28)]
    rows = [
        {"run_id": "r1", "system": "bm25[v1]", "comparability_key": "local/x@1|-|retrieval"}
        | {f"ndcg@{k}": k / 100 for k in range(1, 28)},
        {"run_id": "r2", "system": "dense", "comparability_key": "local/x@1|-|retrieval"}
        | {f"ndcg@{k}": None for k in range(1, 28)},
    ]
    out = io.StringIO()
    render_table(pa.Table.from_pylist(rows), Console(file=out, width=80), title="q", max_rows=1)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0] == "q" and "30 columns are wider than the terminal (80)" in lines[1]
    assert lines[3].startswith("row 1 ")
    fields = [line.split(maxsplit=1) for line in lines[4:-1]]
    assert [f[0] for f in fields] == names  # every column, named, in order
    assert fields[1][1].strip() == "bm25[v1]" and fields[29][1].strip() == "0.2700"
    assert lines[-1] == "... 1 more rows"
    narrow = io.StringIO()  # what fits stays a grid
    render_table(pa.Table.from_pylist([{"system": "bm25", "ndcg@10": 0.5}]), Console(file=narrow))
    assert "┃ system ┃ ndcg@10 ┃" in narrow.getvalue()


def test_sql_on_memory_uri_and_empty(tmp_path: Path) -> None:
    root = f"memory://lasagna-sql-{os.getpid()}-{tmp_path.name}"
    try:
        _two_runs(root)
        table = sql(root, "SELECT trial_key, count(*) AS n FROM rows GROUP BY 1 ORDER BY 1")
        assert table.to_pylist() == [
            {"trial_key": "k1", "n": 2},
            {"trial_key": "k2", "n": 3},
            {"trial_key": "k3", "n": 1},
        ]
    finally:
        fsspec.filesystem("memory").rm(root.removeprefix("memory://"), recursive=True)
    assert sql(tmp_path / "none", "SELECT count(*) AS n FROM rows").to_pylist() == [{"n": 0}]


def test_a_map_cell_reads_as_json_and_no_rows_as_no_rows() -> None:
    """`SELECT * FROM evaluations` printed Python's repr of a map (`[('accuracy', 0.8)]`);
    an empty answer too wide for the terminal printed a banner over no block."""
    averages = pa.array([[("accuracy", 0.8), ("length", 4.0)]], pa.map_(pa.string(), pa.float64()))
    out = io.StringIO()
    render_table(pa.table({"evaluation_id": ["e1"], "averages": averages}), Console(file=out))
    assert '{"accuracy": 0.8, "length": 4.0}' in out.getvalue()
    out = io.StringIO()
    wide = pa.table({f"column_{i}": pa.array([], pa.string()) for i in range(16)})
    render_table(wide, Console(file=out, width=100))
    assert out.getvalue().startswith("no rows (columns: column_0, column_1")
    assert "wider than the terminal" not in out.getvalue()
