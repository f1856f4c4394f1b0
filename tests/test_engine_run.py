"""End to end on a real in-process Ray: runs, run folders, resume, and a killed worker."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from model_cache import cache_sharing_models

from lasagna.data import load_benchmark
from lasagna.engine.driver import run_plan
from lasagna.metrics.retrieval import mean_metrics, score_queries
from lasagna.results import SCHEMA_VERSION, open_run
from lasagna.results.schema import check_rows
from lasagna.retrieval.local import search_local
from lasagna.sample import sample_path
from lasagna.sweep import build_plan, sweep_for_path
from lasagna.systems import BM25Retriever, DenseRetriever, HybridRetriever, StageResources

pytestmark = pytest.mark.slow


def _plan(data: Path, output: Path, profile: str = "speed", **kw):
    sweep, base = sweep_for_path(data, profile, output=str(output), **kw)
    return build_plan(sweep, base)


def _reference_metrics(data: Path, system) -> dict[str, float]:
    """The same retriever and metrics in this process, without Ray."""
    bench = load_benchmark(data)
    rankings = search_local(bench, system, [r.question for r in bench.rows])
    run = {r.id: dict(rank) for r, rank in zip(bench.rows, rankings, strict=True)}
    return mean_metrics(score_queries(bench.qrels, run))


def test_run_writes_versioned_folder_matching_in_process_reference(ray_local, tmp_path):
    """The speed profile plus a hybrid: two trials on one embedder, which loads once."""
    out = tmp_path / "results"
    hybrid = HybridRetriever(retrievers=(BM25Retriever(), DenseRetriever()))
    systems = (BM25Retriever(), DenseRetriever(), hybrid)
    sweep, base = sweep_for_path(sample_path(), "speed", output=str(out))
    sweep = sweep.model_copy(update={"retrievers": list(systems)})
    outcome = run_plan(build_plan(sweep, base))
    run_dir = Path(outcome.run_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["profile"] == "speed"
    assert manifest["machine"]["cpus"] and manifest["ray"]["resources"]["CPU"] == 2.0
    loads = [m["pool"] for m in manifest["model_loads"]]
    assert len(loads) == 1 and loads[0].startswith("embed:"), manifest["model_loads"]
    timings = [t["timings"] for t in manifest["trials"]]
    assert "embedder_load" not in timings[0]  # BM25 loads no model
    assert timings[1]["embedder_load"] > 0 and timings[2]["embedder_load"] == 0.0
    bench = load_benchmark(sample_path())
    assert len(manifest["trials"]) == 3
    for trial, system in zip(manifest["trials"], systems, strict=True):
        assert trial["benchmark"]["name"] == bench.name
        assert trial["benchmark"]["revision"] == bench.revision
        assert trial["benchmark"]["corpus_provenance"] == "pooled_gold"
        assert trial["key"] and "pooled_gold" in trial["comparability_key"]
        assert {"index", "search_and_score"} <= set(trial["timings"])
        rows = pq.read_table(run_dir / "trials" / f"{trial['key']}.parquet")
        assert rows.num_rows == len(bench.rows)
        assert rows.column("id").to_pylist() == [r.id for r in bench.rows]  # file order
        # each question's metadata, for `results show --by` without the data file
        assert [json.loads(m) for m in rows["metadata"].to_pylist()] == [
            r.metadata for r in bench.rows
        ]
        assert all(
            0 < len(ids) <= min(100, len(bench.corpus)) for ids in rows["doc_ids"].to_pylist()
        )
        assert check_rows(rows) == [] and trial["metric_definitions_version"]
        reference = _reference_metrics(sample_path(), system)
        assert trial["metrics"] == pytest.approx(reference, abs=1e-12)
    # no temp folders left behind
    assert not [p for p in out.iterdir() if p.name.startswith(".tmp")]


def test_resume_restores_matching_trials_only(ray_local, tmp_path):
    data = tmp_path / "qa.jsonl"
    data.write_bytes(sample_path().read_bytes())
    out = tmp_path / "results"
    first = run_plan(_plan(data, out, "speed"))
    again = run_plan(_plan(data, out, "speed"), resume=True)
    assert sorted(again.restored) == sorted(t.key for t in first.trials)
    for a, b in zip(first.trials, again.trials, strict=True):
        assert a.metrics == b.metrics and a.rows.equals(b.rows)
    # one changed byte: a new revision, nothing restored
    data.write_bytes(data.read_bytes().replace(b"glass", b"Glass", 1))
    edited = _plan(data, out, "speed")
    assert not set(edited.keys) & {t.key for t in first.trials}
    third = run_plan(edited, resume=True)
    assert third.restored == []
    assert len(open_run(third.run_id, out).trials) == 2


def test_a_restored_trial_takes_the_label_of_the_plan_that_restores_it(ray_local, tmp_path):
    """`bm25` alone is `bm25`; once a sweep adds `k1: 0.9` beside it the plan labels it
    `bm25 k1=1.5`, and --resume restores it under that label, as `benchmark plan`, the run
    summary, `results show` and the leaderboard say (it kept `bm25` before)."""
    out = tmp_path / "results"

    def plan(*retrievers):
        sweep, base = sweep_for_path(sample_path(), "speed", output=str(out))
        return build_plan(sweep.model_copy(update={"retrievers": list(retrievers)}), base)

    first = run_plan(plan(BM25Retriever()))
    assert [t.system for t in first.trials] == ["bm25"]
    grid = plan(BM25Retriever(), BM25Retriever(k1=0.9))
    again = run_plan(grid, resume=True)
    assert again.restored == [first.trials[0].key]
    labels = [t.system_name for t in grid.trials]
    assert labels == ["bm25 k1=1.5", "bm25 k1=0.9"]
    assert [t.system for t in again.trials] == labels
    assert [t.system for t in open_run(again.run_id, out).trials] == labels


def _corpus_file(path: Path, n_docs: int) -> Path:
    """A pooled-gold file big enough that encoding takes several seconds."""
    words = "glass coin bridge river stone iron copper silver kiln furnace arch cable".split()
    with path.open("w") as f:
        for i in range(n_docs):
            text = " ".join(words[(i * k) % len(words)] for k in range(1, 30)) + f" item {i}"
            row = {
                "id": f"q{i}",
                "question": f"which passage is item {i}?",
                "answer": "x",
                "contexts": [text],
            }
            f.write(json.dumps(row) + "\n")
    return path


def _kill_first_actor(title_part: str, stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL the first actor process of this test's Ray whose title holds `title_part`."""
    import psutil

    me = os.getpid()
    while not stop.is_set():
        for proc in psutil.process_iter(["pid", "cmdline"]):
            title = " ".join(proc.info["cmdline"] or [])
            if title_part not in title:
                continue
            try:
                ours = me in {p.pid for p in proc.parents()}
            except psutil.Error:
                continue
            if ours:
                time.sleep(1.0)  # let it start working
                os.kill(proc.pid, signal.SIGKILL)
                killed.append(proc.pid)
                return
        time.sleep(0.2)


def test_worker_killed_mid_run_gives_same_metrics(ray_local, tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache")))
    data = _corpus_file(tmp_path / "big.jsonl", 600)
    dense = DenseRetriever(top_k=10, encode=StageResources(batch_size=16, num_cpus=0.5))
    sweep, base = sweep_for_path(data, None, output=str(tmp_path / "out"))
    sweep = sweep.model_copy(update={"retrievers": [dense]})
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_first_actor, args=("ray::EmbedderServer", stop, killed))
    killer.start()
    try:
        outcome = run_plan(build_plan(sweep, base))
    finally:
        stop.set()
        killer.join()
    assert killed, "the encoding actor was never seen alive"
    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache-reference")))
    reference = _reference_metrics(data, dense.model_copy(update={"top_k": 10}))
    assert outcome.trials[0].metrics == pytest.approx(reference, abs=1e-6)
