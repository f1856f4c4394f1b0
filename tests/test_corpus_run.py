"""A real sweep over a question file with a named corpus: BM25 retrieval searches the corpus
(distractors included) and is judged by expected_docs, RAG generation with the packaged
SmolLM2 reads the retrieved corpus passages, provenance is `corpus`, and the exported qrels
are rebuilt from the pair."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from lasagna.cli import main

pytestmark = pytest.mark.slow

DOCS = {
    "glass": "Soda-lime glass is made by melting silica sand with soda and lime.",
    "float": "Float glass is poured onto a bath of molten tin, invented by Pilkington.",
    "solidus": "The solidus was a gold coin introduced by Constantine the Great.",
    "hyperpyron": "The hyperpyron replaced the debased solidus in 1092.",
    "kiln": "A glass kiln reaches about 1000 degrees Celsius.",
    "tin": "Tin is a soft metal that melts at 232 degrees Celsius.",
}
ROWS = [
    {
        "id": "q1",
        "question": "Who introduced the solidus?",
        "answer": "Constantine the Great",
        "expected_docs": ["solidus"],
    },
    {
        "id": "q2",
        "question": "What is float glass poured onto?",
        "answer": "molten tin",
        "expected_docs": ["float"],
    },
    {
        "id": "q3",
        "question": "What replaced the debased solidus?",
        "answer": "the hyperpyron",
        "contexts": ["The hyperpyron replaced the debased solidus in 1092."],
    },
    {"id": "q4", "question": "How hot does a glass kiln get?", "answer": "1000 degrees"},
]
SWEEP = """\
benchmarks:
  - {path: questions.jsonl, corpus: corpus.jsonl}
retrievers:
  - {kind: bm25, top_k: 5}
generators:
  - kind: rag
    retriever: {kind: bm25, top_k: 2}
    passages: 2
    model: {backend: transformers, max_tokens: 8}
"""


def test_sweep_over_a_corpus(ray_local, tmp_path, capsys):
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    docs = [{"_id": k, "title": "", "text": v} for k, v in DOCS.items()]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "sweep.yaml").write_text(SWEEP)
    out = tmp_path / "out"
    assert main(["benchmark", "run", str(tmp_path / "sweep.yaml"), "--output", str(out)]) == 0
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    manifest = json.loads((folder / "manifest.json").read_text())
    retrieval, generation = sorted(manifest["trials"], key=lambda t: t["track"], reverse=True)
    for trial in (retrieval, generation):
        assert trial["benchmark"]["corpus_provenance"] == "corpus"
        assert trial["benchmark"]["corpus"] == str(tmp_path / "corpus.jsonl")
    # three judged questions (expected_docs, or contexts matched by text), one not: counted
    assert retrieval["counts"]["judged"] == 3 and retrieval["counts"]["unjudged"] == 1
    assert retrieval["metrics"]["recall@5"] == 1.0  # six documents, top 5: found
    rows = {r["id"]: r for r in pq.read_table(folder / retrieval["rows_file"]).to_pylist()}
    assert set(rows["q1"]["doc_ids"]) <= set(DOCS) and rows["q1"]["doc_ids"][0] == "solidus"
    # generation reads what was retrieved from the corpus, and scores every question
    answers = pq.read_table(folder / generation["rows_file"]).to_pylist()
    assert len(answers) == 4 and all(r["error"] is None for r in answers)
    assert all(
        len(r["passages"]) == 2 and set(r["passages"]) <= set(DOCS.values()) for r in answers
    )
    assert generation["counts"]["rows"] == 4
    # the qrels are rebuilt from the pair the trial ran on
    target = tmp_path / "bm25.trec"
    export = ["results", "export", str(folder), "--trial", retrieval["key"], "--out", str(target)]
    assert main([*export, "--output", str(out)]) == 0
    qrels = (tmp_path / "bm25.qrels").read_text().split("\n")
    assert "q1 0 solidus 1" in qrels and "q3 0 hyperpyron 1" in qrels
    capsys.readouterr()
