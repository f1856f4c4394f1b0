"""The plan: selection (filters, then a seeded sample), trials and keys, refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from reference_data import SCIFACT, missing
from rich.console import Console

from lasagna.errors import UserError
from lasagna.sweep.plan import build_plan
from lasagna.sweep.render import render_plan
from lasagna.sweep.schema import BUILTINS, load_sweep

REPO = Path(__file__).resolve().parents[1]


def qa_file(path: Path, n: int = 40) -> Path:
    rows = []
    for i in range(n):
        rows.append(
            {
                "id": f"q{i}",
                "question": f"What is fact number {i}?",
                "answer": f"fact {i}",
                "contexts": [f"Passage {i}: fact number {i} is fact {i}."],
                "metadata": {"question_type": "multihop" if i % 2 else "factoid"},
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def closed_file(path: Path) -> Path:
    rows = [{"id": f"c{i}", "question": f"Q{i}?", "answer": f"A{i}"} for i in range(5)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def beir_folder(path: Path) -> Path:
    (path / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "title": f"T{i}", "text": f"document {i}"} for i in range(4)]
    queries = [{"_id": f"q{i}", "text": f"query {i}"} for i in range(3)]
    (path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (path / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(3))
    )
    return path


def sweep_file(tmp_path: Path, body: str, name: str = "sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def plan_of(path: Path):
    sweep, base = load_sweep(path)
    return build_plan(sweep, base)


QA_SWEEP = """\
benchmarks:
  - {path: data/qa.jsonl, n_samples: 6, filters: {question_type: multihop}}
retrievers:
  - {kind: bm25, top_k: 10}
  - {kind: dense, top_k: 10}
