"""The judge track's entries of the metric catalog (formulas: lasagna/judges/<benchmark>.py).

Every judge metric is a fraction in [0, 1] (counts excepted); hallucination sorts
ascending. A leaderboard group holds one benchmark, so its primary metric is found first.
"""

from __future__ import annotations

from collections.abc import Callable

PRIMARY = (
    ("faithfulness_score", "claims not contradicted by the retrieval context / claims"),
    ("relevancy_score", "output statements relevant to the input / statements"),
    ("hallucination_score", "context passages the output contradicts / passages"),
    ("correctness_score", "G-Eval correctness vs expected_output, (score - 1) / 9"),
    ("summarization_score", "min(alignment, coverage) of a summary against its source"),
    ("conversation_completeness_score", "user intentions satisfied / intentions"),
    ("role_adherence_score", "assistant turns in chatbot_role / assistant turns"),
    ("knowledge_retention_score", "assistant turns without attrition / assistant turns"),
    ("contextual_precision_score", "weighted cumulative precision of the useful passages"),
    ("contextual_recall_score", "expected-output sentences found in the context / sentences"),
    ("contextual_relevancy_score", "context statements relevant to the input / statements"),
    ("g_eval_score", "G-Eval by your criterion, (score - 1) / 9"),
)
LABELLED = ("g_eval_",)  # judges whose judged-generation columns carry a label: g_eval_brief_score
SUMMARY = (
    ("hallucination_detected", "share of rows whose hallucination_score > threshold", True),
    ("alignment_score", "summary claims not contradicted by the source / claims", False),
    ("coverage_score", "source questions the summary also answers yes / source yes", False),
    ("pass_rate", "share of rows whose score meets the threshold", False),
)
DETAIL = (
    ("claims_count", "claims extracted per row", ".2f"),
    ("supported_claims_count", "claims counted as faithful per row", ".2f"),
    ("contradicted_claims_count", "claims the context contradicts per row", ".2f"),
    ("unverified_claims_count", "claims the context says nothing about per row", ".2f"),
    ("judgments_per_s", "rows judged per second the judge engine was busy", ".3f"),
    ("correctness_rubric_score", "the G-Eval score the judge wrote, 1..10", ".2f"),
    (
        "correctness_weighted",
        "share of rows scored from the score token's probabilities, not the written score",
        ".4f",
    ),
    ("g_eval_rubric_score", "the G-Eval score the judge wrote by your criterion, 1..10", ".2f"),
    (
        "g_eval_weighted",
        "share of rows scored from the score token's probabilities, not the written score",
        ".4f",
    ),
)


def register_judge_metrics(register: Callable[..., object]) -> None:
    for name, description in PRIMARY:
        lower = name == "hallucination_score"
        register(name, "judge", description, lower_is_better=lower, level="main", primary=True)
    for name, description, lower in SUMMARY:
        register(name, "judge", description, lower_is_better=lower, level="summary")
    for name, description, fmt in DETAIL:
        register(name, "judge", description, format=fmt)
