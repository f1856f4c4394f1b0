"""What a judged row's verdicts become: each item paired with its reply, the verdict its
reason names, and the row's output metrics (score, counts, passed, verdicts, reason)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def paired(key: str, items: list[Any], replies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each judged item with its reply: [{key: item, "verdict": ..., "reason": ...}, ...]."""
    return [{key: item, **reply} for item, reply in zip(items, replies, strict=True)]


def first_with(verdicts: list[dict[str, Any]], label: str) -> dict[str, Any] | None:
    """The first verdict labelled `label` (the one a row's reason names), or None."""
    return next((v for v in verdicts if v["verdict"] == label), None)


def judgement(
    metric: str, value: float, threshold: float, verdicts: list, reason: str, **values: Any
) -> dict[str, Any]:
    """A row's output metrics: its score, `values` (counts, sub-scores), whether it passed
    (score at least the threshold), its verdicts and the reason."""
    return {
        metric: value,
        **values,
        "passed": value >= threshold,
        "verdicts": verdicts,
        "reason": reason,
    }


def share(labels: list[Any], counts: Callable[[Any], bool], empty: float) -> float:
    """The share of `labels` that `counts`: every ratio-of-verdicts score; `empty` (each
    benchmark's documented score for nothing to judge) when there are no labels."""
    if not labels:
        return empty
    return sum(1 for label in labels if counts(label)) / len(labels)
