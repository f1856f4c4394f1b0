"""correctness: G-Eval with a factual-correctness criterion against expected_output.

The judge follows fixed evaluation steps (versioned with the prompt, so no extra call
writes them) and gives a 1-10 score, probability-weighted where the backend returns token
log-probabilities (lasagna.judges.rubric). correctness_score = (score - 1) / 9, in [0, 1].
The same scoring with your own criterion: the g-eval judge.
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, values_of
from lasagna.judges.params import JudgeParams
from lasagna.judges.rubric import (  # noqa: F401  (the scoring, named here for its tests)
    SCALE,
    SCORE_SCHEMA,
    TOP_LOGPROBS,
    normalise,
    rubric_result,
    score_position,
    weighted_score,
)
from lasagna.models.structured import Prompt

ID = "correctness"
NAME = "Correctness"
REQUIRED = ("input", "actual_output", "expected_output")
OPTIONAL = ()
OUTPUT_METRICS = ("correctness_score",)
PRIMARY = "correctness_score"
HIGHER_IS_BETTER = True

STEPS = (
    "Check whether the facts in the actual output contradict any facts in the expected output.",
    "Heavily penalize omission of important details of the expected output.",
    "Vague language or differing opinions are acceptable; wrong facts are not.",
)
SCORE = Prompt(
    id="correctness.geval",
    version="v1",
    system="You are an evaluator. Criterion: determine whether the actual output is "
    "factually correct based on the expected output.\nEvaluation steps:\n"
    + "\n".join(f"{i + 1}. {s}" for i, s in enumerate(STEPS))
    + "\nGive a score from 1 (completely wrong) to 10 (fully correct), then a short reason.",
    user="Input: {input}\n\nExpected output: {expected}\n\nActual output: {actual}",
    schema=SCORE_SCHEMA,
)
PROMPTS = (SCORE,)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    fields = {
        "input": case["input"],
        "expected": case["expected_output"],
        "actual": case["actual_output"],
    }
    replies = yield [Call(SCORE, fields, logprobs=TOP_LOGPROBS)]
    (value,) = values_of(replies)
    return rubric_result(replies[0], ID, params.threshold) | {"verdicts": [value]}
