"""The versioned prompts of question synthesis, each with the JSON schema of its reply.

A prompt's `prompt_id` names a fixed text; `sha256` hashes the system text, the user
template and the schema, so a changed prompt is visible in every row it wrote. Change the
text and bump the version (`factoid-v2`), never edit a released one in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lasagna.common.digest import json_sha256
from lasagna.models.base import ChatRequest, Message
from lasagna.models.json_bounds import bounded_string, max_reply_tokens

SYSTEM = "You write and check questions for testing a search system on a set of documents."


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# Length bounds close a string that a small model would otherwise repeat; the reply budget
# follows from them (lasagna.models.json_bounds), so a constrained reply always finishes.
QUESTION = bounded_string(128, min_chars=10)  # the most xgrammar compiles (json_bounds)
ANSWER = bounded_string(120, min_chars=1)


@dataclass(frozen=True)
class Prompt:
    prompt_id: str
    template: str  # str.format fields: see each prompt
    schema: dict[str, Any]

    @property
    def max_tokens(self) -> int:
        """The reply budget: the most tokens a reply valid against the schema can take."""
        return max_reply_tokens(self.schema)

    @property
    def sha256(self) -> str:
        return json_sha256({"system": SYSTEM, "template": self.template, "schema": self.schema})

    def request(self, **fields: str) -> ChatRequest:
        """The call at temperature 0 with constrained JSON output (schema instructions too)."""
        messages = [
            Message(role="system", content=SYSTEM),
            Message(role="user", content=self.template.format(**fields)),
        ]
        return ChatRequest(
            messages, max_tokens=self.max_tokens, temperature=0.0, json_schema=self.schema
        )


FACTOID = Prompt(
    "factoid-v1",
    "Passage:\n{passage}\n\n"
    "Write one question that this passage answers with a short fact (a name, number, date, "
    "place or short phrase), and that answer, copied from the passage. The question must "
    "make sense to someone who has not seen the passage.",
    _object(question=QUESTION, answer=ANSWER),
)
MULTIHOP = Prompt(
    "multihop-v1",
    "Passage A:\n{passage_a}\n\nPassage B:\n{passage_b}\n\n"
    "Write one question whose answer needs a fact from passage A and a fact from passage B "
    "together, and its short answer. The question must make sense to someone who has not "
    "seen the passages.",
    _object(question=QUESTION, answer=ANSWER),
)
UNANSWERABLE = Prompt(
    "unanswerable-v1",
    "Passage:\n{passage}\n\n"
    "Write one question on the subject of this passage that the passage does NOT answer: "
    "someone who reads only the passage cannot answer it. Do not answer it.",
    _object(question=QUESTION),
)
# The checks answer the question themselves (round-trip consistency): a small model's yes/no
# verdicts lean one way whatever the question, while its own answer can be compared.
VERIFY_ANSWER = Prompt(
    "verify-answer-v1",
    "{passages}\n\nAnswer the question from the passages above with a short phrase copied "
    "from them.\nQuestion: {question}",
    _object(answer=ANSWER),
)
VERIFY_UNANSWERABLE = Prompt(
    "verify-unanswerable-v1",
    "{passages}\n\nAnswer the question from the passages above with a short phrase copied "
    'from them. If no passage answers it, the answer is "unanswerable".\n'
    "Question: {question}",
    _object(answer=ANSWER),
)

GENERATION_PROMPTS = {"factoid": FACTOID, "multihop": MULTIHOP, "unanswerable": UNANSWERABLE}
ALL_PROMPTS = (FACTOID, MULTIHOP, UNANSWERABLE, VERIFY_ANSWER, VERIFY_UNANSWERABLE)


def numbered_passages(texts: list[str]) -> str:
    return "\n\n".join(f"Passage {i}:\n{t}" for i, t in enumerate(texts, start=1))
