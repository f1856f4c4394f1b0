"""The result store: atomic trial checkpoints and runs, schema refusal, unwritable output."""

from __future__ import annotations

import errno
import io
import json
import os
from pathlib import Path

import fsspec
import pyarrow as pa
import pytest
from rich.console import Console

from lasagna.errors import UserError
from lasagna.results import (
    SCHEMA_VERSION,
    TrialResult,
    list_runs,
    load_trial,
    new_run_id,
    open_run,
    render_run,
    render_runs,
    save_trial,
    write_run,
)
from lasagna.results import checkpoints as results_checkpoints
from lasagna.results import fs as results_fs
from lasagna.results import run_writer as results_run_writer

BENCH = {
    "name": "local/toy@aaaaaaaaaaaa",
    "revision": "a" * 64,
    "source": "toy.jsonl",
    "format": "jsonl",
    "split": None,
    "n_samples": None,
    "filters": {},
    "sample_seed": None,
    "corpus_provenance": "pooled_gold",
}


def make_trial(
    key: str,
    values: list[float],
    *,
    system: str = "bm25",
    config: dict | None = None,
    ckey: str = "group-1",
    benchmark: dict | None = None,
    metric: str = "ndcg@10",
    ids: list[str] | None = None,
    seed: int = 0,
    repeat: int = 0,
) -> TrialResult:
    """A retrieval trial whose per-question `metric` is `values` (aggregate = their mean)."""
    ids = ids or [f"q{i}" for i in range(len(values))]
    rows = pa.table(
        {
            "id": ids,
            "doc_ids": [[f"d{i}", f"d{i + 1}"] for i in range(len(ids))],
            "scores": [[2.5, 1.0 / 3] for _ in ids],
            metric: pa.array(values, pa.float64()),
        }
    )
    return TrialResult(
        key=key,
        comparability_key=ckey,
        track="retrieval",
        system=system,
        config=config or {"kind": system},
        benchmark=dict(benchmark or BENCH),
        seed=seed,
        repeat=repeat,
        metrics={metric: sum(values) / len(values)},
        timings={"search": 0.5},
        counts={"rows": len(ids), "failed": 0},
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        rows=rows,
    )


def test_checkpoint_roundtrip(tmp_path: Path) -> None:
    trial = make_trial("k1", [0.5, 1.0, 0.0])
    folder = save_trial(tmp_path, trial)
    assert Path(folder) == tmp_path / ".trials" / "k1"
    back = load_trial(tmp_path, "k1")
    assert back is not None
    assert back.meta == trial.meta
    assert back.rows.equals(trial.rows)
    assert load_trial(tmp_path, "other") is None
    # saving again replaces, and leaves no temp folders
    save_trial(tmp_path, make_trial("k1", [1.0, 1.0, 1.0]))
    assert load_trial(tmp_path, "k1").metrics["ndcg@10"] == 1.0
    assert sorted(os.listdir(tmp_path / ".trials")) == ["k1"]


def test_checkpoint_read_without_holding_its_tables(tmp_path: Path, caplog) -> None:
    """What a driver holds for the run it will write: the metadata; the tables are read
    again when asked for, from the version a later writer committed if it replaced it, and
    a checkpoint whose rows do not read is refused at once, not when the run is written."""
    spans = pa.table({"trace_id": ["t1"], "name": ["EXECUTOR"]})
    trial = make_trial("k1", [0.5, 1.0])
    trial.tables["spans"] = spans
    save_trial(tmp_path, trial)
    held = load_trial(tmp_path, "k1", hold_tables=False)
    assert held.meta == trial.meta and "rows" not in vars(held) and "tables" not in vars(held)
    assert held.rows.equals(trial.rows) and held.tables["spans"].equals(spans)
    again = make_trial("k1", [0.25, 0.75])  # the same trial re-run by another sweep
    save_trial(tmp_path, again)  # its commit removes the version `held` read
    assert held.rows.equals(again.rows)
    path = tmp_path / "run"
    write_run(path, "r1", {}, [held])
    assert open_run("r1", path).rows("k1").equals(again.rows)
    (version,) = (tmp_path / ".trials" / "k1").glob("v@*")
    (version / "rows.parquet").write_bytes(b"not parquet")
    with caplog.at_level("WARNING", logger="lasagna.results"):
        assert load_trial(tmp_path, "k1", hold_tables=False) is None
    assert "corrupt checkpoint" in caplog.text


