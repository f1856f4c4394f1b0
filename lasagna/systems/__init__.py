"""lasagna.systems: what a sweep compares, as strict configs that know themselves.

Each config (retrievers, generators; judges and SDK executors next) says which track it runs
in (`track`), its `identity()` for trial keys (placement-free config plus the hash of every
local model file it reads), its `with_resources()` (the sweep's stage defaults applied), its
`checks()` (cheap model checks run before anything loads) and its `display_name()`.

May import: lasagna.common, lasagna.errors, lasagna.models (ModelSpec and StageResources live
in lasagna.models.spec), lasagna.judges (a judge system names a judge benchmark).
Imported by sweep, retrieval, engine and tracks; never imports them.
"""

from lasagna.models.spec import PACKAGED_GENERATOR, ModelSpec, StageResources, Strict
from lasagna.systems.base import ResourcesBase, SystemConfig, display_name, resources_model
from lasagna.systems.generators import ClosedBookGenerator, Generator, RagGenerator
from lasagna.systems.judges import JUDGE_MODEL, JudgeSystem
from lasagna.systems.retrievers import (
    PACKAGED_EMBEDDER,
    AnyRetriever,
    BM25Retriever,
    DenseRetriever,
    FusedRetriever,
    HybridRetriever,
    Retriever,
)

# the built-in stage keys (each systems module registers its own); a sweep's model adds those
# of plugins (lasagna.sweep.schema)
Resources = resources_model()

__all__ = [
    "PACKAGED_EMBEDDER",
    "PACKAGED_GENERATOR",
    "AnyRetriever",
    "BM25Retriever",
    "ClosedBookGenerator",
    "DenseRetriever",
    "FusedRetriever",
    "Generator",
    "HybridRetriever",
    "JUDGE_MODEL",
    "JudgeSystem",
    "ModelSpec",
    "RagGenerator",
    "Resources",
    "ResourcesBase",
    "Retriever",
    "StageResources",
    "Strict",
    "SystemConfig",
    "display_name",
]
