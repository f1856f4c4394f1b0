"""contextual-relevancy: how much of the retrieval context is about the input?

The statements of each retrieved passage are extracted (at most `max_claims` a passage,
repeats dropped), then each statement is judged relevant to the input ("yes") or not
("no"). score = relevant statements / statements, over all passages (DeepEval). No
statement: 0.0 (flagged degenerate when the passages are not empty).
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, clean_items, values_of
from lasagna.judges.degenerate import nothing_found
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import list_schema, verdict_schema
from lasagna.judges.verdicts import first_with, judgement, paired, share
from lasagna.models.structured import Prompt

ID = "contextual-relevancy"
NAME = "Contextual Relevancy"
REQUIRED = ("input", "retrieval_context")
OPTIONAL = ()
OUTPUT_METRICS = ("contextual_relevancy_score",)
PRIMARY = "contextual_relevancy_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 0.0

STATEMENTS = Prompt(
    id="contextual_relevancy.statements",
    version="v1",
    system="You split a passage into its statements: short, self-contained sentences, each "
    "saying one thing. Copy the passage's meaning; add nothing.",
    user="Passage:\n{passage}\n\nList the statements of the passage.",
    schema=list_schema("statements", 8),
)
VERDICT = Prompt(
    id="contextual_relevancy.verdict",
    version="v1",
    system="You judge whether a statement taken from a retrieved passage is relevant to a "
    "question. Answer 'yes' if it helps answer the question, 'no' if it does not.",
    user="Question: {input}\n\nStatement: {statement}\n\nIs the statement relevant to the "
    "question?",
    schema=verdict_schema(("yes", "no")),
)
PROMPTS = (STATEMENTS, VERDICT)


def score(verdicts: list[str]) -> float:
    return share(verdicts, lambda v: v == "yes", EMPTY_SCORE)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    passages = case["retrieval_context"]
    extracted = values_of((yield [Call(STATEMENTS, {"passage": p}) for p in passages]))
    statements: list[str] = []
    for reply in extracted:  # repeats across passages count once, as within one
        for s in clean_items(reply["statements"], params.max_claims):
            if s.lower() not in {t.lower() for t in statements}:
                statements.append(s)
    question = case["input"]
    replies = values_of(
        (yield [Call(VERDICT, {"input": question, "statement": s}) for s in statements])
    )
    verdicts = paired("statement", statements, replies)
    labels = [v["verdict"] for v in verdicts]
    relevant = first_with(verdicts, "yes")
    reason = f"none of {len(labels)} statement(s) is relevant to the input"
    if relevant:
        reason = (
            f"{labels.count('yes')} of {len(labels)} statement(s) relevant, e.g. "
            + (relevant["statement"][:120])
        )
    return judgement(
        "contextual_relevancy_score",
        score(labels),
        params.threshold,
        verdicts,
        reason,
        statements_count=len(labels),
        relevant_statements_count=labels.count("yes"),
        **nothing_found(statements, passages, "statements"),
    )
