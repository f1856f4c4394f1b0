"""A question file with a named corpus: the three corpus forms, judgments from expected_docs or
exact-text contexts, the pair's identity, selection, the validate-data report and errors."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from reference_data import HOTPOTQA, missing
from synth_docs import GLASS, SOLIDUS, make_docx, make_pdf, words

from lasagna.cli import main
from lasagna.data import load_benchmark, select_rows
from lasagna.data.chunk import chunk_words
from lasagna.data.identity import digest_bytes, pair_digest
from lasagna.data.report import report_rows
from lasagna.errors import UserError
from lasagna.tracks import track_problems

DOCS = [
    {"_id": "d1", "title": "Glass", "text": "Soda lowers the melting point of silica."},
    {"_id": "d2", "title": "Coins", "text": "The solidus was a gold coin."},
    {"_id": "d3", "title": "Kilns", "text": "A kiln reaches 1000 degrees."},
]
ROWS = [
    {"id": "q1", "question": "What does soda do?", "answer": "lowers it", "expected_docs": ["d1"]},
    {
        "id": "q2",
        "question": "What was the solidus?",
        "answer": "a coin",
        "contexts": ["  The solidus was a gold coin.  "],
    },
    {"id": "q3", "question": "How hot is a kiln?", "answer": "1000 degrees"},
    {
        "id": "q4",
        "question": "Unknown?",
        "metadata": {"unanswerable": True},
        "expected_docs": ["d3"],
    },
]


def jsonl(path: Path, objects: list[dict]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def pair(tmp_path: Path, rows=ROWS, docs=DOCS):
    return jsonl(tmp_path / "questions.jsonl", rows), jsonl(tmp_path / "corpus.jsonl", docs)


def test_jsonl_corpus_judgments_and_provenance(tmp_path):
    questions, corpus = pair(tmp_path)
    bench = load_benchmark(questions, corpus=corpus)
    assert set(bench.corpus) == {"d1", "d2", "d3"} and bench.corpus["d1"].title == "Glass"
    # expected_docs name documents; contexts match a passage by exact (trimmed) text; a row
    # with neither and an unanswerable row have no judgments
    assert bench.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}}
    assert bench.corpus_provenance == "corpus"
    assert bench.stats["judged_questions"] == 2 and bench.stats["unjudged_questions"] == 1
    assert bench.capabilities.retrieval and bench.capabilities.generation
    assert track_problems(bench, "generation", "rag") == []
    # a row judged by expected_docs alone carries its documents' texts as gold contexts
    assert bench.rows[0].contexts == [DOCS[0]["text"]]


def test_beir_folder_as_corpus(tmp_path):
    folder = tmp_path / "beir"
    folder.mkdir()
    jsonl(folder / "corpus.jsonl", DOCS)
    questions, _ = pair(tmp_path)
    bench = load_benchmark(questions, corpus=folder)
    assert set(bench.corpus) == {"d1", "d2", "d3"} and bench.corpus_source == str(folder)
    assert bench.corpus_revision == digest_bytes((folder / "corpus.jsonl").read_bytes())


def test_documents_folder_through_the_extractor_and_chunker(tmp_path):
    docs = tmp_path / "docs"
    (docs / "history").mkdir(parents=True)
    (docs / "glass.md").write_text("# Glass\n\n" + words(GLASS, 260) + "\n")
    make_pdf(docs / "history" / "solidus.pdf", words(SOLIDUS, 120))
    make_docx(docs / "history" / "notes.docx", [words(SOLIDUS, 30)])
    (docs / "kiln.html").write_text(f"<html><body><p>{words(GLASS, 20)}</p></body></html>")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (docs / "scores.csv").write_text("a,b\n")  # not a document type: said, not silent
    (docs / ".git").mkdir()
    (docs / ".git" / "HEAD").write_text("ref")  # hidden: left out without a word
    glass = chunk_words("# Glass\n\n" + words(GLASS, 260))
    rows = [
        {"id": "a", "question": "Glass?", "answer": "x", "expected_docs": ["glass.md"]},
        {"id": "b", "question": "Coin?", "answer": "y", "expected_docs": ["history/solidus.pdf#0"]},
        {"id": "c", "question": "Melting?", "answer": "z", "contexts": [glass[1]]},
    ]
    bench = load_benchmark(jsonl(tmp_path / "q.jsonl", rows), corpus=docs)
    assert set(bench.corpus) == {
        "glass.md#0",
        "glass.md#1",
        "history/notes.docx#0",
        "history/solidus.pdf#0",
        "kiln.html#0",
    }
    # a file name means all its passages; a passage id one; contexts match by text
    assert bench.qrels == {
        "a": {"glass.md#0": 1, "glass.md#1": 1},
        "b": {"history/solidus.pdf#0": 1},
        "c": {"glass.md#1": 1},
    }
    assert bench.stats["corpus_unreadable_files"] == 1
    assert any("broken.pdf" in note for note in bench.notes)
    (left_out,) = [note for note in bench.notes if "does not read" in note]
    assert "1 corpus file(s)" in left_out and "(scores.csv)" in left_out and ".pdf" in left_out


def test_identity_covers_both_files(tmp_path):
    questions, corpus = pair(tmp_path)
    first = load_benchmark(questions, corpus=corpus)
    assert first.revision == pair_digest(
        digest_bytes(questions.read_bytes()), digest_bytes(corpus.read_bytes())
    )
    assert first.name == f"local/questions@{first.revision[:12]}"
    assert first.index_revision == first.corpus_revision != first.revision
    jsonl(corpus, [*DOCS, {"_id": "d4", "title": "", "text": "More."}])
    new_corpus = load_benchmark(questions, corpus=corpus)
    assert new_corpus.revision != first.revision
    assert new_corpus.corpus_revision != first.corpus_revision
    jsonl(corpus, DOCS)
    jsonl(questions, ROWS[:3])
    new_questions = load_benchmark(questions, corpus=corpus)
    assert new_questions.revision not in (first.revision, new_corpus.revision)
    # an unchanged corpus keeps its index
    assert new_questions.index_revision == first.index_revision


def test_documents_folder_identity_changes_with_a_file(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("alpha beta gamma")
    questions = jsonl(tmp_path / "q.jsonl", [{"question": "A?", "answer": "a"}])
    before = load_benchmark(questions, corpus=docs)
    assert load_benchmark(questions, corpus=docs).revision == before.revision
    (docs / "b.txt").write_text("delta")
    assert load_benchmark(questions, corpus=docs).revision != before.revision


def test_unknown_expected_docs_is_one_error_with_count_and_ids(tmp_path):
    rows = [
        {"id": f"b{i}", "question": "Q?", "answer": "a", "expected_docs": ["d1", f"nope{i}"]}
        for i in range(7)
    ]
    questions, corpus = pair(tmp_path, rows=[ROWS[0], *rows])
    with pytest.raises(UserError) as err:
        load_benchmark(questions, corpus=corpus)
    (problem,) = err.value.problems
    assert problem.message.startswith("7 question(s) name documents that are not in the corpus")
    assert "b0 ('nope0')" in problem.message and "b4 ('nope4'), ..." in problem.message
    assert "b5" not in problem.message
    assert problem.file == str(questions) and problem.where == "line 2"
    assert problem.field == "expected_docs" and "'d1'" in problem.fix


def test_validate_data_of_a_sweep_file_points_at_plan(tmp_path, capsys):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("benchmarks: [{name: sample}]\n")
    assert main(["benchmark", "validate-data", str(sweep)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "a sweep file, not a data file" in err and f"lasagna benchmark plan {sweep}" in err


def test_validate_data_exit_2_and_report(tmp_path, capsys):
    questions, corpus = pair(tmp_path, rows=[*ROWS, {"question": "X?", "expected_docs": ["zz"]}])
    assert main(["benchmark", "validate-data", str(questions), "--corpus", str(corpus)]) == 2
    err = capsys.readouterr().err
    assert "line 5: field 'expected_docs': 1 question(s)" in err and "row5 ('zz')" in err
    questions, corpus = pair(tmp_path)
    assert main(["benchmark", "validate-data", str(questions), "--corpus", str(corpus)]) == 0
    out = capsys.readouterr().out
    assert "retrieval, generation" in out and "2 of 3" in out and "a real" in out
    pairs = dict(report_rows(load_benchmark(questions, corpus=corpus)))
    assert pairs["tracks"] == "retrieval, generation"
    assert pairs["judged questions"].startswith("2 of 3 answerable (1 with no judgment")


def test_expected_docs_need_passages_only_without_a_corpus(tmp_path):
    questions, corpus = pair(tmp_path)
    with pytest.raises(UserError, match="of a corpus, and no corpus was given"):
        load_benchmark(questions)
    assert load_benchmark(questions, corpus=corpus).qrels["q1"] == {"d1": 1}


def test_unmatched_contexts_are_counted_not_judged(tmp_path):
    rows = [{"id": "x", "question": "Q?", "answer": "a", "contexts": ["not in the corpus"]}]
    questions, corpus = pair(tmp_path, rows=rows)
    bench = load_benchmark(questions, corpus=corpus)
    assert bench.qrels == {} and bench.stats["contexts_unmatched"] == 1
    assert not bench.capabilities.retrieval and bench.capabilities.generation
    assert "match no corpus passage" in bench.notes[0]
    assert "names a corpus document" in bench.capabilities.reasons["retrieval"]


def test_selection_keeps_the_real_corpus(tmp_path):
    questions, corpus = pair(tmp_path)
    picked = select_rows(load_benchmark(questions, corpus=corpus), n_samples=2, seed=1)
    assert picked.corpus_provenance == "corpus" and len(picked.corpus) == 3
    assert picked.index_revision == load_benchmark(questions, corpus=corpus).corpus_revision


def test_corpus_errors(tmp_path):
    questions, _ = pair(tmp_path)
    bad = tmp_path / "corpus.csv"
    bad.write_text("_id,text\n")
    with pytest.raises(UserError, match="must be JSONL"):
        load_benchmark(questions, corpus=bad)
    broken = jsonl(tmp_path / "broken.jsonl", [{"_id": "d1", "text": 3}, {"_id": "d1", "text": ""}])
    with pytest.raises(UserError) as err:
        load_benchmark(questions, corpus=broken)
    assert any("text/title must be strings" in p.message for p in err.value.problems)
    with pytest.raises(UserError, match="no such corpus"):
        load_benchmark(questions, corpus=tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no readable document"):
        load_benchmark(questions, corpus=tmp_path / "empty")


@pytest.mark.skipif(not HOTPOTQA.is_dir(), reason=missing(HOTPOTQA))
def test_hotpotqa_distractor_corpus(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from convert_hotpotqa import main as convert

    shutil.copytree(HOTPOTQA, tmp_path / "in")
    assert convert([str(tmp_path / "in"), "--out", str(tmp_path / "out")]) == 0
    bench = load_benchmark(
        tmp_path / "out" / "questions.jsonl", corpus=tmp_path / "out" / "corpus.jsonl"
    )
    assert len(bench.rows) == 100 and len(bench.corpus) == 994
    assert sum(len(d) for d in bench.qrels.values()) == 200  # two gold paragraphs each
