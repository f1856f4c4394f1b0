"""SQuAD v1.1 / v2.0 JSON read as question rows: the format most extractive QA sets ship in.

One row per question, in file order: id, question, answers (the distinct gold texts,
first-seen order), contexts ([its paragraph]), metadata {title}. An `is_impossible` question
(SQuAD 2.0) gets `metadata.unanswerable: true` and no answers, as the row format asks; its
`plausible_answers` are not references.
"""

from __future__ import annotations

from typing import Any

from lasagna.data.rows import Record
from lasagna.errors import Problem


def is_squad(value: Any) -> bool:
    """A parsed JSON document shaped as SQuAD: {"data": [{"paragraphs": [...]}, ...]}."""
    articles = value.get("data") if isinstance(value, dict) else None
    return bool(articles) and isinstance(articles, list) and _is_article(articles[0])


def _is_article(article: Any) -> bool:
    return isinstance(article, dict) and isinstance(article.get("paragraphs"), list)


def squad_records(squad: dict, file: str) -> tuple[list[Record], list[Problem]]:
    """Every question of a SQuAD document as a row record (validated later like any row),
    `where` its place in the file (`data[0].paragraphs[3].qas[1]`); a part that is not
    shaped as SQuAD, or an answerable question without answers, is a problem."""
    records: list[Record] = []
    problems: list[Problem] = []

    def problem(message: str, where: str, fix: str) -> None:
        problems.append(Problem(message, file=file, where=where, fix=fix))

    for a, article in enumerate(squad["data"]):
        if not _is_article(article):
            problem("not a SQuAD article", f"data[{a}]", 'give it "paragraphs": [...]')
            continue
        title = article.get("title", "")
        for p, paragraph in enumerate(article["paragraphs"]):
            at = f"data[{a}].paragraphs[{p}]"
            qas = paragraph.get("qas") if isinstance(paragraph, dict) else None
            if not isinstance(qas, list):
                problem("not a SQuAD paragraph", at, 'give it "context" and "qas": [...]')
                continue
            for q, qa in enumerate(qas):
                where = f"{at}.qas[{q}]"
                if not isinstance(qa, dict):
                    problem("not a SQuAD question", where, 'give it "id" and "question"')
                    continue
                row = _row(qa, paragraph.get("context"), title)
                if "answers" not in row and not qa.get("is_impossible"):
                    problem(
                        "an answerable question without answers",
                        f"id {qa.get('id')} ({where})",
                        "give it answers, or set is_impossible: true",
                    )
                    continue
                number = len(records) + 1
                records.append(Record(row, f"id {qa.get('id')} ({where})", number, f"row{number}"))
    if not records and not problems:
        problem("the file holds no questions", "data", "add questions under paragraphs[].qas")
    return records, problems


def _row(qa: dict, context: Any, title: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"question": qa.get("question")}
    if "id" in qa:
        row["id"] = qa["id"]
    metadata: dict[str, Any] = {"title": title}
    if qa.get("is_impossible"):
        metadata["unanswerable"] = True
    else:
        golds = [x.get("text") for x in qa.get("answers") or [] if isinstance(x, dict)]
        answers = list(dict.fromkeys(g for g in golds if isinstance(g, str)))
        if answers:
            row["answers"] = answers
    if context is not None:
        row["contexts"] = [context]
    row["metadata"] = metadata
    return row
