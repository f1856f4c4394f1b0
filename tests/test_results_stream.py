"""Streamed per-question rows without Ray: the driver's disk spool, restoring the benchmark's
row order from blocks that arrive in any order, and Parquet written row group by group."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from lasagna.engine.trials import POSITION, in_row_order
from lasagna.results import rows_stream
from lasagna.results.fs import Store
from lasagna.results.layout import write_parquet
from lasagna.results.rows_stream import RowSpool


def _rows(start: int, stop: int) -> pa.Table:
    """Pipeline-like rows: ids, top-k lists and a metric."""
    return pa.table(
        {
            "id": [f"q{i}" for i in range(start, stop)],
            "doc_ids": pa.array([[f"d{i}", f"d{i + 1}"] for i in range(start, stop)]),
            "scores": pa.array([[1.0, 0.5]] * (stop - start)),
            "ndcg@10": [i / 100 for i in range(start, stop)],
            POSITION: list(range(start, stop)),
        }
    )


BLOCKS = [(0, 40), (40, 64), (64, 100)]


def test_streamed_parquet_equals_the_gathered_rows(tmp_path, monkeypatch):
    """Batches spooled to disk, mapped back and written by the store give the same Parquet
    as the rows gathered in memory, written row group by row group."""
    monkeypatch.setattr(rows_stream, "ROW_GROUP_ROWS", 30)
    batches = [_rows(a, b) for a, b in BLOCKS]
    spool = RowSpool(str(tmp_path))
    for batch in batches[::-1]:
        spool.write(batch)
    mapped = in_row_order(spool.table())
    store = Store(tmp_path)
    write_parquet(store, store.path("streamed.parquet"), mapped)
    pq.write_table(pa.concat_tables(batches), tmp_path / "gathered.parquet")
    streamed = pq.read_table(tmp_path / "streamed.parquet")
    assert streamed.equals(pq.read_table(tmp_path / "gathered.parquet"))
    assert pq.ParquetFile(tmp_path / "streamed.parquet").num_row_groups == 4  # 100 rows / 30


def test_spool_maps_rows_back_and_leaves_no_file(tmp_path):
    spool = RowSpool(str(tmp_path))
    for a, b in reversed(BLOCKS):  # arrival order
        spool.write(_rows(a, b))
    nulls = _rows(100, 110).drop_columns(["ndcg@10"])
    nulls = nulls.append_column("ndcg@10", pa.nulls(10))  # another schema: a new segment
    spool.write(nulls)
    table = spool.table()
    assert os.listdir(tmp_path) == []  # unlinked, still readable through the map
    assert table.num_rows == 110
    assert table.column(POSITION).to_pylist()[:36] == list(range(64, 100))
    ordered = in_row_order(table)
    assert ordered.column(POSITION).to_pylist() == list(range(110))
    expected = pa.concat_tables([_rows(0, 100), nulls], promote_options="default")
    assert ordered.select(expected.column_names).equals(expected)


def test_row_order_falls_back_to_a_sort_for_mixed_blocks():
    scrambled = _rows(0, 10).take([3, 1, 2, 0, 4, 5, 6, 7, 9, 8])
    assert in_row_order(scrambled).column(POSITION).to_pylist() == list(range(10))
    gap = pa.concat_tables([_rows(5, 10), _rows(0, 3)])  # not contiguous: sort anyway
    assert in_row_order(gap).column(POSITION).to_pylist() == [0, 1, 2, 5, 6, 7, 8, 9]


def test_a_killed_drivers_spool_files_are_removed_by_the_next_spool(tmp_path):
    """A driver SIGKILLed mid-trial leaves its spool file; the next RowSpool in that folder
    removes it, and leaves a live driver's file (here: this process's) and other files."""
    import signal
    import subprocess
    import sys

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.stdout.write('x'); sys.stdout.flush(); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    child.stdout.read(1)  # started
    child.send_signal(signal.SIGKILL)
    child.wait()
    dead = tmp_path / f"lasagna-rows-{child.pid}-abc.arrow"
    live = tmp_path / f"lasagna-rows-{os.getpid()}-def.arrow"
    other = tmp_path / "lasagna-rows-notes.arrow"
    for path in (dead, live, other):
        path.write_bytes(b"rows")
    spool = RowSpool(str(tmp_path))
    assert not dead.exists() and live.exists() and other.exists()
    spool.write(_rows(0, 3))
    assert len(spool.table()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
