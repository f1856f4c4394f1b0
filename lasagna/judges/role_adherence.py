"""role-adherence: does every assistant turn stay in `chatbot_role`?

Each assistant turn is judged, with the conversation up to it, as in role ("yes") or out of
it ("no"). score = adhering turns / assistant turns; no assistant turn: 1.0. The role comes
from the row's chatbot_role, else the `chatbot_role` parameter; a run with neither is
refused before any model loads (see lasagna.judges.registry).
"""

from __future__ import annotations

from typing import Any

from lasagna.judges.base import Call, JudgeFailed, Judgement, values_of
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import conversation_text, verdict_schema
from lasagna.judges.verdicts import first_with, judgement, paired, share
from lasagna.models.structured import Prompt

ID = "role-adherence"
NAME = "Role Adherence"
REQUIRED = ("turns", "chatbot_role")
OPTIONAL = ("scenario",)
OUTPUT_METRICS = ("role_adherence_score",)
PRIMARY = "role_adherence_score"
HIGHER_IS_BETTER = True
EMPTY_SCORE = 1.0

VERDICT = Prompt(
    id="role_adherence.verdict",
    version="v1",
    system="You judge whether a chatbot stays in its assigned role. 'yes' if the last "
    "assistant turn is what the role would say (tone, persona, limits), 'no' if it breaks "
    "character.",
    user="Role: {role}\n{scenario}\nConversation:\n{conversation}\n\n"
    "Does assistant turn {turn} stay in role?",
    schema=verdict_schema(("yes", "no")),
)
PROMPTS = (VERDICT,)


def role_of(case: dict[str, Any], params: JudgeParams) -> str | None:
    return case.get("chatbot_role") or params.chatbot_role


def score(verdicts: list[str]) -> float:
    return share(verdicts, lambda v: v == "yes", EMPTY_SCORE)


def judge(case: dict[str, Any], params: JudgeParams) -> Judgement:
    role = role_of(case, params)
    if not role:
        raise JudgeFailed("no chatbot_role for this row (and no chatbot_role parameter)")
    turns = case["turns"]
    scenario = f"Scenario: {case['scenario']}\n" if case.get("scenario") else ""
    spots = [i for i, t in enumerate(turns) if t["role"] == "assistant"]
    calls = [
        Call(
            VERDICT,
            {
                "role": role,
                "scenario": scenario,
                "conversation": conversation_text(turns, upto=i),
                "turn": str(i + 1),
            },
        )
        for i in spots
    ]
    replies = values_of((yield calls))
    verdicts = paired("turn", [i + 1 for i in spots], replies)
    labels = [v["verdict"] for v in verdicts]
    broken = first_with(verdicts, "no")
    reason = f"all {len(labels)} assistant turn(s) stay in role"
    if broken:
        reason = f"turn {broken['turn']} breaks role: {broken['reason']}"
    return judgement(
        "role_adherence_score",
        score(labels),
        params.threshold,
        verdicts,
        reason,
        assistant_turns_count=len(labels),
        adhering_turns_count=labels.count("yes"),
    )
