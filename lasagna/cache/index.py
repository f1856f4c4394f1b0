"""The cache of retrieval indexes and corpus embeddings, keyed by (dataset revision, config).

Only the parts of a retriever config that change the index enter the key: top_k, name,
resources, batch sizes and nprobe do not (changing them reuses the index). The dataset
revision (sha256 of the data's bytes) does, so an edited file never reuses an old index.
Entries are built with `build_atomically` (lasagna.cache.atomic), so a crash or a
concurrent builder never leaves or exposes a half-written entry.

A config is anything with `kind`, `index_fields()` (and, dense, `embedding_fields()`):
the retriever configs of lasagna.systems say which of their fields matter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from lasagna.cache.roots import cache_dir
from lasagna.common.digest import json_sha256

CACHE_FORMAT = 1  # bump when the layout of a cache entry changes


class IndexConfig(Protocol):
    kind: Any

    def index_fields(self) -> dict[str, Any]: ...


class EmbeddingConfig(Protocol):
    def embedding_fields(self) -> dict[str, Any]: ...


def index_fields(cfg: IndexConfig) -> dict[str, Any]:
    """The parts of `cfg` that change the index it builds (each config says which)."""
    return cfg.index_fields()


def _digest(revision: str, fields: dict[str, Any]) -> str:
    return json_sha256({"format": CACHE_FORMAT, "revision": revision, "config": fields})


def index_key(revision: str, cfg: IndexConfig) -> str:
    """sha256 of the revision and the canonical JSON of the index-relevant config."""
    return _digest(revision, index_fields(cfg))


def embeddings_key(revision: str, cfg: EmbeddingConfig) -> str:
    """Key of a corpus's embeddings: shared by flat, IVF and HNSW indexes of one model."""
    return _digest(revision, {"embeddings": cfg.embedding_fields()})


def index_dir(revision: str, cfg: IndexConfig) -> Path:
    return cache_dir("indexes") / str(cfg.kind) / index_key(revision, cfg)


def embeddings_dir(revision: str, cfg: EmbeddingConfig) -> Path:
    return cache_dir("embeddings") / embeddings_key(revision, cfg)
