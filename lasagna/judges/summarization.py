"""summarization: alignment (no contradicted claims) and coverage of the source.

alignment = summary claims not contradicted by the source (`input`) / claims, as in
faithfulness (1.0 with no claims; `penalize_unverified` applies). coverage: the judge writes
`assessment_questions` yes/no questions from the source, then answers each from the source
and from the summary; coverage = questions answered "yes" from both / questions answered
"yes" from the source (DeepEval; 1.0 when no question is answered "yes" from the source).
summarization_score = min(alignment, coverage). No claims or no questions from a non-empty
text: the row is flagged degenerate.
"""

from __future__ import annotations

from typing import Any

from lasagna.judges import faithfulness
from lasagna.judges.base import Call, Judgement, clean_items, values_of
from lasagna.judges.degenerate import merge_flags, nothing_found
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import list_schema, passages_text, verdict_schema
from lasagna.judges.verdicts import judgement, paired
from lasagna.models.structured import Prompt

ID = "summarization"
NAME = "Summarization"
REQUIRED = ("input", "actual_output")
OPTIONAL = ()
OUTPUT_METRICS = ("summarization_score", "alignment_score", "coverage_score")
PRIMARY = "summarization_score"
HIGHER_IS_BETTER = True
EMPTY_COVERAGE = 1.0

QUESTIONS = Prompt(
    id="summarization.questions",
    version="v1",
    system="You write closed yes/no questions about the key information of a text. The "
    "answer to each question, from the text, must be 'yes'.",
    user="Text:\n{text}\n\nWrite {n} yes/no questions about the text's key information.",
    schema=list_schema("questions", 10),
)
ANSWER = Prompt(
    id="summarization.answer",
    version="v1",
    system="You answer a yes/no question from a text alone. 'yes' or 'no' if the text "
    "answers it; 'idk' if the text does not say.",
    user="Text:\n{text}\n\nQuestion: {question}",
    schema=verdict_schema(("yes", "no", "idk")),
)
PROMPTS = (faithfulness.CLAIMS, faithfulness.VERDICT, QUESTIONS, ANSWER)


def coverage(source_answers: list[str], summary_answers: list[str]) -> float:
    asked = [s for o, s in zip(source_answers, summary_answers, strict=True) if o == "yes"]
    if not asked:
        return EMPTY_COVERAGE
    return sum(1 for s in asked if s == "yes") / len(asked)


def score(alignment: float, covered: float) -> float:
    return min(alignment, covered)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    source, summary = case["input"], case["actual_output"]
    extracted = values_of(
        (
            yield [
                Call(faithfulness.CLAIMS, {"text": summary}),
                Call(QUESTIONS, {"text": source, "n": str(params.assessment_questions)}),
            ]
        )
    )
    claims = clean_items(extracted[0]["claims"], params.max_claims)
    questions = clean_items(extracted[1]["questions"], params.assessment_questions)
    context = passages_text([source])
    calls = [Call(faithfulness.VERDICT, {"context": context, "claim": c}) for c in claims]
    calls += [Call(ANSWER, {"text": source, "question": q}) for q in questions]
    calls += [Call(ANSWER, {"text": summary, "question": q}) for q in questions]
    replies = values_of((yield calls))
    claim_verdicts = replies[: len(claims)]
    from_source = replies[len(claims) : len(claims) + len(questions)]
    from_summary = replies[len(claims) + len(questions) :]
    alignment, _ = faithfulness.score(
        [v["verdict"] for v in claim_verdicts], params.penalize_unverified
    )
    covered = coverage([a["verdict"] for a in from_source], [a["verdict"] for a in from_summary])
    value = score(alignment, covered)
    verdicts = paired("claim", claims, claim_verdicts)
    verdicts += [
        {"question": q, "source": o["verdict"], "summary": s["verdict"], "reason": s["reason"]}
        for q, o, s in zip(questions, from_source, from_summary, strict=True)
    ]
    return judgement(
        "summarization_score",
        value,
        params.threshold,
        verdicts,
        f"alignment {alignment:.2f}, coverage {covered:.2f}",
        alignment_score=alignment,
        coverage_score=covered,
        claims_count=len(claims),
        questions_count=len(questions),
        **merge_flags(
            nothing_found(claims, summary, "claims"),
            nothing_found(questions, source, "assessment questions"),
        ),
    )
