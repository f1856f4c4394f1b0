"""Dense retrieval over faiss: exact inner product by default, IVF or HNSW for large corpora.

Scores are inner products of the stored embeddings (cosine when the embedder normalizes),
recomputed in float64 for the candidates faiss returns, so they do not depend on the batch
of queries searched together. Results are re-ranked through `ranking.rank_candidates`, so
equal scores come out in doc id descending order; a few extra candidates are fetched so a tie
at the cut is seen whole in practice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import faiss
import numpy as np

from lasagna.retrieval.ann import (  # noqa: F401 (default_nlist re-exported)
    BuildParams,
    build_params,
    default_ef_search,
    default_nlist,
    default_nprobe,
)
from lasagna.retrieval.ranking import Ranking, rank_candidates
from lasagna.systems.search_limits import TIE_MARGIN

IndexKind = Literal["flat", "ivf", "hnsw"]
# how the index stores each vector: fp32 as encoded; fp16 / bf16 halve the index (faiss's
# scalar quantizer), and the candidates' exact scores are then those of the stored values
Vectors = Literal["fp32", "fp16", "bf16"]
INDEX_FILE = "index.faiss"
IDS_FILE = "doc_ids.json"
PARAMS_FILE = "params.json"  # the build parameters, as chosen (readable; not read back)
ADD_ROWS = 65_536  # vectors handed to faiss at a time: a memory-mapped matrix is never copied


def _as_matrix(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array, got shape {x.shape}")
    return x


class DenseIndex:
    """A faiss inner-product index plus the doc ids in index order."""

    def __init__(self, index: faiss.Index, doc_ids: list[str], params: BuildParams | None = None):
        self.index = index
        self.doc_ids = doc_ids
        self.params = params
        self._ef_search: int | None = None  # None: default_ef_search of each query's fetch
        _direct_map(index)
        self.set_search_params()

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        embeddings: np.ndarray,
        kind: IndexKind = "flat",
        *,
        nlist: int | None = None,
        hnsw_m: int | None = None,
        ef_construction: int | None = None,
        seed: int = 0,
        vectors: Vectors = "fp32",
    ) -> DenseIndex:
        """Index `embeddings` (n x d float32; row i is document ids[i]), stored as `vectors`;
        an ANN parameter left None follows `lasagna.retrieval.ann`. `embeddings` may be a
        read-only memmap: it is handed to faiss in slices of ADD_ROWS rows, never copied
        whole."""
        if embeddings.ndim != 2:
            raise ValueError(f"embeddings must be a 2-D array, got shape {embeddings.shape}")
        n, d = embeddings.shape
        if len(ids) != n:
            raise ValueError(f"{len(ids)} ids for {n} embeddings")
        params = build_params(kind, n, nlist=nlist, hnsw_m=hnsw_m, ef_construction=ef_construction)
        index = _new_index(kind, d, params, vectors)
        if kind == "ivf":
            index.cp.seed = seed  # deterministic k-means
            if nlist is None:  # the rule keeps 39 points a list, or 1 list (exact) below 39
                index.cp.min_points_per_centroid = 1  # silences faiss's warning, nothing else
        if not index.is_trained:  # IVF's k-means; a scalar quantizer's (fp16/bf16: no-op)
            index.train(_training_sample(embeddings, params.train_points, seed))
        for start in range(0, n, ADD_ROWS):
            index.add(_as_matrix(embeddings[start : start + ADD_ROWS]))
        return cls(index, list(ids), params)

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.index, str(directory / INDEX_FILE))
        (directory / IDS_FILE).write_text(json.dumps(self.doc_ids))
        if self.params is not None:
            (directory / PARAMS_FILE).write_text(json.dumps(self.params.to_json()))

    @classmethod
    def load(cls, directory: str | Path, device: str = "cpu") -> DenseIndex:
        directory = Path(directory)
        index = faiss.read_index(str(directory / INDEX_FILE))
        out = cls(index, json.loads((directory / IDS_FILE).read_text()))
        if device.startswith("cuda"):
            out.to_gpu()
        return out

    def to_gpu(self, gpu: int = 0) -> None:
        """Search on GPU `gpu` (flat and IVF; faiss has no GPU HNSW, which stays on the CPU).
        The CPU index is kept for the candidates' exact scores. Not yet run on a GPU."""
        if not hasattr(faiss, "StandardGpuResources"):
            raise RuntimeError(
                "this faiss build has no GPU support (faiss-cpu): install a faiss GPU build "
                "(the gpu extra's faiss-gpu-cu12, then pip uninstall -y faiss-cpu), or search "
                "on CPUs (search: {num_gpus: 0})"
            )
        if hasattr(self.index, "hnsw"):
            return
        self._cpu_index = self.index
        self._gpu_resources = faiss.StandardGpuResources()
        self.index = faiss.index_cpu_to_gpu(self._gpu_resources, gpu, self.index)

    def set_search_params(self, *, nprobe: int | None = None, ef_search: int | None = None):
        """Query-time knobs of the approximate indexes (ignored by flat); None: the rule of
        `lasagna.retrieval.ann` (nprobe from the index's nlist, efSearch from the fetch)."""
        if hasattr(self.index, "nprobe"):
            self.index.nprobe = nprobe or default_nprobe(self.index.nlist)
        self._ef_search = ef_search

    def search_params(self, k: int) -> dict[str, int]:
        """The query-time parameters a search for the top k uses (empty for flat)."""
        if hasattr(self.index, "nprobe"):
            return {"nprobe": int(self.index.nprobe)}
        if hasattr(self.index, "hnsw"):
            fetch = min(self.index.ntotal, k + TIE_MARGIN)
            return {"ef_search": max(fetch, self._ef_search or default_ef_search(fetch))}
        return {}

    def search(
        self, query_embeddings: np.ndarray, k: int
    ) -> tuple[list[list[str]], list[list[float]]]:
        """Per query: doc ids and scores, best first, ties by doc id descending."""
        q = _as_matrix(query_embeddings)
        n = self.index.ntotal
        fetch = min(n, k + TIE_MARGIN)
        if fetch == 0 or q.shape[0] == 0:
            return [[] for _ in range(q.shape[0])], [[] for _ in range(q.shape[0])]
        if hasattr(self.index, "hnsw"):
            self.index.hnsw.efSearch = self.search_params(k)["ef_search"]
        _, idx = self.index.search(q, fetch)
        out_ids: list[list[str]] = []
        out_scores: list[list[float]] = []
        for query, row_i in zip(q, idx, strict=True):
            found = row_i[row_i >= 0]  # approximate indexes pad with -1 when they find fewer
            ranked: Ranking = rank_candidates(
                [self.doc_ids[i] for i in found], self._exact_scores(query, found), k
            )
            out_ids.append([d for d, _ in ranked])
            out_scores.append([s for _, s in ranked])
        return out_ids, out_scores

    def _exact_scores(self, query: np.ndarray, rows: np.ndarray) -> list[float]:
        """The candidates' inner products with `query`, in float64 from the stored vectors:
        a query's scores do not depend on which queries were searched with it (faiss picks
        another kernel, rounding differently, for a larger batch of queries)."""
        if len(rows) == 0:
            return []
        index = getattr(self, "_cpu_index", self.index)
        vectors = index.reconstruct_batch(rows.astype(np.int64)).astype(np.float64)
        return (vectors * query.astype(np.float64)).sum(axis=1).tolist()


