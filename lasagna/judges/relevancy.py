"""relevancy (answer relevancy): does the output address the input?

Statements are extracted from `actual_output`; each is judged relevant to the input: "yes",
"no" or "idk" (supporting detail, neither on nor off the point).
score = statements not judged irrelevant / statements (DeepEval). No statements: 1.0
(flagged degenerate when the output is not empty).
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, clean_items, values_of
from lasagna.judges.degenerate import nothing_found
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import list_schema, verdict_schema
from lasagna.judges.verdicts import first_with, judgement, paired, share
from lasagna.models.structured import Prompt

ID = "relevancy"
NAME = "Answer Relevancy"
REQUIRED = ("input", "actual_output")
OPTIONAL = ()
OUTPUT_METRICS = ("relevancy_score",)
PRIMARY = "relevancy_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 1.0
VERDICTS = ("yes", "no", "idk")

STATEMENTS = Prompt(
    id="relevancy.statements",
    version="v1",
    system="You split a response into its statements: short, self-contained sentences, "
    "each saying one thing.",
    user="Response:\n{text}\n\nList the statements of the response.",
    schema=list_schema("statements", 8),
)
VERDICT = Prompt(
    id="relevancy.verdict",
    version="v1",
    system="You judge whether a statement from a response is relevant to the question it "
    "answers. 'yes': it addresses the question; 'no': it is off the point; 'idk': "
    "supporting detail that is neither.",
    user="Question: {input}\n\nStatement: {statement}\n\nIs the statement relevant?",
    schema=verdict_schema(VERDICTS),
)
PROMPTS = (STATEMENTS, VERDICT)


def score(verdicts: list[str]) -> float:
    return share(verdicts, lambda v: v != "no", EMPTY_SCORE)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    (extracted,) = values_of((yield [Call(STATEMENTS, {"text": case["actual_output"]})]))
    statements = clean_items(extracted["statements"], params.max_claims)
    replies = values_of(
        (yield [Call(VERDICT, {"input": case["input"], "statement": s}) for s in statements])
    )
    verdicts = paired("statement", statements, replies)
    labels = [v["verdict"] for v in verdicts]
    off = first_with(verdicts, "no")
    reason = f"{len(labels)} statement(s), none off the point"
    if off:
        reason = f"off the point: {off['statement']} ({off['reason']})"
    return judgement(
        "relevancy_score",
        score(labels),
        params.threshold,
        verdicts,
        reason,
        statements_count=len(statements),
        relevant_statements_count=len(labels) - labels.count("no"),
        **nothing_found(statements, case["actual_output"], "statements"),
    )
