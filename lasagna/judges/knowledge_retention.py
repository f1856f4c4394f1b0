"""knowledge-retention: does the chatbot remember what the user told it?

The judge lists the facts each user turn discloses; then every assistant turn that comes
after at least one disclosed fact is judged for attrition. The verdict is stored, and
asked for, under the name of what it says: `attrition: yes` means the turn forgets,
contradicts or asks again for a fact given earlier (the opposite polarity of the other
judges' `verdict: yes`, so it is not called a verdict). score = assistant turns without
attrition / assistant turns (a turn with no earlier facts cannot forget any); no assistant
turn: 1.0. No fact found in non-empty user turns: the row is flagged degenerate.
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, Judgement, clean_items, values_of
from lasagna.judges.degenerate import nothing_found
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import conversation_text, list_schema, verdict_schema
from lasagna.judges.verdicts import judgement, paired, share
from lasagna.models.structured import Prompt

ID = "knowledge-retention"
NAME = "Knowledge Retention"
REQUIRED = ("turns",)
OPTIONAL = ("chatbot_role", "scenario")
OUTPUT_METRICS = ("knowledge_retention_score",)
PRIMARY = "knowledge_retention_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 1.0

FACTS = Prompt(
    id="knowledge_retention.facts",
    version="v1",
    system="You list the facts a user discloses about themselves or their situation in one "
    "message (name, preferences, details of their problem). Questions are not facts.",
    user="User message: {message}\n\nList the facts it discloses (none: an empty list).",
    schema=list_schema("facts", 8),
)
ATTRITION = "attrition"  # the reply's and the stored verdict's key: "yes" = it forgot
VERDICT = Prompt(
    id="knowledge_retention.verdict",
    version="v2",
    system="You check whether a chatbot forgot what its user told it. attrition 'yes' if "
    "the last assistant turn forgets, contradicts or asks again for one of the known "
    "facts, 'no' otherwise.",
    user="Known facts:\n{facts}\n\nConversation:\n{conversation}\n\n"
    "Does assistant turn {turn} show attrition of the known facts?",
    schema=verdict_schema(("yes", "no"), key=ATTRITION),
)
PROMPTS = (FACTS, VERDICT)


def score(attrition: list[bool]) -> float:
    """`attrition[i]`: did assistant turn i forget a fact (False for turns not judged)."""
    return share(attrition, lambda forgot: not forgot, EMPTY_SCORE)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    turns = case["turns"]
    users = [i for i, t in enumerate(turns) if t["role"] == "user"]
    extracted = values_of((yield [Call(FACTS, {"message": turns[i]["content"]}) for i in users]))
    facts_at = {
        i: clean_items(r["facts"], params.max_claims) for i, r in zip(users, extracted, strict=True)
    }
    spots = [i for i, t in enumerate(turns) if t["role"] == "assistant"]
    known = {i: [f for u, fs in facts_at.items() if u < i for f in fs] for i in spots}
    judged = [i for i in spots if known[i]]
    calls = [
        Call(
            VERDICT,
            {
                "facts": "\n".join(f"- {f}" for f in known[i]),
                "conversation": conversation_text(turns, upto=i),
                "turn": str(i + 1),
            },
        )
        for i in judged
    ]
    replies = dict(zip(judged, values_of((yield calls)), strict=True))
    attrition = [replies[i][ATTRITION] == "yes" if i in replies else False for i in spots]
    value = score(attrition)
    verdicts = paired("turn", [i + 1 for i in judged], [replies[i] for i in judged])
    forgot = next((v for v in verdicts if v[ATTRITION] == "yes"), None)
    reason = f"no attrition in {len(spots)} assistant turn(s)"
    if forgot:
        reason = f"turn {forgot['turn']} forgets: {forgot['reason']}"
    return judgement(
        "knowledge_retention_score",
        value,
        params.threshold,
        verdicts,
        reason,
        facts_count=sum(len(f) for f in facts_at.values()),
        assistant_turns_count=len(spots),
        attrition_turns_count=sum(1 for v in verdicts if v[ATTRITION] == "yes"),
        **nothing_found(
            [f for fs in facts_at.values() for f in fs],
            [turns[i]["content"] for i in users],
            "facts",
        ),
    )
