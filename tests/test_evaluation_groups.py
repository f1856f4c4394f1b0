"""Groups: progression over time, compare only within a group (datapoints paired by task id,
each its mean over its trials), and `lasagna eval` running files (and failing on a broken one)."""

from __future__ import annotations

import json
import sys

import pytest
from ray import cloudpickle

from lasagna import Datapoint, evaluate
from lasagna.cli import main
from lasagna.errors import UserError
from lasagna.results import open_run, sql
from lasagna.results.groups import compare_evaluations, progression

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

pytestmark = pytest.mark.slow

DATA = [
    Datapoint({"country": "France"}, "Paris", task_id="france"),
    Datapoint({"country": "Japan"}, "Tokyo", task_id="japan"),
]


def always_paris(data):
    return "Paris"


def right(data):
    return {"France": "Paris", "Japan": "Tokyo"}[data["country"]]


def accuracy(output, target):
    return 1 if target.lower() in output.lower() else 0


def test_progression_and_in_group_compare(ray_local, tmp_path, capsys):
    kw = {"trials": 3, "output": tmp_path, "quiet": True}
    a = evaluate(DATA, always_paris, {"accuracy": accuracy}, group_name="caps", **kw)
    b = evaluate(DATA, right, {"accuracy": accuracy}, group_name="caps", **kw)
    c = evaluate(DATA, right, {"accuracy": accuracy}, group_name="other", **kw)
    prog = progression("caps", tmp_path)
    assert [r["evaluation_id"] for r in prog.rows] == [a.evaluation_id, b.evaluation_id]
    assert [r["averages"]["accuracy"] for r in prog.rows] == [0.5, 1.0]
    assert prog.dimensions == ["accuracy"]
    with pytest.raises(UserError, match="no evaluation in group 'nope'"):
        progression("nope", tmp_path)

    cmp = compare_evaluations(
        open_run(a.evaluation_id, tmp_path), open_run(b.evaluation_id, tmp_path)
    )
    test = cmp.tests["accuracy"]
    # 2 datapoints x 3 trials: 2 pairs (each datapoint its mean over its trials), not 6
    assert (test.n, test.mean_a, test.mean_b, cmp.unmatched) == (2, 0.5, 1.0, 0)
    with pytest.raises(UserError, match="only for evaluations of one group"):
        compare_evaluations(
            open_run(a.evaluation_id, tmp_path), open_run(c.evaluation_id, tmp_path)
        )

    capsys.readouterr()
    out = ["--output", str(tmp_path)]
    assert main(["results", "progression", "caps", *out]) == 0
    assert a.evaluation_id in capsys.readouterr().out
    assert main(["results", "compare", a.evaluation_id, b.evaluation_id, *out]) == 0
    assert "+0.5000" in capsys.readouterr().out
    assert main(["results", "compare", a.evaluation_id, c.evaluation_id, *out]) == 2
    assert "one group" in capsys.readouterr().err
    as_csv = ["results", "compare", a.evaluation_id, b.evaluation_id, "--format", "csv", *out]
    assert main(as_csv) == 2
    assert "evaluation_trials" in capsys.readouterr().err  # the fix: results sql
    assert (
        main(
            [
                "results",
                "sql",
                "SELECT group_name FROM evaluations ORDER BY 1",
                "--format",
                "json",
                *out,
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"group_name": "caps"}, {"group_name": "caps"}, {"group_name": "other"}]


EVAL_OK = """
from lasagna import Datapoint, evaluate

def capital_of_country(data: dict) -> str:
    return {"France": "Paris", "Japan": "Tokyo"}[data["country"]]

def accuracy(output: str, target: str) -> int:
    return 1 if target.lower() in output.lower() else 0

evaluate(
    data=[
        Datapoint(data={"country": "France"}, target="Paris", task_id="france"),
        Datapoint(data={"country": "Japan"}, target="Tokyo", task_id="japan"),
    ],
    executor=capital_of_country,
    evaluators={"accuracy": accuracy},
    group_name="capitals",
    trials=3,
)
"""


def test_lasagna_eval_runs_evals_folder_and_fails_on_a_broken_file(tmp_path):
    from test_faults import run_cli_in_subprocess

    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "eval_capitals.py").write_text(EVAL_OK)
    (tmp_path / "evals" / "eval_broken.py").write_text("import no_such_module_here\n")
    (tmp_path / "evals" / "helper.py").write_text("raise SystemExit('not an eval file')\n")
    proc, _ = run_cli_in_subprocess(tmp_path, "eval", "--group", "nightly")
    assert proc.returncode == 2, proc.stderr  # the user's import failed: a user error
    assert "error: evals/eval_broken.py:1: ModuleNotFoundError" in proc.stderr
    assert "no_such_module_here" in proc.stderr and "Traceback" not in proc.stderr
    assert "helper.py" not in proc.stderr
    rows = sql(tmp_path / "results", "SELECT group_name, n_trials FROM evaluations").to_pylist()
    assert rows == [{"group_name": "nightly", "n_trials": 6}]
