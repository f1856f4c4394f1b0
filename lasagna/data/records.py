"""One record (a JSON object or a CSV row made into one) -> one validated `Row`.

The same rules for JSONL, JSON and CSV: the formats differ only in how a record is read.
"""

from __future__ import annotations

from typing import Any

from lasagna.data.conversations import kind_of, kind_of_texts, parse_turns
from lasagna.data.field_hints import did_you_mean
from lasagna.data.model import CORPUS_OPTION, Row
from lasagna.errors import Problem

CONVERSATION_FIELDS = ("chatbot_role", "scenario", "expected_outcome")
FIELDS = (
    "id",
    "question",
    "answer",
    "answers",
    "contexts",
    "context",
    "expected_docs",
    "metadata",
    "turns",
    *CONVERSATION_FIELDS,
)
_PAIRS = (("answer", "answers"), ("contexts", "context"))


def parse_record(
    record: dict[str, Any],
    *,
    file: str,
    where: str,
    line: int,
    default_id: str,
    with_corpus: bool = False,
) -> tuple[Row | None, list[Problem]]:
    """Validate one record; return the Row, or None with every problem found in it.
    `with_corpus`: the file names a corpus, so `expected_docs` name its documents and need
    no passage each (lasagna.data.corpus_judgments)."""

    def problem(message: str, field: str | None = None, fix: str | None = None) -> Problem:
        return Problem(message, file=file, where=where, field=field, fix=fix)

    problems = [_unknown_field(key, problem) for key in record if key not in FIELDS]
    for one, other in _PAIRS:
        if one in record and other in record:
            problems.append(
                problem(
                    f"both '{one}' and '{other}' are given",
                    field=other,
                    fix=f"keep one of '{one}' and '{other}' (both accept a string or a list)",
                )
            )

    row_id = _parse_id(record.get("id"), default_id, problem, problems)
    question = record.get("question")
    turns = None
    if "turns" in record:
        turns, turn_problems = parse_turns(record["turns"], file, where)
        problems += turn_problems
    if "question" in record or "turns" not in record:
        if not isinstance(question, str):
            got = "missing" if "question" not in record else f"{kind_of(question)}"
            problems.append(
                problem(
                    f"question is {got}; it must be a non-empty string",
                    field="question",
                    fix='give every row a "question" string (or "turns" for a conversation)',
                )
            )
            question = None
        elif not question.strip():
            problems.append(
                problem(
                    "question is empty",
                    field="question",
                    fix="write the question text, or delete the row",
                )
            )

    answer_key = "answers" if "answers" in record else "answer"
    answers = _strings(record.get(answer_key), answer_key, problem, problems)
    if any(not a.strip() for a in answers):
        problems.append(
            problem(
                "an answer is empty",
                field=answer_key,
                fix="remove the empty answer from the list, or write its text",
            )
        )
    context_key = "context" if "context" in record else "contexts"
    contexts = _strings(record.get(context_key), context_key, problem, problems)
    for i, passage in enumerate(contexts):
        if not passage.strip():
            problems.append(
                problem(
                    f"passage {i} is empty",
                    field=context_key,
                    fix="remove the empty passage or write its text",
                )
            )

    expected_docs = None
    if "expected_docs" in record:
        expected_docs = _strings(record["expected_docs"], "expected_docs", problem, problems)
        if not contexts and expected_docs and not with_corpus:  # meant for a corpus
            problems.append(
                problem(
                    f"expected_docs names {len(expected_docs)} document(s) of a corpus, and "
                    "no corpus was given",
                    field="expected_docs",
                    fix=f"give the corpus those names come from ({CORPUS_OPTION}), or add "
                    "contexts: one passage per name, in the same order",
                )
            )
        elif len(expected_docs) != len(contexts) and not with_corpus:
            problems.append(
                problem(
                    f"expected_docs has {len(expected_docs)} name(s) but {context_key} has "
                    f"{len(contexts)} passage(s)",
                    field="expected_docs",
                    fix="give one document name per passage, in the same order",
                )
            )
        if any(not name.strip() for name in expected_docs):
            problems.append(
                problem("a document name is empty", field="expected_docs", fix="name it")
            )

    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        problems.append(
            problem(
                f"metadata must be an object, got {kind_of(metadata)}",
                field="metadata",
                fix='write metadata as {"key": value, ...}',
            )
        )
        metadata = {}
    unanswerable = metadata.get("unanswerable", False)
    if not isinstance(unanswerable, bool):
        problems.append(
            problem(
                f"metadata.unanswerable must be true or false, got {unanswerable!r}",
                field="metadata.unanswerable",
                fix="write true or false without quotes",
            )
        )
        unanswerable = False
    if record.get(answer_key) == [] and not unanswerable:
        # an explicit empty list is a converter bug more often than a choice: say so, rather
        # than count a row "answerable" that has nothing to score against
        problems.append(
            problem(
                f"{answer_key} is an empty list",
                field=answer_key,
                fix=f"give at least one answer, leave {answer_key} out for a row with no "
                "reference answer, or mark it metadata.unanswerable: true",
            )
        )
    if unanswerable and answers:
        problems.append(
            problem(
                "the row is marked unanswerable but has an answer",
                field=answer_key,
                fix='remove the answer (or write "answer": ""), or drop metadata.unanswerable',
            )
        )

    extra: dict[str, Any] = {}
    for key in CONVERSATION_FIELDS:
        if key in record:
            if isinstance(record[key], str):
                extra[key] = record[key]
            else:
                problems.append(
                    problem(
                        f"{key} must be a string, got {kind_of(record[key])}",
                        field=key,
                        fix=f"write {key} as text",
                    )
                )

    if problems:
        return None, problems
    return (
        Row(
            id=row_id,
            question=question,
            answers=answers,
            contexts=contexts,
            expected_docs=expected_docs,
            metadata=metadata,
            unanswerable=unanswerable,
            turns=turns,
            extra=extra,
            line=line,
        ),
        [],
    )


def _unknown_field(key: str, problem: Any) -> Problem:
    hint = did_you_mean(key, FIELDS)
    return problem(
        f"unknown field '{key}'",
        field=key,
        fix=f"{hint}put fields of your own under metadata; known fields: {', '.join(FIELDS)}",
    )


def _parse_id(value: Any, default_id: str, problem: Any, problems: list[Problem]) -> str:
    if value is None:
        return default_id
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        problems.append(
            problem(
                f"id must be a string or a number, got {kind_of(value)}",
                field="id",
                fix="write the id as text or a number, or leave it out",
            )
        )
        return default_id
    text = str(value)
    if not text.strip():
        problems.append(
            problem("id is empty", field="id", fix=f"write an id or leave it out ({default_id})")
        )
    return text


def _strings(value: Any, key: str, problem: Any, problems: list[Problem]) -> list[str]:
    """A string or a list of strings -> list; an empty string means none."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    problems.append(
        problem(
            f"{key} must be a string or a list of strings, got {kind_of_texts(value)}",
            field=key,
            fix=f'write {key} as "text" or ["text", ...]',
        )
    )
    return []
