"""The one in-memory representation of a user's data: a `Benchmark`.

Built once by `lasagna.data.load_benchmark`; later stages never re-parse files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Format = Literal["jsonl", "csv", "json", "parquet", "beir"]
Provenance = Literal["corpus", "pooled_gold"]


@dataclass(frozen=True)
class Document:
    """A passage of the corpus. BEIR docs are indexed as title + text."""

    id: str
    text: str
    title: str = ""

    @property
    def indexed_text(self) -> str:
        return f"{self.title} {self.text}".strip() if self.title else self.text


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant" | "system"
    content: str


@dataclass
class Row:
    """One question (or one conversation) of a benchmark."""

    id: str
    question: str | None  # None only for conversation rows
    answers: list[str] = field(default_factory=list)  # first is the reference a judge sees
    contexts: list[str] = field(default_factory=list)
    expected_docs: list[str] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    unanswerable: bool = False
    turns: list[Turn] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # chatbot_role, scenario, ...
    line: int | None = None  # 1-based line (JSONL/CSV) or element index (JSON)


class Missing(NamedTuple):
    """Why the data does not meet a need, and what to do about it."""

    reason: str
    fix: str | None = None


# how a question file is given a corpus, as a fix names it
CORPUS_OPTION = "--corpus DOCS, or corpus: in the sweep's benchmark entry"

CLOSED_BOOK_ONLY = Missing(
    "the rows have no contexts, so only closed-book generation can run",
    "use the closed_book generator, add contexts to the rows, or give the questions a "
    f"corpus to search ({CORPUS_OPTION})",
)


@dataclass(frozen=True)
class Capabilities:
    """Which needs the data meets (lasagna.data.capabilities.NEEDS), and why not the others.

    A track declares its needs (lasagna.tracks, registered in lasagna.data.uses); `reasons`
    and `fixes` say, per track (or kind) that cannot run, why and what to do. `retrieval`,
    `generation` and `closed_book_only` are shorthands for the needs "judged", "answers"
    and "contexts".
    """

    corpus_provenance: Provenance | None
    missing: dict[str, Missing] = field(default_factory=dict)  # need -> reason, fix

    def has(self, need: str) -> bool:
        return need not in self.missing

    @property
    def retrieval(self) -> bool:
        return self.has("judged")

    @property
    def generation(self) -> bool:
        return self.has("answers")

    @property
    def closed_book_only(self) -> bool:
        return self.generation and not self.has("contexts")

    def _by_track(self) -> dict[str, Missing]:
        from lasagna.data.uses import refusals

        return {r.key: r.missing for r in refusals(self)}

    @property
    def reasons(self) -> dict[str, str]:
        """track (or kind: "rag") -> why it cannot run, from the tracks' registered needs."""
        return {k: m.reason for k, m in self._by_track().items()}

    @property
    def fixes(self) -> dict[str, str]:
        return {k: m.fix for k, m in self._by_track().items() if m.fix}


@dataclass
class Benchmark:
    """A validated, content-named data set."""

    name: str  # "local/<stem>@<12 hex>" or "<name>@<12 hex>"
    revision: str  # full sha256 hex digest of the bytes read
    source: str  # the path the user gave
    format: Format
    rows: list[Row]
    corpus: dict[str, Document]  # doc id -> Document (BEIR corpus or pooled gold)
    qrels: dict[str, dict[str, int]]  # row id -> doc id -> graded relevance (>0 relevant)
    capabilities: Capabilities
    split: str | None = None
    stats: dict[str, int] = field(default_factory=dict)  # e.g. BEIR queries_in_file
    corpus_source: str | None = None  # a corpus named beside a question file (its path)
    corpus_revision: str | None = None  # that corpus's own digest (the revision is the pair's)
    notes: list[str] = field(default_factory=list)  # what validate-data should say besides

    @property
    def index_revision(self) -> str:
        """What a retrieval index is keyed by: the corpus alone when one is named, so
        editing the questions reuses the index of an unchanged corpus."""
        return self.corpus_revision or self.revision

    @property
    def corpus_provenance(self) -> Provenance | None:
        return self.capabilities.corpus_provenance
