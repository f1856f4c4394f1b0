"""Judge test cases: the single-turn and multi-turn columns, in CSV, JSONL or JSON.

A judge file holds test cases, not questions: `input`, `actual_output`,
`retrieval_context`, `context`, `expected_output` (single-turn); `turns`, `chatbot_role`,
`scenario`, `expected_outcome` (multi-turn); plus `id` and `metadata`. In CSV a list
column is a JSON array or one plain string (one passage; a cell that opens like a JSON
array, `["`, is read as one and refused when malformed), `turns` a JSON-encoded string,
`metadata` a JSON object and `metadata.KEY` one key of it (lasagna.data.csvfile).
Unknown columns are errors with a suggestion; every problem of a file is reported at
once, with file, line, field and fix. Which benchmarks the cases can run is decided by
lasagna.judges.registry from the columns each row fills.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lasagna.data.conversations import kind_of, kind_of_texts, parse_turns
from lasagna.data.csvfile import (
    data_rows,
    header_where,
    is_metadata,
    json_array_cell,
    looks_like_json_array,
    metadata_cell,
    open_csv,
)
from lasagna.data.field_hints import did_you_mean
from lasagna.data.identity import digest_bytes, registered_name
from lasagna.data.loader import JUDGE_MARKERS, READERS, data_suffix, detect_format
from lasagna.data.parquetfile import parquet_columns
from lasagna.data.rows import Record, id_used_again
from lasagna.data.text import decode_utf8, read_file
from lasagna.errors import Problem, UserError, in_line_order

TEXT_FIELDS = ("input", "actual_output", "expected_output", "chatbot_role", "scenario")
TEXT_FIELDS += ("expected_outcome",)
LIST_FIELDS = ("retrieval_context", "context")
FIELDS = ("id", *TEXT_FIELDS[:3], *LIST_FIELDS, "turns", *TEXT_FIELDS[3:], "metadata")


@dataclass
class JudgeCases:
    """A validated, content-named judge file."""

    name: str
    revision: str
    source: str
    format: str
    cases: list[dict[str, Any]]  # plain dicts: they travel through Ray Data unchanged
    columns: set[str] = field(default_factory=set)  # fields some row fills
    split: str | None = None  # a judge file has no splits (plans read it of any data)
    corpus_provenance: str | None = None  # nor a corpus

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The cases, under the name plans and reports use for any data set's rows."""
        return self.cases

    @property
    def multi_turn(self) -> bool:
        return "turns" in self.columns


def looks_like_judge_file(path: str | Path) -> bool:
    """True when the header / first records name a single-turn judge column."""
    return bool(_head_columns(path) & set(JUDGE_MARKERS))


def is_judge_file(path: str | Path) -> bool:
    """A judge file: single-turn judge columns, or conversations (turns) and no questions."""
    columns = _head_columns(path)
    return bool(columns & set(JUDGE_MARKERS)) or ("turns" in columns and "question" not in columns)


def _head_columns(path: str | Path) -> set[str]:
    """The column names of the CSV header or Parquet schema, or the keys of the first
    JSON(L) records."""
    path = Path(path)
    if not path.is_file():
        return set()
    if data_suffix(path) == ".parquet":
        return parquet_columns(path)
    try:
        raw = read_file(path, 65536)  # the head only: the loader reads the file
    except UserError:
        return set()  # not gzip: the loader says so, naming the file
    head = raw.decode("utf-8-sig", errors="replace")
    if data_suffix(path) in (".csv", ".tsv"):
        return set(open_csv(head, str(path))[1])
    return set(re.findall(r'"([A-Za-z_]+)"\s*:', head)) & set(FIELDS + ("question",))


def load_judge_cases(
    path: str | Path, name: str | None = None, label_columns: tuple[str, ...] = ()
) -> JudgeCases:
    """Load and validate a judge file; UserError with every problem. `label_columns` are
    extra columns allowed for calibration (kept under case["labels"])."""
    path = Path(path)
    fmt = detect_format(path)
    if fmt == "beir":
        raise UserError(
            Problem(
                "a BEIR folder holds questions, not judge test cases",
                file=str(path),
                fix="use a CSV, JSONL, JSON or Parquet file with input/actual_output/... or turns",
            )
        )
    data = read_file(path)
    file = str(path)
    allowed = (*FIELDS, *label_columns)
    if fmt == "csv":  # its own header rules: label columns, JSON cells
        records, problems = _read_csv(decode_utf8(data, file), file, allowed)
    else:
        records, problems = READERS[data_suffix(path)][1](data, file)
    cases: list[dict[str, Any]] = []
    first_seen: dict[str, str] = {}
    for record in records:
        case, found = parse_case(record, file, allowed, label_columns)
        problems += found
        case_id = case["id"] if case else str(record.data.get("id", record.default_id))
        problems += id_used_again(case_id, record, first_seen, file)
        if case:
            cases.append(case)
    if problems:
        problems = in_line_order(problems)
        raise UserError(problems, title=f"{file}: {len(problems)} problem(s)")
    digest = digest_bytes(data)
    columns = {k for c in cases for k in FIELDS if c.get(k)}
    return JudgeCases(registered_name(path, digest, name), digest, file, fmt, cases, columns)


