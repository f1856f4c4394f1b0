"""Where the tests find the shared reference data (BEIR SciFact, the SQuAD v2 dev subset, the
trec_eval / ir_measures cases, FRANK, Topical-Chat): $LASAGNA_SHARED_DATA when set, else
../shared/data beside the repository. Tests that need it skip, naming the place, when absent."""

from __future__ import annotations

import os
from pathlib import Path

ENV = "LASAGNA_SHARED_DATA"
REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (
    Path(os.environ[ENV]).expanduser().resolve()
    if os.environ.get(ENV)
    else REPO.parent / "shared" / "data"
)
SCIFACT = SHARED_DATA / "beir_scifact"
SQUAD = SHARED_DATA / "squad_v2_dev_subset" / "dev-v2.0.json"
HOTPOTQA = SHARED_DATA / "hotpotqa_train_sample100_hipporag"


def missing(path: Path) -> str:
    """The skip reason for reference data that is not there."""
    return f"shared reference data not found at {path} (set {ENV} to the shared data folder)"
