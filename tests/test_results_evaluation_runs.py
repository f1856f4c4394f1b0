"""evaluate() runs beside benchmark runs in `lasagna results`: compare and leaderboard say
what each kind of run is read with, and every command they suggest works (hand-made runs,
no Ray)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_report_data import write_evaluation
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.results import write_run

DAY1, DAY2 = "2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A benchmark run B1, evaluations E1 and E2 of group capitals, N1 and N2 of none."""
    trials = [make_trial("k1", [0.5, 1.0]), make_trial("k2", [0.6, 0.9], system="dense")]
    write_run(tmp_path, "B1", {"created_at": DAY1}, trials)
    write_evaluation(tmp_path, "E1", DAY1, [0.0, 1.0])
    write_evaluation(tmp_path, "E2", DAY2, [1.0, 1.0])
    write_evaluation(tmp_path, "N1", DAY1, [0.0, 1.0], group=None)
    write_evaluation(tmp_path, "N2", DAY2, [1.0, 1.0], group=None)
    return tmp_path


def _run(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize(("a", "b"), [("E1", "B1"), ("B1", "E1")])
def test_an_evaluation_beside_a_benchmark_run_is_refused_as_such(mixed, capsys, a, b):
    code, said = _run(capsys, "results", "compare", a, b, "--output", str(mixed))
    assert code == 2
    assert (
        "B1 is a benchmark (retrieval) run; an evaluate() run compares only with another "
        "evaluate() run of its group (lasagna results progression 'capitals'" in said
    )
    assert "group None" not in said and "evaluation B1" not in said


def test_two_evaluations_without_a_group_are_told_how_to_give_one(mixed, capsys):
    code, said = _run(capsys, "results", "compare", "N1", "N2", "--output", str(mixed))
    assert code == 2
    assert "evaluations N1 and N2 have no group_name" in said
    assert "group_name='NAME'" in said and "--group NAME" in said
    assert "group None" not in said
    code, said = _run(capsys, "results", "compare", "E1", "N1", "--output", str(mixed))
    assert code == 2
    assert "evaluation N1 has no group_name and E1 is in group 'capitals'" in said


def test_the_command_suggested_for_a_run_named_twice_works(mixed, capsys):
    out = ("--output", str(mixed))
    code, said = _run(capsys, "results", "compare", "E1", "E1", *out)
    assert code == 2 and "RUN and RUN_B are both run E1" in said
    assert "lasagna results compare E1 OTHER_ID" in said
    assert "lasagna results progression 'capitals'" in said
    assert _run(capsys, "results", "progression", "capitals", *out)[0] == 0  # lists E2
    assert _run(capsys, "results", "compare", "E1", "E2", *out)[0] == 0
    code, said = _run(capsys, "results", "compare", "N1", "N1", *out)
    assert code == 2 and "N1 has no group_name" in said
    assert "lasagna results compare" not in said  # nothing it could be compared with
    code, said = _run(capsys, "results", "compare", "B1", "B1", *out)
    assert code == 2 and "(lasagna results compare B1)" in said
    assert _run(capsys, "results", "compare", "B1", *out)[0] == 0


def test_leaderboard_says_which_evaluations_it_left_out(mixed, capsys):
    code, said = _run(capsys, "results", "leaderboard", "--output", str(mixed))
    assert code == 0 and "bm25" in said
    said = " ".join(said.split())
    assert "note: 4 evaluate() run(s) in" in said and "are left out" in said
    assert "lasagna results progression capitals" in said


def test_leaderboard_group_of_evaluations_points_to_progression(mixed, capsys):
    code, said = _run(
        capsys, "results", "leaderboard", "--group", "capitals", "--output", str(mixed)
    )
    assert code == 2
    assert "'capitals' is a group of 2 evaluate() run(s)" in said
    assert "lasagna results progression capitals" in said
    assert _run(capsys, "results", "progression", "capitals", "--output", str(mixed))[0] == 0


def test_repeated_trials_are_one_pair_per_datapoint(tmp_path: Path) -> None:
    """Two datapoints x 3 deterministic trials are 2 pairs, not 6: counting each repeat as
    a pair made n 3x too large and p too small. Runs of different `trials` still pair."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lasagna.results.groups import compare_evaluations
    from lasagna.results.store import open_run

    write_evaluation(tmp_path, "E1", DAY1, [0.0, 1.0])
    write_evaluation(tmp_path, "E2", DAY2, [1.0, 1.0])
    for run, repeats in (("E1", 3), ("E2", 2)):
        path = tmp_path / run / "tables" / "trials.parquet"
        table = pq.read_table(path)
        rows = [
            {**r, "trial_index": i} for i in range(repeats) for r in table.to_pylist()
        ]  # fmt: skip
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    cmp = compare_evaluations(open_run("E1", tmp_path), open_run("E2", tmp_path))
    test = cmp.tests["accuracy"]
    assert (test.n, test.mean_a, test.mean_b, cmp.unmatched) == (2, 0.5, 1.0, 0)
