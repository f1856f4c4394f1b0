"""Corpus encoding that survives an interruption: the vectors already computed are kept
beside the embeddings' cache entry, and the next build encodes only the rest.

Exact, not approximate: the encoding plan (lasagna.retrieval.batching) fixes every batch
before an encoder runs, and a resumed build skips whole batches, so each vector has the
bytes an uninterrupted build gives it.

Layout: `<entry>.partial/` beside the entry `<entry>`, holding `embeddings.npy` (a
memory map the size of the whole corpus), `done.npy` (which rows hold their vectors, saved
only after those vectors are flushed) and `meta.json` (what the rows belong to: row count,
the ids' digest, the batch size; any difference starts over). Saved every `SAVE_S` seconds
and when the build stops (Ctrl-C, an error); a killed process loses at most `SAVE_S`
seconds of encoding. One builder at a time keeps one (a lock on `lock`); a second,
concurrent builder of the same entry encodes without. The folder is removed when the entry
is complete; deleting it by hand only loses the saved work.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from pathlib import Path
from types import TracebackType

import numpy as np

from lasagna.cache.atomic import write_file_atomically
from lasagna.common.digest import json_sha256

SAVE_S = 30.0
EMB_FILE = "embeddings.npy"
DONE_FILE = "done.npy"
META_FILE = "meta.json"


def partial_dir(entry: Path) -> Path:
    return entry.parent / f"{entry.name}.partial"


def saved_rows(entry: Path) -> tuple[int, int] | None:
    """(rows kept, rows of the corpus) of the entry's checkpoint on disk; None: none."""
    try:
        done = np.load(partial_dir(entry) / DONE_FILE)
    except (OSError, ValueError):
        return None
    return int(done.sum()), len(done)


class EncodingCheckpoint:
    """The rows of one corpus encoded so far: `done` (a mask by row) and their vectors."""

    def __init__(self, folder: Path, ids: list[str], batch_size: int, lock: int):
        self.folder, self.n, self._lock = folder, len(ids), lock
        self.meta = {"rows": len(ids), "ids": json_sha256(ids), "batch_size": batch_size}
        self.done = np.zeros(self.n, dtype=bool)
        self._emb: np.ndarray | None = None
        self._saved_at = time.monotonic()
        self._load()

    @classmethod
    def open(cls, entry: Path, ids: list[str], batch_size: int) -> EncodingCheckpoint | None:
        """The checkpoint of the entry being built, or None while another builder holds it."""
        folder = partial_dir(entry)
        folder.mkdir(parents=True, exist_ok=True)
        lock = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock)
            return None
        return cls(folder, ids, batch_size, lock)

    @property
    def kept(self) -> int:
        """Rows whose vectors are here (when opened: what an interrupted build left)."""
        return int(self.done.sum())

    def _load(self) -> None:
        try:
            same = json.loads((self.folder / META_FILE).read_text()) == self.meta
            done = np.load(self.folder / DONE_FILE) if same else None
            emb = np.load(self.folder / EMB_FILE, mmap_mode="r+") if same else None
        except (OSError, ValueError):
            same, done, emb = False, None, None
        if same and done is not None and emb is not None and len(done) == len(emb) == self.n:
            self.done, self._emb = done.astype(bool), emb
            return
        for name in (EMB_FILE, DONE_FILE):  # another corpus, batch size or a damaged save
            (self.folder / name).unlink(missing_ok=True)
        write_file_atomically(self.folder / META_FILE, json.dumps(self.meta).encode())

    def write(self, rows: np.ndarray, emb: np.ndarray) -> None:
        """Keep one embedded batch; saved to disk at most `SAVE_S` seconds later."""
        if self._emb is None:
            self._emb = np.lib.format.open_memmap(
                self.folder / EMB_FILE, mode="w+", dtype=np.float32, shape=(self.n, emb.shape[1])
            )
        self._emb[rows] = emb
        self.done[rows] = True
        if time.monotonic() - self._saved_at >= SAVE_S:
            self.save()

    def save(self) -> None:
        """The vectors first, then the mask that says they are there."""
        if self._emb is None:
            return
        self._emb.flush()
        tmp = self.folder / f".{DONE_FILE}.tmp"
        with open(tmp, "wb") as fh:
            np.save(fh, self.done)
        os.replace(tmp, self.folder / DONE_FILE)
        self._saved_at = time.monotonic()

    def finish(self, directory: Path) -> None:
        """Move the complete vectors into the entry being built (`directory`)."""
        if self._emb is None or not self.done.all():
            raise RuntimeError(f"the encoder returned {self.kept} of {self.n} documents")
        self._emb.flush()
        self._emb = None  # closes the map before the file moves
        os.replace(self.folder / EMB_FILE, directory / EMB_FILE)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> EncodingCheckpoint:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._emb is None:  # nothing encoded (a model that failed to load): no folder
                shutil.rmtree(self.folder, ignore_errors=True)
            elif self.folder.is_dir():
                self.save()
        finally:
            os.close(self._lock)
