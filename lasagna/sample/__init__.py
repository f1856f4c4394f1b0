"""A small data set written for this repo (history of glass, coins and bridges).

26 questions with answers and gold passages; some rows share a passage, three are
unanswerable, and metadata.question_type (factoid, multihop, unanswerable) and
metadata.topic can be used as filters. scripts/demo.sh and the quick start run on it.
"""

from __future__ import annotations

from pathlib import Path

SAMPLE_JSONL = Path(__file__).resolve().parent / "sample.jsonl"


def sample_path() -> Path:
    """Where the packaged sample file lies (inside the installed package)."""
    return SAMPLE_JSONL
