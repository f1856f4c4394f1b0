"""Pooled-gold corpus and capabilities (the spec's table) with refusals."""

from __future__ import annotations

import json

import pytest

from lasagna.data import load_benchmark
from lasagna.data.corpus import passage_id
from lasagna.errors import UserError
from lasagna.tracks import require_track, track_problems


def load_rows(tmp_path, rows, name="x.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_benchmark(path)


def test_identical_passage_is_one_document(tmp_path):
    rows = [
        {"id": "a", "question": "A?", "answer": "x", "contexts": ["P one.", "P two."]},
        {"id": "b", "question": "B?", "answer": "y", "contexts": ["  P one.  "]},
        {"id": "c", "question": "C?", "contexts": ["P three."], "metadata": {"unanswerable": True}},
    ]
    bench = load_rows(tmp_path, rows)
    one, two, three = passage_id("P one."), passage_id("P two."), passage_id("P three.")
    assert set(bench.corpus) == {one, two, three}  # the unanswerable row's passage joins
    assert bench.qrels == {"a": {one: 1, two: 1}, "b": {one: 1}}  # ...relevant to nothing


def test_expected_docs_name_documents_in_any_row_order(tmp_path):
    rows = [
        {"id": "a", "question": "A?", "answer": "x", "contexts": ["Shared."]},
        {
            "id": "b",
            "question": "B?",
            "answer": "y",
            "contexts": ["Shared."],
            "expected_docs": ["doc-s"],
        },
    ]
    bench = load_rows(tmp_path, rows)
    assert set(bench.corpus) == {"doc-s"}
    assert bench.qrels == {"a": {"doc-s": 1}, "b": {"doc-s": 1}}


def test_one_name_two_texts_is_an_error(tmp_path):
    rows = [
        {"id": "a", "question": "A?", "contexts": ["One."], "expected_docs": ["d"]},
        {"id": "b", "question": "B?", "contexts": ["Two."], "expected_docs": ["d"]},
    ]
    with pytest.raises(UserError) as info:
        load_rows(tmp_path, rows)
    assert "id b: field 'expected_docs': document 'd' has a different text here than at id a" in (
        info.value.render()
    )


def test_one_text_two_names_is_an_error(tmp_path):
    rows = [
        {"id": "a", "question": "A?", "contexts": ["One."], "expected_docs": ["d1"]},
        {"id": "b", "question": "B?", "contexts": ["One."], "expected_docs": ["d2"]},
    ]
    with pytest.raises(UserError, match="named 'd2' here but 'd1' at id a"):
        load_rows(tmp_path, rows)


def test_closed_book_only(tmp_path):
    bench = load_rows(tmp_path, [{"question": "A?", "answer": "x"}])
    caps = bench.capabilities
    assert caps.generation and caps.closed_book_only and not caps.retrieval
    assert track_problems(bench, "generation", "closed_book") == []
    [refusal] = track_problems(bench, "generation", "rag")
    assert "no contexts" in refusal.message and "closed_book" in refusal.fix
    assert "--corpus DOCS" in refusal.fix  # a question file can be given a corpus to search
    with pytest.raises(UserError) as info:
        require_track(bench, "retrieval")
    text = info.value.render()
    assert "cannot run the retrieval track: no answerable row has contexts" in text
    assert "--corpus DOCS" in text and "expected_docs" in text
    assert "Fix: add contexts" in text and str(tmp_path) in text


def test_contexts_without_answers_is_retrieval_only(tmp_path):
    bench = load_rows(tmp_path, [{"question": "A?", "contexts": ["P."]}])
    assert bench.capabilities.retrieval and not bench.capabilities.generation
    [refusal] = track_problems(bench, "generation", "rag")
    assert "no row has an answer" in refusal.message
    assert track_problems(bench, "retrieval") == []


def test_some_rows_without_answers_refuse_generation_naming_them(tmp_path):
    rows = [{"id": "a", "question": "A?", "answer": "x"}, {"id": "b", "question": "B?"}]
    caps = load_rows(tmp_path, rows).capabilities
    assert (
        not caps.generation
        and "1 answerable row(s) have no answer: b" in caps.reasons["generation"]
    )
    assert "unanswerable" in caps.fixes["generation"]


def test_all_unanswerable(tmp_path):
    rows = [{"question": "A?", "contexts": ["P."], "metadata": {"unanswerable": True}}]
    caps = load_rows(tmp_path, rows).capabilities
    assert not caps.retrieval and not caps.generation
    assert "every row with contexts is unanswerable" in caps.reasons["retrieval"]


def test_unknown_track_and_kind(tmp_path):
    bench = load_rows(tmp_path, [{"question": "A?", "answer": "x"}])
    assert "unknown track 'nope'" in track_problems(bench, "nope")[0].message
    assert "judge benchmarks read test cases" in track_problems(bench, "judge")[0].message
    assert "unknown generator kind" in track_problems(bench, "generation", "x")[0].message
