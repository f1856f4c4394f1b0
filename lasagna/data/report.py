"""The `validate-data` report: what the data is, how it is named, and what it can run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lasagna.common.tables import add_text_row
from lasagna.data.model import Benchmark
from lasagna.data.select import values_of
from lasagna.data.slicing import is_number, number_name, sliceable
from lasagna.data.uses import refusals, supported_tracks

PROVENANCE_NOTE = {
    "corpus": "corpus (the folder's corpus.jsonl)",
    "pooled_gold": "pooled_gold (every row's contexts pooled; no hard negatives, so an easier "
    "search than a real corpus; never compared with real-corpus results)",
}


JUDGE_NOTE = (
    "none: the rows are questions; the judge benchmarks read test cases (input, "
    "actual_output, retrieval_context, context, expected_output) or conversations (turns)"
)


def report_rows(benchmark: Benchmark) -> list[tuple[str, str]]:
    """(label, value) pairs of the report, in print order; plain data for tests and tools."""
    rows = benchmark.rows
    questions = [r for r in rows if r.question is not None]
    judgments = sum(len(docs) for docs in benchmark.qrels.values())
    out = [
        ("name", benchmark.name),
        ("revision", benchmark.revision),
        ("format", benchmark.format),
        ("source", benchmark.source),
    ]
    if benchmark.format == "beir":
        in_file = benchmark.stats.get("queries_in_file", len(rows))
        out += [
            ("split", str(benchmark.split)),
            ("queries", f"{len(rows):,} judged in this split ({in_file:,} in queries.jsonl)"),
        ]
    else:
        conversations = sum(1 for r in rows if r.turns is not None)
        out.append(("rows", f"{len(rows):,}"))
        if conversations:
            out.append(("conversations", f"{conversations:,}"))
        unanswerable = sum(1 for r in questions if r.unanswerable)
        bare = sum(1 for r in questions if not r.unanswerable and not r.answers)
        said = f"{len(questions) - unanswerable:,} answerable, {unanswerable:,} unanswerable"
        out.append(
            ("answerable", said + (f" ({bare:,} answerable without an answer)" * bool(bare)))
        )
    out += [
        ("documents", f"{len(benchmark.corpus):,}"),
        ("judgments", f"{judgments:,}"),
        ("corpus", corpus_note(benchmark)),
    ]
    if benchmark.corpus_source is not None:
        answerable = [r for r in questions if not r.unanswerable]
        judged = sum(1 for r in answerable if benchmark.qrels.get(r.id))
        rest = len(answerable) - judged
        note = f" ({rest:,} with no judgment: scored on generation only)" if rest else ""
        out.append(("judged questions", f"{judged:,} of {len(answerable):,} answerable{note}"))
    if summary := metadata_summary(r.metadata for r in rows):
        out.append(("metadata", summary))
    caps = benchmark.capabilities
    out.append(("tracks", ", ".join(supported_tracks(caps)) or "none"))
    out.append(("judge benchmarks", JUDGE_NOTE))
    for refused in refusals(caps):
        reason, fix = refused.missing
        out.append((f"no {refused.label}", reason + (f" (fix: {fix})" if fix else "")))
    out += [("note", note) for note in benchmark.notes]
    return out


SHOWN_KEYS = 6  # metadata keys the report names
SHOWN_VALUES = 4  # values named per key, the most common first


def metadata_summary(metadatas: Iterable[dict[str, Any] | None]) -> str | None:
    """The keys of the rows' metadata (an object per row) with their most common values and
    counts, or a numeric key's range (what `--filter KEY=VALUE` and `results show RUN --by
    KEY` / `KEY:N` can use); None when no row has metadata."""
    counts: dict[str, Counter[str]] = {}
    numbers: dict[str, tuple[float, float] | None] = {}  # (lo, hi) while all are numbers
    having: Counter[str] = Counter()  # rows per key
    nested: dict[str, None] = {}  # keys holding objects only: no slice or filter key
    for metadata in metadatas:
        for key, value in (metadata or {}).items():
            if not sliceable(value):
                nested.setdefault(key)
                continue
            counts.setdefault(key, Counter()).update(values_of(value))
            having[key] += 1
            span = numbers.get(key, (value, value))
            numbers[key] = (
                (min(span[0], value), max(span[1], value)) if span and is_number(value) else None
            )
    nested = {k: None for k in nested if k not in counts}
    shown = ", ".join(list(nested)[:3]) + (", ..." if len(nested) > 3 else "")
    objects = f"{len(nested):,} key(s) holding objects: {shown} (their fields: KEY.FIELD)"
    if not counts:
        return objects if nested else None
    parts = []
    for key, _ in having.most_common(SHOWN_KEYS):
        values = counts[key]
        if len(values) > SHOWN_VALUES and numbers.get(key):
            lo, hi = (number_name(x) for x in numbers[key])
            parts.append(f"{key}: numbers {lo}..{hi} ({len(values):,} values; --by {key}:4)")
            continue
        common = ", ".join(f"{v} {n:,}" for v, n in values.most_common(SHOWN_VALUES))
        more = f" (of {len(values):,} values)" if len(values) > SHOWN_VALUES else ""
        parts.append(f"{key}: {common}{more}")
    rest = len(counts) - SHOWN_KEYS
    tail = f"; and {rest:,} more key(s)" if rest > 0 else ""
    tail += f"; {objects}" if nested else ""
    return "; ".join(parts) + tail + " (--filter KEY=VALUE; results show RUN --by KEY)"


def corpus_note(benchmark: Benchmark) -> str:
    """What retrieval searches, in words."""
    if benchmark.corpus_source is not None:
        return (
            f"corpus ({benchmark.corpus_source}, revision {str(benchmark.corpus_revision)[:12]}; "
            "a real corpus, never compared with pooled_gold results)"
        )
    return PROVENANCE_NOTE.get(str(benchmark.corpus_provenance), "none")


def print_report(benchmark: Benchmark, console: Console | None = None) -> None:
    """Print the report as a two-column table."""
    console = console or Console()
    pairs = report_rows(benchmark)
    said = {"soft_wrap": True, "highlight": False}
    console.print(f"[green]valid[/green]: {escape(str(benchmark.source))}", **said)
    for label, value in pairs[:2]:  # name and revision unwrapped, so they copy whole
        console.print(f"[bold]{label}[/bold]: {escape(str(value))}", **said)
    table = Table(show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for label, value in pairs[2:]:
        add_text_row(table, label, value)
    console.print(table)
