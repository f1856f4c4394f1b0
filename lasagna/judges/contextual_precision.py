"""contextual-precision: are the passages that lead to the expected output ranked first?

Each retrieved passage, in rank order, is judged useful to arrive at the expected output
("yes") or not ("no"). With r_k = 1 for a useful passage at rank k (else 0) and R the
number of useful passages (DeepEval's weighted cumulative precision):

    score = (1 / R) * sum over k = 1..n of (useful passages in ranks 1..k / k) * r_k

so a useful passage counts the precision of the ranking down to it. No useful passage (or
no passage): 0.0.
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, values_of
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import verdict_schema
from lasagna.judges.verdicts import judgement, paired
from lasagna.models.structured import Prompt

ID = "contextual-precision"
NAME = "Contextual Precision"
REQUIRED = ("input", "expected_output", "retrieval_context")
OPTIONAL = ()
OUTPUT_METRICS = ("contextual_precision_score",)
PRIMARY = "contextual_precision_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 0.0  # nothing useful retrieved

VERDICT = Prompt(
    id="contextual_precision.verdict",
    version="v1",
    system="You judge one passage retrieved for a question. Answer 'yes' if the passage "
    "holds information that helps arrive at the expected answer, 'no' if it does not.",
    user="Question: {input}\n\nExpected answer: {expected}\n\nPassage: {passage}\n\n"
    "Does the passage help arrive at the expected answer?",
    schema=verdict_schema(("yes", "no")),
)
PROMPTS = (VERDICT,)


def score(useful: list[bool]) -> float:
    """Weighted cumulative precision over the useful ranks (see the module doc)."""
    found, total = 0, 0.0
    for rank, hit in enumerate(useful, start=1):
        if hit:
            found += 1
            total += found / rank
    return total / found if found else EMPTY_SCORE


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    passages = case["retrieval_context"]
    fields = {"input": case["input"], "expected": case["expected_output"]}
    replies = values_of((yield [Call(VERDICT, {**fields, "passage": p}) for p in passages]))
    verdicts = [{"rank": i + 1, **v} for i, v in enumerate(paired("passage", passages, replies))]
    useful = [v["verdict"] == "yes" for v in verdicts]
    ranks = [v["rank"] for v in verdicts if v["verdict"] == "yes"]
    reason = (
        f"useful passages at ranks {', '.join(map(str, ranks))} of {len(passages)}"
        if ranks
        else f"none of the {len(passages)} passage(s) helps arrive at the expected answer"
    )
    return judgement(
        "contextual_precision_score",
        score(useful),
        params.threshold,
        verdicts,
        reason,
        contexts_count=len(passages),
        useful_contexts_count=sum(useful),
    )
