"""Shared by the calibration converters (convert_halueval.py, convert_frank.py,
convert_topical_chat.py): a seeded, label-balanced sample and the JSONL writer.

The scripts import it as a sibling (`sys.path` gets the scripts folder), like
bench_cache.py imports convert_squad_v2.py.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TypeVar

from convert_squad_v2 import write_jsonl

T = TypeVar("T")

__all__ = ["balanced_sample", "converter_parser", "seeded_rank", "write_jsonl"]


def seeded_rank(seed: int, key: str) -> str:
    """A record's place in the seeded order: sha256 of seed and key (no RNG state)."""
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def balanced_sample(
    records: Sequence[T],
    label_of: Callable[[T], Hashable],
    key_of: Callable[[T], str],
    n: int,
    seed: int = 0,
    labels: Sequence[Hashable] | None = None,
) -> list[T]:
    """n records, as even across labels as the groups allow, in the records' own order.

    Each label's group is ordered by `seeded_rank`; records are taken one per label in turn
    (in `labels` order, default sorted), so a small group gives all it has and the others
    fill the rest. With two labels and an even n each gives n / 2.
    """
    groups: dict[Hashable, list[int]] = {}
    for i, record in enumerate(records):
        groups.setdefault(label_of(record), []).append(i)
    order = list(labels) if labels is not None else sorted(groups, key=str)
    queues = [
        sorted(groups.get(label, []), key=lambda i: seeded_rank(seed, key_of(records[i])))
        for label in order
    ]
    chosen: list[int] = []
    depth = 0
    while len(chosen) < n and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(chosen) < n:
                chosen.append(queue[depth])
        depth += 1
    return [records[i] for i in sorted(chosen)]


def converter_parser(doc: str, default_input: Path, n: int) -> argparse.ArgumentParser:
    """input (default: the shared data copy), --n, --seed, --out: every converter's options."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("input", nargs="?", type=Path, default=default_input)
    parser.add_argument("--n", type=int, default=n, help=f"rows to write (default {n})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    return parser
