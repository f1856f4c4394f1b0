"""A generation trial's metrics from its rows: EM / F1 by SQuAD v2 rules, what a RAG
generator read, token counts and the engine's speed."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


def generation_metrics(table: pa.Table) -> tuple[dict[str, float], dict[str, int]]:
    """EM/F1 (HasAns/NoAns) over rows that generated, plus token counts and tokens/s; for
    RAG, the mean passage recall and hit over the questions with judgments (every row: a
    failed generation still read its passages).

    Rows answered from the model-call cache count in EM/F1 and the token counts (and in
    cache_hits), not in the speed figures, which describe the engine.

    tokens_per_s: completion tokens per second the engine was busy (each batch's wall time
    counted once). pipeline_tokens_per_s: per second of wall time from the first batch's
    start to the last batch's end, so every idle gap between batches counts against it;
    actor and engine start-up come before the first batch and do not.
    """
    from lasagna.metrics.qa import aggregate_qa

    records = table.select(
        [
            "em",
            "f1",
            "unanswerable",
            "error",
            "latency_s",
            "batch_rows",
            "batch_started_at",
            "completion_tokens",
            "prompt_tokens",
        ]
        + (["cached"] if "cached" in table.column_names else [])
    ).to_pylist()
    ok = [r for r in records if not r["error"]]
    agg = aggregate_qa(ok)
    metrics = {k: float(v) for k, v in agg.items() if v is not None and not k.endswith("total")}
    counts = {k: int(v) for k, v in agg.items() if v is not None and k.endswith("total")}
    counts["completion_tokens"] = sum(r["completion_tokens"] or 0 for r in records)
    counts["prompt_tokens"] = sum(r["prompt_tokens"] or 0 for r in records)
    counts["failed"] = len(records) - len(ok)
    for name in ("passage_recall", "passage_hit"):  # RAG: the passages the generator read
        if name in table.column_names:
            values = [v for v in table.column(name).to_pylist() if v is not None]
            if values:
                metrics[name] = sum(values) / len(values)
    hits = [r.get("cached") for r in records]
    if any(h is not None for h in hits):  # the model-call cache was on
        counts["cache_hits"] = sum(1 for h in hits if h)
        counts["cache_misses"] = sum(1 for h in hits if h is False)
    computed = [r for r in records if not r.get("cached")]  # speed: what the engine ran
    tokens = sum(r["completion_tokens"] or 0 for r in computed)
    busy = sum((r["latency_s"] or 0.0) / max(1, r["batch_rows"] or 1) for r in computed)
    if busy > 0:
        metrics["tokens_per_s"] = tokens / busy
    batches = [(r["batch_started_at"], r["latency_s"] or 0.0) for r in computed]
    batches = [(t0, dt) for t0, dt in batches if t0 is not None]
    if batches:
        span = max(t0 + dt for t0, dt in batches) - min(t0 for t0, _ in batches)
        if span > 0:
            metrics["pipeline_tokens_per_s"] = tokens / span
    return metrics, counts
