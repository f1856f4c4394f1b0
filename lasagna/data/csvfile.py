"""CSV: a header row, then one row per question. Passages in one cell are split on |||.

Cells are separated by commas, or by semicolons or tabs when the header line holds no comma
(spreadsheets in many locales save `;`-separated CSV; a `.tsv` export uses tabs).

Metadata: a `metadata` column of JSON objects, and/or `metadata.KEY` columns, one key
each, whose cells are read as a `--filter` value is (`2020` a number, `true` a boolean; an
empty cell: the row has no such key).

A list cell (contexts, expected_docs, answers; an answer cell too) that opens like a JSON
array (`["`, `[]`, `[{`) is read as one: a well-formed array gives its items, a malformed
one is refused (line, column, fix) as a malformed `turns` cell is, never taken as one
literal passage or answer. Plain text in a list cell is split on |||.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from lasagna.data.conversations import parse_turns_cell
from lasagna.data.field_hints import did_you_mean
from lasagna.data.json_text import keys_twice, loads, twice_problem
from lasagna.data.records import CONVERSATION_FIELDS
from lasagna.data.rows import Record
from lasagna.errors import Problem

COLUMNS = ("id", "question", "answer", "answers", "contexts", "expected_docs", "turns")
COLUMNS += CONVERSATION_FIELDS
LIST_COLUMNS = ("contexts", "expected_docs", "answers")
ARRAY_COLUMNS = (*LIST_COLUMNS, "answer")  # a cell opening like a JSON array is one
PASSAGE_SEPARATOR = "|||"
_JSON_ARRAY = re.compile(r'^\s*\[\s*["\[\]{]')  # [" ... / [] / [[ / [{ : meant as JSON


def looks_like_json_array(cell: str) -> bool:
    """True when a cell opens like a JSON array (`["`, `[]`, `[{`); "[1] Intro" does not."""
    return bool(_JSON_ARRAY.match(cell))


def json_array_cell(cell: str, column: str, file: str, where: str) -> tuple[Any, Problem | None]:
    """A list cell written as a JSON array -> its value, or the problem naming the file,
    line, column and where in the cell the JSON breaks."""
    try:
        return json.loads(cell.strip()), None
    except json.JSONDecodeError as err:
        return None, Problem(
            f"the {column} cell is not a valid JSON array ({err.msg} at character {err.pos + 1})",
            file=file,
            where=where,
            field=column,
            fix="write the cell as a JSON array with doubled quotes inside the CSV quotes, e.g. "
            '"[""p1"", ""p2""]" (or as plain text not starting with [")',
        )


METADATA = "metadata"
METADATA_PREFIX = "metadata."


def is_metadata(column: str) -> bool:
    """`metadata` or a `metadata.KEY` column."""
    return column == METADATA or (
        column.startswith(METADATA_PREFIX) and len(column) > len(METADATA_PREFIX)
    )


def metadata_cell(
    record: dict[str, Any], column: str, cell: str, file: str, where: str
) -> Problem | None:
    """Put a `metadata` (JSON object) or `metadata.KEY` cell into `record["metadata"]`."""
    from lasagna.data.select import scalar_of

    if not cell.strip():
        return None
    meta = record.setdefault(METADATA, {})
    if column != METADATA:
        if isinstance(meta, dict):
            meta[column[len(METADATA_PREFIX) :]] = scalar_of(cell.strip())
        return None
    try:
        value = loads(cell.strip())
    except json.JSONDecodeError as err:
        return Problem(
            f"the metadata cell is not valid JSON ({err.msg} at character {err.pos + 1})",
            file=file,
            where=where,
            field=METADATA,
            fix="write it as a JSON object with doubled quotes inside the CSV quotes, e.g. "
            '"{""source"": ""web""}", or use metadata.KEY columns',
        )
    if twice := keys_twice(value, METADATA_PREFIX):
        return twice_problem(twice, file, where)
    if not isinstance(value, dict):
        record[METADATA] = value  # refused where the record is read, naming its type
    elif isinstance(meta, dict):
        record[METADATA] = {**value, **meta}  # a metadata.KEY column wins
    return None


def read_csv(text: str, file: str) -> tuple[list[Record], list[Problem]]:
    """Check the header, then turn each data row into a record of typed fields."""
    reader, header, problems = open_csv(text, file)
    if not header:
        return [], problems
    problems = _header_problems(header, file, header_where(reader)) + problems
    if problems:
        return [], problems
    records: list[Record] = []
    for line, where, cells in data_rows(reader, header, file, problems):
        record: dict = {}
        bad_cell = False
        for column, cell in zip(header, cells, strict=True):
            if is_metadata(column):
                if problem := metadata_cell(record, column, cell, file, where):
                    problems.append(problem)
                    bad_cell = True
            elif column in ARRAY_COLUMNS and looks_like_json_array(cell):
                value, problem = json_array_cell(cell, column, file, where)
                if problem:
                    problems.append(problem)
                    bad_cell = True
                else:
                    record[column] = value
            elif column == "contexts" or (column in LIST_COLUMNS and cell.strip()):
                record[column] = [p.strip() for p in cell.split(PASSAGE_SEPARATOR)] if cell else []
            elif column == "turns" and cell.strip():
                turns, found = parse_turns_cell(cell, file, where)
                problems += found
                bad_cell = bad_cell or turns is None
                if turns is not None:
                    record[column] = [{"role": t.role, "content": t.content} for t in turns]
            elif cell.strip() and column != "turns":
                record[column] = cell
        if "question" in header and "question" not in record and "turns" not in record:
            record["question"] = ""  # reported as an empty question
        if bad_cell:
            continue
        records.append(Record(record, where, line, f"row{line}"))
    if not records and not problems:
        problems.append(Problem("the file has a header but no rows", file=file, fix="add rows"))
    return records, problems


def _header_problems(header: list[str], file: str, where: str) -> list[Problem]:
    problems = [
        Problem(
            f"unknown column '{column}'",
            file=file,
            where=where,
            field=column,
            fix=f"{did_you_mean(column, COLUMNS)}rename or remove it, or keep it as metadata "
            f"by naming it metadata.{column}; the columns are {', '.join(COLUMNS)}, "
            "metadata (a JSON object) and metadata.KEY",
        )
        for column in header
        if column not in COLUMNS and not is_metadata(column)
    ]
    lowered = {c.lower() for c in header}
    if not {"question", "turns"} & lowered:  # `Question` is reported above, with its fix
        problems.append(
            Problem(
                "the header has no 'question' column",
                file=file,
                where=where,
                field="question",
                fix="the first line must name the columns, e.g. id,question,answer,contexts",
            )
        )
    return problems


_EXCEL_SEP = re.compile(r"^sep=(.)$", re.IGNORECASE)  # Excel's first-line delimiter hint


def delimiter(text: str) -> str:
    """The cell separator: the one Excel's `sep=;` first line names, else the header line's
    `,`, or `;` or a tab when that line holds one of them and no comma (column names never
    hold these characters). Blank lines before the header are passed over."""
    lines = [line.rstrip("\r") for line in text.split("\n") if line.strip()]
    if lines and (hint := _EXCEL_SEP.match(lines[0])):
        return hint.group(1)
    header = lines[0] if lines else ""
    if "," not in header:
        for candidate in (";", "\t"):
            if candidate in header:
                return candidate
    return ","


def open_csv(text: str, file: str) -> tuple[Any, list[str], list[Problem]]:
    """A CSV reader past its header row, the header's names (stripped), and the problems a
    header has in any CSV format: none at all (an empty file), a column named twice. Blank
    lines and Excel's `sep=` line before the header are passed over; `reader.line_num` is
    the header's line (`header_where`)."""
    _allow_big_cells()
    sep = delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    header: list[str] = []
    for row in reader:
        if any(c.strip() for c in row) and sep.join(row).lower() != f"sep={sep}":
            header = [h.strip() for h in row]
            break
    if not header:
        return reader, [], [Problem("the file is empty", file=file, fix="add a header and rows")]
    twice = sorted({c for c in header if header.count(c) > 1})
    where = header_where(reader)
    problems = [
        Problem(f"column '{c}' appears twice", file=file, where=where, field=c, fix="keep one")
        for c in twice
    ]
    return reader, header, problems


