"""The fixed chunker: documents into 200-word passages, and which passages share words.

Word rule: a word is a maximal run of non-whitespace characters (`str.split()`), so
punctuation stays attached and line breaks count as spaces. A passage is 200 consecutive
words joined by single spaces. A tail shorter than 50 words is appended to the passage
before it (that last passage then has 200-249 words); a longer tail is its own passage. A
document under 200 words is one passage. Passage ids are `<doc_id>#<index from 0>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from lasagna.data.extract import Document

PASSAGE_WORDS = 200
MIN_TAIL_WORDS = 50

# Words that every passage shares; left out when counting shared words.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves""".split()
)
_TOKEN = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Passage:
    passage_id: str
    doc_id: str
    index: int
    text: str

    @cached_property
    def words(self) -> frozenset[str]:
        return content_words(self.text)


def content_words(text: str) -> frozenset[str]:
    """Distinct lower-cased letter/digit tokens, stopwords and 1-letter tokens left out."""
    return frozenset(
        t for t in _TOKEN.findall(text.casefold()) if len(t) > 1 and t not in STOPWORDS
    )


def chunk_words(text: str, size: int = PASSAGE_WORDS, min_tail: int = MIN_TAIL_WORDS) -> list[str]:
    """Cut a text into passages of `size` words (see the module doc for the tail rule)."""
    words = text.split()
    if not words:
        return []
    spans = [words[i : i + size] for i in range(0, len(words), size)]
    if len(spans) > 1 and len(spans[-1]) < min_tail:
        tail = spans.pop()
        spans[-1] = spans[-1] + tail
    return [" ".join(span) for span in spans]


def chunk_documents(documents: list[Document]) -> list[Passage]:
    """Every document's passages, in document order then position."""
    return [
        Passage(f"{doc.doc_id}#{i}", doc.doc_id, i, text)
        for doc in documents
        for i, text in enumerate(chunk_words(doc.text))
    ]


def shared_words(a: Passage, b: Passage) -> int:
    return len(a.words & b.words)


def most_sharing(
    passages: list[Passage], i: int, k: int, *, other_documents: bool = False
) -> list[int]:
    """Indices of the `k` passages sharing the most words with passage `i` (at least one).

    Ties go to the earlier passage, so the choice is deterministic. `other_documents`
    keeps only passages of documents other than passage `i`'s (the multihop partner rule).
    """
    base = passages[i]
    scored = [
        (-shared_words(base, p), j)
        for j, p in enumerate(passages)
        if j != i and not (other_documents and p.doc_id == base.doc_id)
    ]
    scored = [s for s in scored if s[0] < 0]
    return [j for _, j in sorted(scored)[:k]]


def multihop_partner(passages: list[Passage], i: int) -> int | None:
    """The passage of another document sharing the most words with passage `i`; None if none."""
    best = most_sharing(passages, i, 1, other_documents=True)
    return best[0] if best else None


def unanswerable_neighbours(passages: list[Passage], i: int, k: int = 3) -> list[int]:
    """The `k` passages (any document) sharing the most words with passage `i`."""
    return most_sharing(passages, i, k)
