"""Records read from a file -> validated rows, with checks that span rows (unique ids)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lasagna.data.model import Row
from lasagna.data.records import parse_record
from lasagna.errors import Problem


@dataclass(frozen=True)
class Record:
    """One object read from a file, with where it was found (for error messages)."""

    data: dict[str, Any]
    where: str  # "line 3" / "item 2"
    line: int  # 1-based line (JSONL/CSV) or item number (JSON)
    default_id: str  # "row<line>"


def rows_from_records(
    records: Iterable[Record], file: str, with_corpus: bool = False
) -> tuple[list[Row], list[Problem]]:
    """Parse every record; collect all problems, including duplicate ids. `with_corpus`:
    the file names a corpus (see lasagna.data.records.parse_record)."""
    rows: list[Row] = []
    problems: list[Problem] = []
    first_seen: dict[str, str] = {}
    for record in records:
        row, found = parse_record(
            record.data,
            file=file,
            where=record.where,
            line=record.line,
            default_id=record.default_id,
            with_corpus=with_corpus,
        )
        problems += found
        problems += id_used_again(row.id if row else _raw_id(record), record, first_seen, file)
        if row is not None:
            rows.append(row)
    return rows, problems


def id_used_again(
    row_id: str, record: Record, first_seen: dict[str, str], file: str
) -> list[Problem]:
    """[the problem] when `row_id` was seen before in the file (`first_seen`: id -> where,
    updated here), else []."""
    if row_id not in first_seen:
        first_seen[row_id] = record.where
        return []
    return [
        Problem(
            f"id {row_id!r} is used again (first at {first_seen[row_id]})",
            file=file,
            where=record.where,
            field="id",
            fix="give every row its own id, or leave ids out to number rows by line",
        )
    ]


def _raw_id(record: Record) -> str:
    value = record.data.get("id")
    return record.default_id if value is None else str(value)
