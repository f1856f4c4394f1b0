"""What a dense search fetches, and what faiss can search on a GPU: the tie margin, the GPU
kernels' selection limit, and the checks that refuse, before anything loads, a GPU search
faiss cannot run (lasagna.retrieval.dense searches; DenseRetriever.checks() refuses)."""

from __future__ import annotations

TIE_MARGIN = 16  # extra candidates fetched beyond k to resolve ties at the cut
GPU_MAX_K = 2048  # faiss on CUDA selects at most this many results (and IVF lists) a query


def check_gpu_index(
    index: str, vectors: str = "fp32", top_k: int = 100, nprobe: int | None = None
) -> None:
    """Refuse GPU search on an index faiss cannot put on a GPU: HNSW (faiss has no GPU HNSW,
    so the reserved GPU would sit idle while the actors search on the CPU), and bf16
    vectors (faiss's GPU flat and IVF indexes store fp32 or fp16; a bf16 one fails to copy
    to the GPU when the Search actor opens it); and a search faiss's GPU kernels cannot
    run: more than `GPU_MAX_K` candidates (top_k plus the tie margin) or IVF lists probed."""
    from lasagna.errors import Problem, UserError

    if top_k + TIE_MARGIN > GPU_MAX_K or (nprobe or 0) > GPU_MAX_K:
        asked = f"top_k {top_k}" if top_k + TIE_MARGIN > GPU_MAX_K else f"nprobe {nprobe}"
        raise UserError(
            Problem(
                f"search asks for GPUs (search.num_gpus) but {asked} is more than faiss "
                f"searches on a GPU ({GPU_MAX_K} results and lists a query, and lasagna "
                f"fetches {TIE_MARGIN} beyond top_k to settle ties)",
                field="search.num_gpus",
                fix=f"top_k at most {GPU_MAX_K - TIE_MARGIN} and nprobe at most {GPU_MAX_K} "
                "to search on GPUs, or search: {num_gpus: 0}",
            )
        )

    if index == "hnsw":
        raise UserError(
            Problem(
                "search asks for GPUs (search.num_gpus) but an HNSW index is searched on the "
                "CPU (faiss has no GPU HNSW): the GPUs would be reserved and stay idle",
                field="search.num_gpus",
                fix="set search: {num_gpus: 0} for HNSW, or index: flat / ivf to search on GPUs",
            )
        )
    if vectors == "bf16":
        raise UserError(
            Problem(
                "search asks for GPUs (search.num_gpus) but the index stores bf16 vectors, "
                "which faiss's GPU indexes cannot hold (fp32 and fp16 only)",
                field="search.num_gpus",
                fix="set vectors: fp16 (half the memory as well) to search on GPUs, or "
                "search: {num_gpus: 0}",
            )
        )


def check_faiss_gpu() -> None:
    """Refuse GPU search (`search: {num_gpus: ...}`) where only a CPU build of faiss is
    installed, before anything loads."""
    from lasagna.errors import Problem, UserError
    from lasagna.models.install import faiss_builds

    if not any("gpu" in b for b in faiss_builds()):
        raise UserError(
            Problem(
                "search asks for GPUs (search.num_gpus) but the installed faiss has no GPU "
                f"support ({', '.join(faiss_builds()) or 'no faiss build found'})",
                field="search.num_gpus",
                fix="install a faiss GPU build (the gpu extra's faiss-gpu-cu12, then pip "
                "uninstall -y faiss-cpu), or set search: {num_gpus: 0}",
            )
        )
