"""On-disk cache of indexes and corpus embeddings, keyed by (dataset revision, config).

Only the parts of a retriever config that change the index enter the key: top_k, name,
resources, batch sizes and nprobe do not (changing them reuses the index). The dataset
revision (sha256 of the data's bytes) does, so an edited file never reuses an old index.
Entries are built in a temporary folder beside their final place and renamed into it,
so a crash or a concurrent builder never leaves or exposes a half-written entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lasagna.cache import build_atomically, cache_root  # noqa: F401 (re-exported)
from lasagna.common.digest import json_sha256
from lasagna.systems import AnyRetriever, DenseRetriever

CACHE_FORMAT = 1  # bump when the layout of a cache entry changes


def index_fields(cfg: AnyRetriever) -> dict[str, Any]:
    """The parts of `cfg` that change the index it builds (each config says which)."""
    return cfg.index_fields()


def _digest(revision: str, fields: dict[str, Any]) -> str:
    return json_sha256({"format": CACHE_FORMAT, "revision": revision, "config": fields})


def index_key(revision: str, cfg: AnyRetriever) -> str:
    """sha256 of the revision and the canonical JSON of the index-relevant config."""
    return _digest(revision, index_fields(cfg))


def embeddings_key(revision: str, cfg: DenseRetriever) -> str:
    """Key of a corpus's embeddings: shared by flat, IVF and HNSW indexes of one model."""
    return _digest(revision, {"embeddings": cfg.embedding_fields()})


def index_dir(revision: str, cfg: AnyRetriever) -> Path:
    return cache_root() / "indexes" / cfg.kind / index_key(revision, cfg)


def embeddings_dir(revision: str, cfg: DenseRetriever) -> Path:
    return cache_root() / "embeddings" / embeddings_key(revision, cfg)
