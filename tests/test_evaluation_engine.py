"""evaluate() as a trial of the engine, without Ray: one record builder for every row,
trial keys from the executor's and evaluators' identity and the data, the row checkpoints
of the shared store, and evaluation runs of both layouts read alike (SQL, compare, report,
show)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from lasagna import Datapoint
from lasagna.common import tracing
from lasagna.evaluation.datapoint import Dataset, task_ids
from lasagna.evaluation.plan import build_plan
from lasagna.results import evaluations as ev
from lasagna.results.model import TrialResult
from lasagna.results.partial import TrialParts
from lasagna.results.store import write_run
from lasagna.stages.sdk_executor import _lost
from lasagna.stages.sdk_rows import RowSpec, run_row
from lasagna.systems.executor import ExecutorSystem
from lasagna.tracks.sdk import restored_rows


def upper(data):
    return str(data).upper()


def same(output, target):
    return output == target


def broken(data):
    raise ValueError("no")


def test_one_record_builder_for_finished_failed_and_lost_rows():
    spec = RowSpec(0, "t0", 0, "a", "A", {"k": 1})
    ok = run_row(spec, upper, {"same": same}, "ev")
    failed = run_row(spec, broken, {"same": same}, "ev")
    (lost,) = _lost([spec], RuntimeError("worker died"))
    keys = ["order", *ev.RECORD_KEYS]
    assert list(ok) == list(failed) == list(lost) == keys
    assert ev.RECORD_KEYS == tuple(n for n in ev.SCHEMAS[ev.TRIALS].names if n != "evaluation_id")
    assert ok["scores"] == {"same": 1.0} and failed["error_type"] == "ValueError"
    assert lost["error"].startswith("worker lost: RuntimeError") and lost["trace_id"] is None
    table = ev.rows_table([ok, failed, lost])
    assert table.schema == ev.ROW_SCHEMA and table.column("id").to_pylist()[0] == "t0#0"
    back = ev.records_of(table)
    assert back[0]["scores"] == {"same": 1.0} and back[0]["output"] == ok["output"]
    from lasagna.tracks.sdk import SdkTrack

    declared = [(name, typ) for name, typ, *_ in SdkTrack.columns]
    assert declared == [(f.name, str(f.type)) for f in ev.ROW_SCHEMA]  # the track's columns
    tracing.collector().take_all()  # these rows ran outside a batch: drop their spans


def _plan(tmp_path, data, executor=upper, evaluators=None, trials=1):
    dataset = Dataset.of(data)
    system = ExecutorSystem(executor, evaluators or {"same": same})
    args = (tmp_path, "run1", "n", None, None)
    return build_plan(dataset, task_ids(dataset), system, trials, *args)


def test_trial_key_follows_executor_source_evaluators_data_and_trials(tmp_path):
    data = [Datapoint("a", "A"), Datapoint("b", "B")]
    key = _plan(tmp_path, data).trials[0].key
    assert _plan(tmp_path, list(data)).trials[0].key == key  # stable
    scope: dict = {}
    exec("def upper(data):\n    return str(data).lower()\n", scope)  # same name, new source
    assert _plan(tmp_path, data, scope["upper"]).trials[0].key != key
    assert _plan(tmp_path, data, evaluators={"other": same}).trials[0].key != key
    assert _plan(tmp_path, [Datapoint("a", "A"), Datapoint("c", "C")]).trials[0].key != key
    assert _plan(tmp_path, data, trials=2).trials[0].key != key
    plan = _plan(tmp_path, data, trials=2)
    assert [(r.task_id, r.trial_index) for r in plan.benchmarks[0].benchmark.rows] == [
        ("0", 0),
        ("0", 1),
        ("1", 0),
        ("1", 1),
    ]
    config = plan.trials[0].system_config
    assert config["executor"]["name"].endswith("test_evaluation_engine.upper")
    assert len(config["executor"]["source_sha256"]) == 64


def test_row_parts_in_the_trials_store_restore_finished_rows_only(tmp_path):
    specs = [RowSpec(i, str(i), 0, i, i, None) for i in range(3)]
    parts = TrialParts(tmp_path, "k" * 20, "run1")
    done = run_row(specs[0], upper, {}, "run1")
    (lost,) = _lost([specs[1]], RuntimeError("gone"))
    parts.save([done, lost], [])
    assert [p.name for p in (tmp_path / ".trials").iterdir()] == ["k" * 20]
    kept, _ = restored_rows(TrialParts(tmp_path, "k" * 20), specs)
    assert list(kept) == [("0", 0)]  # a lost worker's row runs again
    assert TrialParts(tmp_path, "k" * 20).load()[2] == {"run1"}
    tracing.collector().take_all()
    parts.remove()
    assert not (tmp_path / ".trials").exists() or not any((tmp_path / ".trials").iterdir())


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


def _records(scores):
    out = []
    for i, score in enumerate(scores):
        spec = RowSpec(i, f"t{i}", 0, f"d{i}", f"x{i}", None)
        out.append(ev.row_record(spec, output='"o"', scores={"acc": score}, trace_id=f"{i:032x}"))
    return out


def _info(run_id, averages, n):
    return {
        "evaluation_id": run_id,
        "name": run_id,
        "group_name": "g",
        "metadata": {},
        "created_at": f"2026-01-0{n}T00:00:00+00:00",
        "finished_at": f"2026-01-0{n}T00:00:01+00:00",
        "executor": "cap",
        "n_datapoints": 2,
        "n_trials": 2,
        "n_errors": 0,
        "averages": averages,
    }


def old_layout_run(root: Path, run_id: str = "old-ev") -> None:
    """An evaluation as lasagna wrote it before the SDK ran on the engine: tables/."""
    records = _records([0.0, 1.0])
    spans = [_span(r["trace_id"], i, "EVALUATOR", "acc", "0") for i, r in enumerate(records)]
    info = _info(run_id, {"acc": 0.5}, 1)
    tables = {
        ev.EVALUATIONS: ev.evaluations_table(info | {"path": str(root / run_id)}),
        ev.TRIALS: ev.trials_table(run_id, records, spans),
        ev.SPANS: ev.spans_table(run_id, spans),
    }
    manifest = {"kind": ev.KIND, "created_at": info["created_at"], "evaluation": info}
    write_run(root, run_id, manifest, [], tables=tables)


def new_layout_run(root: Path, run_id: str = "new-ev") -> None:
    """An evaluation of now: one sdk trial whose rows and spans are the evaluation's."""
    records = _records([1.0, 1.0])
    spans = [_span(r["trace_id"], i, "EVALUATOR", "acc", "1") for i, r in enumerate(records)]
    trial = TrialResult(
        key="s" * 20,
        comparability_key="c",
        track="sdk",
        system="cap",
        config={"kind": "executor"},
        benchmark={"name": "datapoints@x", "revision": "x"},
        metrics={"acc": 1.0},
        counts={"rows": 2, "errors": 0, "datapoints": 2},
        extra={"dimensions": ["acc"]},
        rows=ev.rows_table(records),
        tables={ev.SPANS: ev.spans_table(run_id, spans)},
    )
    info = _info(run_id, {"acc": 1.0}, 2)
    manifest = {"kind": ev.KIND, "created_at": info["created_at"], "evaluation": info}
    write_run(root, run_id, manifest, [trial])


