"""`lasagna benchmark validate-data`: report contents, exit codes, errors without traceback."""

from __future__ import annotations

import json

import pytest
from reference_data import SCIFACT, missing
from rich.console import Console

from lasagna.cli import main
from lasagna.data import load_benchmark
from lasagna.data.report import print_report
from lasagna.sample import sample_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["benchmark", "validate-data", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_valid_sample(capsys):
    code, out, err = run(capsys, str(sample_path()))
    bench = load_benchmark(sample_path())
    assert code == 0 and err == ""
    assert f"name: {bench.name}" in out and f"revision: {bench.revision}" in out
    assert "pooled_gold" in out and "23 answerable, 3 unanswerable" in out
    assert "retrieval, generation" in out


def test_name_option(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("question,answer\nA?,a\n")
    code, out, _ = run(capsys, str(path), "--name", "tickets")
    assert code == 0 and "name: tickets@" in out
    assert "closed-book only" in out and "no retrieval" in out


def test_invalid_file_exits_2_with_every_error(capsys, tmp_path):
    path = tmp_path / "bad.jsonl"
    rows = [{"question": "A?", "anwser": "a"}, {"question": ""}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == ""
    assert "line 1: field 'anwser'" in err and "line 2: field 'question'" in err
    assert "Traceback" not in err


def test_report_to_a_given_console(tmp_path):
    console = Console(record=True, width=200)
    print_report(load_benchmark(sample_path()), console=console)
    assert "documents" in console.export_text()


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=missing(SCIFACT))
def test_scifact_report(capsys):
    code, out, _ = run(capsys, str(SCIFACT), "--split", "test")
    assert code == 0
    assert "5,183" in out and "300 judged in this split (1,109 in queries.jsonl)" in out
    assert "339" in out and "no generation" in out
    assert "tracks     │ retrieval " in out or "retrieval" in out.split("tracks")[1].split("\n")[0]


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=missing(SCIFACT))
def test_scifact_unknown_split(capsys):
    code, _, err = run(capsys, str(SCIFACT), "--split", "dev")
    assert code == 2 and "the splits are: test, train" in err
