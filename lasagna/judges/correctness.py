"""correctness: G-Eval with a factual-correctness criterion against expected_output.

The judge follows fixed evaluation steps (versioned with the prompt, so no extra call
writes them) and gives a 1-10 score. Where the backend returns token log-probabilities
(vLLM), the score is G-Eval's probability-weighted sum over the score tokens at the score's
position: sum_s p(s) * s / sum_s p(s), s in 1..10 (on a tokenizer that writes 10 as "1" "0",
the mass of "1" is split by p("0" | "1") at the next position). Otherwise the integer
itself. correctness_score = (score - 1) / 9, in [0, 1].
"""

from __future__ import annotations

import math
from typing import Any

from lasagna.judges.base import Call, Judgement, values_of
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import VERDICT_REASON_CHARS
from lasagna.models.json_bounds import bounded_string
from lasagna.models.structured import Prompt

ID = "correctness"
NAME = "Correctness"
REQUIRED = ("input", "actual_output", "expected_output")
OPTIONAL = ()
OUTPUT_METRICS = ("correctness_score",)
PRIMARY = "correctness_score"
HIGHER_IS_BETTER = True
SCALE = (1, 10)
TOP_LOGPROBS = 20

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
    schema={
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": SCALE[0], "maximum": SCALE[1]},
            "reason": bounded_string(VERDICT_REASON_CHARS),
        },
        "required": ["score", "reason"],
        "additionalProperties": False,
    },
)
PROMPTS = (SCORE,)


def normalise(score: float) -> float:
    low, high = SCALE
    return min(1.0, max(0.0, (score - low) / (high - low)))


def score_position(tokens: tuple[str, ...] | list[str]) -> int | None:
    """Index of the token holding the first digit of the score in `{"score": N, ...}`."""
    text = "".join(tokens)
    key = text.find('"score"')
    if key < 0:
        return None
    digit = next((i for i in range(key + 7, len(text)) if text[i].isdigit()), None)
    if digit is None:
        return None
    offset = 0
    for i, token in enumerate(tokens):
        offset += len(token)
        if offset > digit:
            return i
    return None


def weighted_score(
    tokens: tuple[str, ...] | list[str], top_logprobs: tuple[dict[str, float], ...] | list
) -> float | None:
    """G-Eval's expected score over the score tokens; None if they cannot be found."""
    pos = score_position(tokens)
    if pos is None or pos >= len(top_logprobs):
        return None
    probs: dict[int, float] = {}
    for token, logprob in top_logprobs[pos].items():
        text = token.strip()
        if text.isdigit() and SCALE[0] <= int(text) <= SCALE[1]:
            probs[int(text)] = probs.get(int(text), 0.0) + math.exp(logprob)
    if tokens[pos].strip() == "1" and 1 in probs and pos + 1 < len(top_logprobs):
        nxt = top_logprobs[pos + 1]
        p_zero = sum(math.exp(lp) for t, lp in nxt.items() if t.strip() == "0")
        p_one = probs.pop(1)
        probs[1] = p_one * (1 - p_zero)
        probs[10] = probs.get(10, 0.0) + p_one * p_zero
    total = sum(probs.values())
    if total <= 0:
        return None
    return sum(s * p for s, p in probs.items()) / total


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    fields = {
        "input": case["input"],
        "expected": case["expected_output"],
        "actual": case["actual_output"],
    }
    replies = yield [Call(SCORE, fields, logprobs=TOP_LOGPROBS)]
    (value,) = values_of(replies)
    completion = replies[0].completion
    weighted = None
    if completion is not None and completion.tokens and completion.top_logprobs:
        weighted = weighted_score(completion.tokens, completion.top_logprobs)
    raw = float(value["score"])
    result = normalise(weighted if weighted is not None else raw)
    return {
        "correctness_score": result,
        "correctness_rubric_score": int(value["score"]),
        "correctness_weighted": weighted is not None,
        "passed": result >= params.threshold,
        "verdicts": [value],
        "reason": value["reason"],
    }
