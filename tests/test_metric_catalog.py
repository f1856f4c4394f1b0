"""The metric catalog: every reported metric is in it, and leaderboards sort by its direction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from test_results_store import make_trial

from lasagna.metrics import catalog
from lasagna.metrics.retrieval import METRIC_NAMES
from lasagna.results import leaderboard, write_run
from lasagna.tracks.generation_metrics import generation_metrics


def _generation_table() -> pa.Table:
    """A RAG trial's rows (a closed-book trial's have no passage columns)."""
    return pa.table(
        {
            "em": [1.0, 0.0],
            "f1": [1.0, 0.5],
            "unanswerable": [False, True],
            "error": pa.array([None, None], pa.string()),
            "latency_s": [0.5, 0.5],
            "batch_rows": [2, 2],
            "batch_started_at": [10.0, 10.0],
            "completion_tokens": [4, 6],
            "prompt_tokens": [20, 30],
            "passage_recall": [0.5, None],  # the second question has no judgments
            "passage_hit": [1.0, None],
        }
    )


def test_every_metric_a_track_produces_is_in_the_catalog() -> None:
    produced, _ = generation_metrics(_generation_table())
    assert set(produced) <= {m.name for m in catalog.metrics_of("generation")}
    assert set(METRIC_NAMES) <= {m.name for m in catalog.metrics_of("retrieval")}


def test_rag_rows_average_their_passage_scores_over_judged_questions() -> None:
    rag, _ = generation_metrics(_generation_table())
    assert rag["passage_recall"] == 0.5 and rag["passage_hit"] == 1.0
    closed_book, _ = generation_metrics(_generation_table().drop(["passage_recall", "passage_hit"]))
    assert "passage_recall" not in closed_book and "passage_hit" not in closed_book


def test_leaderboard_defaults_name_only_produced_metrics() -> None:
    produced, _ = generation_metrics(_generation_table())
    for name in catalog.primary_metrics("generation"):
        assert name in produced  # "exact_match" was named once and produced by nothing
    assert catalog.primary_metrics("retrieval")[0] == "ndcg@10"
    assert catalog.main_metrics("retrieval") == ["ndcg@10", "recall@10", "recall@100", "mrr@10"]
    assert catalog.primary_metrics("generation")[0] == "f1"


@pytest.fixture
def lower_metric() -> Iterator[str]:
    name = "test_hallucination"
    catalog.register(name, "retrieval", "share of made-up claims", lower_is_better=True)
    yield name
    catalog.unregister(name)


def test_lower_is_better_sorts_ascending(tmp_path: Path, lower_metric: str) -> None:
    trials = [
        make_trial("k1", [0.9, 0.7], system="a", metric=lower_metric),
        make_trial("k2", [0.1, 0.3], system="b", config={"kind": "b"}, metric=lower_metric),
    ]
    write_run(tmp_path, "r1", {}, trials)
    (group,) = leaderboard(tmp_path, metric=lower_metric)
    assert [line.system for line in group.lines] == ["b", "a"]
    assert catalog.get(lower_metric).direction == "lower"
    assert catalog.show("tokens_per_s", 12.345) == "12.3"


def test_judged_generation_columns_read_as_their_judge_metric() -> None:
    """`faithfulness_claims_count` (a RAG trial judged for faithfulness) is the judge's
    `claims_count`: its description, format and level, under its own name."""
    claims = catalog.known("faithfulness_claims_count")
    assert claims is not None and claims.name == "faithfulness_claims_count"
    assert claims.description == "faithfulness: claims extracted per row"
    assert claims.format == ".2f" and claims.level == "detail"
    assert catalog.show("faithfulness_claims_count", 3.0) == "3.00"
    rate = catalog.known("contextual_relevancy_pass_rate")
    assert rate is not None and rate.description.startswith("contextual_relevancy: share")
    assert catalog.known("correctness_rubric_score").format == ".2f"
    assert catalog.known("faithfulness_nonsense") is None and catalog.known("acc") is None
    assert catalog.known("relevancy_faithfulness_score") is None  # a primary is no suffix
    # g-eval's columns carry its criterion's label: g_eval_<label>_score, ..._rubric_score
    brief = catalog.known("g_eval_brief_score")
    assert brief.primary and brief.level == "main" and brief.description.endswith("(brief)")
    assert catalog.known("g_eval_is_it_brief_rubric_score").format == ".2f"
    assert catalog.judge_scores(["f1", "g_eval_brief_score", "correctness_score"]) == [
        "correctness_score",
        "g_eval_brief_score",
    ]
