"""`lasagna results leaderboard --across`: systems over several benchmarks, each cell the
group's leaderboard mean and `mean` their average, checked against sums done here."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from test_results_store import BENCH, make_trial

from lasagna.cli import main
from lasagna.results import write_run
from lasagna.results.across import across, write_across
from lasagna.results.leaderboard import build_leaderboard
from lasagna.results.store import load_runs

SCIFACT = BENCH | {"name": "scifact@bbbbbbbbbbbb", "split": "test"}
HOTPOT = BENCH | {"name": "local/hotpotqa@cccccccccccc", "corpus_provenance": "corpus"}
HOTPOT_POOLED = BENCH | {"name": "local/hotpotqa@dddddddddddd"}
BM25, TUNED = {"kind": "bm25", "k1": 1.2}, {"kind": "bm25", "k1": 0.9}
DENSE = {"kind": "dense"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    def trial(key, values, config, bench, ckey, repeat=0):
        return make_trial(
            key,
            values,
            system=config["kind"],
            config=config,
            benchmark=bench,
            ckey=ckey,
            repeat=repeat,
        )

    first = [
        trial("a1" * 8, [0.6, 0.8], BM25, SCIFACT, "sci"),
        trial("a2" * 8, [0.5, 0.7], TUNED, SCIFACT, "sci"),
        trial("a3" * 8, [0.9, 0.9], DENSE, SCIFACT, "sci"),
        trial("b1" * 8, [0.2, 0.4], BM25, HOTPOT, "hot"),
        trial("b2" * 8, [0.4, 0.4], TUNED, HOTPOT, "hot"),
        trial("c1" * 8, [0.1, 0.1], BM25, HOTPOT_POOLED, "pool"),
    ]
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, first)
    # a repeat of bm25 on hotpotqa in a later run: the cell is the mean over its trials
    later = [trial("b3" * 8, [0.6, 0.6], BM25, HOTPOT, "hot", repeat=1)]
    write_run(tmp_path, "R2", {"created_at": "2026-01-02T00:00:00+00:00"}, later)
    return tmp_path


def _tables(root: Path, metric: str | None = None):
    runs = load_runs(root)
    return across(build_leaderboard(runs, metric, tests=False), runs)


def test_a_line_per_system_a_column_per_group(root: Path) -> None:
    (table,) = _tables(root)
    assert table.track == "retrieval" and table.metric == "ndcg@10"
    # two hotpotqa groups (a corpus and pooled gold) read the same short name: with what
    # their titles do not share
    assert table.columns[2] == "scifact test"
    assert sorted(table.columns[:2]) == ["hotpotqa full corpus", "hotpotqa pooled gold"]
    lines = {ln.system: ln for ln in table.lines}
    assert set(lines) == {"bm25 k1=1.2", "bm25 k1=0.9", "dense"}  # labels over every group
    col = {c: i for i, c in enumerate(table.columns)}
    hot, pool = "hotpotqa full corpus", "hotpotqa pooled gold"
    bm25 = lines["bm25 k1=1.2"]
    assert bm25.values[col["scifact test"]] == pytest.approx(0.7)
    assert bm25.values[col[hot]] == pytest.approx((0.3 + 0.6) / 2)  # two trials
    assert bm25.values[col[pool]] == pytest.approx(0.1)
    assert bm25.mean == pytest.approx((0.7 + 0.45 + 0.1) / 3)
    assert lines["bm25 k1=0.9"].mean is None and lines["bm25 k1=0.9"].values[col[pool]] is None
    assert lines["dense"].mean is None
    # complete lines first (best mean first), then by how many columns they have
    assert [ln.system for ln in table.lines] == ["bm25 k1=1.2", "bm25 k1=0.9", "dense"]


def test_formats_and_cli(root: Path, capsys) -> None:
    out = io.StringIO()
    write_across(_tables(root), "json", out)
    records = json.loads(out.getvalue())
    assert {r["system"] for r in records} == {"bm25 k1=1.2", "bm25 k1=0.9", "dense"}
    assert next(r for r in records if r["system"] == "dense")["scifact test"] == 0.9
    out = io.StringIO()
    write_across(_tables(root), "csv", out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert rows[0]["system"] == "bm25 k1=1.2"
    assert float(rows[0]["mean"]) == pytest.approx((0.7 + 0.45 + 0.1) / 3)
    assert next(r for r in rows if r["system"] == "dense")["mean"] == ""
    assert main(["results", "leaderboard", "--across", "--output", str(root)]) == 0
    text = capsys.readouterr().out
    assert "ndcg@10 across 3 benchmarks" in text and "scifact test" in text
    one = ["results", "leaderboard", "--across", "--group", "scifact", "--output", str(root)]
    assert main(one) == 0
    assert "no track has two benchmark groups" in capsys.readouterr().out


def test_columns_that_do_not_fit_go_to_a_second_table(root: Path) -> None:
    from rich.console import Console

    from lasagna.results.across import render_across
    from lasagna.results.table_fit import column_chunks

    assert column_chunks([6, 6, 6], 20, 40) == [range(0, 2), range(2, 3)]
    assert column_chunks([50], 20, 40) == [range(0, 1)]  # one column always
    out = io.StringIO()
    render_across(_tables(root), Console(file=out, width=80))
    text = out.getvalue()
    heads = [line for line in text.splitlines() if line.split()[:2] == ["system", "mean"]]
    assert len(heads) == 2  # the system and mean columns repeat in each table
    assert max(len(line) for line in text.splitlines()) <= 80


def test_one_trial_key_under_two_benchmark_names_counts_in_both_groups(tmp_path: Path) -> None:
    """One data file run under two names (`local/sample` from the command line, `sample` in
    a sweep) has the same trial keys in two groups: each group keeps its trials (before,
    the second group vanished from the leaderboard)."""
    local = BENCH | {"name": "local/sample@aaaaaaaaaaaa"}
    named = BENCH | {"name": "sample@aaaaaaaaaaaa"}
    key = "e5" * 8
    first = [make_trial(key, [0.5, 1.0], system="bm25", config=BM25, benchmark=local, ckey="L")]
    again = [make_trial(key, [0.5, 1.0], system="bm25", config=BM25, benchmark=named, ckey="S")]
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, first)
    write_run(tmp_path, "R2", {"created_at": "2026-01-02T00:00:00+00:00"}, again)
    groups = build_leaderboard(load_runs(tmp_path), tests=True)
    assert sorted(g.comparability_key for g in groups) == ["L", "S"]
    for g in groups:
        (line,) = g.lines
        assert line.runs == (["R1"] if g.comparability_key == "L" else ["R2"])
        assert line.mean == pytest.approx(0.75)
