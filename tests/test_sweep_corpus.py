"""A sweep benchmark entry naming a corpus: read from the sweep's folder, grouped apart from the
same file's pooled gold, refused with the entry and field when the corpus is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna.cli.plan_args import plan_from_args
from lasagna.errors import UserError
from lasagna.sweep.plan import build_plan
from lasagna.sweep.schema import load_sweep

DOCS = [{"_id": f"d{i}", "title": f"T{i}", "text": f"document {i} text"} for i in range(6)]


def files(tmp_path: Path) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "question": f"Q {i}?",
            "answer": f"a{i}",
            "contexts": [f"document {i} text"],
        }
        for i in range(4)
    ]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "data" / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return tmp_path


def plan_of(tmp_path: Path, benchmarks: str):
    path = tmp_path / "sweep.yaml"
    path.write_text(f"benchmarks:\n{benchmarks}retrievers:\n  - {{kind: bm25}}\n")
    sweep, base = load_sweep(path)
    return build_plan(sweep, base)


def test_corpus_entry_is_read_from_the_sweep_folder_and_grouped_apart(tmp_path):
    files(tmp_path)
    plan = plan_of(
        tmp_path,
        "  - {path: data/q.jsonl, corpus: data/corpus.jsonl}\n  - {path: data/q.jsonl}\n",
    )
    real, pooled = plan.benchmarks
    assert real.benchmark.corpus_provenance == "corpus" and len(real.benchmark.corpus) == 6
    assert real.corpus_path == tmp_path / "data" / "corpus.jsonl"
    assert pooled.benchmark.corpus_provenance == "pooled_gold" and len(pooled.benchmark.corpus) == 4
    assert real.benchmark.name != pooled.benchmark.name
    first, second = plan.trials
    assert first.comparability_key != second.comparability_key
    assert "corpus" in first.comparability_key and "pooled_gold" in second.comparability_key


def test_trial_records_the_corpus(tmp_path):
    from lasagna.engine.trials import trial_fields

    files(tmp_path)
    plan = plan_of(tmp_path, "  - {path: data/q.jsonl, corpus: data/corpus.jsonl}\n")
    block = trial_fields(plan.trials[0], plan.benchmarks[0])["benchmark"]
    assert block["corpus"] == str(tmp_path / "data" / "corpus.jsonl")
    assert block["corpus_revision"] == plan.benchmarks[0].benchmark.corpus_revision
    assert block["corpus_provenance"] == "corpus"


def test_missing_corpus_names_the_entry(tmp_path):
    files(tmp_path)
    with pytest.raises(UserError) as err:
        plan_of(tmp_path, "  - {path: data/q.jsonl, corpus: data/nope.jsonl}\n")
    (problem,) = err.value.problems
    # on the sweep file's line of the entry (its file: the sweep)
    assert problem.where == "line 2" and problem.field == "benchmarks[0].corpus"
    assert problem.file.endswith(".yaml")
    assert "no such corpus" in problem.message


def test_corpus_flag_on_a_data_file(tmp_path, monkeypatch):
    import argparse

    files(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(
        target="data/q.jsonl",
        corpus="data/corpus.jsonl",
        profile=None,
        split=None,
        n_samples=None,
        name=None,
        filter=None,
        seed=None,
        trials=None,
        output=str(tmp_path / "out"),
        judge=None,
    )
    plan = plan_from_args(args)
    assert plan.benchmarks[0].benchmark.corpus_provenance == "corpus"
    sweep = tmp_path / "s.yaml"
    sweep.write_text("benchmarks:\n  - {path: data/q.jsonl}\nretrievers:\n  - {kind: bm25}\n")
    with pytest.raises(UserError, match="--corpus applies to a data file"):
        plan_from_args(argparse.Namespace(**{**vars(args), "target": str(sweep)}))


def test_the_report_reloads_the_pair_a_trial_ran_on(tmp_path):
    from lasagna.engine.trials import trial_fields
    from lasagna.results.report.questions import References

    files(tmp_path)
    plan = plan_of(tmp_path, "  - {path: data/q.jsonl, corpus: data/corpus.jsonl}\n")
    block = trial_fields(plan.trials[0], plan.benchmarks[0])["benchmark"]
    refs = References()
    bench = refs.benchmark(block)
    assert bench is not None and refs.notes == []
    assert bench.corpus_provenance == "corpus" and len(bench.corpus) == 6
    (tmp_path / "data" / "corpus.jsonl").write_text(json.dumps(DOCS[0]) + "\n")  # edited
    assert References().benchmark(block) is None
