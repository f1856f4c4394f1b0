"""contextual-recall: can every sentence of the expected output be found in the retrieval
context?

The expected output is cut into sentences (`sentences`: at ., ! or ? followed by space and
a capital letter, digit or quote; no model call), and each sentence is judged attributable
to the retrieval context ("yes") or not ("no").
score = attributable sentences / sentences (DeepEval). No sentence: 0.0.
"""

from __future__ import annotations

import re
from typing import Any

from lasagna.judges.base import Call, Judgement, values_of
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import passages_text, verdict_schema
from lasagna.judges.verdicts import first_with, judgement, paired, share
from lasagna.models.structured import Prompt

ID = "contextual-recall"
NAME = "Contextual Recall"
REQUIRED = ("expected_output", "retrieval_context")
OPTIONAL = ("input",)
OUTPUT_METRICS = ("contextual_recall_score",)
PRIMARY = "contextual_recall_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 0.0
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")

VERDICT = Prompt(
    id="contextual_recall.verdict",
    version="v1",
    system="You check whether a sentence of an expected answer can be attributed to "
    "retrieved context passages. Answer 'yes' if the passages state it (or enough to "
    "derive it), 'no' if they do not. Use only the passages, not your own knowledge.",
    user="Context:\n{context}\n\nSentence: {sentence}\n\n"
    "Can the sentence be attributed to the context?",
    schema=verdict_schema(("yes", "no")),
)
PROMPTS = (VERDICT,)


def sentences(text: str) -> list[str]:
    """The sentences of a text, in order, without empty ones."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def score(verdicts: list[str]) -> float:
    return share(verdicts, lambda v: v == "yes", EMPTY_SCORE)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    expected = sentences(case["expected_output"])
    context = passages_text(case["retrieval_context"])
    replies = values_of(
        (yield [Call(VERDICT, {"context": context, "sentence": s}) for s in expected])
    )
    verdicts = paired("sentence", expected, replies)
    labels = [v["verdict"] for v in verdicts]
    missing = first_with(verdicts, "no")
    reason = f"all {len(labels)} sentence(s) found in the retrieval context"
    if missing:
        reason = f"not in the context: {missing['sentence'][:120]} ({missing['reason']})"
    return judgement(
        "contextual_recall_score",
        score(labels),
        params.threshold,
        verdicts,
        reason,
        sentences_count=len(labels),
        attributable_sentences_count=labels.count("yes"),
    )
