"""`results export` of a run with a damaged trial writes nothing: every trial is checked
(its file readable, with the ranked-list columns) before the first file is written, and a
problem met while writing (a question id with a space) leaves no file behind either."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_results_export_sql import _ranked_trial
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.errors import UserError
from lasagna.results import TrialResult, export_trec, open_run, write_run
from lasagna.results.export import trec_lines


def _two_trials(out: Path, second: TrialResult | None = None) -> Path:
    """A run of two retrieval trials; the second trial's rows file."""
    write_run(out, "r1", {}, [_ranked_trial("k1", "bm25"), second or _ranked_trial("k2", "d")])
    return Path(open_run("r1", out).rows_path("k2"))


@pytest.mark.parametrize("damage", ["missing", "no columns", "not parquet"])
def test_a_damaged_trial_is_named_and_nothing_is_written(tmp_path, capsys, damage) -> None:
    out, target = tmp_path / "results", tmp_path / "exp"
    file = _two_trials(out)
    if damage == "missing":
        file.unlink()
    elif damage == "no columns":  # e.g. overwritten by a query's COPY
        pq.write_table(pa.table({"x": [1]}), file)
    else:
        file.write_text("not parquet")
    code = main(["results", "export", "r1", "--out", f"{target}/", "--output", str(out)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert not target.exists() or not list(target.iterdir()), list(target.iterdir())
    why = {"missing": "is missing", "no columns": "has no column(s) ['id', 'doc_ids', 'scores']"}
    assert f"{file}: the rows file of trial k2 {why.get(damage, 'cannot be read')}" in err, err
    assert f"Fix: the run folder {out / 'r1'} is damaged; re-run it" in err
    assert "only retrieval trials" not in err and "Traceback" not in err


def test_a_problem_met_while_writing_leaves_no_file(tmp_path) -> None:
    out, target = tmp_path / "results", tmp_path / "exp"
    t = _ranked_trial("k2", "d")
    spaced = TrialResult.of(t.meta, t.rows.set_column(0, "id", pa.array(["q 1", "q2"])))
    _two_trials(out, spaced)
    with pytest.raises(UserError, match="whitespace"):
        export_trec("r1", target, output_dir=out)
    assert list(target.iterdir()) == []  # not the first trial's file, nor a temporary one


def test_a_retrieval_trial_without_ranked_lists_is_said_damaged(tmp_path) -> None:
    t = make_trial("k1", [0.5])
    write_run(tmp_path, "r1", {}, [TrialResult.of(t.meta, t.rows.drop_columns(["doc_ids"]))])
    run = open_run("r1", tmp_path)
    with pytest.raises(UserError) as info:
        list(trec_lines(run, run.trials[0], "tag"))
    said = info.value.render()
    assert "the run folder is damaged; re-run it" in said
    assert "only retrieval trials" not in said
