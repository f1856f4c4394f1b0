"""A deterministic synthetic retrieval benchmark of any size, for scripts/bench_scale.py.

The same (n_docs, n_questions, seed) always gives the same corpus, questions, judgments and
vectors, chunk by chunk, so a 1M-document corpus never has to be held twice.

- Words: a fixed vocabulary of pronounceable pseudo-words drawn with Zipf-like frequencies
  (exponent 1.1, as natural text), plus topic words: every document belongs to one of
  ~sqrt(n) topics and a quarter of its words come from that topic's own word list.
- Questions: question i asks about document (i * stride) % n: six of the twelve rarest
  non-topic words of that document; its one relevant document is that document (grade 1).
- Vectors: 384-d unit vectors, clustered like real embeddings: a document is its topic's
  centre plus Gaussian noise, normalized; a question is its document's vector plus noise.
  Random vectors without clusters would be the worst case for IVF/HNSW, not a typical one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

DIM = 384
VOCAB = 50_000
TOPIC_WORDS = 40
DOC_WORDS = (30, 90)  # document length range, in words
QUESTION_WORDS = 6
DOC_NOISE = 1.1  # noise norm relative to the (unit) topic centre
QUESTION_NOISE = 0.6  # noise norm relative to the (unit) document vector
CHUNK = 50_000


def _syllables(i: int) -> str:
    cons, vows = "bdfgklmnprstvz", "aeiou"
    out = []
    i += 1
    while i:
        i, r = divmod(i, len(cons) * len(vows))
        out.append(cons[r // len(vows)] + vows[r % len(vows)])
    return "".join(out)


@dataclass(frozen=True)
class ScaleData:
    n_docs: int
    n_questions: int
    seed: int = 0

    @property
    def n_topics(self) -> int:
        return max(4, int(math.sqrt(self.n_docs)))

    def _rng(self, *stream: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, *stream])

    def vocabulary(self) -> np.ndarray:
        return np.array([_syllables(i) for i in range(VOCAB + self.n_topics * TOPIC_WORDS)])

    def _topic_of(self, start: int, stop: int) -> np.ndarray:
        return self._rng(1, start).integers(0, self.n_topics, stop - start)

    def doc_id(self, i: int) -> str:
        return f"d{i}"

    def _doc_words(self, start: int, stop: int) -> list[np.ndarray]:
        """Word indexes of documents start..stop-1 (one generator per chunk start)."""
        rng = self._rng(2, start)
        ranks = np.arange(1, VOCAB + 1, dtype=np.float64)
        p = ranks**-1.1
        p /= p.sum()
        topics = self._topic_of(start, stop)
        lengths = rng.integers(DOC_WORDS[0], DOC_WORDS[1] + 1, stop - start)
        common = rng.choice(VOCAB, size=int(lengths.sum()), p=p)
        out, pos = [], 0
        for topic, length in zip(topics, lengths, strict=True):
            words = common[pos : pos + length].copy()
            pos += length
            k = length // 4
            words[:k] = VOCAB + topic * TOPIC_WORDS + rng.integers(0, TOPIC_WORDS, k)
            rng.shuffle(words)
            out.append(words)
        return out

    def documents(self) -> Iterator[tuple[list[str], list[str]]]:
        """(doc ids, texts) per chunk of CHUNK documents, in doc id order."""
        vocab = self.vocabulary()
        for start in range(0, self.n_docs, CHUNK):
            stop = min(self.n_docs, start + CHUNK)
            texts = [" ".join(vocab[w]) for w in self._doc_words(start, stop)]
            yield [self.doc_id(i) for i in range(start, stop)], texts

    def _stride(self) -> int:
        stride = 7919  # a prime; coprime to n unless n is its multiple
        return stride if self.n_docs % stride else 1

    def target(self, q: int) -> int:
        return (q * self._stride()) % self.n_docs

    def questions(self) -> tuple[list[str], list[str], list[str]]:
        """(question ids, texts, the relevant doc id of each)."""
        vocab = self.vocabulary()
        targets = np.array([self.target(q) for q in range(self.n_questions)], dtype=np.int64)
        texts: list[str] = [""] * self.n_questions
        for start in range(0, self.n_docs, CHUNK):
            stop = min(self.n_docs, start + CHUNK)
            hit = np.flatnonzero((targets >= start) & (targets < stop))
            if not len(hit):
                continue
            words = self._doc_words(start, stop)
            for q in hit:
                own = words[targets[q] - start]
                rare = np.unique(own[own < VOCAB])[::-1]  # common words, rarest first
                pick = self._rng(3, int(q)).choice(
                    rare[: QUESTION_WORDS * 2], size=min(QUESTION_WORDS, len(rare)), replace=False
                )
                texts[q] = " ".join(vocab[pick])
        ids = [f"q{q}" for q in range(self.n_questions)]
        return ids, texts, [self.doc_id(int(d)) for d in targets]

    def centres(self) -> np.ndarray:
        c = self._rng(4).standard_normal((self.n_topics, DIM), dtype=np.float32)
        return c / np.linalg.norm(c, axis=1, keepdims=True)

    def doc_vectors(self) -> Iterator[np.ndarray]:
        """Unit float32 document vectors, CHUNK rows at a time in doc id order."""
        centres = self.centres()
        for start in range(0, self.n_docs, CHUNK):
            yield self._doc_vectors(centres, start, min(self.n_docs, start + CHUNK))

    def _doc_vectors(self, centres: np.ndarray, start: int, stop: int) -> np.ndarray:
        noise = self._rng(5, start).standard_normal((stop - start, DIM), dtype=np.float32)
        x = centres[self._topic_of(start, stop)] + noise * (DOC_NOISE / math.sqrt(DIM))
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def question_vectors(self) -> np.ndarray:
        """Unit float32 question vectors, row q for question q."""
        centres = self.centres()
        targets = np.array([self.target(q) for q in range(self.n_questions)])
        out = np.empty((self.n_questions, DIM), dtype=np.float32)
        for start in range(0, self.n_docs, CHUNK):
            stop = min(self.n_docs, start + CHUNK)
            hit = np.flatnonzero((targets >= start) & (targets < stop))
            if len(hit):
                out[hit] = self._doc_vectors(centres, start, stop)[targets[hit] - start]
        noise = self._rng(6).standard_normal(out.shape, dtype=np.float32)
        out += noise * (QUESTION_NOISE / math.sqrt(DIM))
        return out / np.linalg.norm(out, axis=1, keepdims=True)
