"""`results sql` only reads: a query that would write a file, attach a database, create a
table, install an extension or change a setting is refused (exit 2) before anything runs,
and every reading form (SELECT, DESCRIBE, SUMMARIZE, EXPLAIN, PIVOT) still answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.errors import UserError
from lasagna.results import open_run, sql, write_run


def _root(tmp_path: Path) -> tuple[Path, Path]:
    """A results root of one run of two trials, and the Parquet file of its first trial."""
    out = tmp_path / "results"
    write_run(out, "r1", {}, [make_trial("k1", [0.5, 1.0]), make_trial("k2", [0.0], system="d")])
    run = open_run("r1", out)
    return out, Path(run.rows_path("k1"))


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("COPY (SELECT 1 AS x) TO '{file}' (FORMAT PARQUET)", "has a COPY statement"),
        ("ATTACH '{tmp}/other.db' AS other", "has an ATTACH statement"),
        ("CREATE TABLE t AS SELECT 1", "has a CREATE statement"),
        ("INSTALL httpfs", "has a LOAD statement"),
        ("SET threads = 1", "has a SET statement"),
        ("EXPORT DATABASE '{tmp}/db'", "has an EXPORT statement"),
        ("SELECT 1; DROP VIEW rows", "has a DROP statement (statement 2)"),
        # reads by their kind, and write all the same
        ("WITH w AS (COPY (SELECT 1 AS x) TO '{file}' (FORMAT PARQUET)) SELECT 1", "COPY inside"),
        ("EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '{file}' (FORMAT PARQUET)", "COPY inside"),
        ("COPY (PIVOT rows ON system USING count(*)) TO '{tmp}/p.csv'", "COPY inside"),
    ],
)
def test_a_query_that_writes_is_refused_and_writes_nothing(tmp_path, capsys, query, said) -> None:
    out, file = _root(tmp_path)
    before = file.read_bytes()
    query = query.format(file=file, tmp=tmp_path)
    assert main(["results", "sql", query, "--output", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "results sql only reads" in err and said in err, err
    assert "--format csv > FILE" in err and "Traceback" not in err
    assert file.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]  # no file, no database
    with pytest.raises(UserError, match="only reads"):
        sql(out, query)


def test_every_reading_form_still_answers(tmp_path) -> None:
    out, _file = _root(tmp_path)
    pivot = sql(out, "PIVOT rows ON system USING count(*) GROUP BY trial_key ORDER BY 1")
    assert pivot.to_pylist() == [
        {"trial_key": "k1", "bm25": 2, "d": 0},
        {"trial_key": "k2", "bm25": 0, "d": 1},
    ]
    nested = sql(out, "SELECT sum(bm25) AS n FROM (PIVOT rows ON system USING count(*))")
    assert nested.to_pylist() == [{"n": 2}]
    unpivot = sql(out, "UNPIVOT (SELECT 1 AS a, 2 AS b) ON a, b INTO NAME k VALUE v")
    assert unpivot.num_rows == 2
    for query in (
        "DESCRIBE rows",
        "SUMMARIZE trials",
        "SHOW TABLES",
        "FROM runs SELECT run_id",
        "VALUES (1)",
        "EXPLAIN SELECT * FROM rows",
        "WITH t AS (SELECT * FROM trials) SELECT count(*) FROM t",
        "SELECT 1; SELECT 2",
        "SELECT 'COPY' AS \"update\", '-- INSERT' AS x",  # keywords as text, names: fine
    ):
        assert sql(out, query).num_rows >= 1, query
