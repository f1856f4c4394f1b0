"""Trial keys, comparability keys and trial seeds: each computed in exactly one function.

A trial key decides what `--resume` may restore, so it hashes everything a score depends
on: the dataset revision (full sha256 of the data), the selection of rows, the track, the
system's resolved config (and its model identity), the seed and the metric-definitions
version. It is the first 20 hex digits (80 bits) of a sha256 over canonical JSON (sorted
keys, no whitespace), so the same inputs give the same key in any process, on any machine.

A comparability key decides which results may share a leaderboard group: the same data
(revision), the same selection, the same corpus provenance (pooled_gold never mixes with a
real corpus), the same track and metric definitions, but any system and any seed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from lasagna.common.digest import json_sha256
from lasagna.systems.base import placement_free

TRIAL_KEY_HEX = 20
COMPARABILITY_HASH_HEX = 12
KEY_FORMAT = "1"  # bump when the recipe of a key changes


_sha = json_sha256


def trial_key(
    *,
    dataset_revision: str,
    selection: dict[str, Any],
    track: str,
    system_config: dict[str, Any],
    seed: int,
    metric_definitions_version: str,
) -> str:
    """The stable key of one trial (20 hex digits): what `--resume` matches on."""
    return _sha(
        {
            "format": f"trial/{KEY_FORMAT}",
            "dataset_revision": dataset_revision,
            "selection": selection,
            "track": track,
            "system": system_config,
            "seed": seed,
            "metrics": metric_definitions_version,
        }
    )[:TRIAL_KEY_HEX]


def comparability_key(
    *,
    dataset_name: str,
    dataset_revision: str,
    split: str | None,
    n_samples: int | None,
    filters: dict[str, Any],
    sample_seed: int | None,
    corpus_provenance: str | None,
    track: str,
    metric_definitions_version: str,
) -> str:
    """The leaderboard group of a result: readable prefix + 12 hex digits of a hash.

    e.g. "local/x@abc123def456|test|retrieval|pooled_gold|9f2c4e1a0b3d". The sample
    seed counts only when rows were sampled (`n_samples`), since it changes nothing else.
    """
    digest = _sha(
        {
            "format": f"comparability/{KEY_FORMAT}",
            "dataset_name": dataset_name,
            "dataset_revision": dataset_revision,
            "split": split,
            "n_samples": n_samples,
            "filters": filters,
            "sample_seed": sample_seed if n_samples is not None else None,
            "corpus_provenance": corpus_provenance,
            "track": track,
            "metrics": metric_definitions_version,
        }
    )[:COMPARABILITY_HASH_HEX]
    parts = [dataset_name, split or "-", track, corpus_provenance or "no_corpus", digest]
    return "|".join(parts)


def trial_seed(sweep_seed: int, repeat: int) -> int:
    """The seed of repeat `repeat` of a sweep: distinct per repeat, a 31-bit integer."""
    digest = _sha({"format": f"seed/{KEY_FORMAT}", "seed": sweep_seed, "repeat": repeat})
    return int(digest[:8], 16) & 0x7FFFFFFF


def system_config(
    system: BaseModel, model_identity: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The part of a system's config that can change its scores, as plain JSON.

    Stage placement (`StageResources`: CPUs, GPUs, actors, batch size) is left out so
    moving a sweep from a laptop to a cluster keeps its keys. `model_identity` (the hash of
    the model's files and prompt template, from lasagna.models.identity) is added when known.
    A system config's own `identity()` is this with its model identity filled in.
    """
    out = placement_free(system)
    if model_identity is not None:
        out["model_identity"] = model_identity
    return out
