"""The status file a running sweep or evaluation keeps (`lasagna.results.status`) and the
live panel `lasagna view` makes of it (no Ray: the status is driven as the runner drives
it, stage progress through the real `StageProgress`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from ray_procs import dead_pid
from starlette.testclient import TestClient
from test_results_store import make_trial

from lasagna.results import save_trial, write_run
from lasagna.results.fs import Store
from lasagna.results.status import FAILURES_KEPT, STATUS, RunStatus, read_statuses
from lasagna.results.view import create_app
from lasagna.results.view.live import Live, _alive, duration
from lasagna.stages.progress import StageProgress, listening


def _doc(root: Path, run_id: str) -> dict:
    return json.loads((root / STATUS / f"{run_id}.json").read_text())


def test_status_follows_the_run_and_is_always_whole(tmp_path: Path) -> None:
    status = RunStatus(tmp_path, "run-a", "sweep", 3, restored=1, command="lasagna x").start()
    assert _doc(tmp_path, "run-a")["state"] == "running"
    status.trial_started(1, key="k1", system="bm25", benchmark="sample", track="retrieval")
    with listening(status.stage), StageProgress("search+score", 26, show=False) as bar:
        started = _doc(tmp_path, "run-a")["stages"]  # shown from its start, not its 1st batch
        assert [(s["name"], s["done"], s["total"]) for s in started] == [("search+score", 0, 26)]
        bar.advance(10)
    doc = _doc(tmp_path, "run-a")  # the stage's end is always written
    assert doc["current"]["system"] == "bm25"
    assert [(s["name"], s["done"], s["ended"]) for s in doc["stages"]] == [
        ("search+score", 10, True)
    ]
    status.trial_finished("k1", 1.5)
    for i in range(FAILURES_KEPT + 5):
        status.trial_failed(f"k{i + 2}", "dense", f"boom {i}")
    doc = _doc(tmp_path, "run-a")
    assert (doc["done"], doc["restored"], doc["failed"]) == (1, 1, FAILURES_KEPT + 5)
    assert len(doc["failures"]) == FAILURES_KEPT and doc["failures"][-1]["reason"] == "boom 24"
    assert doc["finished"] == ["k1"] and doc["seconds"] == [1.5]
    status.finish("run-a")
    assert _doc(tmp_path, "run-a")["state"] == "finished"
    assert [p.name for p in (tmp_path / STATUS).iterdir()] == ["run-a.json"]  # no temporaries


def test_a_driver_process_goes_on_with_the_same_status(tmp_path: Path) -> None:
    parent = RunStatus(tmp_path, "run-b", "sweep", 4).start()
    import pickle

    copy = pickle.loads(pickle.dumps(parent))  # what a driver process receives
    copy.trial_finished("k1", 2.0)
    copy.trial_finished("k2", 2.0)
    doc = _doc(tmp_path, "run-b")
    doc["pid"] = dead_pid()  # the driver process wrote as itself, and has ended
    (tmp_path / STATUS / "run-b.json").write_text(json.dumps(doc))
    assert _alive(_doc(tmp_path, "run-b"), time.time()) == "stopped"
    parent.reload()  # between two driver processes the run is still running
    assert _alive(_doc(tmp_path, "run-b"), time.time()) == "running"
    parent.trial_finished("k3", 2.0)
    assert _doc(tmp_path, "run-b")["done"] == 3


def test_interrupted_or_failed_runs_say_so(tmp_path: Path) -> None:
    status = RunStatus(tmp_path, "run-c", "sweep", 2).start()
    try:
        with status.running():
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert _doc(tmp_path, "run-c")["state"] == "interrupted"
    never = RunStatus(tmp_path, "run-d", "sweep", 2)  # refused before it started: no file
    try:
        with never.running():
            raise ValueError("bad sweep")
    except ValueError:
        pass
    assert not (tmp_path / STATUS / "run-d.json").exists()


def test_live_panel_rate_time_left_and_the_landed_run(tmp_path: Path) -> None:
    status = RunStatus(tmp_path, "run-e", "sweep", 4, command="lasagna benchmark run s.yaml")
    status.start()
    client = TestClient(create_app(tmp_path, refresh_s=0))
    trial = make_trial("k1", [0.5, 0.7], config={"kind": "bm25"})
    save_trial(tmp_path, trial)
    status.trial_finished("k1", 10.0)
    status.trial_started(1, key="k2", system="dense", benchmark="sample", track="retrieval")
    live = client.get("/api/live").json()
    (line,) = live["runs"]
    assert (line["state"], line["done"], line["total"], live["running"]) == ("running", 1, 4, 1)
    assert line["latest"] == [
        {
            "key": "k1",
            "system": "bm25",
            "benchmark": "local/toy@aaaaaaaaaaaa",
            "metric": "ndcg@10",
            "value": 0.6,
            "rows": 2,
            "failed": 0,
        }
    ]
    assert line["eta"].endswith(" s") and 20 <= int(line["eta"].split()[0]) <= 30
    assert 'data-run="run-e" data-state="running" data-done="1" data-total="4"' in live["html"]
    home = client.get("/").text
    assert 'data-run="run-e" data-state="running"' in home  # the first paint has it too
    write_run(tmp_path, "run-e", {"created_at": "2026-01-01T00:00:00+00:00"}, [trial])
    status.finish("run-e")
    live = client.get("/api/live").json()
    assert live["runs"][0]["landed"] and live["running"] == 0
    assert 'href="/run/run-e"' in live["html"]


def test_a_driver_that_died_is_shown_stopped(tmp_path: Path) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    status = RunStatus(tmp_path, "run-f", "sweep", 2).start()
    status.doc["pid"] = int(gone.stdout)
    Store(tmp_path).write_atomic(status.path, json.dumps(status.doc).encode())
    far = RunStatus(tmp_path, "run-g", "sweep", 2)
    far.doc |= {"host": "elsewhere", "updated_epoch": 0.0}
    Store(tmp_path).write_atomic(far.path, json.dumps(far.doc).encode())
    states = {r["run_id"]: r["state"] for r in Live(Store(tmp_path)).runs(set())}
    assert states == {"run-f": "stopped"}  # another host's, silent for days: left out
    assert {d["run_id"] for d in read_statuses(Store(tmp_path))} == {"run-f", "run-g"}


def test_durations_read_like_a_person_writes_them() -> None:
    assert [duration(s) for s in (None, 4.4, 65, 3725)] == ["-", "4 s", "1 min 05 s", "1 h 02 min"]


def test_a_finished_trials_failed_rows_are_said_beside_its_metric(tmp_path: Path) -> None:
    """A trial whose rows all failed is not just "finished": the panel says how many failed
    (an evaluation counts them as `errors`, a sweep's trial as `failed`)."""
    status = RunStatus(tmp_path, "run-h", "evaluation", 2).start()
    for key, counts in (("e1", {"rows": 3, "errors": 3}), ("s1", {"rows": 4, "failed": 1})):
        trial = make_trial(key, [0.5] * counts["rows"], config={"kind": "bm25"})
        trial.counts = counts
        save_trial(tmp_path, trial)
        status.trial_finished(key, 1.0)
    html = TestClient(create_app(tmp_path, refresh_s=0)).get("/api/live").json()["html"]
    assert "3 of 3 rows failed" in html and "1 of 4 rows failed" in html
