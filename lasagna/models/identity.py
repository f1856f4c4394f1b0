"""What a generation result depends on, as plain data for the trial key.

Two trials with equal identities would produce the same answers (at temperature 0), so a
resumed run may reuse one for the other; anything that changes answers must appear here.
Secrets never do: API keys are read from the environment by the backend only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna.common.digest import file_sha256, path_sha256, text_sha256
from lasagna.models.packaged import API_BACKENDS, packaged_gguf_path, packaged_name

if TYPE_CHECKING:
    from lasagna.models.spec import ModelSpec


def model_files_sha256(spec: ModelSpec) -> str | None:
    """sha256 of the local weights: the GGUF for a packaged model, the file or folder for a
    local path; None for hub ids and API models (their id is the identity)."""
    if spec.backend in API_BACKENDS:
        return None
    name = packaged_name(spec.model)
    if name is not None:
        return file_sha256(packaged_gguf_path(name))
    path = Path(spec.model).expanduser()
    return path_sha256(path) if path.exists() else None


def planning_gpu() -> bool:
    """Whether this machine has a GPU, without importing torch (a device node, or torch
    already loaded and seeing CUDA)."""
    import glob
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            return bool(torch.cuda.is_available())
        except Exception:
            return False
    return bool(glob.glob("/dev/nvidia[0-9]*"))


def engine_gpu(spec: ModelSpec) -> bool:
    """Whether the engine of `spec` runs on a GPU, by the pools' own rule
    (lasagna.models.gpus): its resources ask for one, or it is a local model and the
    cluster the plan targets has GPUs (a CPU-only head planning for GPU workers included);
    outside a plan, whether this node has one."""
    from lasagna.models.gpus import engine_gpus, planned_gpus

    gpus = planned_gpus()
    if gpus is None:
        gpus = 1.0 if planning_gpu() else 0.0
    return engine_gpus(spec, gpus) > 0


def resolved_dtype(spec: ModelSpec, gpu: bool) -> str:
    """The dtype a local backend runs `spec` in, "auto" resolved for the hardware (GPU or
    not; a CPU's native bf16): what answers depend on, so what keys record."""
    if spec.backend in API_BACKENDS or spec.dtype != "auto":
        return spec.dtype
    if spec.backend == "vllm":
        from lasagna.models.vllm_backend import vllm_dtype

        return vllm_dtype(spec.dtype, gpu)
    return "bfloat16" if gpu else "float32"  # transformers (see hf_backend.torch_dtype)


def model_identity(spec: ModelSpec, prompt_template: str) -> dict[str, Any]:
    """Id or path, local file hash, backend, the dtype it runs in ("auto" resolved for where
    the engine runs: a GPU when its resources ask for one, else the planning machine),
    sampling, and the prompt template's sha256.

    `prompt_template` is the template the generator runs (see
    `lasagna.models.prompts.effective_template`). Resources (actors, batch size) are left out:
    they change speed, not answers.
    """
    return {
        "model": spec.model,
        "files_sha256": model_files_sha256(spec),
        "backend": spec.backend,
        "dtype": resolved_dtype(spec, engine_gpu(spec)),
        "max_model_len": spec.max_model_len,
        "tensor_parallel_size": spec.tensor_parallel_size,
        "base_url": spec.base_url,
        "sampling": {
            "temperature": spec.temperature,
            "max_tokens": spec.max_tokens,
            "stop": list(spec.stop),
            "seed": spec.seed,
            # sampled: each repeat draws with its own seed (lasagna.models.draws); keys
            # made when every repeat drew with this one seed are not restored
            **({"draw_seeds": "per repeat"} if spec.temperature > 0 else {}),
        },
        "prompt_sha256": text_sha256(prompt_template),
    }


def embedder_files_sha256(model: str) -> str | None:
    """sha256 of an embedder's files (packaged, local folder or cached hub snapshot), so an
    edited model is a new identity; None when it does not resolve (preflight says why)."""
    from lasagna.errors import UserError
    from lasagna.models.embedders import resolve_embedder

    try:
        return path_sha256(resolve_embedder(model))
    except UserError:
        return None


def embedder_identity(model: str) -> dict[str, Any]:
    """What an embedder's vectors depend on: its name or path and the hash of its files."""
    path = Path(model).expanduser()
    where = str(path.resolve()) if not model.startswith("packaged:") and path.exists() else model
    return {"model": where, "files_sha256": embedder_files_sha256(model)}
