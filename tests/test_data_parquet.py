"""Parquet question and judge files read as their JSONL: rows, checks and messages."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reference_data import SCIFACT, missing
from test_data_formats import SPEC_JSONL

from lasagna.data import load_benchmark
from lasagna.data.judge_cases import is_judge_file, load_judge_cases
from lasagna.errors import UserError

SAMPLE = Path(__file__).resolve().parents[1] / "lasagna" / "sample" / "sample.jsonl"


def parquet_of(rows: list[dict], path: Path) -> Path:
    """`rows` as pandas writes them: one column per key, null where a row lacks it."""
    import pandas as pd

    pd.DataFrame(rows).to_parquet(path)
    return path


def jsonl_of(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def errors_of(path: Path) -> str:
    with pytest.raises(UserError) as info:
        load_benchmark(path)
    return info.value.render()


def test_the_packaged_sample_as_parquet_is_the_same_benchmark(tmp_path: Path) -> None:
    plain = load_benchmark(SAMPLE)
    bench = load_benchmark(parquet_of(jsonl_of(SAMPLE.read_text()), tmp_path / "sample.parquet"))
    assert bench.format == "parquet" and len(bench.rows) == len(plain.rows) > 20
    assert bench.rows == plain.rows and bench.qrels == plain.qrels
    assert bench.corpus == plain.corpus and bench.capabilities == plain.capabilities
    assert bench.name.startswith("local/sample@")


def test_a_null_cell_is_a_missing_field(tmp_path: Path) -> None:
    """The spec's rows mix answer/answers, contexts/context and metadata: in one frame
    every row has every column, null where its JSONL line has no such key."""
    rows = jsonl_of(SPEC_JSONL)
    path = parquet_of(rows, tmp_path / "spec.parquet")
    assert set(pq.read_schema(path).names) >= {"answer", "answers", "context", "contexts"}
    bench = load_benchmark(path)
    assert bench.rows == load_benchmark(_jsonl(tmp_path, rows)).rows
    assert [r.unanswerable for r in bench.rows] == [False, False, True]


def test_problems_name_the_row_and_the_field(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "question": "Q1?", "answer": "A", "title": "T"},
        {"id": "a", "question": None, "answer": "B", "title": "U"},
    ]
    text = errors_of(parquet_of(rows, tmp_path / "bad.parquet"))
    assert "bad.parquet:row 1: field 'title': unknown field 'title'" in text, text
    assert "row 2: field 'question'" in text and "id 'a' is used again (first at row 1)" in text
    ragas = [{"user_input": "Q?", "response": "A", "retrieved_contexts": ["c"]}]
    text = errors_of(parquet_of(ragas, tmp_path / "ragas.parquet"))
    assert "did you mean 'question'?" in text and "did you mean 'contexts'?" in text, text


def test_not_parquet_empty_and_gzipped(tmp_path: Path) -> None:
    (tmp_path / "csv.parquet").write_text("id,question\n1,hi\n")
    text = errors_of(tmp_path / "csv.parquet")
    assert "not a readable Parquet file (Parquet magic bytes not found" in text, text
    assert "Could not open" not in text and "DataFrame.to_parquet" in text
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"question": pa.array([], pa.string())}), empty)
    assert "the file has no rows" in errors_of(empty)
    path = parquet_of(jsonl_of(SPEC_JSONL), tmp_path / "spec.parquet")
    (tmp_path / "gz").mkdir()
    packed = tmp_path / "gz" / "spec.parquet.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    plain, unpacked = load_benchmark(path), load_benchmark(packed)
    assert (unpacked.rows, unpacked.name, unpacked.revision) == (
        plain.rows,
        plain.name,
        plain.revision,
    )


def test_pandas_index_is_not_a_column(tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame(jsonl_of(SPEC_JSONL)).iloc[[2, 0]]
    frame.index = pd.Index(["x", "y"])  # an index that is not a range is stored as a column
    frame.to_parquet(tmp_path / "picked.parquet")
    assert "__index_level_0__" in pq.read_schema(tmp_path / "picked.parquet").names
    bench = load_benchmark(tmp_path / "picked.parquet")
    assert [r.id for r in bench.rows] == ["q3", "q1"]


def test_judge_cases_and_conversations_in_parquet(tmp_path: Path) -> None:
    cases = [
        {"id": "c1", "input": "Sky?", "actual_output": "Blue.", "retrieval_context": ["Blue."]},
        {"id": "c2", "input": "2+2?", "actual_output": "4", "retrieval_context": None},
    ]
    path = parquet_of(cases, tmp_path / "cases.parquet")
    assert is_judge_file(path)
    judged = load_judge_cases(path)
    assert judged.format == "parquet" and judged.columns >= {"retrieval_context"}
    assert [c["retrieval_context"] for c in judged.cases] == [["Blue."], []]
    turns = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    talks = parquet_of([{"id": "t1", "turns": turns}], tmp_path / "talks.parquet")
    assert is_judge_file(talks)  # turns and no question column
    (case,) = load_judge_cases(talks).cases
    assert case["turns"] == turns
    questions = parquet_of(jsonl_of(SPEC_JSONL), tmp_path / "questions.parquet")
    assert not is_judge_file(questions)


def _jsonl(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "spec.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=missing(SCIFACT))
def test_a_parquet_corpus_is_the_jsonl_corpus(tmp_path: Path) -> None:
    """SciFact's 5,183 documents as a Parquet table of _id, title, text (MTEB's layout on
    Hugging Face): the same documents, judgments and search as its corpus.jsonl."""
    from lasagna.data.corpus_file import read_corpus

    lines = jsonl_of((SCIFACT / "corpus.jsonl").read_text())
    table = pa.table({k: [str(d[k]) for d in lines] for k in ("_id", "title", "text")})
    pq.write_table(table, tmp_path / "corpus.parquet")
    plain, table_read = (
        read_corpus(SCIFACT / "corpus.jsonl"),
        read_corpus(tmp_path / "corpus.parquet"),
    )
    assert table_read.kind == "parquet" and len(table_read.documents) == 5183
    assert table_read.documents == plain.documents
    questions = tmp_path / "q.jsonl"
    first = next(iter(plain.documents))
    questions.write_text(
        json.dumps({"question": "Which?", "answer": "x", "expected_docs": [first]})
    )
    bench = load_benchmark(questions, corpus=tmp_path / "corpus.parquet")
    assert bench.qrels == {"row1": {first: 1}} and len(bench.corpus) == 5183
    twice = pa.concat_tables([table.slice(0, 2), table.slice(1, 1)])
    pq.write_table(twice, tmp_path / "twice.parquet")
    with pytest.raises(UserError, match=r"row 3: field '_id'.*repeats"):
        read_corpus(tmp_path / "twice.parquet")
    (tmp_path / "c.csv").write_text("_id,text\n1,x\n")
    with pytest.raises(UserError, match="must be JSONL or Parquet"):
        read_corpus(tmp_path / "c.csv")
