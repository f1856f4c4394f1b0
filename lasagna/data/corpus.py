"""The pooled-gold corpus: every row's contexts pooled into one corpus.

An identical passage (same text after trimming surrounding space) is one document, relevant
to every row citing it. `expected_docs` names documents; unnamed passages get an id from
their text's hash, so ids do not depend on row order. An unanswerable row's passages join
the pool but are relevant to nothing.
"""

from __future__ import annotations

from lasagna.common.digest import text_sha256
from lasagna.data.model import Document, Row
from lasagna.errors import Problem

POOLED_GRADE = 1


def passage_id(text: str) -> str:
    """The id of an unnamed passage: stable for the same text on any machine."""
    return "passage-" + text_sha256(text)[:12]


def pool_gold(
    rows: list[Row], file: str
) -> tuple[dict[str, Document], dict[str, dict[str, int]], list[Problem]]:
    """Return (corpus, qrels, problems); problems when one name means two texts or back.

    Names come first (a pass over every row's expected_docs), so an unnamed copy of a named
    passage is that document whichever row comes first.
    """
    text_of: dict[str, str] = {}  # doc name -> text
    name_of: dict[str, str] = {}  # text -> doc name
    named_at: dict[str, str] = {}  # doc name -> where first given
    problems: list[Problem] = []
    for row in rows:
        if row.expected_docs is None:
            continue
        for name, raw in zip(row.expected_docs, row.contexts, strict=True):
            text, where = raw.strip(), _where(row)
            if name in text_of and text_of[name] != text:
                problems.append(
                    _conflict(
                        f"document '{name}' has a different text here than at {named_at[name]}",
                        file,
                        where,
                        "use one text per document name, or give the passages other names",
                    )
                )
            elif text in name_of and name_of[text] != name:
                problems.append(
                    _conflict(
                        f"this passage is named '{name}' here but '{name_of[text]}' at "
                        f"{named_at[name_of[text]]}",
                        file,
                        where,
                        "use one name for one passage",
                    )
                )
            elif name not in text_of:
                text_of[name], name_of[text], named_at[name] = text, name, where

    corpus: dict[str, Document] = {}
    qrels: dict[str, dict[str, int]] = {}
    for row in rows:
        for raw in row.contexts:
            text = raw.strip()
            doc_id = name_of.get(text) or passage_id(text)
            corpus.setdefault(doc_id, Document(id=doc_id, text=text))
            if not row.unanswerable:
                qrels.setdefault(row.id, {})[doc_id] = POOLED_GRADE
    return corpus, qrels, problems


def _where(row: Row) -> str:
    return f"id {row.id}"  # ids name a row in every format (JSON has items, not lines)


def _conflict(message: str, file: str, where: str, fix: str) -> Problem:
    return Problem(message, file=file, where=where, field="expected_docs", fix=fix)
