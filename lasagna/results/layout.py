"""The result store's names and file helpers, shared by checkpoints and runs: folder and
marker names, JSON and Parquet I/O through a `Store`, the schema-version check."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lasagna.errors import Problem, UserError
from lasagna.results.fs import Store, json_default
from lasagna.results.model import SCHEMA_VERSION
from lasagna.results.schema import READABLE_SCHEMAS as READABLE

if TYPE_CHECKING:  # pyarrow loads only when rows are read or written (fast `results list`)
    import pyarrow as pa

CHECKPOINTS = ".trials"
STATUS = ".status"  # the status files of running runs (`lasagna.results.status`)
MANIFEST = "manifest.json"
TRIAL_JSON = "trial.json"
ROWS_FILE = "rows.parquet"
DEFAULT_OUTPUT = "results"

Output = str | os.PathLike[str]


def dumps(data: Any) -> bytes:
    return json.dumps(data, indent=2, default=json_default, allow_nan=True).encode()


def write_parquet(store: Store, path: str, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    from lasagna.results.rows_stream import ROW_GROUP_ROWS

    with store.open_write(path) as fh:  # row group by row group: bounded encoder memory
        pq.write_table(table, fh, compression="zstd", row_group_size=ROW_GROUP_ROWS)


@contextmanager
def parquet_source(store: Store, path: str) -> Iterator[tuple[Any, bool]]:
    """(what pyarrow reads a result's Parquet file from, whether it may use threads): a
    local file by its path, read by Arrow itself; a remote one through its file object, on
    one thread. Arrow's thread pool, torn down at interpreter exit while a threaded read
    from a Python file object still holds it, aborts the process ("terminate called
    without an active exception", apache/arrow#34314 and #33975): a script that read a
    run's rows exited 134 after its last line."""
    if store.local:
        yield path, True
        return
    with store.open_read(path) as fh:
        yield fh, False


def read_parquet(
    store: Store, path: str, columns: list[str] | None = None, filters: Any = None
) -> pa.Table:
    """A Parquet file of the results (`columns` and `filters` as pyarrow reads them)."""
    import pyarrow.parquet as pq

    with parquet_source(store, path) as (source, threads):
        return pq.read_table(source, columns=columns, filters=filters, use_threads=threads)


def safe_table(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"table name {name!r} must be a plain identifier (e.g. spans)")
    return name


def refuse_unreadable(version: Any, where: str) -> None:
    """Refuse a result this lasagna cannot read: newer, or of an unknown older schema."""
    if isinstance(version, int) and version < SCHEMA_VERSION and version not in READABLE:
        raise UserError(
            Problem(
                f"written by an old lasagna (schema {version}; this reads schemas "
                f"{', '.join(map(str, READABLE))})",
                file=where,
                field="schema_version",
                fix="re-run the benchmark with this lasagna (its trial keys changed)",
            )
        )
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise UserError(
            Problem(
                f"written by a newer lasagna (schema {version}, this reads up to {SCHEMA_VERSION})",
                file=where,
                field="schema_version",
                fix="upgrade lasagna (pip install -U lasagna)",
            )
        )
