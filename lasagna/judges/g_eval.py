"""g-eval: G-Eval with your own criterion (DeepEval's GEval, Liu et al. 2023).

`--param criteria="Is the answer polite and free of blame?"`. The judge first writes 3 to 5
evaluation steps from the criterion (one call, the same for every row: identical calls of a
step are answered once), unless `evaluation_steps` gives them (fixed steps make scores
comparable across judge models and runs, and save the call); then it scores each row 1-10
following the steps, probability-weighted as the correctness judge (lasagna.judges.rubric).
g_eval_score = (score - 1) / 9. A judge model that writes no step is told to check the
criterion itself, and the row is flagged degenerate ("no evaluation steps found").
`fields` picks the test-case columns the judge reads (default input and actual_output; add
expected_output, context or retrieval_context);
`label` names the criterion in tables (`judge:g-eval:politeness`, `g_eval_politeness_score`).
"""

from __future__ import annotations

import re
from typing import Any

from lasagna.errors import Problem
from lasagna.judges.base import Call, Judgement, clean_items, values_of
from lasagna.judges.degenerate import nothing_found
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import list_schema, passages_text
from lasagna.judges.rubric import SCORE_SCHEMA, TOP_LOGPROBS, rubric_result
from lasagna.models.structured import Prompt

ID = "g-eval"
NAME = "G-Eval"
REQUIRED = ("input", "actual_output")  # the default `fields`
OPTIONAL = ("expected_output", "context", "retrieval_context")
OUTPUT_METRICS = ("g_eval_score",)
PRIMARY = "g_eval_score"
HIGHER_IS_BETTER = True
PARAMETERS = ("criteria", "evaluation_steps", "fields", "label")
MAX_STEPS = 5

LABELS = {
    "input": "Input",
    "actual_output": "Actual output",
    "expected_output": "Expected output",
    "context": "Context",
    "retrieval_context": "Retrieval context",
}

STEPS = Prompt(
    id="g-eval.steps",
    version="v1",
    system="You write evaluation steps for a judge. Given an evaluation criterion, write 3 to "
    f"{MAX_STEPS} short, concrete steps that tell how to check a text against it.",
    user="Criterion: {criteria}",
    schema=list_schema("steps", MAX_STEPS),
)
SCORE = Prompt(
    id="g-eval.score",
    version="v1",
    system="You are an evaluator. Judge the test case by the criterion, following the "
    "evaluation steps. Give a score from 1 (does not meet the criterion at all) to 10 (fully "
    "meets it), then a short reason.",
    user="Criterion: {criteria}\n\nEvaluation steps:\n{steps}\n\n{case}",
    schema=SCORE_SCHEMA,
)
PROMPTS = (STEPS, SCORE)


def required(params: JudgeParams) -> tuple[str, ...]:
    """The columns every row needs: the ones the judge reads."""
    return params.fields or REQUIRED


def check_params(params: JudgeParams) -> list[Problem]:
    if params.criteria:
        return []
    return [
        Problem(
            "the g-eval judge needs a criterion",
            field="criteria",
            fix='pass it, e.g. --param criteria="Is the answer polite and to the point?" '
            '(in a sweep: parameters: {criteria: ...}; in Python: g_eval("...") or '
            'params={"criteria": ...})',
        )
    ]


def group(params: JudgeParams) -> str:
    """The criterion's short name for its leaderboard group and judged-generation columns
    (`label`, else its first words), so that judges of one criterion rank together and
    different criteria apart."""
    if params.label:
        return params.label
    words = re.findall(r"[a-z0-9]+", (params.criteria or "").lower())
    return "-".join(words[:4])[:32].strip("-") or "criterion"


def case_text(case: dict[str, Any], fields: tuple[str, ...]) -> str:
    parts = []
    for name in fields:
        value = case.get(name)
        if isinstance(value, list):
            value = passages_text([str(v) for v in value])
        parts.append(f"{LABELS[name]}: {value}")
    return "\n\n".join(parts)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    criteria = params.criteria or ""
    steps = list(params.evaluation_steps or ())
    generated = not steps
    if generated:
        replies = yield [Call(STEPS, {"criteria": criteria}, once=True)]
        (value,) = values_of(replies)
        steps = clean_items(value["steps"], MAX_STEPS)
    flags = nothing_found(steps, criteria, "evaluation steps")  # degenerate: none written
    if not steps:
        steps = [f"Check how well the test case meets the criterion: {criteria}"]
    fields = {
        "criteria": criteria,
        "steps": "\n".join(f"{i + 1}. {s}" for i, s in enumerate(steps)),
        "case": case_text(case, required(params)),
    }
    replies = yield [Call(SCORE, fields, logprobs=TOP_LOGPROBS)]
    (value,) = values_of(replies)
    verdicts = [{"evaluation_steps": steps, "generated": generated}, value]
    return rubric_result(replies[0], "g_eval", params.threshold) | flags | {"verdicts": verdicts}
