"""Batch-invariant corpus encoding: the batches a corpus is encoded in, fixed before any encoder
runs, so every document is encoded with the same neighbours on every layout.

A reduced-precision encoder (bf16, fp16) gives a document a slightly different vector
depending on which documents share its batch (the padding length and the matrix shapes
change the kernels' rounding). So the driver cuts the batches once: documents sorted by
(token length, doc id), then `batch_size` at a time. A batch is the unit an encoder
receives and encodes in one forward pass, whether the encoder is this process, one Ray
actor or many, on one node or many, fresh or resumed: the vectors are the same bytes on
every layout. Sorting by length also keeps the padding small: `padding` reports it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from lasagna.systems import DenseRetriever


@dataclass(frozen=True)
class EncodingPlan:
    """The batches of one corpus: `order` lists row positions (into the corpus's documents)
    sorted by (token length, doc id); batch i is order[i * batch_size : (i + 1) * batch_size]."""

    order: np.ndarray
    lengths: np.ndarray  # tokens per document (after truncation), by row position
    batch_size: int

    def __len__(self) -> int:
        return -(-len(self.order) // self.batch_size)

    def without(self, done: np.ndarray | None) -> EncodingPlan:
        """The plan less the batches whose rows are all `done` (a mask by row position; an
        interrupted encoding's). What is left cuts into the same batches as before: every
        batch but the last is full, and the last stays last."""
        if done is None or not done.any():
            return self
        left = [rows for rows in self.batches() if not done[rows].all()]
        order = np.concatenate(left) if left else np.empty(0, dtype=np.int64)
        return EncodingPlan(order=order, lengths=self.lengths, batch_size=self.batch_size)

    def batches(self) -> Iterator[np.ndarray]:
        """The row positions of each batch, in plan order."""
        for start in range(0, len(self.order), self.batch_size):
            yield self.order[start : start + self.batch_size]

    def padding(self) -> Padding:
        """Real and padded tokens of this plan and of batches cut in corpus order."""
        return Padding(
            real=int(self.lengths.sum()),
            padded=padded_tokens(self.lengths, self.order, self.batch_size),
            unsorted=padded_tokens(self.lengths, np.arange(len(self.lengths)), self.batch_size),
        )


@dataclass(frozen=True)
class Padding:
    """Token counts of an encoding: `real` tokens, `padded` as encoded (each batch padded to
    its longest document), `unsorted` had the batches been cut in corpus order."""

    real: int
    padded: int
    unsorted: int

    @property
    def waste(self) -> float:
        """The share of the encoded tokens that is padding."""
        return 1.0 - self.real / self.padded if self.padded else 0.0

    @property
    def unsorted_waste(self) -> float:
        return 1.0 - self.real / self.unsorted if self.unsorted else 0.0

    def describe(self) -> str:
        return (
            f"padding {self.waste:.1%} of {self.padded:,} encoded tokens "
            f"(batches in corpus order: {self.unsorted_waste:.1%})"
        )


def padded_tokens(lengths: np.ndarray, order: np.ndarray, batch_size: int) -> int:
    """Tokens encoded when the rows in `order` are cut into batches of `batch_size`, each
    padded to its longest."""
    total = 0
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        total += int(lengths[rows].max()) * len(rows)
    return total


def plan_encoding(ids: Sequence[str], lengths: Sequence[int], batch_size: int) -> EncodingPlan:
    """The plan of a corpus whose row i is document ids[i] of lengths[i] tokens."""
    if len(ids) != len(lengths):
        raise ValueError(f"{len(ids)} ids for {len(lengths)} lengths")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    lens = np.asarray(lengths, dtype=np.int64)
    order = np.asarray(sorted(range(len(ids)), key=lambda i: (lens[i], ids[i])), dtype=np.int64)
    return EncodingPlan(order=order, lengths=lens, batch_size=batch_size)


def corpus_plan(cfg: DenseRetriever, ids: Sequence[str], texts: Sequence[str]) -> EncodingPlan:
    """The plan of a corpus for `cfg`'s embedder: token lengths from its tokenizer (on the
    driver, no model weights), batches of `cfg.encode.batch_size`."""
    from lasagna.models.embedders import token_lengths

    lengths = token_lengths(cfg.model, list(texts), cfg.max_seq_length)
    return plan_encoding(ids, lengths, cfg.encode.batch_size)
