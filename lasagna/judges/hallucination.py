"""hallucination: does the output contradict the ground-truth context?

One verdict per context passage: "yes" (the output agrees with it) or "no" (it contradicts
it). score = contradicting passages / passages (DeepEval); lower is better.
hallucination_detected = score > threshold (default 0.5). The context is required, so
there is at least one passage; an empty one is refused when the file is read.
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, values_of
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import verdict_schema
from lasagna.judges.verdicts import first_with, paired, share
from lasagna.models.structured import Prompt

ID = "hallucination"
NAME = "Hallucination"
REQUIRED = ("input", "actual_output", "context")
OPTIONAL = ()
OUTPUT_METRICS = ("hallucination_score", "hallucination_detected")
PRIMARY = "hallucination_score"
HIGHER_IS_BETTER = False
EMPTY_SCORE = 0.0  # no passage, nothing contradicted
VERDICTS = ("yes", "no")

VERDICT = Prompt(
    id="hallucination.verdict",
    version="v1",
    system="You compare a response with one context passage that is true. Answer 'yes' if "
    "the response agrees with the passage (or does not conflict with it), 'no' if the "
    "response contradicts it.",
    user="Question: {input}\nResponse: {output}\n\nPassage: {passage}\n\n"
    "Does the response agree with the passage?",
    schema=verdict_schema(VERDICTS),
)
PROMPTS = (VERDICT,)


def score(verdicts: list[str]) -> float:
    return share(verdicts, lambda v: v == "no", EMPTY_SCORE)


def detected(value: float, threshold: float) -> bool:
    return value > threshold


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    passages = case["context"]
    fields = {"input": case["input"], "output": case["actual_output"]}
    replies = values_of((yield [Call(VERDICT, {"passage": p, **fields}) for p in passages]))
    verdicts = paired("passage", passages, replies)
    labels = [v["verdict"] for v in verdicts]
    value = score(labels)
    bad = first_with(verdicts, "no")
    return {
        "hallucination_score": value,
        "hallucination_detected": detected(value, params.threshold),
        "contradicted_contexts_count": labels.count("no"),
        "contexts_count": len(labels),
        "verdicts": verdicts,
        "reason": (
            f"contradicts: {bad['passage'][:120]} ({bad['reason']})"
            if bad
            else f"agrees with all {len(labels)} context passage(s)"
        ),
    }
