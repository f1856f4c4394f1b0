"""The registry module of the `lasagna.metrics` entry point: a retrieval metric lasagna does
not compute itself. judged@10: the share of a question's top 10 documents that have a
relevance judgment (any grade), averaged over judged questions; a low value says the
judgments do not cover what a system retrieves (its nDCG is then a lower bound)."""

from __future__ import annotations

from typing import Any

from lasagna.metrics import catalog


def judged_at_10(rows: Any, benchmark: Any) -> float | None:
    shares = []
    for qid, docs in zip(
        rows.column("id").to_pylist(), rows.column("doc_ids").to_pylist(), strict=True
    ):
        judged = benchmark.qrels.get(qid)
        if judged:
            shares.append(sum(1 for d in (docs or [])[:10] if d in judged) / 10)
    return sum(shares) / len(shares) if shares else None


catalog.register(
    "judged@10",
    "retrieval",
    "share of the top 10 documents that have a judgment",
    level="summary",
    compute=judged_at_10,
)
