"""The versioned prompts of question synthesis, each with the JSON schema of its reply.

Each is a `lasagna.models.structured.Prompt` (the type the judges use): its `sha256` hashes
the texts and the schema, so a changed prompt is visible in every row it wrote. Change the
text and bump the version (`factoid` v2), never edit a released one in place. A row's
metadata names its prompt as `prompt_id(prompt)`: "factoid-v1".
"""

from __future__ import annotations

from typing import Any

from lasagna.models.json_bounds import bounded_string
from lasagna.models.structured import Prompt

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


def prompt_id(prompt: Prompt) -> str:
    """How a synthetic row's metadata names the prompt that wrote it: "factoid-v1"."""
    return f"{prompt.id}-{prompt.version}"


FACTOID = Prompt(
    "factoid",
    "v1",
    SYSTEM,
    "Passage:\n{passage}\n\n"
    "Write one question that this passage answers with a short fact (a name, number, date, "
    "place or short phrase), and that answer, copied from the passage. The question must "
    "make sense to someone who has not seen the passage.",
    _object(question=QUESTION, answer=ANSWER),
)
MULTIHOP = Prompt(
    "multihop",
    "v1",
    SYSTEM,
    "Passage A:\n{passage_a}\n\nPassage B:\n{passage_b}\n\n"
    "Write one question whose answer needs a fact from passage A and a fact from passage B "
    "together, and its short answer. The question must make sense to someone who has not "
    "seen the passages.",
    _object(question=QUESTION, answer=ANSWER),
)
UNANSWERABLE = Prompt(
    "unanswerable",
    "v1",
    SYSTEM,
    "Passage:\n{passage}\n\n"
    "Write one question on the subject of this passage that the passage does NOT answer: "
    "someone who reads only the passage cannot answer it. Do not answer it.",
    _object(question=QUESTION),
)
# The checks answer the question themselves (round-trip consistency): a small model's yes/no
# verdicts lean one way whatever the question, while its own answer can be compared.
VERIFY_ANSWER = Prompt(
    "verify-answer",
    "v1",
    SYSTEM,
    "{passages}\n\nAnswer the question from the passages above with a short phrase copied "
    "from them.\nQuestion: {question}",
    _object(answer=ANSWER),
)
VERIFY_UNANSWERABLE = Prompt(
    "verify-unanswerable",
    "v1",
    SYSTEM,
    "{passages}\n\nAnswer the question from the passages above with a short phrase copied "
    'from them. If no passage answers it, the answer is "unanswerable".\n'
    "Question: {question}",
    _object(answer=ANSWER),
)

GENERATION_PROMPTS = {"factoid": FACTOID, "multihop": MULTIHOP, "unanswerable": UNANSWERABLE}
ALL_PROMPTS = (FACTOID, MULTIHOP, UNANSWERABLE, VERIFY_ANSWER, VERIFY_UNANSWERABLE)


def numbered_passages(texts: list[str]) -> str:
    return "\n\n".join(f"Passage {i}:\n{t}" for i, t in enumerate(texts, start=1))
