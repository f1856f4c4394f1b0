"""`lasagna results compare --questions N`: the questions behind a difference, counted and
listed from the per-question scores (checked against counts made here)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.results import write_run
from lasagna.results.compare import compare
from lasagna.results.question_diffs import differences
from lasagna.results.store import open_run
from lasagna.results.within import compare_within

A = [0.9, 0.8, 1.0, 0.7, 0.9, 0.6, 1.0, 0.8, 0.3, 0.7]
B = [0.5, 0.8, 0.6, 0.9, 0.8, 0.3, 1.0, 0.9, 0.9, 0.1]
TEXTS = [f"what is thing {i}?" for i in range(len(A))]


def _ids(n: int) -> list[str]:
    return [f"q{i}" for i in range(n)]


def test_counts_and_the_largest_first() -> None:
    a = dict(zip(_ids(10), A, strict=True))
    b = dict(zip(_ids(10), B, strict=True))
    texts = dict(zip(_ids(10), TEXTS, strict=True))
    d = differences(a, b, texts, 2)
    diffs = [y - x for x, y in zip(A, B, strict=True)]
    assert d.better == sum(x > 1e-9 for x in diffs) == 3
    assert d.worse == sum(x < -1e-9 for x in diffs) == 5
    assert d.same == 2  # q1 and q6: equal scores
    assert [x.id for x in d.gains] == ["q8", "q3"]  # +0.6, then +0.2 (q7: +0.1)
    assert [x.id for x in d.losses] == ["q9", "q0"]  # -0.6, then -0.4 and q2's -0.4: by id
    assert d.gains[0].question == "what is thing 8?" and d.gains[0].diff == pytest.approx(0.6)
    assert (d.losses[0].a, d.losses[0].b) == (0.7, 0.1)
    only = differences({"x": 1.0, "y": 0.5}, {"y": 0.5, "z": 0.0}, {}, 5)
    assert (only.better, only.worse, only.same) == (0, 0, 1)  # the questions both scored
    assert only.gains == only.losses == [] and differences(a, b, texts, 0).gains == []


def _with_text(trial):
    trial.rows = trial.rows.append_column("question", pa.array(TEXTS, pa.string()))
    kinds = [json.dumps({"kind": "even" if i % 2 == 0 else "odd"}) for i in range(len(A))]
    trial.rows = trial.rows.append_column("metadata", pa.array(kinds, pa.string()))
    return trial


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    one = [
        _with_text(make_trial("ka" * 8, A, system="dense", config={"kind": "dense"})),
        _with_text(make_trial("kb" * 8, B, system="bm25", config={"kind": "bm25"})),
    ]
    for trial, word in zip(one, ("yes", "no"), strict=True):  # answers, as generation keeps
        said = pa.array([f"{word} {i}" for i in range(len(A))], pa.string())
        trial.rows = trial.rows.append_column("prediction", said)
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, one)
    two = [_with_text(make_trial("kc" * 8, B, system="dense", config={"kind": "dense"}))]
    write_run(tmp_path, "R2", {"created_at": "2026-01-02T00:00:00+00:00"}, two)
    return tmp_path


def test_within_a_run(run_dir: Path, capsys) -> None:
    within = compare_within(open_run("R1", run_dir), questions=2)
    (group,) = within.groups
    (pair,) = group.pairs
    assert (pair.a, pair.b) == ("dense", "bm25")  # A the better
    (d,) = group.differences
    assert (d.better, d.worse, d.same) == (3, 5, 2)
    assert compare_within(open_run("R1", run_dir)).groups[0].differences == []  # not asked
    sliced = compare_within(open_run("R1", run_dir), by="kind", questions=1)
    even = next(g for g in sliced.groups if g.value == "even")  # q0 q2 q4 q6 q8
    (d,) = even.differences
    assert (d.better, d.worse, d.same) == (1, 3, 1)
    assert [x.id for x in d.gains + d.losses] == ["q8", "q0"]  # q0 before q2 (both -0.4)
    out = ["--output", str(run_dir)]
    assert main(["results", "compare", "R1", "--questions", "2", *out]) == 0
    said = capsys.readouterr().out
    assert "bm25 vs dense on ndcg@10: better on 3, worse on 5, same on 2 of 10" in said
    assert "+0.6000  0.3000  0.9000  what is thing 8?  [q8]" in said
    assert "A: 'yes 8'  B: 'no 8'" in said  # each side's answer under the question
    assert main(["results", "compare", "R1", "--questions", "1", "--format", "json", *out]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["better"] == 3 and record["losses"][0]["id"] == "q9"
    assert record["losses"][0] | {"a": 0, "b": 0} == {
        "id": "q9",
        "question": "what is thing 9?",
        "a": 0,
        "b": 0,
        "answer_a": "yes 9",
        "answer_b": "no 9",
    }
    assert main(["results", "compare", "R1", "--questions", "1", "--format", "csv", *out]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert header[-3:] == ["better", "worse", "same"]  # the lists are JSON's only
    assert main(["results", "compare", "R1", "--questions", "-1", *out]) == 2
    assert "0 or more" in capsys.readouterr().err


def test_two_runs(run_dir: Path, capsys) -> None:
    comparison = compare("R1", "R2", run_dir, questions=3)
    (line,) = comparison.lines  # dense in R1 (A) against dense in R2 (B = bm25's scores)
    d = line.differences
    assert (d.better, d.worse, d.same) == (3, 5, 2)
    assert [x.id for x in d.gains] == ["q8", "q3", "q7"]
    assert (
        main(["results", "compare", "R1", "R2", "--questions", "1", "--output", str(run_dir)]) == 0
    )
    said = capsys.readouterr().out
    assert "dense in B vs dense in A on ndcg@10: better on 3, worse on 5" in said
    assert "what is thing 9?" in said and "what is thing 3?" not in said


def test_csv_takes_records_with_and_without_counts() -> None:
    import io

    from lasagna.results.compare_data import write_records

    out = io.StringIO()
    records = [{"a": "x", "n": 0}, {"a": "y", "n": 3, "better": 1, "gains": [{"id": "q"}]}]
    write_records(records, "csv", out)  # a metric without per-question scores comes first
    assert out.getvalue().splitlines() == ["a,n,better", "x,0,", "y,3,1"]
