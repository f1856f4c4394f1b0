"""BEIR folders: loading, splits, dangling judgments; SciFact when ../shared/data has it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference_data import SCIFACT, missing

from lasagna.data import load_benchmark
from lasagna.errors import UserError


def make_beir(root: Path, qrels: dict[str, str] | None = None) -> Path:
    folder = root / "my_beir"
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "title": f"T{i}", "text": f"text {i}"} for i in range(1, 4)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": f"q{i}", "text": f"query {i}", "metadata": {}} for i in range(1, 4)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    qrels = qrels or {"test": "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq2\td3\t0\n"}
    for split, text in qrels.items():
        (folder / "qrels" / f"{split}.tsv").write_text(text)
    return folder


def test_beir_folder(tmp_path):
    bench = load_benchmark(make_beir(tmp_path))
    assert bench.format == "beir" and bench.split == "test"
    assert [r.id for r in bench.rows] == ["q1", "q2"]  # q3 has no judgment in this split
    assert bench.rows[0].question == "query 1"
    assert bench.qrels == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 0}}  # grades kept
    assert bench.corpus["d1"].indexed_text == "T1 text 1"
    assert bench.stats["queries_in_file"] == 3
    caps = bench.capabilities
    assert caps.retrieval and not caps.generation and caps.corpus_provenance == "corpus"
    assert "no reference answers" in caps.reasons["generation"]
    assert bench.name.startswith("local/my_beir@")


def test_query_metadata_is_kept_for_filters_and_slices(tmp_path):
    folder = make_beir(tmp_path)
    queries = [
        {"_id": "q1", "text": "query 1", "metadata": {"domain": "bio"}},
        {"_id": "q2", "text": "query 2", "metadata": "not an object"},
        {"_id": "q3", "text": "query 3", "extra": 1},
    ]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    bench = load_benchmark(folder)
    assert [r.metadata for r in bench.rows] == [{"domain": "bio"}, {}]
    from lasagna.data import select_rows

    assert [r.id for r in select_rows(bench, filters={"domain": "bio"}).rows] == ["q1"]


def test_header_is_optional(tmp_path):
    bench = load_benchmark(make_beir(tmp_path, {"test": "q1\td1\t1\n"}))
    assert bench.qrels == {"q1": {"d1": 1}}


def test_missing_split_lists_the_others(tmp_path):
    folder = make_beir(tmp_path, {"train": "q1\td1\t1\n", "dev": "q2\td2\t1\n"})
    with pytest.raises(UserError) as info:
        load_benchmark(folder, split="test")
    assert "there is no split 'test'; the splits are: dev, train" in info.value.render()
    with pytest.raises(UserError, match="none is 'test'"):
        load_benchmark(folder)
    assert load_benchmark(folder, split="dev").qrels == {"q2": {"d2": 1}}


def test_single_split_is_the_default(tmp_path):
    assert load_benchmark(make_beir(tmp_path, {"train": "q1\td1\t1\n"})).split == "train"


def test_dangling_judgments_give_count_and_ids(tmp_path):
    qrels = "q1\tx1\t1\nq1\tx2\t1\nq9\td1\t1\n"
    with pytest.raises(UserError) as info:
        load_benchmark(make_beir(tmp_path, {"test": qrels}))
    text = info.value.render()
    assert "2 judgment document id(s) are not in corpus.jsonl: x1, x2" in text
    assert "1 judgment query id(s) are not in queries.jsonl: q9" in text


def test_bad_score_and_columns(tmp_path):
    qrels = "q1\td1\t1\nq1\td2\thigh\nq2\td3\n"
    with pytest.raises(UserError) as info:
        load_benchmark(make_beir(tmp_path, {"test": qrels}))
    text = info.value.render()
    assert "line 2" in text and "score 'high' is not an integer" in text
    assert "line 3" in text and "2 columns, expected 3" in text


def test_not_a_beir_folder(tmp_path):
    with pytest.raises(UserError, match="corpus.jsonl and queries.jsonl missing"):
        load_benchmark(tmp_path)


def test_split_changes_rows_not_name(tmp_path):
    folder = make_beir(tmp_path, {"test": "q1\td1\t1\n", "train": "q2\td2\t1\n"})
    test, train = load_benchmark(folder, split="test"), load_benchmark(folder, split="train")
    assert test.name == train.name and test.revision == train.revision
    assert [r.id for r in test.rows] == ["q1"] and [r.id for r in train.rows] == ["q2"]


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=missing(SCIFACT))
def test_scifact_test_split():
    bench = load_benchmark(SCIFACT, split="test")
    assert len(bench.corpus) == 5183
    assert len(bench.rows) == 300
    assert sum(len(d) for d in bench.qrels.values()) == 339
    assert bench.stats["queries_in_file"] == 1109
    assert bench.capabilities.retrieval and not bench.capabilities.generation
    assert bench.name.startswith("local/beir_scifact@")


def _gzip_copy(folder: Path, to: Path, keep_plain: tuple[str, ...] = ()) -> Path:
    """`folder` with its files gzipped (those in `keep_plain` left as they are)."""
    import gzip
    import shutil

    shutil.copytree(folder, to)
    for file in [to / "corpus.jsonl", to / "queries.jsonl", *(to / "qrels").glob("*.tsv")]:
        if file.name not in keep_plain:
            file.with_name(file.name + ".gz").write_bytes(gzip.compress(file.read_bytes()))
            file.unlink()
    return to


def test_gzipped_beir_files_read_as_the_plain_ones(tmp_path):
    """BEIR sets from Hugging Face ship corpus.jsonl.gz / queries.jsonl.gz: the same rows,
    corpus, splits and revision as the uncompressed folder."""
    from lasagna.data.corpus_file import read_corpus

    plain = make_beir(tmp_path, {"test": "q1\td1\t1\n", "train": "q2\td2\t1\n"})
    packed = _gzip_copy(plain, tmp_path / "packed" / "my_beir")
    mixed = _gzip_copy(plain, tmp_path / "mixed" / "my_beir", keep_plain=("queries.jsonl",))
    a = load_benchmark(plain, split="train")
    for folder in (packed, mixed):
        b = load_benchmark(folder, split="train")
        assert (b.rows, b.corpus, b.qrels, b.revision) == (a.rows, a.corpus, a.qrels, a.revision)
    assert read_corpus(packed).digest == read_corpus(plain).digest
    assert load_benchmark(packed).split == "test"  # both splits found, test the default
    assert read_corpus(packed / "corpus.jsonl.gz").documents == a.corpus
    (packed / "queries.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(UserError, match="not a readable gzip file"):
        load_benchmark(packed)


def test_a_split_whose_qrels_judge_no_query_is_named_not_blamed_on_filters(tmp_path):
    """A header-only qrels file: no row to evaluate, said of the split (it said "the filters
    {} keep no row" though no filter was given)."""
    from lasagna.data import select_rows

    folder = make_beir(tmp_path, {"test": "query-id\tcorpus-id\tscore\n"})
    with pytest.raises(UserError) as err:
        select_rows(load_benchmark(folder))
    (problem,) = err.value.problems
    assert problem.field == "split" and "no row to evaluate in split test" in problem.message
    assert "filters" not in problem.message