def header_where(reader: Any) -> str:
    """ "line N" of the header row, right after `open_csv` (the line blank lines moved to)."""
    return f"line {reader.line_num}"


def data_rows(
    reader: Any, header: list[str], file: str, problems: list[Problem]
) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, "line N", cells) of every data row after the header. Blank lines are
    skipped; a row whose cell count is not the header's is added to `problems`, not given."""
    start = reader.line_num + 1
    for cells in reader:
        line, start = start, reader.line_num + 1
        if not any(c.strip() for c in cells):
            continue  # blank line
        if len(cells) != len(header):
            last = reader.line_num  # past `line`: a quoted cell ran over line ends
            spans = last > line and any("\n" in c for c in cells)
            problems.append(
                Problem(
                    f"the row has {len(cells)} cell(s) but the header has {len(header)}"
                    + (f"; it runs to line {last}: a quote opened on line {line} is not "
                       "closed where the cell ends" if spans else ""),
                    file=file,
                    where=f"line {line}",
                    fix="close the quote (a quote inside a cell is written twice: \"\")"
                    if spans
                    else "quote cells that hold commas, and give every row one cell per column",
                )
            )  # fmt: skip
            continue
        yield line, f"line {line}", cells


def _allow_big_cells() -> None:
    """csv's default 128 KiB cell limit would refuse a long passage; lift it."""
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 10
