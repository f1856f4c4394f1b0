"""Parquet: one question (or judge case) per row, columns named as the JSONL fields.

A data frame saved with `df.to_parquet(...)` or a Hugging Face dataset's Parquet export
reads as its JSONL would: list columns (contexts, expected_docs, turns) stay lists, a
struct column (metadata) is an object. Parquet has no "absent": a row whose cell is null
(the column exists for other rows) is read as a row without that field, at the top level
and inside structs, as a JSONL line that leaves the key out. Rows are numbered from 1
("row 3") in every message. pandas' stored index (`__index_level_0__`) is not data.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from lasagna.data.rows import Record
from lasagna.data.text import GZIP, read_file
from lasagna.errors import Problem, UserError

_PANDAS_INDEX = "__index_level_"


def read_parquet(data: bytes, file: str) -> tuple[list[Record], list[Problem]]:
    """The file's rows as records; a file Parquet cannot read is one problem."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # one thread: a threaded read from a file object can abort the process at exit
        # (lasagna.results.layout.parquet_source)
        table = pq.read_table(io.BytesIO(data), use_threads=False)
    except (pa.ArrowException, OSError) as err:
        return [], [
            Problem(
                f"not a readable Parquet file ({_first_line(err)})",
                file=file,
                fix="write it with pandas' DataFrame.to_parquet or pyarrow.parquet.write_table, "
                "or give a .jsonl, .json or .csv file",
            )
        ]
    table = table.drop_columns([c for c in table.column_names if c.startswith(_PANDAS_INDEX)])
    if table.num_rows == 0:
        return [], [
            Problem(
                "the file has no rows",
                file=file,
                fix="add at least one row, or point lasagna at the right file",
            )
        ]
    rows = enumerate(table.to_pylist(), 1)
    return [Record(_present(row), f"row {n}", n, f"row{n}") for n, row in rows], []


def parquet_columns(path: Path) -> set[str]:
    """The column names, read from the file's footer (a gzipped file is read whole)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if path.name.lower().endswith(GZIP):
            return set(pq.read_schema(io.BytesIO(read_file(path))).names)
        return set(pq.read_schema(path).names)
    except (pa.ArrowException, OSError, UserError):
        return set()  # the loader says what is wrong, naming the file


def _present(value: Any) -> Any:
    """A row without its null cells, and so every struct in it (a turn of `turns`); a null
    inside a list stays, for the checks to name."""
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_present(v) for v in value]
    return value


def _first_line(err: BaseException) -> str:
    """Arrow's reason, without its "Could not open Parquet input source '<Buffer>': "."""
    text = str(err).strip().splitlines()
    line = text[0] if text else type(err).__name__
    return line.split("': ", 1)[1] if line.startswith("Could not open") and "': " in line else line
