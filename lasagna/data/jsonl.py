"""JSONL: one JSON object per line. Blank lines are skipped; line numbers stay physical."""

from __future__ import annotations

import json

from lasagna.data.conversations import kind_of
from lasagna.data.json_text import keys_twice, loads, twice_problem
from lasagna.data.rows import Record
from lasagna.data.text import text_lines
from lasagna.errors import Problem


def read_jsonl(text: str, file: str) -> tuple[list[Record], list[Problem]]:
    """Split decoded text into records; every malformed line is a problem."""
    if text.lstrip().startswith("["):
        return [], [
            Problem(
                "the file is a JSON array, not JSONL",
                file=file,
                where="line 1",
                fix="rename it to .json, or write one JSON object per line",
            )
        ]
    records: list[Record] = []
    problems: list[Problem] = []
    for number, line in text_lines(text):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            value = loads(line)
        except json.JSONDecodeError as err:
            problems.append(
                Problem(
                    f"not valid JSON: {err.msg} at column {err.colno}",
                    file=file,
                    where=where,
                    fix="write one complete JSON object per line",
                )
            )
            continue
        if isinstance(value, list):
            problems.append(
                Problem(
                    "the line holds a JSON array, not an object",
                    file=file,
                    where=where,
                    fix="write one object per line (a whole array belongs in a .json file)",
                )
            )
            continue
        if not isinstance(value, dict):
            problems.append(
                Problem(
                    f"the line holds {kind_of(value)}, not a JSON object",
                    file=file,
                    where=where,
                    fix='write one object per line, e.g. {"question": "..."}',
                )
            )
            continue
        if twice := keys_twice(value):
            problems.append(twice_problem(twice, file, where))
            continue
        records.append(Record(value, where, number, f"row{number}"))
    return records, problems
