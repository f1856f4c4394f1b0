"""The pooled-gold corpus: every row's contexts pooled into one corpus.

An identical passage (same text after trimming surrounding space) is one document, relevant
to every row citing it. `expected_docs` names documents; unnamed passages get an id from
their text's hash, so ids do not depend on row order. An unanswerable row's passages join
the pool but are relevant to nothing.
"""

from __future__ import annotations

import hashlib

from lasagna.data.model import Document, Row
from lasagna.errors import Problem

POOLED_GRADE = 1


def passage_id(text: str) -> str:
    """The id of an unnamed passage: stable for the same text on any machine."""
    return "passage-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def pool_gold(
    rows: list[Row], file: str
) -> tuple[dict[str, Document], dict[str, dict[str, int]], list[Problem]]:
    """Return (corpus, qrels, problems); problems when one name means two texts or back."""
    corpus: dict[str, Document] = {}
    named_at: dict[str, str] = {}  # doc id -> where it was first given
    id_of_text: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    problems: list[Problem] = []
    for row in rows:
        where = f"line {row.line}" if row.line is not None else f"id {row.id}"
        names = row.expected_docs or [None] * len(row.contexts)
        for name, raw in zip(names, row.contexts, strict=True):
            text = raw.strip()
            doc_id = name if name is not None else id_of_text.get(text, passage_id(text))
            known = corpus.get(doc_id)
            if known is not None and known.text != text:
                problems.append(
                    Problem(
                        f"document '{doc_id}' has a different text here than at {named_at[doc_id]}",
                        file=file,
                        where=where,
                        field="expected_docs",
                        fix="use one text per document name, or give the passages other names",
                    )
                )
                continue
            other = id_of_text.get(text)
            if other is not None and other != doc_id:
                problems.append(
                    Problem(
                        f"this passage is named '{doc_id}' here but '{other}' at {named_at[other]}",
                        file=file,
                        where=where,
                        field="expected_docs",
                        fix="use one name for one passage",
                    )
                )
                continue
            if known is None:
                corpus[doc_id] = Document(id=doc_id, text=text)
                named_at[doc_id] = where
                id_of_text[text] = doc_id
            if not row.unanswerable:
                qrels.setdefault(row.id, {})[doc_id] = POOLED_GRADE
    return corpus, qrels, problems
