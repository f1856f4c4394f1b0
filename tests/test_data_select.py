"""select_rows: metadata filters and the deterministic seeded sample; the sample data set."""

from __future__ import annotations

import pytest

from lasagna.data import load_benchmark, select_rows
from lasagna.data.select import sample_rows
from lasagna.errors import UserError
from lasagna.sample import sample_path


@pytest.fixture(scope="module")
def sample():
    return load_benchmark(sample_path())


def test_sample_is_valid_and_small(sample):
    assert 20 <= len(sample.rows) <= 30
    assert sum(r.unanswerable for r in sample.rows) == 3
    assert sample.capabilities.retrieval and sample.capabilities.generation
    assert len(sample.corpus) < sum(len(r.contexts) for r in sample.rows)  # shared passages
    assert "iron-bridge" in sample.corpus


def test_filters(sample):
    multihop = select_rows(sample, filters={"question_type": "multihop"}, n_samples=None, seed=0)
    assert [r.metadata["question_type"] for r in multihop.rows] == ["multihop", "multihop"]
    assert set(multihop.qrels) == {r.id for r in multihop.rows}
    assert multihop.corpus is sample.corpus or multihop.corpus == sample.corpus  # whole
    either = select_rows(sample, filters={"topic": ["glass", "coins"]}, n_samples=None, seed=0)
    assert {r.metadata["topic"] for r in either.rows} == {"glass", "coins"}


def test_a_dotted_filter_key_reads_nested_metadata():
    from dataclasses import replace

    from lasagna.data.model import Row
    from lasagna.data.select import filter_rows

    rows = [
        Row("a", "q", metadata={"src": {"site": "wiki"}}),
        Row("b", "q", metadata={"src": {"site": "news"}, "src.site": "wiki"}),  # its own key
        Row("c", "q", metadata={"src": "wiki"}),
    ]
    kept = filter_rows(rows, {"src.site": "wiki"}, "f.jsonl")
    assert [r.id for r in kept] == ["a", "b"]
    with pytest.raises(UserError, match="no row has metadata key 'src.page'"):
        filter_rows([replace(r) for r in rows], {"src.page": "x"}, "f.jsonl")


def test_unknown_filter_key_is_named(sample):
    with pytest.raises(UserError) as info:
        select_rows(sample, filters={"questiontype": "x"}, n_samples=None, seed=0)
    text = info.value.render()
    assert "field 'filters.questiontype'" in text and "question_type" in text


def test_filter_keeping_nothing(sample):
    with pytest.raises(UserError, match="keep no row"):
        select_rows(sample, filters={"topic": "ships"}, n_samples=None, seed=0)


def test_sample_is_seeded_deterministic_and_ordered(sample):
    a = select_rows(sample, filters=None, n_samples=5, seed=7)
    b = select_rows(sample, filters=None, n_samples=5, seed=7)
    c = select_rows(sample, filters=None, n_samples=5, seed=8)
    ids = [r.id for r in a.rows]
    assert ids == [r.id for r in b.rows] and len(ids) == 5
    assert ids != [r.id for r in c.rows]
    assert ids == sorted(ids)  # file order kept (ids s01..s26 are in file order)
    assert set(a.qrels) <= set(ids) and a.corpus == sample.corpus
    assert sample.rows and len(sample.rows) == 26  # the original is untouched


def test_sample_pinned_across_machines(sample):
    # sha256 ranking: these ids are what any machine picks for seed 42
    picked = [r.id for r in sample_rows(sample.rows, 4, 42)]
    assert picked == ["s05", "s06", "s13", "s25"]
    again = [r.id for r in sample_rows(list(reversed(sample.rows)), 4, 42)]
    assert sorted(again) == picked  # depends on ids, not on row order


def test_n_samples_larger_than_rows_keeps_all(sample):
    assert len(select_rows(sample, filters=None, n_samples=1000, seed=0).rows) == 26


def test_bad_n_samples(sample):
    with pytest.raises(UserError, match="n_samples must be a positive whole number"):
        select_rows(sample, filters=None, n_samples=0, seed=0)


def test_validate_data_names_the_metadata_keys_and_their_values(sample):
    from lasagna.data.model import Row
    from lasagna.data.report import metadata_summary, report_rows

    said = dict(report_rows(sample))["metadata"]
    assert said.startswith("question_type: factoid 21, unanswerable 3, multihop 2; topic: ")
    assert "--by KEY" in said
    rows = [
        Row(f"r{i}", "q", metadata={"tag": [f"t{i % 6}", "all"], "src": {"site": "w"}, "n": i})
        for i in range(12)
    ] + [Row("x", "q", metadata={"only": True})]
    said = metadata_summary(r.metadata for r in rows)
    assert said.startswith("tag: all 12, t0 2, t1 2, t2 2 (of 7 values); n: numbers 0..11 ")
    assert "n: numbers 0..11 (12 values; --by n:4)" in said and "only: true 1" in said
    assert "; 1 key(s) holding objects: src (their fields: KEY.FIELD) (--filter" in said
    assert metadata_summary([Row("a", "q").metadata]) is None
    # BEIR SciFact: evidence objects keyed by document id, a few rows each: one count
    evidence = [
        {f"doc{i}": [{"label": "SUPPORT"}], f"doc{i + 1}": [{"label": "NO"}]} for i in range(9)
    ]
    assert metadata_summary(evidence) == (
        "10 key(s) holding objects: doc0, doc1, doc2, ... (their fields: KEY.FIELD)"
    )