def test_old_and_new_evaluation_folders_read_alike(tmp_path, capsys):
    from lasagna.cli import main
    from lasagna.results.groups import compare_evaluations, progression
    from lasagna.results.report.evaluations import trials_rows
    from lasagna.results.sql import sql
    from lasagna.results.store import open_run

    old_layout_run(tmp_path)
    new_layout_run(tmp_path)
    evs = sql(tmp_path, "SELECT * FROM evaluations ORDER BY created_at")
    assert evs.schema == ev.SCHEMAS[ev.EVALUATIONS]
    assert evs.column("evaluation_id").to_pylist() == ["old-ev", "new-ev"]
    rows = sql(tmp_path, "SELECT * FROM evaluation_trials ORDER BY evaluation_id, task_id")
    assert rows.schema == ev.SCHEMAS[ev.TRIALS]
    assert [
        (r["evaluation_id"], r["task_id"], dict(r["scores"])["acc"]) for r in rows.to_pylist()
    ] == [
        ("new-ev", "t0", 1.0),
        ("new-ev", "t1", 1.0),
        ("old-ev", "t0", 0.0),
        ("old-ev", "t1", 1.0),
    ]
    spans = sql(tmp_path, "SELECT evaluation_id, count(*) n FROM spans GROUP BY 1 ORDER BY 1")
    assert spans.to_pylist() == [
        {"evaluation_id": "new-ev", "n": 2},
        {"evaluation_id": "old-ev", "n": 2},
    ]
    zero = sql(
        tmp_path, "SELECT evaluation_id FROM spans WHERE attributes['lmnr.span.output'] = '0'"
    )
    assert set(zero.column("evaluation_id").to_pylist()) == {"old-ev"}
    assert [r["evaluation_id"] for r in progression("g", tmp_path).rows] == ["old-ev", "new-ev"]
    old, new = open_run("old-ev", tmp_path), open_run("new-ev", tmp_path)
    cmp = compare_evaluations(old, new)
    assert cmp.unmatched == 0 and "acc" in cmp.tests
    assert (
        [r["task_id"] for r in trials_rows(new)]
        == ["t0", "t1"]
        == [r["task_id"] for r in trials_rows(old)]
    )
    for run_id in ("old-ev", "new-ev"):
        assert main(["results", "show", run_id, "--output", str(tmp_path)]) in (0, None)
        assert "evaluation" in capsys.readouterr().out
    assert json.loads((tmp_path / "new-ev" / "manifest.json").read_text())["trials"][0][
        "tables"
    ] == {"rows": f"trials/{'s' * 20}.parquet", "spans": f"trials/{'s' * 20}.spans.parquet"}
    assert pa.types.is_map(rows.schema.field("scores").type)
