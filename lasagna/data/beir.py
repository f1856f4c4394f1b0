"""BEIR folder: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (one split per file), each
also read gzipped (corpus.jsonl.gz, as Hugging Face's BeIR sets ship them).

The rows of a split are the queries judged in its qrels file, in queries.jsonl order; the
other queries of the file are counted, not loaded. A query's `metadata` object is kept as
the row's metadata (filters and `results show --by` read it); other extra keys, and a
`metadata` that is not an object, are ignored (BEIR files vary in them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna.data.conversations import kind_of
from lasagna.data.identity import (
    BEIR_CORPUS,
    BEIR_QRELS_DIR,
    BEIR_QUERIES,
    beir_file,
    qrels_files,
)
from lasagna.data.model import Document, Row
from lasagna.data.text import decode_utf8, read_file, text_lines
from lasagna.errors import Problem, UserError

DEFAULT_SPLIT = "test"
_SHOW_IDS = 5


@dataclass
class BeirData:
    rows: list[Row]
    corpus: dict[str, Document]
    qrels: dict[str, dict[str, int]]
    split: str
    splits: list[str]
    queries_in_file: int
    judgments: int


def available_splits(folder: Path) -> list[str]:
    return sorted(qrels_files(folder))


def choose_split(folder: Path, split: str | None) -> str:
    """The asked split, else `test`, else the only one; otherwise list those that exist."""
    splits = available_splits(folder)
    if split is not None and split in splits:
        return split
    if split is None and DEFAULT_SPLIT in splits:
        return DEFAULT_SPLIT
    if split is None and len(splits) == 1:
        return splits[0]
    qrels_dir = str(folder / BEIR_QRELS_DIR)
    if not splits:
        raise UserError(
            Problem(
                "the folder has no qrels/<split>.tsv file",
                file=qrels_dir,
                fix="add qrels/test.tsv (query-id<TAB>corpus-id<TAB>score)",
            )
        )
    asked = f"there is no split '{split}'" if split else "several splits and none is 'test'"
    raise UserError(
        Problem(
            f"{asked}; the splits are: {', '.join(splits)}",
            file=qrels_dir,
            field="split",
            fix=f"choose one with --split (or split: in the sweep), e.g. --split {splits[0]}",
        )
    )


def read_beir(folder: Path, split: str | None) -> BeirData:
    """Load and cross-check a BEIR folder; raise UserError with every problem found."""
    missing = [n for n in (BEIR_CORPUS, BEIR_QUERIES) if not beir_file(folder, n).is_file()]
    if missing:
        raise UserError(
            Problem(
                f"not a BEIR folder: {' and '.join(missing)} missing",
                file=str(folder),
                fix="a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv; "
                "for a question file pass the .jsonl/.csv/.json/.parquet file itself",
            )
        )
    chosen = choose_split(folder, split)
    problems: list[Problem] = []
    corpus_path, queries_path = beir_file(folder, BEIR_CORPUS), beir_file(folder, BEIR_QUERIES)
    qrels_path = qrels_files(folder)[chosen]

    corpus = read_corpus_jsonl(corpus_path, problems)

    queries: dict[str, tuple[str, int, dict]] = {}
    for number, obj in _objects(queries_path, problems):
        query_id = _id(obj, queries_path, f"line {number}", problems)
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            problems.append(
                _problem(queries_path, f"line {number}", "text must be a non-empty string", "text")
            )
            continue
        if query_id is None:
            continue
        if query_id in queries:
            problems.append(
                _problem(queries_path, f"line {number}", f"_id '{query_id}' repeats", "_id")
            )
            continue
        metadata = obj.get("metadata")
        queries[query_id] = (text, number, metadata if isinstance(metadata, dict) else {})

    qrels, judgments = _read_qrels(qrels_path, problems)
    problems += _dangling(
        qrels_path, "query", sorted(q for q in qrels if q not in queries), "queries"
    )
    unknown_docs = sorted({d for docs in qrels.values() for d in docs if d not in corpus})
    problems += _dangling(qrels_path, "document", unknown_docs, "corpus")
    if problems:
        raise UserError(problems)

    rows = [
        Row(id=qid, question=text, line=number, metadata=metadata)
        for qid, (text, number, metadata) in queries.items()
        if qid in qrels
    ]
    return BeirData(
        rows=rows,
        corpus=corpus,
        qrels={row.id: qrels[row.id] for row in rows},
        split=chosen,
        splits=available_splits(folder),
        queries_in_file=len(queries),
        judgments=judgments,
    )


def read_corpus_jsonl(
    path: Path, problems: list[Problem], data: bytes | None = None
) -> dict[str, Document]:
    """A corpus.jsonl of {_id, title, text} objects (BEIR's layout); problems are appended.
    `data`: the file's bytes when the caller has read them already."""
    objects = [(f"line {number}", obj) for number, obj in _objects(path, problems, data)]
    return corpus_documents(objects, path, problems)


def corpus_documents(
    objects: Iterable[tuple[str, dict[str, Any]]], path: Path, problems: list[Problem]
) -> dict[str, Document]:
    """Documents of {_id, title, text} objects, each with where it was read ("line 3",
    "row 3"); problems are appended."""
    corpus: dict[str, Document] = {}
    for where, obj in objects:
        doc_id = _id(obj, path, where, problems)
        text, title = obj.get("text"), obj.get("title", "")
        if not isinstance(text, str) or not isinstance(title, str):
            problems.append(_problem(path, where, "text/title must be strings", "text"))
            continue
        if doc_id is None:
            continue
        if doc_id in corpus:
            problems.append(_problem(path, where, f"_id '{doc_id}' repeats", "_id"))
            continue
        corpus[doc_id] = Document(id=doc_id, text=text, title=title)
    return corpus


def _objects(
    path: Path, problems: list[Problem], data: bytes | None = None
) -> list[tuple[int, dict[str, Any]]]:
    text = decode_utf8(read_file(path) if data is None else data, str(path))
    out = []
    for number, line in text_lines(text):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(_problem(path, f"line {number}", f"not valid JSON: {err.msg}", None))
            continue
        if not isinstance(obj, dict):
            problems.append(
                _problem(path, f"line {number}", f"{kind_of(obj)}, not a JSON object", None)
            )
            continue
        out.append((number, obj))
    return out


def _id(obj: dict[str, Any], path: Path, where: str, problems: list[Problem]) -> str | None:
    value = obj.get("_id")
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
        problems.append(_problem(path, where, "_id must be a non-empty string", "_id"))
        return None
    return str(value)


def _read_qrels(path: Path, problems: list[Problem]) -> tuple[dict[str, dict[str, int]], int]:
    """query-id, corpus-id, score (tab-separated; a header line is optional)."""
    text = decode_utf8(read_file(path), str(path))
    qrels: dict[str, dict[str, int]] = {}
    judgments = 0
    first = True
    for number, line in text_lines(text):
        if not line.strip():
            continue
        is_first, first = first, False
        parts = line.split("\t") if "\t" in line else line.split()
        parts = [p.strip() for p in parts]
        if len(parts) == 4:  # TREC layout: query-id iteration corpus-id score
            parts = [parts[0], parts[2], parts[3]]
        if len(parts) != 3:
            problems.append(
                _problem(
                    path,
                    f"line {number}",
                    f"{len(parts)} columns, expected 3",
                    None,
                    "write query-id<TAB>corpus-id<TAB>score",
                )
            )
            continue
        query_id, doc_id, score = parts
        try:
            grade = int(score)
        except ValueError:
            if is_first:
                continue  # a header line
            problems.append(
                _problem(
                    path,
                    f"line {number}",
                    f"score {score!r} is not an integer",
                    "score",
                    "write 0 for not relevant and 1, 2, ... for relevant",
                )
            )
            continue
        if doc_id in qrels.get(query_id, {}):
            problems.append(
                _problem(
                    path,
                    f"line {number}",
                    f"query {query_id} and document {doc_id} are judged twice",
                    None,
                    "keep one line per (query, document)",
                )
            )
            continue
        qrels.setdefault(query_id, {})[doc_id] = grade
        judgments += 1
    return qrels, judgments


_PLURAL = {"query": "queries", "document": "documents"}


def _dangling(path: Path, what: str, ids: list[str], file_name: str) -> list[Problem]:
    if not ids:
        return []
    shown = ", ".join(ids[:_SHOW_IDS]) + (", ..." if len(ids) > _SHOW_IDS else "")
    return [
        Problem(
            f"{len(ids)} judgment {what} id(s) are not in {file_name}.jsonl: {shown}",
            file=str(path),
            fix=f"remove those judgments or add the missing {_PLURAL.get(what, what + 's')} to "
            f"{file_name}.jsonl",
        )
    ]


def _problem(path: Path, where: str, message: str, field: str | None, fix: str | None = None):
    return Problem(
        message,
        file=str(path),
        where=where,
        field=field,
        fix=fix or "fix or remove the line",
    )
