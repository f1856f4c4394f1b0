"""Sweeps on a real multi-node Ray cluster (tests/ray_cluster.py: a head with no CPUs and
two worker nodes, each advertising `encoder: 1`, `searcher: 1` and its own name),
submitted with the Ray job API, and the faults a cluster has. Each result is compared with
an in-process run of the same sweep (without the custom resources: keys are the same).

- `benchmark plan --address` places a sweep on the cluster's nodes (it has no GPU entry).
- Pools of 2 actors asking `encoder: 1` / `searcher: 1` must put one actor on each node.
- A worker node killed (raylet SIGKILLed) while its embedder encodes the corpus: Ray
  restarts the actor on a node that has `encoder` and reruns its calls
  (`max_restarts`/`max_task_retries`, set by lasagna.stages.actors.actor_options); the
  rows are identical. With `max_restarts: 0` the trial fails with a clear reason, the job
  fails, and `--resume` finishes with nothing lost or duplicated.
- The head restarted mid-sweep (the job dies with it): `--resume` restores every checkpoint.
  Both jobs run their trials in driver processes of 2 (`--trials-per-driver`), each of
  which joins the cluster.
- A trial whose model cannot load on the node it is pinned to fails alone, its reason in
  the manifest; the other trials finish.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cluster_jobs import (
    HF_MODEL,
    PY,
    SweepJob,
    actors,
    assert_same_rows,
    cache_sharing_models,
    corpus_folder,
    hf_cache_with_minilm,
    in_process,
    last_run,
    node_names,
)
from ray_cluster import LocalCluster
from test_faults import finished_checkpoints, run_folders

from lasagna.engine.failures import LOST

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

# every worker node advertises encoder: 1 and searcher: 1 (and its own name): a pool of 2
# actors asking 1 of them has one actor on each node
RETRIEVAL = """\
benchmarks:
  - {name: sample}
retrievers:
  - {kind: bm25, top_k: 10}
  - {kind: dense, top_k: 10}
resources:
  retrieve: {num_cpus: 0.3, actors: 2, resources: {searcher: 1}}
  encode: {num_cpus: 0.3, actors: 2, batch_size: 8, resources: {encoder: 1}}
  search: {num_cpus: 0.3, actors: 2, resources: {searcher: 1}}
