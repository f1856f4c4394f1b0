"""`lasagna models list`: the models this machine can run without a download.

lasagna never downloads a model, so what a sweep can name is: the packaged models (shipped
as Python packages), the models already in the local Hugging Face cache, a local folder,
and an API model when its key is set. This lists the first, second and last, and says how
each local one would run here (the runtime and precision `auto` picks on this hardware).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from lasagna.errors import UserError
from lasagna.models.api_backend import KEY_VARIABLES
from lasagna.models.packaged import PACKAGED_GGUF, PACKAGED_PREFIX, packaged_folder


@dataclass(frozen=True)
class Available:
    name: str  # what a sweep's `model:` names
    kind: str  # "generator / judge" or "embedder"
    state: str  # how it runs here, or what it needs first


def packaged_models() -> list[Available]:
    """The packaged generator(s) and embedder: installed, prepared, how `auto` runs them."""
    from lasagna.models.embedders import PACKAGED_EMBEDDER, resolve_embedder
    from lasagna.models.precision import cpu_has_bf16, hardware_kind, resolve_setting

    out = []
    dtype = "bfloat16" if cpu_has_bf16() else "float32"
    for name in PACKAGED_GGUF:
        try:
            ready = packaged_folder(name).is_dir()
        except UserError as err:  # its package is not installed
            out.append(Available(PACKAGED_PREFIX + name, "generator / judge", _first(err)))
            continue
        how = f"vLLM or transformers, dtype auto = {dtype} on {hardware_kind(False)}"
        state = how if ready else f"{how}; converted at first use (or: lasagna models prepare)"
        out.append(Available(PACKAGED_PREFIX + name, "generator / judge", state))
    try:
        resolve_embedder(PACKAGED_EMBEDDER)
        backend, precision = resolve_setting("auto", "auto", gpu=False)
        state = f"{backend} {precision} on {hardware_kind(False)} (backend and precision auto)"
    except UserError as err:
        state = _first(err)
    out.append(Available(PACKAGED_EMBEDDER, "embedder", state))
    return out


def cached_models() -> tuple[str, list[Available]]:
    """(the Hugging Face cache folder, its models): a model with `modules.json` is a
    sentence-transformers embedder, any other a generator / judge."""
    from huggingface_hub import constants, scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    folder = constants.HF_HUB_CACHE  # HF_HUB_CACHE / HF_HOME, as the loaders read it
    try:
        repos = [r for r in scan_cache_dir(folder).repos if r.repo_type == "model"]
    except (CacheNotFound, ValueError, OSError):  # no cache yet, or not a folder
        return folder, []
    out = []
    for repo in sorted(repos, key=lambda r: r.repo_id.lower()):
        files = {f.file_name for rev in repo.revisions for f in rev.files}
        kind = "embedder" if "modules.json" in files else "generator / judge"
        out.append(Available(repo.repo_id, kind, repo.size_on_disk_str))
    return folder, out


def api_models() -> list[Available]:
    """One line per API: usable (its key is set) or what to set."""
    out = []
    for backend, (key, _) in KEY_VARIABLES.items():
        names = "gpt-..., o3, ..., openai:NAME" if backend == "openai" else "claude-..."
        ready = bool(os.environ.get(key, "").strip())
        state = f"{key} is set" if ready else f"needs {key}"
        out.append(Available(names, f"{backend} API", state))
    return out


def _first(err: UserError) -> str:
    return err.render().splitlines()[-1].removeprefix("error: ")
