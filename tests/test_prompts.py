"""Prompt building: built-in and custom templates, placeholders, refusals."""

from __future__ import annotations

import pytest

from lasagna.errors import UserError
from lasagna.models.prompts import (
    CLOSED_BOOK_TEMPLATE,
    RAG_TEMPLATE,
    build_closed_book_messages,
    build_rag_messages,
    effective_template,
)


def test_rag_builtin_numbers_passages_and_asks_for_abstention():
    msgs = build_rag_messages(" Who? ", ["Alice went home.", "Bob stayed."])
    assert len(msgs) == 1 and msgs[0]["role"] == "user"
    text = msgs[0]["content"]
    assert "[1] Alice went home.\n\n[2] Bob stayed." in text
    assert "Question: Who?\nAnswer:" in text
    assert "unanswerable" in text
    assert "{context}" not in text and "{question}" not in text


def test_closed_book_builtin():
    text = build_closed_book_messages("What is 2+2?")[0]["content"]
    assert text == CLOSED_BOOK_TEMPLATE.replace("{question}", "What is 2+2?")


def test_custom_template_keeps_other_braces_and_is_not_resubstituted():
    template = 'Q={question} C={context} json={"a": 1}'
    text = build_rag_messages("has {context} inside", ["p {question}"], template)[0]["content"]
    assert text == 'Q=has {context} inside C=[1] p {question} json={"a": 1}'


@pytest.mark.parametrize(
    ("kind", "template", "missing"),
    [
        ("rag", "Context: {context}", "{question}"),
        ("rag", "Question: {question}", "{context}"),
        ("closed_book", "Answer this.", "{question}"),
    ],
)
def test_template_missing_placeholder_is_a_user_error(kind, template, missing):
    with pytest.raises(UserError) as err:
        effective_template(kind, template)
    assert missing in str(err.value)
    assert err.value.problems[0].field == "prompt"
    assert err.value.problems[0].fix


def test_closed_book_template_with_context_is_refused():
    with pytest.raises(UserError, match="no passages"):
        build_closed_book_messages("q", "{question} {context}")


def test_effective_template_defaults():
    assert effective_template("rag", None) == RAG_TEMPLATE
    assert effective_template("closed_book", None) == CLOSED_BOOK_TEMPLATE
