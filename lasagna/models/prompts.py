"""Prompt templates for the generation track, and the chat messages built from them.

A template is the text of one user message. It names the question as ``{question}`` and, for
RAG, the passages as ``{context}``; every other brace is kept as written (no escaping needed).
The passages are numbered, one per paragraph: ``[1] first passage``, a blank line, ``[2] ...``.

Built-in RAG template (`RAG_TEMPLATE`), verbatim::

    Answer the question using only the passages below. Reply with the shortest answer \
possible (a few words, copied from the passages when you can), not a full sentence. If the \
passages do not contain the answer, reply exactly: unanswerable

    Passages:
    {context}

    Question: {question}
    Answer:

Built-in closed-book template (`CLOSED_BOOK_TEMPLATE`), verbatim::

    Answer the question. Reply with the shortest answer possible (a few words), not a full \
sentence. If you do not know the answer, reply exactly: unanswerable

    Question: {question}
    Answer:

Both ask for "unanswerable" when the answer is missing, one of the default abstain phrases of
the generator configs, so abstentions on SQuAD v2 style unanswerable rows are detectable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from lasagna.errors import Problem, UserError
from lasagna.models.base import Message

RAG_TEMPLATE = (
    "Answer the question using only the passages below. Reply with the shortest answer "
    "possible (a few words, copied from the passages when you can), not a full sentence. "
    "If the passages do not contain the answer, reply exactly: unanswerable\n"
    "\n"
    "Passages:\n"
    "{context}\n"
    "\n"
    "Question: {question}\n"
    "Answer:"
)

CLOSED_BOOK_TEMPLATE = (
    "Answer the question. Reply with the shortest answer possible (a few words), not a full "
    "sentence. If you do not know the answer, reply exactly: unanswerable\n"
    "\n"
    "Question: {question}\n"
    "Answer:"
)

PromptKind = Literal["rag", "closed_book"]
_PLACEHOLDER = re.compile(r"\{(question|context)\}")


def effective_template(kind: PromptKind, template: str | None) -> str:
    """The template a generator runs: the configured one, else the built-in (validated)."""
    if template is None:
        return RAG_TEMPLATE if kind == "rag" else CLOSED_BOOK_TEMPLATE
    validate_template(kind, template)
    return template


def validate_template(kind: PromptKind, template: str, *, where: str | None = None) -> None:
    """Refuse a template missing a placeholder its kind fills (before any model loads)."""
    required = ("{question}", "{context}") if kind == "rag" else ("{question}",)
    problems = [
        Problem(
            f"the {kind} prompt template has no {name} placeholder",
            where=where,
            field="prompt",
            fix=f"put {name} where the "
            + ("question" if name == "{question}" else "numbered passages")
            + " should go",
        )
        for name in required
        if name not in template
    ]
    if kind == "closed_book" and "{context}" in template:
        problems.append(
            Problem(
                "a closed_book prompt template has a {context} placeholder but no passages",
                where=where,
                field="prompt",
                fix="remove {context}, or use a rag generator",
            )
        )
    if problems:
        raise UserError(problems)


def format_passages(passages: Sequence[str]) -> str:
    """Number passages [1], [2], ... one paragraph each."""
    return "\n\n".join(f"[{i}] {p.strip()}" for i, p in enumerate(passages, start=1))


def render(template: str, values: dict[str, str]) -> str:
    """Fill {question} / {context} in one pass, so inserted text is never re-substituted."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def build_rag_messages(
    question: str, passages: Sequence[str], template: str | None = None
) -> list[Message]:
    """The chat for a RAG answer: one user message from the template."""
    text = render(
        effective_template("rag", template),
        {"question": question.strip(), "context": format_passages(passages)},
    )
    return [Message(role="user", content=text)]


def build_closed_book_messages(question: str, template: str | None = None) -> list[Message]:
    """The chat for a closed-book answer: one user message from the template."""
    text = render(effective_template("closed_book", template), {"question": question.strip()})
    return [Message(role="user", content=text)]
