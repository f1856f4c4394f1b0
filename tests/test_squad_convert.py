"""scripts/convert_squad_v2.py on the real SQuAD v2 dev subset, and on small files of our own."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from reference_data import SQUAD, missing

ROOT = Path(__file__).resolve().parents[1]


def load_script():
    spec = importlib.util.spec_from_file_location(
        "convert_squad_v2", ROOT / "scripts" / "convert_squad_v2.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


convert = load_script()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_real_dev_subset(tmp_path):
    if not SQUAD.is_file():
        pytest.skip(reason=missing(SQUAD))
    out = tmp_path / "squad.jsonl"
    assert convert.main([str(SQUAD), "--out", str(out)]) == 0
    rows = read_jsonl(out)
    assert len(rows) == 6078
    unanswerable = [r for r in rows if r["metadata"].get("unanswerable")]
    assert len(unanswerable) == 3168
    assert all("answers" not in r for r in unanswerable)
    answerable = [r for r in rows if not r["metadata"].get("unanswerable")]
    assert all(r["answers"] and len(set(r["answers"])) == len(r["answers"]) for r in answerable)
    assert len({r["id"] for r in rows}) == len(rows)
    first = rows[1]  # "When were the Normans in Normandy?": 4 golds, 2 distinct, in order
    assert first["answers"] == ["10th and 11th centuries", "in the 10th and 11th centuries"]
    assert first["metadata"] == {"title": "Normans"}
    assert first["contexts"][0].startswith("The Normans (Norman: Nourmands;")

    try:
        from lasagna.data import load_benchmark
    except ImportError:
        return  # data layer not there: the JSON shape above is what we can check
    benchmark = load_benchmark(out)
    assert len(benchmark.rows) == 6078
    assert sum(r.unanswerable for r in benchmark.rows) == 3168
    assert benchmark.rows[1].answers == first["answers"]


def test_limit_and_shape(tmp_path):
    squad = {
        "version": "v2.0",
        "data": [
            {
                "title": "T",
                "paragraphs": [
                    {
                        "context": "Paris is the capital of France.",
                        "qas": [
                            {
                                "id": "a",
                                "question": "Capital of France?",
                                "answers": [{"text": "Paris", "answer_start": 0}] * 3,
                                "is_impossible": False,
                            },
                            {
                                "id": "b",
                                "question": "Capital of Mars?",
                                "answers": [],
                                "plausible_answers": [{"text": "Paris", "answer_start": 0}],
                                "is_impossible": True,
                            },
                        ],
                    }
                ],
            }
        ],
    }
    src = tmp_path / "in.json"
    src.write_text(json.dumps(squad))
    out = tmp_path / "out" / "rows.jsonl"
    assert convert.main([str(src), "--out", str(out)]) == 0
    assert read_jsonl(out) == [
        {
            "id": "a",
            "question": "Capital of France?",
            "answers": ["Paris"],
            "contexts": ["Paris is the capital of France."],
            "metadata": {"title": "T"},
        },
        {
            "id": "b",
            "question": "Capital of Mars?",
            "contexts": ["Paris is the capital of France."],
            "metadata": {"title": "T", "unanswerable": True},
        },
    ]
    assert convert.main([str(src), "--out", str(out), "--limit", "1"]) == 0
    assert [r["id"] for r in read_jsonl(out)] == ["a"]


def test_bad_input_is_refused_and_nothing_is_written(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert convert.main([str(tmp_path / "missing.json"), "--out", str(out)]) == 2
    assert "file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"data": [')
    assert convert.main([str(bad), "--out", str(out)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    qa = {"id": "x", "question": "q?", "answers": [], "is_impossible": False}
    broken.write_text(
        json.dumps({"data": [{"title": "T", "paragraphs": [{"context": "c", "qas": [qa]}]}]})
    )
    assert convert.main([str(broken), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "id x" in err and "answers" in err
    assert not out.exists() and list(tmp_path.glob(".rows.jsonl.*")) == []


def test_squad_json_loads_as_it_is_with_the_converters_rows(tmp_path):
    """`lasagna benchmark run dev-v2.0.json`: the SQuAD file itself, no conversion step."""
    from dataclasses import replace

    from lasagna.data import load_benchmark

    if not SQUAD.is_file():
        pytest.skip(reason=missing(SQUAD))
    out = tmp_path / "squad.jsonl"
    assert convert.main([str(SQUAD), "--out", str(out)]) == 0
    native, converted = load_benchmark(SQUAD), load_benchmark(out)
    assert native.format == "json" and len(native.rows) == 6078
    assert [replace(r, line=None) for r in native.rows] == [
        replace(r, line=None) for r in converted.rows
    ]
    assert native.qrels == converted.qrels and native.corpus == converted.corpus


def test_malformed_squad_parts_are_named(tmp_path):
    from lasagna.data import load_benchmark
    from lasagna.errors import UserError

    qa = {"id": "x", "question": "q?", "answers": [], "is_impossible": False}
    squad = {
        "data": [
            {"title": "T", "paragraphs": [{"context": "c", "qas": [qa]}, {"context": "c"}]},
            {"title": "no paragraphs"},
        ]
    }
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(squad))
    with pytest.raises(UserError) as info:
        load_benchmark(path)
    text = info.value.render()
    assert "id x (data[0].paragraphs[0].qas[0]): an answerable question without answers" in text
    assert "data[0].paragraphs[1]: not a SQuAD paragraph" in text
    assert "data[1]: not a SQuAD article" in text