def _new_index(kind: IndexKind, d: int, params: BuildParams, vectors: Vectors) -> faiss.Index:
    """An empty inner-product index of `kind` storing `vectors`."""
    ip = faiss.METRIC_INNER_PRODUCT
    if vectors == "fp32":
        if kind == "flat":
            return faiss.IndexFlatIP(d)
        if kind == "ivf":
            return faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, params.nlist, ip)
        if kind == "hnsw":
            return _with_ef_construction(faiss.IndexHNSWFlat(d, params.hnsw_m, ip), params)
    elif vectors in ("fp16", "bf16"):
        qt = getattr(faiss.ScalarQuantizer, f"QT_{vectors}")
        if kind == "flat":
            return faiss.IndexScalarQuantizer(d, qt, ip)
        if kind == "ivf":
            return faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(d), d, params.nlist, qt, ip)
        if kind == "hnsw":
            return _with_ef_construction(faiss.IndexHNSWSQ(d, qt, params.hnsw_m, ip), params)
    else:
        raise ValueError(f"unknown vector storage {vectors!r}")
    raise ValueError(f"unknown index kind {kind!r}")


def _with_ef_construction(index: faiss.Index, params: BuildParams) -> faiss.Index:
    index.hnsw.efConstruction = params.ef_construction
    return index


def _direct_map(index: faiss.Index) -> None:
    """Let an IVF index hand back stored vectors by id (`reconstruct_batch`)."""
    try:
        ivf = faiss.extract_index_ivf(index)
    except RuntimeError:  # not an IVF index: flat and HNSW reconstruct as they are
        return
    ivf.make_direct_map()


def _training_sample(x: np.ndarray, points: int | None, seed: int) -> np.ndarray:
    """`points` rows of x for k-means (all when it has no more), picked deterministically."""
    n = x.shape[0]
    if points is None or points >= n:
        return _as_matrix(x)
    rows = np.sort(np.random.default_rng(seed).choice(n, size=points, replace=False))
    return _as_matrix(x[rows])
