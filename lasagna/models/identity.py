"""What a generation result depends on, as plain data for the trial key.

Two trials with equal identities would produce the same answers (at temperature 0), so a
resumed run may reuse one for the other; anything that changes answers must appear here.
Secrets never do: API keys are read from the environment by the backend only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from lasagna.models.packaged import API_BACKENDS, file_sha256, packaged_gguf_path, packaged_name
from lasagna.sweep.systems import ModelSpec


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def folder_sha256(folder: Path) -> str:
    """One digest over every file of a model folder (relative path + file sha256, sorted)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith("."):  # .cache, .git and similar bookkeeping
            continue
        digest.update(f"{rel}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def model_files_sha256(spec: ModelSpec) -> str | None:
    """sha256 of the local weights: the GGUF for a packaged model, the file or folder for a
    local path; None for hub ids and API models (their id is the identity)."""
    if spec.backend in API_BACKENDS:
        return None
    name = packaged_name(spec.model)
    if name is not None:
        return file_sha256(packaged_gguf_path(name))
    path = Path(spec.model).expanduser()
    if path.is_file():
        return file_sha256(path)
    if path.is_dir():
        return folder_sha256(path)
    return None


def model_identity(spec: ModelSpec, prompt_template: str) -> dict[str, Any]:
    """Id or path, local file hash, backend, sampling, and the prompt template's sha256.

    `prompt_template` is the template the generator runs (see
    `lasagna.models.prompts.effective_template`). Resources (actors, batch size) are left out:
    they change speed, not answers.
    """
    return {
        "model": spec.model,
        "files_sha256": model_files_sha256(spec),
        "backend": spec.backend,
        "dtype": spec.dtype,
        "max_model_len": spec.max_model_len,
        "tensor_parallel_size": spec.tensor_parallel_size,
        "base_url": spec.base_url,
        "sampling": {
            "temperature": spec.temperature,
            "max_tokens": spec.max_tokens,
            "stop": list(spec.stop),
            "seed": spec.seed,
        },
        "prompt_sha256": text_sha256(prompt_template),
    }
