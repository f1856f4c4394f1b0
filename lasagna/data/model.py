"""The one in-memory representation of a user's data: a `Benchmark`.

Built once by `lasagna.data.load_benchmark`; later stages never re-parse files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Format = Literal["jsonl", "csv", "json", "beir"]
Provenance = Literal["corpus", "pooled_gold"]
Track = Literal["retrieval", "generation"]


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


@dataclass(frozen=True)
class Capabilities:
    """Which tracks the data supports, and why not the others."""

    retrieval: bool
    generation: bool
    closed_book_only: bool
    corpus_provenance: Provenance | None
    reasons: dict[str, str]  # track -> why it is not supported (and the fix)
    fixes: dict[str, str] = field(default_factory=dict)  # track -> what to do about it


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

    @property
    def corpus_provenance(self) -> Provenance | None:
        return self.capabilities.corpus_provenance
