"""The typed result schema: blocks, named tables, schema 2 written, schema 1 still read."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_results_store import BENCH, make_trial

from lasagna.errors import UserError
from lasagna.results import leaderboard, load_trial, open_run, save_trial, write_run
from lasagna.results.schema import SCHEMA_VERSION, BenchmarkBlock, check_rows


def test_benchmark_block_reads_like_its_dict() -> None:
    block = BenchmarkBlock.of(BENCH | {"judge_benchmark": "faithfulness"})
    assert block.name == block["name"] == BENCH["name"]
    assert block.get("split") is None and block["judge_benchmark"] == "faithfulness"
    assert dict(block)["revision"] == "a" * 64


def test_named_tables_round_trip_in_runs_and_checkpoints(tmp_path: Path) -> None:
    trial = make_trial("k1", [0.5, 1.0])
    trial.tables["spans"] = pa.table({"span_id": ["s1"], "name": ["generate"]})
    trial.metric_definitions_version = "1"
    write_run(tmp_path, "r1", {}, [trial])
    run = open_run("r1", tmp_path)
    assert run.manifest["schema_version"] == SCHEMA_VERSION == 2
    assert run.table_names("k1") == ["rows", "spans"]
    assert run.table("k1", "spans").column("name").to_pylist() == ["generate"]
    assert run.trial("k1").metric_definitions_version == "1"
    save_trial(tmp_path, trial)
    restored = load_trial(tmp_path, "k1")
    assert restored is not None and restored.tables["spans"].num_rows == 1


def _schema1_run(root: Path) -> None:
    """A run folder exactly as schema 1 wrote it (rows only, version in `extra`)."""
    folder = root / "old"
    (folder / "trials").mkdir(parents=True)
    pq.write_table(pa.table({"id": ["q0"], "ndcg@10": [0.75]}), folder / "trials" / "k0.parquet")
    entry = {
        "key": "k0",
        "comparability_key": "g",
        "track": "retrieval",
        "system": "bm25",
        "config": {"kind": "bm25"},
        "benchmark": {"name": "local/x@aaaaaaaaaaaa", "revision": "a" * 64},
        "metrics": {"ndcg@10": 0.75},
        "extra": {"metric_definitions_version": "1"},
        "rows_file": "trials/k0.parquet",
    }
    manifest = {"schema_version": 1, "run_id": "old", "trials": [entry]}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_a_schema_1_run_is_still_read(tmp_path: Path) -> None:
    _schema1_run(tmp_path)
    run = open_run("old", tmp_path)
    trial = run.trial("k0")
    assert (
        trial.metric_definitions_version == "1" and "metric_definitions_version" not in trial.extra
    )
    assert run.table_names("k0") == ["rows"] and run.rows("k0").num_rows == 1
    (group,) = leaderboard(tmp_path)
    assert group.lines[0].mean == 0.75


def test_an_unknown_schema_is_refused_by_name(tmp_path: Path) -> None:
    _schema1_run(tmp_path)
    path = tmp_path / "old" / "manifest.json"
    for version, words in ((0, r"old lasagna \(schema 0"), (SCHEMA_VERSION + 1, "newer lasagna")):
        path.write_text(json.dumps(json.loads(path.read_text()) | {"schema_version": version}))
        with pytest.raises(UserError, match=words):
            open_run("old", tmp_path)


def test_check_rows_names_a_column_of_the_wrong_type() -> None:
    good = pa.table({"id": ["a"], "doc_ids": [["d1"]], "ndcg@10": [1.0]})
    assert check_rows(good) == []
    element = pa.list_(pa.field("element", pa.string()))  # how Parquet names a list's item
    assert check_rows(pa.table({"doc_ids": pa.array([["d1"]], element)})) == []
    bad = pa.table({"id": ["a"], "latency_s": ["slow"]})
    assert check_rows(bad) == ["latency_s: string (schema: double)"]