def test_checkpoint_unsafe_key_and_corrupt(tmp_path: Path, caplog) -> None:
    key = "local/x@abc|bm25/seed 3"
    save_trial(tmp_path, make_trial(key, [0.2]))
    assert load_trial(tmp_path, key).key == key
    (folder,) = (tmp_path / ".trials").iterdir()
    (version,) = folder.glob("v@*")  # the pointer names this version folder
    (version / "rows.parquet").write_bytes(b"not parquet")
    with caplog.at_level("WARNING", logger="lasagna.results"):
        assert load_trial(tmp_path, key) is None
    assert "corrupt checkpoint" in caplog.text
    (folder / "trial.json").write_text("{broken")
    assert load_trial(tmp_path, key) is None


def test_checkpoint_newer_schema_refused(tmp_path: Path) -> None:
    save_trial(tmp_path, make_trial("k1", [0.5]))
    meta_path = tmp_path / ".trials" / "k1" / "trial.json"
    data = json.loads(meta_path.read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    meta_path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="newer lasagna") as err:
        load_trial(tmp_path, "k1")
    assert "upgrade lasagna" in err.value.render()


def test_crash_mid_checkpoint_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError("killed while writing")

    monkeypatch.setattr(results_checkpoints, "dumps", boom)
    with pytest.raises(RuntimeError):
        save_trial(tmp_path, make_trial("k1", [0.5]))
    assert load_trial(tmp_path, "k1") is None
    assert os.listdir(tmp_path / ".trials") == []


