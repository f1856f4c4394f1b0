"""Automatic parameters of the approximate faiss indexes (IVF, HNSW), from the corpus size.

A value the user sets explicitly always wins; the rule fills in the rest. Measured recall@100
against flat on clustered 384-d vectors (scripts/bench_scale.py) is what chose the constants:

- IVF  nlist  = 4 * sqrt(n), at most n / 39 (faiss wants >= 39 training points per list),
              at least 1, at most 65,536.
       nprobe = 2 * sqrt(nlist), at least 16, at most nlist (16 lists of 256 at 10k docs
              gave recall@100 0.991; 32 gave 0.996).
       train  on at most 64 * nlist points (a deterministic sample), so k-means stays
              linear in n instead of quadratic.
- HNSW M      = 32 links per node.
       efConstruction = 80 (faiss' 40 gave recall@100 0.975 at 100k docs, 80 gave 0.9995
              for 1.3x the build time).
       efSearch = 2 * (k + tie margin), at least 64: widens with the requested top_k.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

MAX_NLIST = 65_536
MIN_POINTS_PER_LIST = 39
TRAIN_POINTS_PER_LIST = 64
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
MIN_EF_SEARCH = 64


def default_nlist(n: int) -> int:
    """IVF list count for n vectors (see the module docstring)."""
    return max(1, min(MAX_NLIST, int(4 * math.sqrt(n)), n // MIN_POINTS_PER_LIST or 1))


def default_nprobe(nlist: int) -> int:
    """IVF lists probed per query."""
    return max(1, min(nlist, max(16, math.ceil(2 * math.sqrt(nlist)))))


def default_ef_search(fetch: int) -> int:
    """HNSW candidate list length for `fetch` results per query."""
    return max(MIN_EF_SEARCH, 2 * fetch)


@dataclass(frozen=True)
class BuildParams:
    """What an index is built with (recorded beside it in the index cache)."""

    kind: str
    n: int
    nlist: int | None = None
    train_points: int | None = None
    hnsw_m: int | None = None
    ef_construction: int | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def build_params(
    kind: str,
    n: int,
    *,
    nlist: int | None = None,
    hnsw_m: int | None = None,
    ef_construction: int | None = None,
) -> BuildParams:
    """The build parameters of a `kind` index over n vectors: explicit values, else the rule."""
    if kind == "ivf":
        lists = nlist or default_nlist(n)
        return BuildParams(kind, n, nlist=lists, train_points=min(n, TRAIN_POINTS_PER_LIST * lists))
    if kind == "hnsw":
        return BuildParams(
            kind,
            n,
            hnsw_m=hnsw_m or HNSW_M,
            ef_construction=ef_construction or HNSW_EF_CONSTRUCTION,
        )
    return BuildParams(kind, n)
