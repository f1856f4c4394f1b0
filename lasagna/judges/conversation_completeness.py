"""conversation-completeness: are all the user's intentions satisfied by the chatbot?

The judge lists the user's intentions across the turns, then judges each satisfied ("yes")
or not ("no") by the whole conversation. score = satisfied / intentions (DeepEval); no
intention found: 1.0 (flagged degenerate). scenario and expected_outcome, when given, are
shown to the judge.
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, clean_items, values_of
from lasagna.judges.degenerate import nothing_found
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import conversation_text, list_schema, verdict_schema
from lasagna.judges.verdicts import first_with, judgement, paired, share
from lasagna.models.structured import Prompt

ID = "conversation-completeness"
NAME = "Conversation Completeness"
REQUIRED = ("turns",)
OPTIONAL = ("chatbot_role", "scenario", "expected_outcome")
OUTPUT_METRICS = ("conversation_completeness_score",)
PRIMARY = "conversation_completeness_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 1.0

INTENTIONS = Prompt(
    id="conversation_completeness.intentions",
    version="v1",
    system="You read a conversation between a user and a chatbot and list what the user "
    "wants: each intention one short sentence, e.g. 'The user wants to reset a password.'",
    user="{background}Conversation:\n{conversation}\n\nList the user's intentions.",
    schema=list_schema("intentions", 8),
)
VERDICT = Prompt(
    id="conversation_completeness.verdict",
    version="v1",
    system="You judge whether a chatbot satisfied one intention of its user in a "
    "conversation. 'yes' if the chatbot met it (answered, did it, or took the right next "
    "step), 'no' if it was ignored, deflected or left unmet.",
    user="{background}Conversation:\n{conversation}\n\nIntention: {intention}\n\n"
    "Did the chatbot satisfy the intention?",
    schema=verdict_schema(("yes", "no")),
)
PROMPTS = (INTENTIONS, VERDICT)


def background(case: dict[str, Any]) -> str:
    """The optional columns, as lines before the conversation."""
    parts = [
        f"{label}: {case[key]}\n"
        for key, label in (
            ("chatbot_role", "Chatbot role"),
            ("scenario", "Scenario"),
            ("expected_outcome", "Expected outcome"),
        )
        if case.get(key)
    ]
    return "".join(parts) + ("\n" if parts else "")


def score(verdicts: list[str]) -> float:
    return share(verdicts, lambda v: v == "yes", EMPTY_SCORE)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    fields = {"background": background(case), "conversation": conversation_text(case["turns"])}
    (found,) = values_of((yield [Call(INTENTIONS, fields)]))
    intentions = clean_items(found["intentions"], params.max_claims)
    replies = values_of((yield [Call(VERDICT, {**fields, "intention": i}) for i in intentions]))
    verdicts = paired("intention", intentions, replies)
    labels = [v["verdict"] for v in verdicts]
    unmet = first_with(verdicts, "no")
    reason = f"all {len(labels)} intention(s) satisfied"
    if unmet:
        reason = f"unmet: {unmet['intention']} ({unmet['reason']})"
    return judgement(
        "conversation_completeness_score",
        score(labels),
        params.threshold,
        verdicts,
        reason,
        intentions_count=len(labels),
        satisfied_intentions_count=labels.count("yes"),
        **nothing_found(intentions, [t["content"] for t in case["turns"]], "intentions"),
    )
