"""`--by KEY:N`: numbers of a metadata key cut into bins of about as many questions each."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.data.select import NONE
from lasagna.data.slicing import SliceKey, slices
from lasagna.errors import UserError
from lasagna.results import write_run
from lasagna.results.slice_table import slice_groups
from lasagna.results.store import open_run
from lasagna.results.within import compare_within


def test_parse() -> None:
    assert SliceKey.parse("type") == SliceKey("type")
    assert SliceKey.parse("popularity:4") == SliceKey("popularity", 4)
    assert SliceKey.parse("a:b") == SliceKey("a:b")  # not a number of bins: a key
    assert str(SliceKey.parse("src.views:10")) == "src.views:10"
    for bad in ("p:1", "p:0", "p:101"):
        with pytest.raises(UserError, match="bin"):
            SliceKey.parse(bad)


def test_bins_hold_the_questions_pandas_qcut_puts_together() -> None:
    rng = random.Random(7)
    values = {f"q{i}": rng.lognormvariate(3, 2) for i in range(203)}  # long tail, no ties
    got = slices(values, SliceKey("pop", 5))
    ids = list(values)
    want = pd.qcut(pd.Series([values[i] for i in ids]), 5, labels=False)
    by_bin: dict[int, set[str]] = {}
    for qid, b in zip(ids, want, strict=True):
        by_bin.setdefault(int(b), set()).add(qid)
    assert list(got.values()) == [by_bin[b] for b in sorted(by_bin)]  # in number order
    assert [len(s) for s in got.values()] == [41, 40, 41, 40, 41]
    for name, members in got.items():  # each named by the smallest and largest it holds
        lo, hi = (float(x) for x in name.split(".."))
        held = [values[i] for i in members]
        assert lo == pytest.approx(min(held), rel=1e-3)
        assert hi == pytest.approx(max(held), rel=1e-3)


def test_few_numbers_keep_a_slice_each_in_number_order() -> None:
    values = {"a": 10, "b": 2, "c": 2, "d": 1, "e": 10.0, "f": 2}
    got = slices(values, SliceKey("n", 4))
    assert got == {"1": {"d"}, "2": {"b", "c", "f"}, "10": {"a", "e"}}
    assert list(got) == ["1", "2", "10"]  # not "1", "10", "2"
    plain = slices(values, SliceKey("n"))  # no bins: a value each (as JSON spells it)
    assert list(plain) == ["2", "1", "10", "10.0"]  # the largest first, ties by name


def test_ties_stay_in_one_bin() -> None:
    values = {f"q{i}": v for i, v in enumerate([1] * 6 + [2, 3, 4, 5, 6, 7])}
    got = slices(values, SliceKey("n", 4))
    assert got["1"] == {f"q{i}" for i in range(6)}  # never split over two bins
    assert sum(len(s) for s in got.values()) == 12


def test_text_and_missing_values_beside_the_bins() -> None:
    values = {"a": 1, "b": 2, "c": 3, "d": 4, "e": "unknown", "f": None, "g": [5, "tag"]}
    got = slices(values, SliceKey("n", 2))
    assert list(got) == ["1..2", "3..5", "tag", "unknown", NONE]
    assert got["3..5"] == {"c", "d", "g"} and got["tag"] == {"g"} and got[NONE] == {"f"}
    with pytest.raises(UserError, match="not numbers"):
        slices({"a": "x", "b": True}, SliceKey("kind", 3))  # a boolean is not a number


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Two systems over 12 questions with a `views` number (A is better on popular ones)."""
    views = [3, 9, 1, 40, 250, 12, 7, 5000, 90, 31, 2, 600]
    a = [0.2, 0.4, 0.1, 0.6, 0.9, 0.5, 0.3, 1.0, 0.8, 0.6, 0.2, 0.9]
    b = [0.5, 0.5, 0.6, 0.5, 0.5, 0.4, 0.6, 0.5, 0.4, 0.5, 0.6, 0.4]
    meta = pa.array([json.dumps({"views": v}) for v in views], pa.string())
    trials = [
        make_trial("ka" * 8, a, system="dense", config={"kind": "dense"}),
        make_trial("kb" * 8, b, system="bm25", config={"kind": "bm25"}),
    ]
    for t in trials:
        t.rows = t.rows.append_column("metadata", meta)
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, trials)
    return tmp_path


def test_show_and_compare_by_bins(run_dir: Path, capsys) -> None:
    run = open_run("R1", run_dir)
    (group,) = slice_groups(run, "views:3")
    lines = {ln.value: ln for ln in group.lines}
    assert list(lines) == ["all", "1..7", "9..40", "90..5000"]
    assert [ln.questions for ln in group.lines] == [12, 4, 4, 4]
    dense = group.systems.index("dense")
    assert lines["1..7"].means[dense] == pytest.approx((0.2 + 0.1 + 0.3 + 0.2) / 4)
    assert lines["90..5000"].means[dense] == pytest.approx((0.9 + 1.0 + 0.8 + 0.9) / 4)
    within = compare_within(run, by="views:3")
    assert [(g.value, g.questions) for g in within.groups] == [
        ("1..7", 4),
        ("9..40", 4),
        ("90..5000", 4),
    ]
    out = ["--output", str(run_dir)]
    assert main(["results", "show", "R1", "--by", "views:3", "--format", "csv", *out]) == 0
    assert "90..5000" in capsys.readouterr().out
    assert main(["results", "show", "R1", "--by", "views:1", *out]) == 2
    assert "from 2 to 100 bins" in capsys.readouterr().err
    assert main(["results", "compare", "R1", "--by", "nope:3", *out]) == 2
    assert "has metadata key 'nope'" in capsys.readouterr().err  # the key, not KEY:N
    page = run_dir / "r.html"
    assert main(["report", "R1", "--by", "views:0", *out, "--out", str(page)]) == 2
    assert not page.exists()
    assert main(["report", "R1", "--by", "views:2", *out, "--out", str(page)]) == 0
    assert "90..5000" not in page.read_text() and "1..12" in page.read_text()  # 2 bins


def test_evaluation_result_by_bins() -> None:
    from lasagna.evaluation import EvaluationResult

    trials = [{"metadata": json.dumps({"n": n}), "scores": {"acc": n % 2}} for n in range(8)]
    result = EvaluationResult("e", "e", None, {"acc": 0.5}, 8, 0, "r", trials)
    assert result.by("n:2") == {"0..3": {"n": 4, "acc": 0.5}, "4..7": {"n": 4, "acc": 0.5}}
    assert list(result.by("n:2")) == ["0..3", "4..7"]


def test_validate_data_names_a_numeric_key_by_its_range() -> None:
    from lasagna.data.report import metadata_summary

    said = metadata_summary({"views": i * 1.5, "mixed": i if i % 2 else "x"} for i in range(20))
    assert "views: numbers 0..28.5 (20 values; --by views:4)" in said
    assert "mixed: x 10, 1 1" in said  # not all numbers: its most common values
