"""`load_benchmark`: detect the format, validate, and build the one `Benchmark`."""

from __future__ import annotations

from pathlib import Path

from lasagna.data.beir import read_beir
from lasagna.data.capabilities import capabilities_of
from lasagna.data.corpus import pool_gold
from lasagna.data.csvfile import read_csv
from lasagna.data.identity import dataset_digest, digest_bytes, registered_name
from lasagna.data.jsonfile import read_json
from lasagna.data.jsonl import read_jsonl
from lasagna.data.model import Benchmark, Format
from lasagna.data.rows import rows_from_records
from lasagna.data.text import decode_utf8
from lasagna.errors import Problem, UserError

READERS = {".jsonl": ("jsonl", read_jsonl), ".json": ("json", read_json), ".csv": ("csv", read_csv)}


def detect_format(path: Path) -> Format:
    """A directory is BEIR; files by suffix; anything else is refused with the fix."""
    if path.is_dir():
        return "beir"
    if not path.exists():
        raise UserError(Problem("no such file or folder", file=str(path), fix="check the path"))
    suffix = path.suffix.lower()
    if suffix not in READERS:
        raise UserError(
            Problem(
                f"unknown data format '{suffix or '(no suffix)'}'",
                file=str(path),
                fix="use a .jsonl, .json or .csv file, or a BEIR folder "
                "(corpus.jsonl, queries.jsonl, qrels/)",
            )
        )
    return READERS[suffix][0]  # type: ignore[return-value]


def load_benchmark(
    path: str | Path, name: str | None = None, split: str | None = None
) -> Benchmark:
    """Load, validate and name a data set; raise UserError listing all of its problems."""
    path = Path(path)
    fmt = detect_format(path)
    if fmt == "beir":
        return _load_beir(path, name, split)
    if split is not None:
        raise UserError(
            Problem(
                "a split applies to BEIR folders only",
                file=str(path),
                field="split",
                fix="drop --split (or split:) for a JSONL, JSON or CSV file",
            )
        )
    data = path.read_bytes()
    text = decode_utf8(data, str(path))
    records, problems = READERS[path.suffix.lower()][1](text, str(path))
    rows, row_problems = rows_from_records(records, str(path))
    problems += row_problems
    corpus, qrels, pool_problems = pool_gold(rows, str(path)) if not problems else ({}, {}, [])
    problems += pool_problems
    if problems:
        raise UserError(problems, title=f"{path}: {len(problems)} problem(s)")
    digest = digest_bytes(data)
    return Benchmark(
        name=registered_name(path, digest, name),
        revision=digest,
        source=str(path),
        format=fmt,
        rows=rows,
        corpus=corpus,
        qrels=qrels,
        capabilities=capabilities_of(fmt, rows, qrels),
    )


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
