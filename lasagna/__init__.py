"""lasagna: a distributed batch evaluator for RAG and LLM systems, on Ray."""

from __future__ import annotations

from typing import Any

from lasagna.common.version import VERSION as __version__

_SDK = ("Datapoint", "Dataset", "evaluate")
__all__ = ["__version__", *_SDK]


def __getattr__(name: str) -> Any:
    """`from lasagna import Datapoint, evaluate` without importing the SDK at `import lasagna`."""
    if name in _SDK:
        import lasagna.evaluation as evaluation

        return getattr(evaluation, name)
    raise AttributeError(f"module 'lasagna' has no attribute {name!r}")
