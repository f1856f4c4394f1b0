"""Relevance judgments of a question file against a named corpus.

A row's `expected_docs` name corpus documents (a `_id`, or for a folder of documents a
passage id `guide.md#0` or a whole file `guide.md`: all its passages); without them, its
`contexts` are matched to corpus passages by exact text (after trimming surrounding space).
A row with neither, an unanswerable row, and a row whose contexts match no passage have no
judgments: they are scored on generation only, and counted. A name that is not in the
corpus is an error (one problem: the count of questions, the first ids and names).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from lasagna.data.corpus_file import CorpusData
from lasagna.data.model import Row
from lasagna.errors import Problem

CORPUS_GRADE = 1
_SHOW = 5


@dataclass
class CorpusJudgments:
    rows: list[Row]  # a row judged by expected_docs alone gets their texts as its contexts
    qrels: dict[str, dict[str, int]]
    problems: list[Problem] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    unmatched_ids: list[str] = field(default_factory=list)  # rows whose contexts match nothing


def judge_rows(
    rows: list[Row], corpus: CorpusData, file: str, unit: str = "line"
) -> CorpusJudgments:
    """Judgments for every question row; problems for names the corpus does not hold.
    `unit`: how the question file numbers rows ("line", or "item" for JSON)."""
    by_text: dict[str, list[str]] = {}
    for doc in corpus.documents.values():
        by_text.setdefault(doc.text.strip(), []).append(doc.id)
    qrels: dict[str, dict[str, int]] = {}
    missing: list[tuple[Row, str]] = []  # (row, first name not found)
    unmatched: list[str] = []
    out: list[Row] = []
    for row in rows:
        if row.question is None:
            out.append(row)
            continue
        if row.expected_docs is not None:
            found, absent = _named(row.expected_docs, corpus)
            if absent:
                missing.append((row, absent[0]))
            if not row.contexts and found:
                texts = [corpus.documents[d].text for d in found]
                row = replace(row, contexts=texts)
        else:
            found = [d for c in row.contexts for d in by_text.get(c.strip(), [])]
            if row.contexts and len(found) == 0:
                unmatched.append(row.id)
        if found and not row.unanswerable:
            qrels[row.id] = {d: CORPUS_GRADE for d in found}
        out.append(row)
    answerable = [r for r in out if r.question is not None and not r.unanswerable]
    judged = sum(1 for r in answerable if qrels.get(r.id))
    stats = {
        "judged_questions": judged,
        "unjudged_questions": len(answerable) - judged,  # answerable, scored on generation only
        "contexts_unmatched": len(unmatched),
    }
    problems = [_missing_problem(missing, corpus, file, unit)] if missing else []
    return CorpusJudgments(out, qrels, problems, stats, unmatched)


def _named(names: list[str], corpus: CorpusData) -> tuple[list[str], list[str]]:
    """(document ids the names mean, in order without repeats; names the corpus lacks)."""
    found: list[str] = []
    absent: list[str] = []
    for name in names:
        ids = [name] if name in corpus.documents else corpus.passages_of.get(name)
        if not ids:
            absent.append(name)
            continue
        found += [d for d in ids if d not in found]
    return found, absent


def _missing_problem(
    missing: list[tuple[Row, str]], corpus: CorpusData, file: str, unit: str
) -> Problem:
    shown = ", ".join(f"{row.id} ('{name}')" for row, name in missing[:_SHOW])
    more = ", ..." if len(missing) > _SHOW else ""
    example = ", ".join(f"'{d}'" for d in list(corpus.documents)[:2])
    first = missing[0][0]
    return Problem(
        f"{len(missing)} question(s) name documents that are not in the corpus "
        f"{corpus.source}: {shown}{more}",
        file=file,
        where=f"{unit} {first.line}" if first.line is not None else f"id {first.id}",
        field="expected_docs",
        fix=f"use the corpus's document ids (e.g. {example}), or add those documents to the corpus",
    )
