"""G-Eval's score: a 1-10 rubric score read from the reply, probability-weighted where the
backend returns token log-probabilities (the correctness and g-eval judges share it).

The weighted score is sum_s p(s) * s / sum_s p(s) over the score tokens s in 1..10 at the
score's position (from the top-k log-probabilities; on a tokenizer that writes 10 as "1"
"0", the mass of "1" is split by p("0" | "1") at the next position); without
log-probabilities, the integer itself. The judge's score is (score - 1) / 9, in [0, 1].
"""

from __future__ import annotations

import math
from typing import Any

from lasagna.judges.base import Reply
from lasagna.judges.prompts import VERDICT_REASON_CHARS
from lasagna.models.json_bounds import bounded_string

SCALE = (1, 10)
TOP_LOGPROBS = 20
SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": SCALE[0], "maximum": SCALE[1]},
        "reason": bounded_string(VERDICT_REASON_CHARS),
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}


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


def rubric_result(reply: Reply, name: str, threshold: float) -> dict[str, Any]:
    """A score reply -> `<name>_score` (0..1), the rubric's integer, whether it was
    weighted, passed and the reason (the reply itself is the row's verdict)."""
    value = reply.value or {}
    completion = reply.completion
    weighted = None
    if completion is not None and completion.tokens and completion.top_logprobs:
        weighted = weighted_score(completion.tokens, completion.top_logprobs)
    result = normalise(weighted if weighted is not None else float(value["score"]))
    return {
        f"{name}_score": result,
        f"{name}_rubric_score": int(value["score"]),
        f"{name}_weighted": weighted is not None,
        "passed": result >= threshold,
        "reason": value["reason"],
    }