"""


def encode_sweep(data: Path, *, max_restarts: int | None = None, bm25: bool = False) -> str:
    restarts = "" if max_restarts is None else f", max_restarts: {max_restarts}"
    first = "  - {kind: bm25, top_k: 10}\n" if bm25 else ""
    return (
        f"benchmarks:\n  - {{path: {data}, split: test}}\nretrievers:\n{first}"
        "  - {kind: dense, top_k: 10}\n"
        "resources:\n"
        "  encode: {num_cpus: 0.3, actors: 1, batch_size: 4, resources: {encoder: 1}"
        f"{restarts}}}\n"
        "  search: {num_cpus: 0.3, actors: 1, resources: {searcher: 1}}\n"
        "  retrieve: {num_cpus: 0.3, actors: 1, resources: {searcher: 1}}\n"
    )


@pytest.fixture(scope="module")
def node_caches(tmp_path_factory) -> dict[str, Path]:
    """Each node's own LASAGNA_CACHE, as machines without a shared disk have (only the
    converted packaged models are shared, to save converting them three times)."""
    root = tmp_path_factory.mktemp("caches")
    return {n: cache_sharing_models(root / n) for n in ("head", "w1", "w2")}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, node_caches):
    hf = tmp_path_factory.mktemp("hf")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS",)}
    env |= {
        "PATH": f"{Path(PY).parent}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),  # this checkout's lasagna
        # 0 (the tests' default) makes Ray refuse a second node; each gets --node-ip-address
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1",
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LASAGNA_CACHE": str(node_caches["head"]),
        "HF_HOME": str(hf / "hf"),  # holds HF_MODEL; the head's and w1's
    }
    hf_cache_with_minilm(hf / "hf")
    resources = {"encoder": 1, "searcher": 1}
    workers = {
        n: {
            "num_cpus": 1,
            "resources": {**resources, n: 1},
            "env": {"LASAGNA_CACHE": str(node_caches[n])},
        }
        for n in ("w1", "w2")
    }
    workers["w2"]["env"]["HF_HOME"] = str(hf / "hf-of-w2")  # a node without HF_MODEL
    c = LocalCluster(env, workers)
    # a SIGTERM (`timeout`, CI cancelling) becomes an interrupt, so the teardown below still
    # ends every process of the cluster
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield c.start()
    finally:
        c.stop()
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(c.ray_tmp, ignore_errors=True)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture
def sweep_job(cluster, node_caches, tmp_path):
    """sweep_job(YAML text) -> a SweepJob in this test's folder, every node's cache without
    the indexes and embeddings of earlier tests."""
    for cache in node_caches.values():
        for kind in ("indexes", "embeddings"):
            shutil.rmtree(cache / kind, ignore_errors=True)

    def make(text: str) -> SweepJob:
        work = tmp_path / "job"
        work.mkdir()
        (work / "sweep.yaml").write_text(text)
        return SweepJob(cluster, work, tmp_path / "results")

    return make


# ---------------------------------------------------------------- the plan of a cluster
def test_plan_of_a_cpu_only_cluster_places_on_its_nodes(cluster, tmp_path):
    """Ray's totals of a cluster without GPUs have no GPU entry at all; the plan places the
    sweep's actors on the three live nodes (a head with no CPU, two 1-CPU workers)."""
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(RETRIEVAL)
    proc = subprocess.run(
        [PY, "-m", "lasagna", "benchmark", "plan", str(sweep), "--address", cluster.address]
        + ["--output", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        env=cluster.env,
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in said, said
    assert f"placement on the cluster at {cluster.address} (2 CPU on 3 nodes):" in said, said


# ---------------------------------------------------------------- sweeps equal in-process
def test_retrieval_sweep_as_a_job_spreads_over_nodes_and_equals_in_process(
    cluster, node_caches, sweep_job, monkeypatch, ray_local
):
    job = sweep_job(RETRIEVAL)
    status, log = job.run()
    assert status == "SUCCEEDED", log[-4000:]
    manifest, rows = last_run(job.out)
    assert manifest["ray"]["address"] != "local" and manifest["ray"]["resources"]["encoder"] == 2
    names = node_names(cluster)
    for stage in ("EmbedderServer", "Search"):
        placed = {names.get(a.node_id) for a in actors(cluster, stage)}
        assert placed == {"w1", "w2"}, f"{stage} actors ran on {placed}"
    assert_same_rows(rows, job.reference(monkeypatch, ray_local))
    # the driver built both indexes in the head's cache; each worker's Search actor opened
    # its own node's copy, sent through the object store
    built = entries(node_caches["head"])
    assert {e.split("/")[1] for e in built} == {"bm25", "dense"}
    for node in ("w1", "w2"):
        assert entries(node_caches[node]) == built, f"{node}'s cache"
        assert not (node_caches[node] / "embeddings").exists()  # the driver's alone


def entries(cache: Path) -> set[str]:
    return {p.relative_to(cache).as_posix() for p in cache.glob("indexes/*/*")}


# ---------------------------------------------------------------- a worker node lost
def _kill_encoder_node(cluster: LocalCluster, out: Path, bound_s: float = 300) -> str:
    """Once the BM25 trial is checkpointed (the dense trial's corpus encoding starts) and
    the embedder actor is up, kill the raylet of its node, then start a replacement node
    (as an autoscaler would)."""
    deadline = time.monotonic() + bound_s
    while True:
        alive = [a for a in actors(cluster, "EmbedderServer") if a.state == "ALIVE"]
        if alive and finished_checkpoints(out):
            break
        assert time.monotonic() < deadline, "the encoder never started"
        time.sleep(0.3)
    name = node_names(cluster)[alive[0].node_id]
    assert name in cluster.workers, f"the encoder ran on {name}"
    cluster.kill_raylet(name)
    cluster.add_worker(name)
    return name


@pytest.fixture(scope="module")
def encode_case(tmp_path_factory):
    """A corpus, the sweep over it, and its in-process result (computed once)."""
    root = tmp_path_factory.mktemp("encode")
    data = corpus_folder(root / "corpus")
    return {"root": root, "data": data, "reference": None}


def _encode_reference(case, monkeypatch, ray_local) -> dict:
    if case["reference"] is None:
        sweep = case["root"] / "reference.yaml"
        sweep.write_text(encode_sweep(case["data"], bm25=True))
        _, case["reference"] = in_process(sweep, case["root"] / "ref-out", monkeypatch, ray_local)
    return case["reference"]


def test_worker_node_lost_while_encoding_recovers_identically(
    cluster, sweep_job, encode_case, monkeypatch, ray_local
):
    job = sweep_job(encode_sweep(encode_case["data"], bm25=True))
    job_id = job.start()
    _kill_encoder_node(cluster, job.out)
    status, log = cluster.finish(job_id)
    assert status == "SUCCEEDED", log[-4000:]
    restarted = [a for a in actors(cluster, "EmbedderServer") if a.num_restarts]
    assert restarted, "the encoder was not restarted: the kill missed it"
    manifest, rows = last_run(job.out)
    assert "failed_trials" not in manifest and len(rows) == 2
    assert_same_rows(rows, _encode_reference(encode_case, monkeypatch, ray_local))


def test_worker_node_lost_without_restarts_fails_clearly_then_resume_finishes(
    cluster, sweep_job, encode_case, monkeypatch, ray_local
):
    job = sweep_job(encode_sweep(encode_case["data"], max_restarts=0, bm25=True))
    job_id = job.start()
    _kill_encoder_node(cluster, job.out)
    status, log = cluster.finish(job_id)
    text = " ".join(log.split())
    assert status == "FAILED", text[-4000:]
    assert "1 trial(s) failed" in text and "--resume" in text, text[-4000:]
    manifest, rows = last_run(job.out)  # the BM25 trial finished: a run holds it
    (failed,) = manifest["failed_trials"]
    assert failed["system"].startswith("dense") and failed["reason"].split(" (")[0] in text
    # the call in flight fails first as unreachable (no retries) or the actor as dead,
    # whichever Ray notices first; both are said as what Ray lost
    lost = [f"{LOST[e]} ({e}: " for e in ("ActorDiedError", "ActorUnavailableError")]
    assert any(failed["reason"].startswith(w) for w in lost), failed["reason"]
    assert len(rows) == 1

    status, log = job.run("--resume")
    assert status == "SUCCEEDED", log[-4000:]
    assert "restored 1 finished trial(s) of 2" in " ".join(log.split())
    manifest, rows = last_run(job.out)
    assert "failed_trials" not in manifest and len(manifest["restored_trials"]) == 1
    assert_same_rows(rows, _encode_reference(encode_case, monkeypatch, ray_local))


# ---------------------------------------------------------------- a model one node lacks
ONE_NODE_LACKS_THE_MODEL = f"""\
benchmarks:
  - {{name: sample}}
retrievers:
  - {{kind: bm25, name: bm25-a, top_k: 10}}
  - {{kind: dense, name: on-w2, model: {HF_MODEL}, top_k: 10, encode: {{resources: {{w2: 1}}}}}}
  - {{kind: dense, name: on-w1, model: {HF_MODEL}, top_k: 10, encode: {{resources: {{w1: 1}}}}}}
  - {{kind: bm25, name: bm25-b, k1: 0.9, top_k: 10}}
resources:
  retrieve: {{num_cpus: 0.3}}
  encode: {{num_cpus: 0.3, batch_size: 8}}
  search: {{num_cpus: 0.3}}  # the query encoding is the embedder's: any node will do
"""


def test_trial_whose_model_cannot_load_on_its_node_fails_alone(sweep_job):
    job = sweep_job(ONE_NODE_LACKS_THE_MODEL)
    status, log = job.run()
    text = " ".join(log.split())
    assert status == "FAILED", text[-4000:]  # the job says a trial failed
    assert "1 trial(s) failed" in text and "--resume" in text, text[-4000:]
    manifest, rows = last_run(job.out)
    assert [t["system"] for t in manifest["trials"]] == ["bm25-a", "on-w1", "bm25-b"]
    (failed,) = manifest["failed_trials"]  # on-w2 ran first: nothing of it was cached
    assert failed["system"] == "on-w2" and "could not start" in failed["reason"]
    assert f"embedder '{HF_MODEL}'" in failed["reason"] and "Hugging Face cache" in failed["reason"]
    assert all(len(r) == 26 for r in rows.values())


# ---------------------------------------------------------------- the head restarted
MANY_BM25 = """\
benchmarks:
  - {name: sample}
retrievers:
  - grid: {kind: bm25, k1: [0.5, 0.7, 0.9, 1.1, 1.3, 1.5], top_k: 10}
resources:
  retrieve: {num_cpus: 0.3, resources: {searcher: 1}}
"""


def test_head_restarted_mid_sweep_then_resume_restores_every_checkpoint(
    cluster, sweep_job, monkeypatch, ray_local
):
    job = sweep_job(MANY_BM25)
    out = job.out
    parts = ("--trials-per-driver", "2")  # the job's driver runs them in driver processes
    job.start(*parts)
    deadline = time.monotonic() + 300
    while not finished_checkpoints(out):
        assert time.monotonic() < deadline, "no trial finished in time"
        time.sleep(0.2)
    cluster.restart()  # the head goes (with it the job and every node), then comes back
    done = len(finished_checkpoints(out))
    assert 1 <= done < 6, "the restart came too late to interrupt the sweep"
    assert not (out.exists() and run_folders(out)), "a killed job must not leave a run"

    status, log = job.run("--resume", *parts)
    assert status == "SUCCEEDED", log[-4000:]
    assert f"restored {done} finished trial(s) of 6" in " ".join(log.split())
    manifest, rows = last_run(out)
    assert len(manifest["restored_trials"]) == done and len(rows) == 6
    if 6 - done > 2:  # the rest ran in driver processes, each joining the cluster
        assert manifest["ray"]["driver_processes"] == -(-(6 - done) // 2)
        assert manifest["ray"]["address"] != "local"
    assert_same_rows(rows, job.reference(monkeypatch, ray_local))


# ---------------------------------------------------------------- a rag sweep
RAG = """\
benchmarks:
  - {name: sample, n_samples: 5}
generators:
  - kind: rag
    retriever: {kind: bm25, top_k: 3}
    passages: 3
    model: {backend: transformers, max_tokens: 24}
resources:
  retrieve: {num_cpus: 0.3, resources: {searcher: 1}}
  generate: {num_cpus: 0.3, actors: 2, batch_size: 2, resources: {encoder: 1}}
"""


def test_rag_sweep_as_a_job_equals_in_process(cluster, sweep_job, monkeypatch, ray_local):
    """Packaged SmolLM2 (transformers backend: a 135M model loads in seconds), one model
    server on each worker node, greedy decoding: the answers and scores are identical."""
    job = sweep_job(RAG)
    status, log = job.run()
    assert status == "SUCCEEDED", log[-4000:]
    _, rows = last_run(job.out)
    placed = {node_names(cluster).get(a.node_id) for a in actors(cluster, "ModelServer")}
    assert placed == {"w1", "w2"}, f"model servers ran on {placed}"
    reference = job.reference(monkeypatch, ray_local)
    (table,) = rows.values()
    assert len(table) == 5 and all(table.column("prediction").to_pylist())
    timing = ("latency_s", "batch_started_at", "engine_load_s", "batch_rows")
    compared = [c for c in table.column_names if c not in timing]
    (want,) = reference.values()
    assert table.select(compared).equals(want.select(compared))
