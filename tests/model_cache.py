"""A fresh cache for a test that shares the converted models of the default cache."""

from __future__ import annotations

from pathlib import Path


def cache_sharing_models(folder: Path) -> Path:
    """A fresh cache (indexes and embeddings built anew) whose converted packaged models
    and OpenVINO encoders are the default cache's (converting SmolLM2 once costs ~40 s)."""
    from lasagna.models.packaged import prepare_packaged_generator

    models = prepare_packaged_generator().parent  # converts on a fresh machine only
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "models").exists():
        (folder / "models").symlink_to(models, target_is_directory=True)
    return folder
