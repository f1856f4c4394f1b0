"""`load_benchmark`: detect the format, validate, and build the one `Benchmark`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lasagna.data.beir import read_beir
from lasagna.data.capabilities import capabilities_of
from lasagna.data.corpus import pool_gold
from lasagna.data.corpus_file import CorpusData, read_corpus
from lasagna.data.corpus_judgments import judge_rows
from lasagna.data.csvfile import read_csv
from lasagna.data.extract import SUPPORTED_SUFFIXES
from lasagna.data.identity import dataset_digest, digest_bytes, pair_digest, registered_name
from lasagna.data.jsonfile import read_json
from lasagna.data.jsonl import read_jsonl
from lasagna.data.model import Benchmark, Format, Row
from lasagna.data.parquetfile import read_parquet
from lasagna.data.rows import Record, rows_from_records
from lasagna.data.text import GZIP, decode_utf8, read_file
from lasagna.errors import Problem, UserError, in_line_order

Reader = Callable[[bytes, str], tuple[list[Record], list[Problem]]]


def _text(read: Callable[[str, str], tuple[list[Record], list[Problem]]]) -> Reader:
    """A reader of a text format: the bytes decoded first (UTF-8, a BOM dropped)."""
    return lambda data, file: read(decode_utf8(data, file), file)


READERS: dict[str, tuple[Format, Reader]] = {
    ".jsonl": ("jsonl", _text(read_jsonl)),
    ".json": ("json", _text(read_json)),
    ".csv": ("csv", _text(read_csv)),
    ".tsv": ("csv", _text(read_csv)),  # the CSV reader takes the tab from the header line
    ".parquet": ("parquet", read_parquet),
}
UNITS = {"json": "item", "parquet": "row"}  # how a format numbers its rows (else "line")


def data_suffix(path: Path) -> str:
    """The format's suffix, under a `.gz` (`questions.jsonl.gz` -> `.jsonl`)."""
    return Path(path.name.lower().removesuffix(GZIP)).suffix


def detect_format(path: Path) -> Format:
    """A directory is BEIR; files by suffix (gzipped or not); anything else is refused."""
    if path.is_dir():
        return "beir"
    if not path.exists():
        raise UserError(Problem("no such file or folder", file=str(path), fix="check the path"))
    suffix = data_suffix(path)
    if suffix not in READERS:
        raise UserError(
            Problem(
                f"unknown data format '{suffix or '(no suffix)'}'",
                file=str(path),
                fix="use a .jsonl, .json, .csv, .tsv or .parquet file, or a BEIR folder "
                "(corpus.jsonl, queries.jsonl, qrels/)",
            )
        )
    return READERS[suffix][0]


def load_benchmark(
    path: str | Path,
    name: str | None = None,
    split: str | None = None,
    corpus: str | Path | None = None,
) -> Benchmark:
    """Load, validate and name a data set; raise UserError listing all of its problems.
    `corpus`: a corpus the question file is searched in (lasagna.data.corpus_file) instead
    of its rows' pooled contexts."""
    path = Path(path)
    fmt = detect_format(path)
    if fmt == "beir":
        if corpus is not None:
            raise UserError(
                Problem(
                    "a BEIR folder has its own corpus",
                    file=str(path),
                    field="corpus",
                    fix="drop corpus: (or --corpus), or name a question file with it",
                )
            )
        return _load_beir(path, name, split)
    if split is not None:
        raise UserError(
            Problem(
                "a split applies to BEIR folders only",
                file=str(path),
                field="split",
                fix="drop --split (or split:) for a question file",
            )
        )
    data = read_file(path)  # a .gz file's content: its revision is the plain file's
    records, problems = READERS[data_suffix(path)][1](data, str(path))
    rows, row_problems = rows_from_records(records, str(path), with_corpus=corpus is not None)
    if row_problems:
        _refuse_judge_cases(path, records)  # one line, not one per column and row
    problems += row_problems
    if corpus is not None:
        try:
            docs_read = read_corpus(corpus)
        except UserError as err:
            raise UserError(problems + err.problems, title=err.title) from None
        return with_corpus(path, fmt, name, data, rows, problems, docs_read)
    docs, qrels, pool_problems = pool_gold(rows, str(path)) if not problems else ({}, {}, [])
    problems += pool_problems
    if problems:
        problems = in_line_order(problems)
        raise UserError(problems, title=f"{path}: {len(problems)} problem(s)")
    digest = digest_bytes(data)
    return Benchmark(
        name=registered_name(path, digest, name),
        revision=digest,
        source=str(path),
        format=fmt,
        rows=rows,
        corpus=docs,
        qrels=qrels,
        capabilities=capabilities_of(fmt, rows, qrels),
    )


