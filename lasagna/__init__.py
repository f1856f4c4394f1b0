"""lasagna: a distributed batch evaluator for RAG and LLM systems, on Ray."""

from __future__ import annotations

from typing import Any

from lasagna.common.version import VERSION as __version__

_SDK = ("Datapoint", "Dataset", "evaluate")
__all__ = ["__version__", "model", *_SDK]


def __getattr__(name: str) -> Any:
    """`from lasagna import Datapoint, evaluate, model` without importing the SDK (or a model
    backend) at `import lasagna`."""
    if name in _SDK:
        import lasagna.evaluation as evaluation

        return getattr(evaluation, name)
    if name == "model":
        from lasagna.models.client import model

        return model
    raise AttributeError(f"module 'lasagna' has no attribute {name!r}")
