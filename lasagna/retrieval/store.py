"""Cache entries for one retriever over one dataset revision: build, find, read.

The corpus encoder is passed in (`EncodeCorpus`), so the same code serves the Ray engine
(an actor-pool pipeline) and the in-process path (one model in this process).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from lasagna.cache import build_atomically
from lasagna.cache import index as cache
from lasagna.cache.entries import entry_name
from lasagna.data.model import Document
from lasagna.retrieval.bm25 import BM25Index
from lasagna.retrieval.checkpoint import EMB_FILE, EncodingCheckpoint
from lasagna.retrieval.dense import DenseIndex
from lasagna.systems import BM25Retriever, DenseRetriever, HybridRetriever

IDS_FILE = "doc_ids.json"
CONFIG_FILE = "config.json"
PARTS_FILE = "parts.json"

# (row positions, float32 embeddings): one batch of an encoder's output, rows in any order
EmbeddedBatch = tuple[np.ndarray, np.ndarray]
# (doc ids, texts, rows already encoded or None) -> the embedded batches of the other rows
# as they are produced (row i is doc i)
EncodeCorpus = Callable[[list[str], list[str], np.ndarray | None], Iterable[EmbeddedBatch]]
# a dense config -> the encoder for its model (called only when embeddings must be built)
EncoderFor = Callable[[DenseRetriever], EncodeCorpus]


def _write_config(directory: Path, revision: str, cfg) -> None:
    meta = {"revision": revision, "fields": cache.index_fields(cfg), "config": cfg.model_dump()}
    (directory / CONFIG_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True))


def ensure_bm25(revision: str, docs: Sequence[Document], cfg: BM25Retriever) -> Path:
    """The cached BM25 index of `docs`, built here on a miss (bm25s is fast)."""

    def build(tmp: Path) -> None:
        BM25Index.build(docs, cfg).save(tmp)
        _write_config(tmp, revision, cfg)

    return build_atomically(cache.index_dir(revision, cfg), build)


def ensure_embeddings(
    revision: str, docs: Sequence[Document], cfg: DenseRetriever, encode: EncodeCorpus
) -> Path:
    """The cached corpus embeddings, encoded with `encode` (lazily: only on a miss) and
    written to disk batch by batch as they arrive; an interrupted encoding is taken up
    where it stopped (lasagna.retrieval.checkpoint)."""
    final = cache.embeddings_dir(revision, cfg)

    def build(tmp: Path) -> None:
        ids = [d.id for d in docs]
        texts = [cfg.document_prefix + d.indexed_text for d in docs]
        checkpoint = EncodingCheckpoint.open(final, ids, cfg.encode.batch_size)
        if checkpoint is None:  # another process is encoding this corpus: no checkpoint
            write_embeddings(tmp, ids, encode(ids, texts, None))
            return
        with checkpoint:
            for rows, emb in encode(ids, texts, checkpoint.done.copy()):
                checkpoint.write(np.asarray(rows, dtype=np.int64), emb)
            checkpoint.finish(tmp)
        (tmp / IDS_FILE).write_text(json.dumps(ids))

    return build_atomically(final, build)


def write_embeddings(directory: Path, ids: list[str], batches: Iterable[EmbeddedBatch]) -> None:
    """Stream embedded batches into `directory`/embeddings.npy (a memory-mapped .npy that
    grows on disk, not in memory) and the doc ids beside it; every row must arrive."""
    n = len(ids)
    out: np.ndarray | None = None
    seen = np.zeros(n, dtype=bool)
    for rows, emb in batches:
        rows = np.asarray(rows, dtype=np.int64)
        if out is None:
            out = np.lib.format.open_memmap(
                directory / EMB_FILE, mode="w+", dtype=np.float32, shape=(n, emb.shape[1])
            )
        out[rows] = emb
        seen[rows] = True
    if out is None or not seen.all():
        raise RuntimeError(f"the encoder returned {int(seen.sum())} of {n} documents")
    out.flush()
    del out  # close the map before the folder is renamed into place
    (directory / IDS_FILE).write_text(json.dumps(ids))


def gather_embeddings(n: int, batches: Iterable[EmbeddedBatch]) -> np.ndarray:
    """All n rows of embedded batches as one in-memory matrix (small corpora, benchmarks)."""
    out: np.ndarray | None = None
    seen = 0
    for rows, emb in batches:
        if out is None:
            out = np.empty((n, emb.shape[1]), dtype=np.float32)
        out[rows] = emb
        seen += len(rows)
    if out is None or seen != n:
        raise RuntimeError(f"the encoder returned {seen} of {n} documents")
    return out


def read_embeddings(directory: Path) -> tuple[list[str], np.ndarray]:
    """The doc ids and their embeddings, memory-mapped read-only (pages load on use)."""
    return json.loads((directory / IDS_FILE).read_text()), np.load(
        directory / EMB_FILE, mmap_mode="r"
    )


def ensure_dense(
    revision: str, docs: Sequence[Document], cfg: DenseRetriever, encode: EncodeCorpus
) -> Path:
    """The cached faiss index, from cached (or freshly encoded) corpus embeddings."""
    final = cache.index_dir(revision, cfg)
    if final.is_dir():
        return final
    emb_dir = ensure_embeddings(revision, docs, cfg, encode)

    def build(tmp: Path) -> None:
        ids, emb = read_embeddings(emb_dir)
        DenseIndex.build(
            ids,
            emb,
            cfg.index,
            nlist=cfg.nlist,
            hnsw_m=cfg.hnsw_m,
            ef_construction=cfg.ef_construction,
            vectors=cfg.vectors,
        ).save(tmp)
        _write_config(tmp, revision, cfg)

    return build_atomically(final, build)


def ensure_retriever(
    revision: str,
    docs: Sequence[Document],
    cfg: BM25Retriever | DenseRetriever | HybridRetriever,
    encoder_for: EncoderFor,
) -> Path:
    """The cache entry of any retriever; a hybrid entry lists its two parts' entries."""
    if isinstance(cfg, BM25Retriever):
        return ensure_bm25(revision, docs, cfg)
    if isinstance(cfg, DenseRetriever):
        return ensure_dense(revision, docs, cfg, encoder_for(cfg))
    parts = [entry_name(ensure_retriever(revision, docs, r, encoder_for)) for r in cfg.retrievers]

    def build(tmp: Path) -> None:
        (tmp / PARTS_FILE).write_text(json.dumps(parts))
        _write_config(tmp, revision, cfg)

    return build_atomically(cache.index_dir(revision, cfg), build)


def hybrid_parts(directory: Path) -> list[Path]:
    """The entries a hybrid entry fuses, in the same cache tree as the entry itself (its
    copy on another node included). They are listed as names under the cache root
    (`indexes/<kind>/<key>`; entries written before held absolute paths: the same three
    last parts)."""
    root = directory.parents[2]  # <root>/indexes/hybrid/<key>
    names = json.loads((directory / PARTS_FILE).read_text())
    return [root.joinpath(*Path(p).parts[-3:]) for p in names]


def entries_of(directory: Path) -> list[Path]:
    """A retriever's cache entry and every entry it reads (a hybrid's parts)."""
    if not (directory / PARTS_FILE).is_file():
        return [directory]
    return [directory, *(e for p in hybrid_parts(directory) for e in entries_of(p))]