# Columns that make a file a judge file rather than a question file (lasagna.data.judge_cases)
JUDGE_MARKERS = ("input", "actual_output", "retrieval_context", "expected_output")


def _refuse_judge_cases(path: Path, records: list[Record]) -> None:
    """A judge file (input, actual_output, ...) read as questions: said once, not once per
    column and row (a file of conversations, `turns`, is questions too)."""
    if records and set(records[0].data) & set(JUDGE_MARKERS) and "question" not in records[0].data:
        raise UserError(
            Problem(
                "the file holds judge test cases (input, actual_output, ...), not questions",
                file=str(path),
                fix="judge it: lasagna benchmark run FILE --judge BENCHMARK (or a sweep's "
                "`judges:`); retrievers and generators read question files (question, "
                "answers, contexts)",
            )
        )


def with_corpus(
    path: Path,
    fmt: Format,
    name: str | None,
    data: bytes,
    rows: list[Row],
    problems: list[Problem],
    corpus: CorpusData,
) -> Benchmark:
    """The question rows judged against a named corpus, named by the pair's digest."""
    judged = judge_rows(rows, corpus, str(path), UNITS.get(fmt, "line"))
    problems = problems + judged.problems
    if problems:
        problems = in_line_order(problems)
        raise UserError(problems, title=f"{path}: {len(problems)} problem(s)")
    digest = pair_digest(digest_bytes(data), corpus.digest)
    stats = {**judged.stats, "corpus_unreadable_files": len(corpus.unreadable)}
    notes = [f"corpus file {f} was not read: {why}" for f, why in corpus.unreadable]
    if corpus.skipped:  # e.g. a .csv or .json beside the documents: said, not silently left
        notes.append(
            f"{len(corpus.skipped)} corpus file(s) of a type lasagna does not read were left "
            f"out ({_first(corpus.skipped)}); it reads {', '.join(SUPPORTED_SUFFIXES)}"
        )
    if judged.unmatched_ids:
        notes.append(
            f"{len(judged.unmatched_ids)} question(s) have contexts that match no corpus "
            f"passage by exact text ({_first(judged.unmatched_ids)}): they have no judgments "
            "and are scored on generation only (name their documents in expected_docs)"
        )
    return Benchmark(
        name=registered_name(path, digest, name),
        revision=digest,
        source=str(path),
        format=fmt,
        rows=judged.rows,
        corpus=corpus.documents,
        qrels=judged.qrels,
        capabilities=capabilities_of(fmt, judged.rows, judged.qrels, corpus=True),
        stats=stats,
        corpus_source=corpus.source,
        corpus_revision=corpus.digest,
        notes=notes,
    )


def _first(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (", ..." if len(ids) > n else "")


def _load_beir(path: Path, name: str | None, split: str | None) -> Benchmark:
    beir = read_beir(path, split)
    digest = dataset_digest(path)
    return Benchmark(
        name=registered_name(path, digest, name),
        revision=digest,
        source=str(path),
        format="beir",
        rows=beir.rows,
        corpus=beir.corpus,
        qrels=beir.qrels,
        capabilities=capabilities_of("beir", beir.rows, beir.qrels),
        split=beir.split,
        stats={"queries_in_file": beir.queries_in_file, "judgments": beir.judgments},
    )