trials: 2
seed: SEED
"""


@pytest.fixture
def qa_sweep(tmp_path):
    (tmp_path / "data").mkdir()
    qa_file(tmp_path / "data" / "qa.jsonl")
    return lambda seed=0: sweep_file(tmp_path, QA_SWEEP.replace("SEED", str(seed)), f"s{seed}.yaml")


def test_trials_expand_systems_by_repeats(qa_sweep):
    plan = plan_of(qa_sweep())
    assert len(plan.trials) == 4
    assert [(t.system_name, t.repeat) for t in plan.trials] == [
        ("bm25", 0),
        ("bm25", 1),
        ("dense", 0),
        ("dense", 1),
    ]
    assert {t.track for t in plan.trials} == {"retrieval"}
    assert plan.trials[0].seed != plan.trials[1].seed
    assert plan.trials[0].seed == plan.trials[2].seed  # repeat r has one seed for all systems
    assert len(set(plan.keys)) == 4
    assert len({t.comparability_key for t in plan.trials}) == 1
    assert "|pooled_gold|" in plan.trials[0].comparability_key
    assert (
        plan.trials[0].selection
        == {
            "split": None,
            "n_samples": 6,
            "filters": {"question_type": "multihop"},
            "sample_seed": 0,
        }
        or plan.trials[0].selection["n_samples"] == 6
    )


def test_filters_apply_before_the_seeded_sample(qa_sweep):
    plan = plan_of(qa_sweep())
    rows = plan.benchmarks[0].benchmark.rows
    assert len(rows) == 6  # sampling first would leave about 3 multihop rows
    assert all(r.metadata["question_type"] == "multihop" for r in rows)
    assert plan.benchmarks[0].rows_before_selection == 40
    again = plan_of(qa_sweep())
    assert [r.id for r in again.benchmarks[0].benchmark.rows] == [r.id for r in rows]
    assert again.keys == plan.keys
    other = plan_of(qa_sweep(seed=3))
    assert [r.id for r in other.benchmarks[0].benchmark.rows] != [r.id for r in rows]
    assert set(other.keys).isdisjoint(plan.keys)


def test_plan_keys_stable_across_processes(qa_sweep):
    path = qa_sweep()
    code = (
        "import sys\n"
        "from lasagna.sweep.schema import load_sweep\n"
        "from lasagna.sweep.plan import build_plan\n"
        "print(' '.join(build_plan(*load_sweep(sys.argv[1])).keys))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == plan_of(path).keys


def test_edited_file_gets_new_keys(tmp_path, qa_sweep):
    path = qa_sweep()
    before = plan_of(path)
    qa_file(tmp_path / "data" / "qa.jsonl", n=41)
    after = plan_of(path)
    assert set(before.keys).isdisjoint(after.keys)
    assert before.trials[0].comparability_key != after.trials[0].comparability_key


def test_every_unsupported_pair_is_listed(tmp_path):
    closed_file(tmp_path / "closed.jsonl")
    beir_folder(tmp_path / "beir")
    qa_file(tmp_path / "qa.jsonl", n=4)
    path = sweep_file(
        tmp_path,
        "benchmarks:\n  - {path: closed.jsonl}\n  - {path: beir}\n  - {path: qa.jsonl}\n"
        "retrievers: [{kind: bm25}]\n"
        "generators: [{kind: rag}, {kind: closed_book}]\n",
    )
    with pytest.raises(UserError) as info:
        plan_of(path)
    messages = [p.message for p in info.value.problems]
    assert len(messages) == 4, messages
    pairs = sorted(m.split("': ")[0] for m in messages)
    assert pairs == [
        "benchmarks[0] x generators[0] 'rag",
        "benchmarks[0] x retrievers[0] 'bm25",
        "benchmarks[1] x generators[0] 'rag",
        "benchmarks[1] x generators[1] 'closed_book",
    ]
    assert "before any model loads" in (info.value.title or "")


def test_refused_rag_systems_are_told_apart_and_beir_points_at_corpus(tmp_path):
    """Two RAG systems over different retrievers share a display name: the refusal names
    each by its place and label, a BEIR folder's fix says how to generate over it, and the
    joint title says "refused before any model loads" once."""
    beir_folder(tmp_path / "beir")
    path = sweep_file(
        tmp_path,
        "benchmarks: [{path: beir}]\n"
        "generators:\n  - {kind: rag, retriever: {kind: bm25}}\n"
        "  - {kind: rag, retriever: {kind: dense}}\n  - {kind: closed_book}\n"
        "judges: [{benchmark: faithfulness}]\n",
    )
    with pytest.raises(UserError) as info:
        plan_of(path)
    problems = info.value.problems
    assert [p.message.split(": ")[0] for p in problems[:3]] == [
        "benchmarks[0] x generators[0] 'rag retriever=bm25'",
        "benchmarks[0] x generators[1] 'rag retriever=dense'",
        "benchmarks[0] x generators[2] 'closed_book'",
    ]
    assert "search this folder as its corpus" in (problems[0].fix or "")
    title = info.value.title or ""
    assert title.count("before any model loads") == 1, title


def test_provenance_separates_corpus_from_pooled_gold(tmp_path):
    beir_folder(tmp_path / "beir")
    qa_file(tmp_path / "qa.jsonl", n=4)
    path = sweep_file(
        tmp_path, "benchmarks: [{path: beir}, {path: qa.jsonl}]\nretrievers: [{kind: bm25}]\n"
    )
    plan = plan_of(path)
    beir_key, qa_key = (t.comparability_key for t in plan.trials)
    assert "|test|retrieval|corpus|" in beir_key and "|retrieval|pooled_gold|" in qa_key


BM25_ONLY = "retrievers: [{kind: bm25}]\n"


def test_missing_paths_all_reported(tmp_path):
    path = sweep_file(
        tmp_path, "benchmarks: [{path: a.jsonl}, {path: b/}]\nretrievers: [{kind: bm25}]\n"
    )
    with pytest.raises(UserError) as info:
        plan_of(path)
    # each on the sweep file's line, named by its entry (a flow list: both on line 1)
    assert [p.field for p in info.value.problems] == ["benchmarks[0].path", "benchmarks[1].path"]
    assert {(p.file, p.where) for p in info.value.problems} == {(str(path), "line 1")}
    assert "sweep file's folder" in info.value.problems[0].fix
    qa_file(tmp_path / "qa.jsonl", n=4)  # a data file's refusal of a key of the entry
    path = sweep_file(tmp_path, "benchmarks:\n  - {path: qa.jsonl, split: dev}\n" + BM25_ONLY)
    with pytest.raises(UserError) as info:
        plan_of(path)
    (split,) = info.value.problems
    assert (split.file, split.where, split.field) == (str(path), "line 2", "benchmarks[0].split")
    assert "BEIR folders only (in " in split.message and "qa.jsonl" in split.message


def test_no_systems_and_identical_systems_refused(tmp_path):
    qa_file(tmp_path / "qa.jsonl", n=4)
    with pytest.raises(UserError, match="no systems"):
        plan_of(sweep_file(tmp_path, "benchmarks: [{path: qa.jsonl}]\n"))
    body = "benchmarks: [{path: qa.jsonl}]\nretrievers: [{kind: bm25}, {kind: bm25, k1: 1.5}]\n"
    with pytest.raises(UserError, match="identical"):
        plan_of(sweep_file(tmp_path, body, "dup.yaml"))


def test_one_data_and_selection_twice_refused_on_its_line(tmp_path):
    """Two entries whose trials would have the same keys (the file twice, under a name or
    not): refused at plan time, not after running each trial twice."""
    qa_file(tmp_path / "qa.jsonl", n=4)
    body = "benchmarks:\n  - path: qa.jsonl\n  - {path: qa.jsonl, name: again}\n" + BM25_ONLY
    path = sweep_file(tmp_path, body)
    with pytest.raises(UserError) as info:
        plan_of(path)
    (twice,) = info.value.problems
    assert (twice.file, twice.where, twice.field) == (str(path), "line 3", "benchmarks[1]")
    assert "benchmarks[0] and benchmarks[1] are the same data" in twice.message
    other = "benchmarks:\n  - path: qa.jsonl\n  - {path: qa.jsonl, n_samples: 2}\n" + BM25_ONLY
    assert len(plan_of(sweep_file(tmp_path, other)).trials) == 2


def test_render_plan_marks_done(qa_sweep):
    plan = plan_of(qa_sweep())
    console = Console(record=True, width=250)
    render_plan(plan, {plan.trials[1].key}, console)
    text = console.export_text()
    for t in plan.trials:
        assert t.key in text
    keys = {t.key for t in plan.trials}
    statuses = [
        line.split()[-1] for line in text.splitlines() if keys & set(line.split())
    ]  # the last column of each trial's line
    assert statuses == ["pending", "done", "pending", "pending"]
    assert "4 trial(s): 1 done, 3 pending" in text


@pytest.mark.skipif(not BUILTINS["sample"].exists(), reason="packaged sample not written yet")
def test_builtin_sample_sweep():
    plan = plan_of(REPO / "configs" / "sweeps" / "sample_speed.yaml")
    assert len(plan.trials) == 2 and plan.benchmarks[0].name.startswith("sample@")


@pytest.mark.skipif(not SCIFACT.exists(), reason=missing(SCIFACT))
def test_scifact_sweep_plan(tmp_path):
    """The shipped config, copied to the same depth with its data path pointed at SCIFACT
    ($LASAGNA_SHARED_DATA or ../shared/data: its relative path holds beside ../shared)."""
    text = (REPO / "configs" / "sweeps" / "scifact_retrieval.yaml").read_text()
    relative = "{path: ../../../shared/data/beir_scifact,"
    assert relative in text
    (tmp_path / "configs" / "sweeps").mkdir(parents=True)
    copy = sweep_file(
        tmp_path / "configs" / "sweeps", text.replace(relative, f"{{path: {SCIFACT},")
    )
    plan = plan_of(copy)
    assert len(plan.trials) == 6
    assert [t.system.kind for t in plan.trials[::2]] == ["bm25", "dense", "hybrid"]
    assert len({t.comparability_key for t in plan.trials}) == 1
    assert "|test|retrieval|corpus|" in plan.trials[0].comparability_key
    assert len(plan.benchmarks[0].benchmark.rows) == 300
    assert plan.output == str((tmp_path / "results").resolve())  # relative to the config


def test_grid_members_get_distinct_names(tmp_path):
    qa_file(tmp_path / "qa.jsonl", n=4)
    body = (
        "benchmarks: [{path: qa.jsonl}]\n"
        "retrievers: [{kind: dense}, {grid: {kind: bm25, k1: [0.9, 1.2], b: 0.5}}]\n"
    )
    plan = plan_of(sweep_file(tmp_path, body))
    assert [t.system_name for t in plan.trials] == ["dense", "bm25 k1=0.9", "bm25 k1=1.2"]
