"""Which tracks a Benchmark supports, exactly as the spec's table says, and refusals.

| data                              | retrieval                  | generation           |
| BEIR folder                       | yes, against its corpus    | no (no answers)      |
| rows with contexts and answers    | yes, pooled-gold corpus    | yes                  |
| rows with answers, no contexts    | no (nothing to retrieve)   | closed-book only     |

Reason keys: "retrieval", "generation", and "rag" (generation with retrieved passages).
"""

from __future__ import annotations

from lasagna.data.model import Benchmark, Capabilities, Format, Row
from lasagna.errors import Problem, UserError

TRACKS = ("retrieval", "generation")
GENERATOR_KINDS = ("rag", "closed_book")
_SHOW_IDS = 5


def capabilities_of(fmt: Format, rows: list[Row], qrels: dict[str, dict[str, int]]) -> Capabilities:
    """Decide the tracks from the rows and judgments alone (a pure function)."""
    reasons: dict[str, str] = {}
    fixes: dict[str, str] = {}
    questions = [r for r in rows if r.question is not None]
    judged = any(grade > 0 for r in questions for grade in qrels.get(r.id, {}).values())

    if fmt == "beir":
        reasons["generation"] = "a BEIR folder has queries and judgments but no reference answers"
        fixes["generation"] = "for generation use a JSONL or CSV file with answers and contexts"
        if not judged:
            reasons["retrieval"] = "no query of this split has a relevant (score > 0) document"
            fixes["retrieval"] = "add judgments with a score above 0 to the qrels file"
        return Capabilities(judged, False, False, "corpus", reasons, fixes)

    has_contexts = any(r.contexts for r in rows)
    if not questions:
        why = "the rows are conversations (turns), which are for the judge benchmarks"
        for track in TRACKS:
            reasons[track] = why
            fixes[track] = "add rows with a question (and answers/contexts) for this track"
    if questions and not judged:
        reasons["retrieval"] = (
            "no answerable row has contexts, so there is nothing to retrieve"
            if not has_contexts
            else "every row with contexts is unanswerable, so no passage is relevant"
        )
        fixes["retrieval"] = (
            "add contexts (the passages that answer each question) to the rows, "
            "or use a BEIR folder with a corpus"
        )

    answerable = [r for r in questions if not r.unanswerable]
    missing = [r.id for r in answerable if not r.answers]
    if questions and not answerable:
        reasons["generation"] = "every row is unanswerable, so there is no answer to score"
        fixes["generation"] = "add rows with an answer"
    elif questions and len(missing) == len(answerable):
        reasons["generation"] = "no row has an answer"
        fixes["generation"] = "add an 'answer' (or 'answers') to the rows"
    elif missing:
        reasons["generation"] = f"{len(missing)} answerable row(s) have no answer: {_ids(missing)}"
        fixes["generation"] = (
            "add their answers, or mark them metadata.unanswerable: true (JSONL or JSON)"
        )
    generation = "generation" not in reasons
    closed_book_only = generation and not has_contexts
    if closed_book_only:
        reasons["rag"] = "the rows have no contexts, so only closed-book generation can run"
        fixes["rag"] = "use the closed_book generator, or add contexts to the rows"
    return Capabilities(
        retrieval="retrieval" not in reasons,
        generation=generation,
        closed_book_only=closed_book_only,
        corpus_provenance="pooled_gold" if has_contexts else None,
        reasons=reasons,
        fixes=fixes,
    )


def track_problems(
    benchmark: Benchmark, track: str, generator_kind: str | None = None
) -> list[Problem]:
    """The refusals for running `track` (with `generator_kind`) on this data; [] when fine."""
    caps = benchmark.capabilities
    if track not in TRACKS:
        return [
            _refusal(
                benchmark,
                track,
                f"unknown track '{track}'",
                "use one of: " + ", ".join(TRACKS),
                field="track",
            )
        ]
    if generator_kind is not None and generator_kind not in GENERATOR_KINDS:
        return [
            _refusal(
                benchmark,
                track,
                f"unknown generator kind '{generator_kind}'",
                "use one of: " + ", ".join(GENERATOR_KINDS),
                field="generator.kind",
            )
        ]
    if track == "retrieval" and not caps.retrieval:
        key = "retrieval"
    elif track == "generation" and not caps.generation:
        key = "generation"
    elif track == "generation" and generator_kind == "rag" and caps.closed_book_only:
        key = "rag"
    else:
        return []
    return [_refusal(benchmark, track, caps.reasons[key], caps.fixes.get(key))]


def require_track(benchmark: Benchmark, track: str, generator_kind: str | None = None) -> None:
    """Refuse, before anything loads, a track the data cannot support."""
    problems = track_problems(benchmark, track, generator_kind)
    if problems:
        raise UserError(problems)


def supported_tracks(caps: Capabilities) -> list[str]:
    """Human labels for what can run, e.g. ["retrieval", "generation (closed-book only)"]."""
    out = ["retrieval"] if caps.retrieval else []
    if caps.generation:
        out.append("generation (closed-book only)" if caps.closed_book_only else "generation")
    return out


def _refusal(
    benchmark: Benchmark, track: str, reason: str, fix: str | None, field: str = "track"
) -> Problem:
    label = f"the {track} track" if track in TRACKS else "this request"
    return Problem(
        f"{benchmark.name} cannot run {label}: {reason}",
        file=benchmark.source,
        field=field,
        fix=fix,
    )


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:_SHOW_IDS]) + (", ..." if len(ids) > _SHOW_IDS else "")