def test_write_and_open_run(tmp_path: Path) -> None:
    t1, t2 = make_trial("k1", [0.5, 1.0]), make_trial("k2", [0.0, 1.0], system="dense")
    run_id = new_run_id()
    folder = write_run(tmp_path, run_id, {"profile": "speed", "config": {"x": 1}}, [t1, t2])
    assert Path(folder) == tmp_path / run_id
    manifest = json.loads((tmp_path / run_id / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["run_id"] == run_id and manifest["profile"] == "speed"
    assert manifest["trials"][1]["rows_file"] == "trials/k2.parquet"
    assert manifest["created_at"] == t1.started_at
    assert sorted(os.listdir(tmp_path)) == [run_id]  # no temp leftovers

    run = open_run(run_id, tmp_path)
    assert [t.key for t in run.trials] == ["k1", "k2"]
    assert run.trial("k2").system == "dense"
    assert run.rows("k2").equals(t2.rows)
    assert run.result("k1").meta == t1.meta
    assert open_run(str(tmp_path / run_id)).run_id == run_id  # by folder
    assert open_run(run_id[:-2], tmp_path).run_id == run_id  # by unique prefix
    assert open_run("latest", tmp_path).run_id == run_id

    (summary,) = list_runs(tmp_path)
    assert summary.n_trials == 2 and summary.systems == ["bm25", "dense"]
    assert summary.profile == "speed"


def test_run_never_overwritten(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", {}, [make_trial("k1", [0.5])])
    with pytest.raises(UserError, match="never overwritten"):
        write_run(tmp_path, "r1", {}, [make_trial("k1", [1.0])])
    assert open_run("r1", tmp_path).trials[0].metrics["ndcg@10"] == 0.5


def test_run_ids_unique_and_sortable() -> None:
    ids = {new_run_id() for _ in range(50)}
    assert len(ids) == 50
    for rid in ids:
        date, time, hexpart = rid.split("-")
        assert len(date) == 8 and len(time) == 6 and len(hexpart) == 6


def test_crash_mid_run_write_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    calls = {"n": 0}
    real = results_run_writer.write_parquet

    def second_file_crashes(store, path, table):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("driver killed")
        real(store, path, table)

    monkeypatch.setattr(results_run_writer, "write_parquet", second_file_crashes)
    with pytest.raises(RuntimeError):
        write_run(tmp_path, "r1", {}, [make_trial("k1", [0.5]), make_trial("k2", [0.5])])
    assert calls["n"] == 2
    assert os.listdir(tmp_path) == []
    assert list_runs(tmp_path) == []


def test_disk_full_is_a_user_error_and_cleans_up(tmp_path: Path, monkeypatch) -> None:
    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(results_fs.os, "rename", full)  # a run's commit
    monkeypatch.setattr(results_fs.os, "replace", full)  # a checkpoint's commit
    with pytest.raises(UserError, match="disk is full") as err:
        write_run(tmp_path, "r1", {}, [make_trial("k1", [0.5])])
    assert "nothing was written" in err.value.render()
    assert os.listdir(tmp_path) == []
    with pytest.raises(UserError, match="disk is full"):
        save_trial(tmp_path, make_trial("k1", [0.5]))
    assert os.listdir(tmp_path / ".trials") == []


def test_output_under_a_file_is_a_user_error(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = afile / "sub"
    with pytest.raises(UserError, match="results could not be written") as err:
        write_run(out, "r1", {}, [make_trial("k1", [0.5])])
    assert str(out) in err.value.render()
    with pytest.raises(UserError):
        save_trial(out, make_trial("k1", [0.5]))
    assert sorted(os.listdir(tmp_path)) == ["afile"]


def test_newer_run_schema_refused(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", {}, [make_trial("k1", [0.5])])
    path = tmp_path / "r1" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["schema_version"] = SCHEMA_VERSION + 4
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as err:
        open_run("r1", tmp_path)
    text = err.value.render()
    assert f"schema {SCHEMA_VERSION + 4}, this reads up to {SCHEMA_VERSION}" in text
    assert "upgrade lasagna" in text


def test_a_damaged_manifest_hides_only_its_own_run(tmp_path: Path, caplog) -> None:
    """One unreadable manifest left every command on the folder refused; now the other runs
    read on, the damaged one is named in a warning, and opening it says what is wrong."""
    write_run(tmp_path, "r1", {}, [make_trial("k1", [0.5])])
    write_run(tmp_path, "r2", {}, [make_trial("k2", [0.25])])
    (tmp_path / "r1" / "manifest.json").write_text('{"broken')
    with caplog.at_level("WARNING"):
        assert [s.run_id for s in list_runs(tmp_path)] == ["r2"]
    assert "left out damaged run folder r1: unreadable run manifest" in caplog.text
    assert open_run("r2", tmp_path).run_id == "r2"
    with pytest.raises(UserError, match="unreadable run manifest"):
        open_run("r1", tmp_path)


def test_unknown_run_lists_recent(tmp_path: Path) -> None:
    for i, rid in enumerate(["20260101-000000-aaaaaa", "20260102-000000-bbbbbb"]):
        write_run(
            tmp_path,
            rid,
            {"created_at": f"2026-01-0{i + 1}T00:00:00+00:00"},
            [make_trial(f"k{i}", [0.5])],
        )
    with pytest.raises(UserError) as err:
        open_run("nope", tmp_path)
    text = err.value.render()
    assert "20260102-000000-bbbbbb, 20260101-000000-aaaaaa" in text  # most recent first
    with pytest.raises(UserError, match="no runs"):
        open_run("nope", tmp_path / "empty")


def test_readers_ignore_temp_and_unmarked_folders(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", {}, [make_trial("k1", [0.5])])
    (tmp_path / ".tmp-r2-1234abcd" / "trials").mkdir(parents=True)
    (tmp_path / "r3" / "trials").mkdir(parents=True)  # no manifest: not a run
    assert [s.run_id for s in list_runs(tmp_path)] == ["r1"]


@pytest.mark.parametrize("scheme", ["memory", "file"])
def test_uri_output(tmp_path: Path, scheme: str) -> None:
    if scheme == "memory":
        root = f"memory://lasagna-test-{os.getpid()}-{tmp_path.name}"
    else:
        root = f"file://{tmp_path}"
    t = make_trial("k1", [0.25, 0.75])
    write_run(root, "r1", {"profile": "speed"}, [t])
    save_trial(root, t)
    run = open_run("r1", root)
    assert run.rows("k1").equals(t.rows)
    assert load_trial(root, "k1").meta == t.meta
    assert [s.run_id for s in list_runs(root)] == ["r1"]
    with pytest.raises(UserError, match="never overwritten"):
        write_run(root, "r1", {}, [t])
    if scheme == "memory":
        fs = fsspec.filesystem("memory")
        base = root.removeprefix("memory://")
        names = [p.rsplit("/", 1)[-1] for p in fs.ls(base, detail=False)]
        assert sorted(names) == [".trials", "r1"]  # temp prefixes are gone
        fs.rm(base, recursive=True)


def test_render_run_and_list(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", {"profile": "speed"}, [make_trial("k1", [0.25, 0.75])])
    out = io.StringIO()
    console = Console(file=out, width=200)
    render_runs(list_runs(tmp_path), console)
    render_run(open_run("r1", tmp_path), console)
    text = out.getvalue()
    assert "r1" in text and "speed" in text and "0.5000" in text and "pooled gold" in text


def test_stale_temp_folders_of_dead_writers_are_removed(tmp_path):
    import socket

    from ray_procs import dead_pid

    from lasagna.results import remove_stale_temps

    dead = dead_pid()
    host = socket.gethostname()
    names = {
        "dead": f".tmp-20261130-000000-aaaaaa@{host}.{dead}.0123abcd",
        "dead_old": f".tmp-20261130-000000-bbbbbb@{host}.{dead}.0123abcd.old",
        "live": f".tmp-20261130-000000-cccccc@{host}.{os.getpid()}.0123abcd",
        "other_host": f".tmp-20261130-000000-dddddd@not-{host}.{dead}.0123abcd",
        "old_format": ".tmp-20261130-000000-eeeeee-0123abcd",
    }
    (tmp_path / ".trials").mkdir()
    (tmp_path / ".status").mkdir()
    for name in names.values():
        (tmp_path / name).mkdir()
        (tmp_path / ".trials" / name.replace("2026", "key")).mkdir()
    # a status file's atomic replace killed between its write and its rename
    (tmp_path / ".status" / f".tmp-r1.json@{host}.{dead}.0123abcd").write_text("{")
    (tmp_path / ".status" / f".tmp-r2.json@{host}.{os.getpid()}.0123abcd").write_text("{")
    assert remove_stale_temps(tmp_path) == 5
    left = {p.name for p in tmp_path.iterdir()} - {".trials", ".status"}
    assert left == {names["live"], names["other_host"], names["old_format"]}
    assert len(list((tmp_path / ".trials").iterdir())) == 3
    assert [p.name for p in (tmp_path / ".status").iterdir()] == [
        f".tmp-r2.json@{host}.{os.getpid()}.0123abcd"
    ]
    assert f"@{host}.{os.getpid()}." in results_fs.temp_name("run")


def test_checkpoint_of_an_older_lasagna_loads_and_is_replaced_cleanly(tmp_path):
    """Checkpoints written before the pointer layout (tables beside trial.json) still load;
    replacing one leaves only the pointer and its version folder."""
    import pyarrow.parquet as pq

    trial = make_trial("k1", [0.5, 1.0])
    folder = tmp_path / ".trials" / "k1"
    folder.mkdir(parents=True)
    pq.write_table(trial.rows, folder / "rows.parquet")
    meta = {"schema_version": SCHEMA_VERSION} | trial.meta.to_json() | {"tables": ["rows"]}
    (folder / "trial.json").write_text(json.dumps(meta))
    back = load_trial(tmp_path, "k1")
    assert back is not None and back.rows.equals(trial.rows)

    save_trial(tmp_path, make_trial("k1", [1.0, 1.0]))
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 2 and names[0] == "trial.json" and names[1].startswith("v@")
    assert load_trial(tmp_path, "k1").metrics["ndcg@10"] == 1.0
