"""Names of the retrieval metrics and their cut-offs (no numpy: the metric catalog and the
result readers import this without loading the scoring code)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lasagna.errors import Problem, UserError

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10, 100)
MEASURES: tuple[str, ...] = ("ndcg", "recall", "p", "map", "mrr", "success")


def metric_names(ks: Sequence[int] = DEFAULT_KS) -> tuple[str, ...]:
    """Names of the metrics `score_queries` returns for these cut-offs, e.g. "ndcg@10"."""
    ks = check_ks(ks)
    return tuple(f"{m}@{k}" for m in MEASURES for k in ks)


def check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    """Validated cut-offs, sorted and without duplicates."""
    ks = tuple(ks)
    bad = [k for k in ks if isinstance(k, bool) or not isinstance(k, int) or k < 1]
    if bad or not ks:
        raise UserError(
            Problem(
                f"cut-offs must be positive whole numbers, got {list(ks)}",
                field="ks",
                fix="list one or more integers >= 1, e.g. [1, 3, 5, 10, 100]",
            )
        )
    return tuple(sorted(set(ks)))


METRIC_NAMES: tuple[str, ...] = metric_names(DEFAULT_KS)
