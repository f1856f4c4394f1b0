"""Trial keys, comparability keys and seeds: stable across processes, sensitive to inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lasagna.sweep.keys import comparability_key, system_config, trial_key, trial_seed
from lasagna.systems import BM25Retriever, DenseRetriever, StageResources

BASE = dict(
    dataset_revision="a" * 64,
    selection={"split": "test", "n_samples": 50, "filters": {"t": ["x", "y"]}, "sample_seed": 0},
    track="retrieval",
    system_config=system_config(BM25Retriever()),
    seed=7,
    metric_definitions_version="1",
)

GROUP = dict(
    dataset_name="local/x@aaaaaaaaaaaa",
    dataset_revision="a" * 64,
    split="test",
    n_samples=None,
    filters={},
    sample_seed=None,
    corpus_provenance="corpus",
    track="retrieval",
    metric_definitions_version="1",
)


def test_trial_key_is_hex_and_stable_across_processes():
    key = trial_key(**BASE)
    assert len(key) == 20 and int(key, 16) >= 0
    code = (
        "import json,sys\n"
        "from lasagna.sweep.keys import trial_key\n"
        "kw = json.loads(sys.stdin.read())\n"
        "print(trial_key(**kw))\n"
    )
    # a reordered dict in another process (with another hash seed) gives the same key
    shuffled = {k: BASE[k] for k in reversed(list(BASE))}
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(shuffled),
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert out.stdout.strip() == key


def test_trial_key_changes_with_every_input():
    key = trial_key(**BASE)
    changes = {
        "dataset_revision": "b" * 64,
        "selection": {**BASE["selection"], "n_samples": 51},
        "track": "generation",
        "system_config": system_config(BM25Retriever(k1=0.9)),
        "seed": 8,
        "metric_definitions_version": "2",
    }
    keys = {name: trial_key(**{**BASE, name: value}) for name, value in changes.items()}
    assert key not in keys.values()
    assert len(set(keys.values())) == len(changes)
    filters = {**BASE["selection"], "filters": {"t": ["x"]}}
    assert trial_key(**{**BASE, "selection": filters}) != key


def test_system_config_ignores_placement_but_not_settings():
    # an explicit encoder setting: `auto` resolves per device (a GPU encoder's setting is
    # not a CPU's), and that resolved setting is part of what the vectors depend on
    same = {"backend": "torch", "precision": "fp32"}
    plain = system_config(DenseRetriever(**same))
    moved = system_config(DenseRetriever(**same, encode=StageResources(num_gpus=1, actors=8)))
    assert plain == moved
    assert "encode" not in plain and plain["model"] == "packaged:all-MiniLM-L6-v2"
    assert system_config(DenseRetriever(**same, top_k=10)) != plain
    with_identity = system_config(DenseRetriever(**same), {"sha256": "f" * 64})
    assert with_identity["model_identity"] == {"sha256": "f" * 64}


def test_comparability_key_readable_and_separates_groups():
    key = comparability_key(**GROUP)
    assert key.startswith("local/x@aaaaaaaaaaaa|test|retrieval|corpus|")
    pooled = comparability_key(**{**GROUP, "corpus_provenance": "pooled_gold"})
    assert "|pooled_gold|" in pooled and pooled != key
    other_revision = comparability_key(
        **{**GROUP, "dataset_name": "local/x@bbbbbbbbbbbb", "dataset_revision": "b" * 64}
    )
    assert other_revision != key
    # the revision alone (same display name) also separates
    assert comparability_key(**{**GROUP, "dataset_revision": "c" * 64}) != key
    assert comparability_key(**{**GROUP, "metric_definitions_version": "2"}) != key
    assert comparability_key(**{**GROUP, "filters": {"t": "x"}}) != key
    assert comparability_key(**{**GROUP, "track": "generation"}) != key


def test_sample_seed_counts_only_when_sampling():
    assert comparability_key(**{**GROUP, "sample_seed": 5}) == comparability_key(**GROUP)
    sampled = {**GROUP, "n_samples": 10}
    assert comparability_key(**{**sampled, "sample_seed": 1}) != comparability_key(
        **{**sampled, "sample_seed": 2}
    )


def test_trial_seed_deterministic_and_distinct():
    seeds = [trial_seed(0, r) for r in range(5)]
    assert seeds == [trial_seed(0, r) for r in range(5)]
    assert len(set(seeds)) == 5
    assert trial_seed(1, 0) != trial_seed(0, 0)
    assert all(0 <= s < 2**31 for s in seeds)


def test_a_generators_gpu_memory_share_is_placement_not_identity():
    from lasagna.models.spec import ModelSpec
    from lasagna.systems import ClosedBookGenerator

    plain = system_config(ClosedBookGenerator())
    shared = system_config(ClosedBookGenerator(model=ModelSpec(gpu_memory_utilization=0.4)))
    assert shared == plain and "gpu_memory_utilization" not in str(plain)


def test_instruction_prefixes_key_what_they_change_and_leave_old_keys_alone():
    from lasagna.cache.index import embeddings_key, index_key
    from lasagna.systems import DenseRetriever
    from lasagna.systems.base import placement_free

    plain = DenseRetriever()
    asked = DenseRetriever(query_prefix="query: ")
    stored = DenseRetriever(document_prefix="passage: ")
    assert "query_prefix" not in placement_free(plain)  # configs made before them: same keys
    assert "document_prefix" not in placement_free(plain)
    assert "document_prefix" not in plain.index_fields()
    assert placement_free(asked)["query_prefix"] == "query: "  # another trial ...
    assert index_key("r", asked) == index_key("r", plain)  # ... searching the same index
    assert embeddings_key("r", stored) != embeddings_key("r", plain)
    assert index_key("r", stored) != index_key("r", plain)
