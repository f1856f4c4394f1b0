"""Convert a SQuAD v2.0 JSON file (e.g. dev-v2.0.json) into lasagna's JSONL format.

lasagna reads SQuAD JSON files as they are (`lasagna benchmark run dev-v2.0.json`); this
writes the same rows as JSONL, to edit them or to take the first N (--limit).

One row per question: id, question, answers (the distinct gold texts, first-seen order),
contexts ([the paragraph]), metadata {title} and, for an is_impossible question,
metadata.unanswerable = true and no answers field (as the data format asks).

    python scripts/convert_squad_v2.py ../shared/data/squad_v2_dev_subset/dev-v2.0.json \
        --out squad_v2_dev.jsonl [--limit 500]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from lasagna.data.squad import is_squad, squad_records
from lasagna.errors import Problem, UserError

DEFAULT_INPUT = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "squad_v2_dev_subset"
    / "dev-v2.0.json"
)


def squad_rows(squad: dict, source: str = "<squad>") -> Iterator[dict]:
    """lasagna JSONL records for every question of a parsed SQuAD v2 document, in file order
    (the rows `lasagna.data.squad` reads from the same file)."""
    if not is_squad(squad):
        raise UserError(
            Problem(
                "not a SQuAD file: no 'data' list of articles at the top level",
                file=source,
                field="data",
                fix="pass a SQuAD v2.0 JSON file such as dev-v2.0.json",
            )
        )
    records, problems = squad_records(squad, source)
    if problems:
        raise UserError(problems)
    for record in records:
        yield record.data


def write_jsonl(rows: Iterator[dict], out: Path, limit: int | None = None) -> int:
    """Write rows atomically (a temp file renamed into place); return how many were written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for row in rows:
                if limit is not None and count >= limit:
                    break
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def write_rag_sweep(
    squad_file: Path,
    work: Path,
    questions: int,
    *,
    max_tokens: int,
    batch_size: int,
    model: str | None = None,
    output: Path | None = None,
) -> Path:
    """The first `questions` of `squad_file` as work/squad.jsonl and the benchmarks' rag
    sweep over them (BM25 top-1, one passage) as work/rag.yaml; returns the sweep's path."""
    data = work / "squad.jsonl"
    write_jsonl(squad_rows(json.loads(squad_file.read_text()), str(squad_file)), data, questions)
    model_field = f"model: '{model}', " if model else ""
    sweep = work / "rag.yaml"
    sweep.write_text(
        f"benchmarks:\n  - {{path: {data}}}\n"
        "generators:\n  - kind: rag\n    retriever: {kind: bm25, top_k: 1}\n    passages: 1\n"
        f"    model: {{{model_field}max_tokens: {max_tokens}, "
        f"resources: {{batch_size: {batch_size}}}}}\n" + (f"output: {output}\n" if output else "")
    )
    return sweep


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", type=Path, default=DEFAULT_INPUT)
    parser.add_argument("--out", type=Path, default=Path("squad_v2_dev.jsonl"))
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    args = parser.parse_args(argv)
    try:
        if args.limit is not None and args.limit < 1:
            raise UserError(Problem("must be at least 1", field="--limit", fix="e.g. --limit 500"))
        if not args.input.is_file():
            raise UserError(
                Problem(
                    "file not found",
                    file=str(args.input),
                    fix="pass the path of a SQuAD v2.0 JSON file",
                )
            )
        try:
            squad = json.loads(args.input.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise UserError(
                Problem(
                    f"not valid JSON: {err.msg}",
                    file=str(args.input),
                    where=f"line {err.lineno}",
                    fix="pass an unmodified SQuAD v2.0 JSON file",
                )
            ) from err
        count = write_jsonl(squad_rows(squad, str(args.input)), args.out, args.limit)
    except UserError as err:
        print(err.render(), file=sys.stderr)
        return UserError.exit_code
    print(f"wrote {count} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
