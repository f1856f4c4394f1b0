"""Per-batch scoring stages: pure functions from a batch of pipeline rows to the same rows
with per-question metric columns. They run as Ray Data tasks (no state, no model)."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from lasagna.metrics.qa import score_answer
from lasagna.metrics.retrieval import DEFAULT_KS, metric_names, score_queries


def _per_question(batch: pa.Table, keys: str, values: str) -> dict[str, dict]:
    """{question id: {key: value}} from two parallel list columns; empty lists left out."""
    return {
        qid: dict(zip(k, v, strict=True))
        for qid, k, v in zip(
            batch.column("id").to_pylist(),
            batch.column(keys).to_pylist(),
            batch.column(values).to_pylist(),
            strict=True,
        )
        if k
    }


def score_retrieval_batch(batch: pa.Table, ks: Sequence[int] = DEFAULT_KS) -> pa.Table:
    """Add one column per retrieval metric; questions without judgments get nulls."""
    ids = batch.column("id").to_pylist()
    qrels = _per_question(batch, "rel_ids", "rel_grades")
    run = _per_question(batch, "doc_ids", "scores")  # a judged query absent from it scores 0
    per_query = score_queries(qrels, run, ks)
    for name in metric_names(ks):
        values = [per_query[q][name] if q in per_query else None for q in ids]
        batch = batch.append_column(name, pa.array(values, type=pa.float64()))
    return batch


def score_generation_batch(batch: pa.Table, abstain_phrases: Sequence[str] = ()) -> pa.Table:
    """Add em, f1 and abstained (SQuAD v2 conventions); failed generations score null."""
    em, f1, abstained = [], [], []
    for pred, answers, unanswerable, error in zip(
        batch.column("prediction").to_pylist(),
        batch.column("answers").to_pylist(),
        batch.column("unanswerable").to_pylist(),
        batch.column("error").to_pylist(),
        strict=True,
    ):
        if error:
            em.append(None)
            f1.append(None)
            abstained.append(None)
            continue
        s = score_answer(pred or "", list(answers or []), bool(unanswerable), abstain_phrases)
        em.append(float(s["em"]))
        f1.append(float(s["f1"]))
        abstained.append(bool(s["abstained"]))
    return (
        batch.append_column("em", pa.array(em, type=pa.float64()))
        .append_column("f1", pa.array(f1, type=pa.float64()))
        .append_column("abstained", pa.array(abstained, type=pa.bool_()))
    )
