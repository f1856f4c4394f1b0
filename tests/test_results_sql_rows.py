"""The `rows` view of `results sql` holds each trial under each run that ran it (a re-run's
different scores included, a restored trial once), as `trials WHERE in_rows` says; a
damaged run's missing or unreadable trial file is left out with a note, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.errors import UserError
from lasagna.results import open_run, sql, write_run

PAIRS = "SELECT run_id, trial_key FROM trials WHERE {} ORDER BY 1, 2"
PER_RUN = 'SELECT run_id, trial_key, count(*) AS n, sum("ndcg@10") AS s FROM rows GROUP BY ALL'


def _when(day: int) -> dict:
    return {"created_at": f"2026-01-0{day}T00:00:00+00:00"}


def test_a_trial_run_twice_without_resume_counts_under_each_run(tmp_path: Path) -> None:
    """evaluate() called twice, or a sweep re-run: two fresh trials with one key."""
    out = tmp_path / "results"
    write_run(out, "r1", _when(1), [make_trial("k1", [0.5, 1.0])])
    write_run(out, "r2", _when(2), [make_trial("k1", [0.0, 0.25])])
    got = sql(out, PER_RUN + " ORDER BY 1")
    assert got.to_pylist() == [
        {"run_id": "r1", "trial_key": "k1", "n": 2, "s": 1.5},
        {"run_id": "r2", "trial_key": "k1", "n": 2, "s": 0.25},
    ]
    ran = sql(out, PAIRS.format("NOT restored")).to_pylist()
    assert (
        ran
        == sql(out, PAIRS.format("in_rows")).to_pylist()
        == [
            {"run_id": "r1", "trial_key": "k1"},
            {"run_id": "r2", "trial_key": "k1"},
        ]
    )


def test_a_restored_trial_counts_once_under_the_run_that_ran_it(tmp_path: Path) -> None:
    out = tmp_path / "results"
    a, b, c = make_trial("ka", [1.0]), make_trial("kb", [0.5]), make_trial("kc", [0.25])
    write_run(out, "r1", _when(1), [b])
    # ka: its run was stopped before writing a folder; r2 and r3 restored it from its
    # checkpoint. kb: r1 ran it, r2 restored it. kc: r3 ran it again, fresh.
    write_run(out, "r2", _when(2) | {"restored_trials": ["ka", "kb"]}, [a, b, c])
    write_run(out, "r3", _when(3) | {"restored_trials": ["ka"]}, [a, c])
    got = sql(out, "SELECT run_id, trial_key, count(*) AS n FROM rows GROUP BY ALL ORDER BY 1, 2")
    assert got.to_pylist() == [
        {"run_id": "r1", "trial_key": "kb", "n": 1},
        {"run_id": "r2", "trial_key": "ka", "n": 1},
        {"run_id": "r2", "trial_key": "kc", "n": 1},
        {"run_id": "r3", "trial_key": "kc", "n": 1},
    ]
    pairs = sql(out, PAIRS.format("in_rows")).to_pylist()
    assert pairs == [{k: r[k] for k in ("run_id", "trial_key")} for r in got.to_pylist()]
    assert sql(out, PAIRS.format("NOT restored")).num_rows == 3  # ka: no run ran it


@pytest.mark.parametrize("damage", ["missing", "not parquet"])
def test_a_damaged_run_is_said_and_the_rest_answers(tmp_path, capsys, damage) -> None:
    out = tmp_path / "results"
    write_run(out, "r1", _when(1), [make_trial("k1", [0.5, 1.0])])
    write_run(out, "r2", _when(2), [make_trial("k2", [0.0]), make_trial("k3", [1.0])])
    file = Path(open_run("r2", out).rows_path("k2"))
    if damage == "missing":
        file.unlink()
    else:
        file.write_text("not a parquet file")
    query = "SELECT run_id, count(*) AS n FROM rows GROUP BY 1 ORDER BY 1"
    assert main(["results", "sql", query, "--output", str(out), "--format", "csv"]) == 0
    said = capsys.readouterr()
    assert said.out.splitlines() == ["run_id,n", "r1,2", "r2,1"]
    err = " ".join(said.err.split())
    why = "is missing" if damage == "missing" else "cannot be read"
    assert f"note: {file}: run r2 is damaged: the rows file of trial k2 {why}" in err, err
    assert "the rows view leaves that trial out" in err
    assert f"Fix: the run folder {out / 'r2'} is damaged; re-run it" in err
    assert "Traceback" not in err
    flags = sql(out, "SELECT trial_key, in_rows FROM trials ORDER BY 1", warn=lambda _l: None)
    assert flags.to_pylist() == [
        {"trial_key": "k1", "in_rows": True},
        {"trial_key": "k2", "in_rows": False},
        {"trial_key": "k3", "in_rows": True},
    ]
    with pytest.raises(UserError, match="run r2 is damaged") as info:  # no one to tell
        sql(out, "SELECT count(*) FROM rows")
    assert info.value.problems[0].file == str(file)


def test_several_damaged_runs_are_each_named(tmp_path: Path) -> None:
    out = tmp_path / "results"
    write_run(out, "r1", _when(1), [make_trial("k1", [0.5])])
    write_run(out, "r2", _when(2), [make_trial("k2", [0.0])])
    for run, key in (("r1", "k1"), ("r2", "k2")):
        Path(open_run(run, out).rows_path(key)).unlink()
    heard: list[str] = []
    assert sql(out, "SELECT count(*) AS n FROM rows", warn=heard.append).to_pylist() == [{"n": 0}]
    assert len(heard) == 2
    with pytest.raises(UserError) as info:
        sql(out, "SELECT count(*) FROM rows")
    assert [p.file for p in info.value.problems] == [
        str(out / "r1" / "trials" / "k1.parquet"),
        str(out / "r2" / "trials" / "k2.parquet"),
    ]
