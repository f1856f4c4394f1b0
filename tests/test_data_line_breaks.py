"""JSON Lines records end at `\\n` only: characters that `str.splitlines()` also breaks at
(U+0085 NEL, U+2028, U+2029) are valid inside JSON strings and must not split a record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna.data import load_benchmark

BREAKERS = ["\x85", "\u2028", "\u2029"]


def dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False)  # the raw character, not an escape


@pytest.mark.parametrize("char", BREAKERS, ids=["NEL", "LS", "PS"])
def test_jsonl_string_holding_a_line_breaker(tmp_path: Path, char: str):
    rows = [
        {"question": f"What is{char}this?", "answer": "a", "contexts": [f"one{char}passage"]},
        {"question": "Second?", "answer": "b", "contexts": ["two"]},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\r\n".join(dumps(r) for r in rows) + "\r\n", encoding="utf-8", newline="")
    bench = load_benchmark(path)
    assert [r.id for r in bench.rows] == ["row1", "row2"]  # line numbers stay physical
    assert bench.rows[0].question == f"What is{char}this?"
    assert f"one{char}passage" in {d.text for d in bench.corpus.values()}


@pytest.mark.parametrize("char", BREAKERS, ids=["NEL", "LS", "PS"])
def test_json_array_string_holding_a_line_breaker(tmp_path: Path, char: str):
    path = tmp_path / "q.json"
    rows = [{"question": f"Why{char}?", "answer": "x"}, {"question": "Next?", "answer": "y"}]
    path.write_text("[\n" + ",\n".join(dumps(r) for r in rows) + "\n]\n", encoding="utf-8")
    bench = load_benchmark(path)
    assert [r.question for r in bench.rows] == [f"Why{char}?", "Next?"]


@pytest.mark.parametrize("char", BREAKERS, ids=["NEL", "LS", "PS"])
def test_beir_corpus_and_queries_holding_a_line_breaker(tmp_path: Path, char: str):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    docs = [
        {"_id": "d1", "title": f"T{char}1", "text": f"first{char}doc"},
        {"_id": "d2", "title": "T2", "text": "second doc"},
    ]
    queries = [{"_id": "q1", "text": f"query{char}one"}, {"_id": "q2", "text": "query two"}]
    (folder / "corpus.jsonl").write_text("".join(dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text(
        "".join(dumps(q) + "\n" for q in queries), encoding="utf-8"
    )
    (folder / "qrels" / "test.tsv").write_text("q1\td1\t1\nq2\td2\t1\n")
    bench = load_benchmark(folder)
    assert {r.id: r.question for r in bench.rows} == {"q1": f"query{char}one", "q2": "query two"}
    assert set(bench.corpus) == {"d1", "d2"}
    assert f"first{char}doc" in bench.corpus["d1"].text


def test_bad_line_after_a_breaker_keeps_its_true_number(tmp_path: Path):
    path = tmp_path / "q.jsonl"
    good = dumps({"question": "a\u2028b", "answer": "x"})
    path.write_text(good + "\n" + good.replace('"question"', '"qestion"') + "\n{oops\n")
    from lasagna.errors import UserError

    with pytest.raises(UserError) as info:
        load_benchmark(path)
    text = info.value.render()
    assert "line 2" in text and "line 3" in text
    assert "line 4" not in text
