"""answer-length: is the answer between MIN_WORDS and MAX_WORDS words long?

A code judge: it has no prompts, so it runs without a judge model (nothing is loaded, and
its trial keys do not depend on a model). score = 1 inside the bounds, else the share of
the nearer bound (words / MIN_WORDS below it, MAX_WORDS / words above it); a row passes
when its score meets `threshold` (default 0.5).
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Judgement
from lasagna.judges.params import JudgeParams
from lasagna.judges.verdicts import judgement

ID = "answer-length"
NAME = "Answer length"
REQUIRED = ("actual_output",)
OPTIONAL = ()
OUTPUT_METRICS = ("answer_length_score", "answer_words_count")
PRIMARY = "answer_length_score"
HIGHER_IS_BETTER = True
PROMPTS = ()  # no model calls
MIN_WORDS, MAX_WORDS = 3, 40


def score(words: int) -> float:
    if words < MIN_WORDS:
        return words / MIN_WORDS
    if words > MAX_WORDS:
        return MAX_WORDS / words
    return 1.0


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    yield from ()  # a judgement that asks the model nothing
    words = len(case["actual_output"].split())
    value = score(words)
    inside = MIN_WORDS <= words <= MAX_WORDS
    reason = f"{words} words ({'inside' if inside else 'outside'} {MIN_WORDS}-{MAX_WORDS})"
    return judgement(
        "answer_length_score", value, params.threshold, [], reason, answer_words_count=words
    )