def parse_case(
    record: Record, file: str, allowed: tuple[str, ...], label_columns: tuple[str, ...] = ()
) -> tuple[dict[str, Any] | None, list[Problem]]:
    """One record -> a case dict with every field (empty when absent), or its problems."""
    data, where = record.data, record.where

    def problem(message: str, fld: str, fix: str) -> Problem:
        return Problem(message, file=file, where=where, field=fld, fix=fix)

    problems = [_unknown(key, allowed, problem) for key in data if key not in allowed]
    case: dict[str, Any] = {"id": record.default_id, "line": record.line}
    raw_id = data.get("id")
    if raw_id is not None:
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int | float):
            problems.append(
                problem(
                    f"id must be a string or a number, got {kind_of(raw_id)}",
                    "id",
                    "write the id as text or a number, or leave it out",
                )
            )
        elif not str(raw_id).strip():
            problems.append(problem("id is empty", "id", "write an id or leave it out"))
        else:
            case["id"] = str(raw_id)
    for key in TEXT_FIELDS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            problems.append(
                problem(
                    f"{key} must be a string, got {kind_of(value)}",
                    key,
                    f"write {key} as text",
                )
            )
            value = None
        case[key] = value if value and value.strip() else None
    for key in LIST_FIELDS:
        value = data.get(key)
        if isinstance(value, str):
            value = [value] if value.strip() else []
        if value is None:
            value = []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(
                problem(
                    f"{key} must be a string or a list of strings, got {kind_of_texts(value)}",
                    key,
                    f'write {key} as "text" or ["text", ...]',
                )
            )
            value = []
        if any(not v.strip() for v in value):
            problems.append(
                problem(f"a passage of {key} is empty", key, "remove it or write its text")
            )
        case[key] = list(value)
    case["turns"] = None
    if data.get("turns") is not None:
        turns, found = parse_turns(data["turns"], file, where)
        problems += found
        case["turns"] = [{"role": t.role, "content": t.content} for t in turns or []]
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        problems.append(
            problem(
                f"metadata must be an object, got {kind_of(metadata)}",
                "metadata",
                'write metadata as {"key": value, ...}',
            )
        )
        metadata = {}
    case["metadata"] = metadata
    case["labels"] = {k: data[k] for k in label_columns if k in data}
    if not any(data.get(k) not in (None, "", []) for k in ("input", "actual_output", "turns")):
        problems.append(
            problem(
                "the row has neither input/actual_output nor turns",
                "input",
                "a single-turn case needs input and actual_output; a conversation, turns",
            )
        )
    return (None if problems else case), problems


def _unknown(key: str, allowed: tuple[str, ...], problem: Any) -> Problem:
    hint = did_you_mean(key, allowed)
    return problem(
        f"unknown column '{key}'",
        key,
        f"{hint}put fields of your own under metadata (in CSV: a metadata.{key} column); "
        f"judge columns: {', '.join(FIELDS)}",
    )


def _read_csv(text: str, file: str, allowed: tuple[str, ...]) -> tuple[list[Record], list[Problem]]:
    """Header + rows; list cells may be JSON arrays, turns is JSON text, metadata columns
    go to the row's metadata."""
    reader, header, problems = open_csv(text, file)
    where = header_where(reader)
    problems = [
        _unknown(c, allowed, lambda m, f, x: Problem(m, file=file, where=where, field=f, fix=x))
        for c in header
        if c not in allowed and not is_metadata(c)
    ] + problems
    if problems:
        return [], problems
    records: list[Record] = []
    for line, where, cells in data_rows(reader, header, file, problems):
        record: dict[str, Any] = {}
        for column, cell in zip(header, cells, strict=True):
            if not cell.strip():
                continue
            if is_metadata(column):  # `metadata` (a JSON object) or `metadata.KEY`
                if problem := metadata_cell(record, column, cell, file, where):
                    problems.append(problem)
                continue
            value, problem = _cell(column, cell, file, where)
            if problem:
                problems.append(problem)
            else:
                record[column] = value
        records.append(Record(record, where, line, f"row{line}"))
    if not records and not problems:
        problems.append(Problem("the file has a header but no rows", file=file, fix="add rows"))
    return records, problems


def _cell(column: str, cell: str, file: str, where: str) -> tuple[Any, Problem | None]:
    """A CSV cell -> its value: JSON for turns, JSON array or text for lists."""
    if column in LIST_FIELDS:
        if not looks_like_json_array(cell):
            return cell, None  # one passage (it may start with "[", as "[1] Intro" does)
        return json_array_cell(cell, column, file, where)
    if column != "turns":
        return cell, None
    try:
        return json.loads(cell.strip()), None
    except json.JSONDecodeError as err:
        example = '"[{""role"": ""user"", ""content"": ""Hello""}]" (or use JSONL)'
        return None, Problem(
            f"the {column} cell is not valid JSON ({err.msg} at character {err.pos + 1})",
            file=file,
            where=where,
            field=column,
            fix=f"write the cell as JSON with doubled quotes inside the CSV quotes, e.g. {example}",
        )
