"""Per-question rows written to Parquet batch by batch, as a pipeline produces them.

A big question set (100k questions x top-100 doc ids and scores) is gigabytes as Python
objects and hundreds of MiB as Arrow; written as it streams, the writer holds one batch at a
time (plus Parquet's column buffers for the current row group). Each batch becomes its own
row group, so a reader can also read it back a batch at a time. The file is written inside
a folder that is committed atomically (`lasagna.results.fs.Store.commit_dir`), so nobody
sees it half written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lasagna.results.fs import Store

if TYPE_CHECKING:
    import pyarrow as pa


class RowsWriter:
    """`with RowsWriter(store, path) as w: w.write(batch)`: one Parquet file, zstd, with the
    first batch's schema (later batches are cast to it). No batch written: no file."""

    def __init__(self, store: Store, path: str):
        self.store, self.path = store, path
        self.rows = 0
        self._cm = None
        self._writer = None
        self._schema: pa.Schema | None = None

    def __enter__(self) -> RowsWriter:
        return self

    def write(self, batch: pa.Table | pa.RecordBatch) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        if self._writer is None:
            self._schema = table.schema
            self._cm = self.store.open_write(self.path)
            fh = self._cm.__enter__()
            self._writer = pq.ParquetWriter(fh, self._schema, compression="zstd")
        elif table.schema != self._schema:
            table = table.select(self._schema.names).cast(self._schema)
        self._writer.write_table(table)
        self.rows += table.num_rows

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._writer is not None:
            self._writer.close()
            self._cm.__exit__(exc_type, exc, tb)


def write_rows(store: Store, path: str, batches: Iterable[pa.Table | pa.RecordBatch]) -> int:
    """Stream `batches` into one Parquet file at `path`; returns the number of rows."""
    with RowsWriter(store, path) as writer:
        for batch in batches:
            writer.write(batch)
    return writer.rows


class RowSpool:
    """Rows parked on local disk as they arrive, read back memory-mapped.

    The engine's driver streams every result batch here instead of gathering them in
    memory: an Arrow IPC file per schema (a batch whose schema differs, e.g. a column that
    was all null so far, starts a new segment), in the system's temporary folder. `table()`
    maps the files and unlinks them at once, so the rows live in the page cache (which the
    kernel can drop and re-read) rather than in the driver's heap, and a crash leaves no
    debris.
    """

    def __init__(self, folder: str | None = None):
        import tempfile

        self._folder = folder or tempfile.gettempdir()
        self._segments: list[tuple[str, object, object]] = []  # (path, sink, writer)
        self._schema: pa.Schema | None = None
        self.rows = 0

    def write(self, batch: pa.Table | pa.RecordBatch) -> None:
        import pyarrow as pa

        table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        if self._schema is None or table.schema != self._schema:
            self._new_segment(table.schema)
        self._segments[-1][2].write_table(table)
        self.rows += table.num_rows

    def _new_segment(self, schema: pa.Schema) -> None:
        import os
        import tempfile

        import pyarrow as pa

        fd, path = tempfile.mkstemp(prefix="lasagna-rows-", suffix=".arrow", dir=self._folder)
        os.close(fd)
        sink = pa.OSFile(path, "wb")
        self._segments.append((path, sink, pa.ipc.new_file(sink, schema)))
        self._schema = schema

    def table(self) -> pa.Table:
        """Every row written, in arrival order, memory-mapped; the spool files are gone."""

        import pyarrow as pa

        tables = []
        try:
            for path, sink, writer in self._segments:
                writer.close()
                sink.close()
                tables.append(pa.ipc.open_file(pa.memory_map(path, "r")).read_all())
        finally:
            self.discard()
        if not tables:
            return pa.table({})
        if len(tables) == 1:
            return tables[0]
        return pa.concat_tables(tables, promote_options="default")

    def discard(self) -> None:
        """Remove the spool files (mapped tables stay readable until they are dropped)."""
        import os

        for path, sink, writer in self._segments:
            for closable in (writer, sink):
                try:
                    closable.close()
                except Exception:  # already closed
                    pass
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self._segments = []
