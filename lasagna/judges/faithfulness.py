"""faithfulness: is every claim of the output supported by the retrieval context?

Claims are extracted from `actual_output`; each gets a verdict against the retrieval
context: "yes" (supported), "no" (contradicted) or "idk" (not enough information).
score = claims not contradicted / claims (DeepEval's definition); with
`penalize_unverified` an "idk" claim counts against the score too. No claims: score 1.0, and
the row is flagged degenerate when the output is not empty (lasagna.judges.degenerate).
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, clean_items, values_of
from lasagna.judges.degenerate import nothing_found
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import list_schema, passages_text, verdict_schema
from lasagna.judges.verdicts import first_with, judgement, paired
from lasagna.models.structured import Prompt

ID = "faithfulness"
NAME = "Faithfulness"
REQUIRED = ("input", "actual_output", "retrieval_context")
OPTIONAL = ()
OUTPUT_METRICS = ("faithfulness_score", "claims_count", "supported_claims_count")
PRIMARY = "faithfulness_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 1.0  # nothing claimed, nothing unfaithful
VERDICTS = ("yes", "no", "idk")

CLAIMS = Prompt(
    id="faithfulness.claims",
    version="v1",
    system="You extract factual claims from a text. A claim is one short, self-contained "
    "statement of fact. Copy the text's meaning; add nothing.",
    user="Text:\n{text}\n\nList the factual claims the text makes.",
    schema=list_schema("claims", 8),
)
VERDICT = Prompt(
    id="faithfulness.verdict",
    version="v1",
    system="You check a claim against context passages. Answer 'yes' if the context "
    "supports the claim, 'no' if the context contradicts it, 'idk' if the context says "
    "nothing about it. Use only the context, not your own knowledge.",
    user="Context:\n{context}\n\nClaim: {claim}\n\nDoes the context support the claim?",
    schema=verdict_schema(VERDICTS),
)
PROMPTS = (CLAIMS, VERDICT)


def claims_step(text: str, limit: int) -> Judgement:
    """Shared with summarization: the claims of a text (at most `limit`)."""
    (reply,) = values_of((yield [Call(CLAIMS, {"text": text})]))
    return clean_items(reply["claims"], limit)


def verdicts_step(claims: list[str], passages: list[str]) -> Judgement:
    """One call per claim; the context comes first so the claims share a cached prefix."""
    context = passages_text(passages)
    replies = values_of((yield [Call(VERDICT, {"context": context, "claim": c}) for c in claims]))
    return paired("claim", claims, replies)


def score(verdicts: list[str], penalize_unverified: bool = False) -> tuple[float, int]:
    """(score, claims counted as supported): not contradicted (and, if asked, verified)."""
    if not verdicts:
        return EMPTY_SCORE, 0
    bad = ("no", "idk") if penalize_unverified else ("no",)
    supported = sum(1 for v in verdicts if v not in bad)
    return supported / len(verdicts), supported


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    claims = yield from claims_step(case["actual_output"], params.max_claims)
    verdicts = yield from verdicts_step(claims, case["retrieval_context"])
    labels = [v["verdict"] for v in verdicts]
    value, supported = score(labels, params.penalize_unverified)
    return judgement(
        "faithfulness_score",
        value,
        params.threshold,
        verdicts,
        _reason(verdicts),
        claims_count=len(claims),
        supported_claims_count=supported,
        contradicted_claims_count=labels.count("no"),
        unverified_claims_count=labels.count("idk"),
        **nothing_found(claims, case["actual_output"], "claims"),
    )


def _reason(verdicts: list[dict[str, Any]]) -> str:
    bad = first_with(verdicts, "no")
    if not verdicts:
        return "the output makes no factual claim"
    if not bad:
        return f"no claim of {len(verdicts)} is contradicted by the retrieval context"
    return f"contradicted: {bad['claim']} ({bad['reason']})"
