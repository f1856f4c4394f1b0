"""Per-question rows streamed off the driver's heap as a pipeline produces them.

A big question set (100k questions x top-100 doc ids and scores) is hundreds of MiB as
Arrow. The driver spools each arriving batch to local disk (`RowSpool`) and maps the file
back; the checkpoint and the run folder's Parquet are then written from the map, one row
group of ROW_GROUP_ROWS at a time (`lasagna.results.layout.write_parquet`), inside folders committed
atomically, so nobody sees a half-written result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

ROW_GROUP_ROWS = 8192  # Parquet row group: what the encoder holds in memory at a time
PREFIX = "lasagna-rows-"  # then the writing driver's pid: lasagna-rows-<pid>-<random>.arrow


def remove_orphans(folder: str) -> list[str]:
    """Remove the spool files in `folder` whose driver process is gone (killed mid-trial);
    the names of those removed. Files of live processes, and other files, are left alone."""
    import os

    from lasagna.common.processes import alive

    removed = []
    for name in os.listdir(folder):
        pid = name[len(PREFIX) :].split("-", 1)[0]
        if not (name.startswith(PREFIX) and name.endswith(".arrow") and pid.isdigit()):
            continue
        if alive(int(pid)):
            continue  # its files are in use
        try:
            os.unlink(os.path.join(folder, name))
            removed.append(name)
        except OSError:  # another driver removed it first, or it is not ours to remove
            pass
    return removed


class RowSpool:
    """Rows parked on local disk as they arrive, read back memory-mapped.

    The engine's driver streams every result batch here instead of gathering them in
    memory: an Arrow IPC file per schema (a batch whose schema differs, e.g. a column that
    was all null so far, starts a new segment), in the system's temporary folder. `table()`
    maps the files and unlinks them at once, so the rows live in the page cache (which the
    kernel can drop and re-read) rather than in the driver's heap. An error removes the
    files too. A killed driver leaves its `lasagna-rows-<pid>-*.arrow` behind; the next
    spool in that folder removes the files of drivers no longer alive.
    """

    def __init__(self, folder: str | None = None):
        import tempfile

        self._folder = folder or tempfile.gettempdir()
        remove_orphans(self._folder)
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

        prefix = f"{PREFIX}{os.getpid()}-"
        fd, path = tempfile.mkstemp(prefix=prefix, suffix=".arrow", dir=self._folder)
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
