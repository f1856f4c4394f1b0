"""JSON: a top-level array of the same objects as JSONL (items numbered from 1), or a SQuAD
v1.1 / v2.0 file (lasagna.data.squad)."""

from __future__ import annotations

import json

from lasagna.data.conversations import kind_of
from lasagna.data.json_text import keys_twice, loads, twice_problem
from lasagna.data.rows import Record
from lasagna.data.squad import is_squad, squad_records
from lasagna.errors import Problem


def read_json(text: str, file: str) -> tuple[list[Record], list[Problem]]:
    """Parse the array; each non-object item is a problem naming its number."""
    try:
        value = loads(text)
    except json.JSONDecodeError as err:
        looks_jsonl = err.msg == "Extra data"
        return [], [
            Problem(
                f"not valid JSON: {err.msg}",
                file=file,
                where=f"line {err.lineno} column {err.colno}",
                fix="rename the file to .jsonl (it holds one object per line)"
                if looks_jsonl
                else "fix the JSON syntax there (a missing comma or quote?)",
            )
        ]
    if is_squad(value):
        return squad_records(value, file)
    if not isinstance(value, list):
        return [], [
            Problem(
                f"the top level is {kind_of(value)}, not an array of rows",
                file=file,
                fix=_wrapped_rows_fix(value),
            )
        ]
    if not value:
        return [], [Problem("the array is empty", file=file, fix="add at least one row")]
    records: list[Record] = []
    problems: list[Problem] = []
    for number, item in enumerate(value, start=1):
        where = f"item {number}"
        if not isinstance(item, dict):
            problems.append(
                Problem(
                    f"the item is {kind_of(item)}, not an object",
                    file=file,
                    where=where,
                    fix='write each row as an object, e.g. {"question": "..."}',
                )
            )
            continue
        if twice := keys_twice(item):
            problems.append(twice_problem(twice, file, where))
            continue
        records.append(Record(item, where, number, f"row{number}"))
    return records, problems


def _wrapped_rows_fix(value: object) -> str:
    """The fix for a top level that is not an array: name the key the rows sit under when
    one list of objects is there (`{"data": [...]}`, as many exports write)."""
    items = value.items() if isinstance(value, dict) else []
    lists = [k for k, v in items if isinstance(v, list) and v and isinstance(v[0], dict)]
    if len(lists) == 1:
        return (
            f"the rows seem to be the list under {lists[0]!r}: make that list the whole file "
            f"(e.g. jq '.{lists[0]}' FILE > rows.json), or write them as JSONL"
        )
    return (
        "wrap the rows in [ ... ] (one object per row); a SQuAD file holds "
        '{"data": [{"title": ..., "paragraphs": [{"context": ..., "qas": [...]}]}]}'
    )
