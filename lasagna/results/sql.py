"""SQL over every run with duckdb: views `runs`, `trials`, `rows` and the SDK's tables.

- `runs`: one row per run (run_id, created_at, finished_at, lasagna_version, schema_version,
  profile, n_trials, path, manifest JSON).
- `trials`: one row per trial and run (run_id, trial_key, comparability_key, track, system,
  system_id, seed, repeat, benchmark fields, times, n_rows, `restored` (true where the run
  restored the trial with --resume), `in_rows` (true where `rows` holds the trial's rows
  under this run), `metrics` and `config` as JSON) plus one column per metric, named as
  the metric (quote it: "ndcg@10").
- `rows`: the per-question rows of each trial under each run that ran it (run_id,
  trial_key, system as in `trials`, then the Parquet columns; columns a track lacks are
  NULL): a restored trial once, under the run that ran it, and a trial run again without
  --resume under each run (lasagna.results.sql_rows); `trials WHERE in_rows` lists the
  same (run, trial) pairs. Read lazily by duckdb from the Parquet files, local or through
  fsspec for URIs.

Queries only read (lasagna.results.sql_guard).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lasagna.errors import Problem, UserError
from lasagna.results.fs import json_default
from lasagna.results.span_query import SPAN_ALIASES, unknown_attributes
from lasagna.results.sql_guard import check_read_only
from lasagna.results.sql_rows import create_rows_view, restored_keys, row_sources
from lasagna.results.store import DEFAULT_OUTPUT, Output, Run, load_runs

if TYPE_CHECKING:  # both load only when a query runs
    import duckdb
    import pyarrow as pa

TRIAL_COLUMNS = [
    "run_id",
    "trial_key",
    "comparability_key",
    "track",
    "system",
    "system_id",
    "seed",
    "repeat",
    "benchmark",
    "revision",
    "split",
    "n_samples",
    "corpus_provenance",
    "started_at",
    "finished_at",
    "n_rows",
    "restored",
    "in_rows",
    "metrics",
    "config",
]


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=json_default)


def runs_table(runs: list[Run]) -> pa.Table:
    import pyarrow as pa

    return pa.Table.from_pylist(
        [
            {
                "run_id": r.run_id,
                "created_at": str(r.manifest.get("created_at", "")),
                "finished_at": str(r.manifest.get("finished_at", "")),
                "lasagna_version": str(r.manifest.get("lasagna_version", "")),
                "schema_version": int(r.manifest.get("schema_version", 0)),
                "profile": r.manifest.get("profile") and str(r.manifest["profile"]),
                "n_trials": len(r.trials),
                "path": r.path,
                "manifest": _json(r.manifest),
            }
            for r in runs
        ],
        schema=pa.schema(
            [
                ("run_id", pa.string()),
                ("created_at", pa.string()),
                ("finished_at", pa.string()),
                ("lasagna_version", pa.string()),
                ("schema_version", pa.int64()),
                ("profile", pa.string()),
                ("n_trials", pa.int64()),
                ("path", pa.string()),
                ("manifest", pa.string()),
            ]
        ),
    )


def trials_table(runs: list[Run], in_rows: set[tuple[str, str]] | None = None) -> pa.Table:
    """One row per trial and run; `in_rows`: the (run_id, trial_key) pairs the rows view
    holds (lasagna.results.sql_rows; None: as its rule says, every file readable)."""
    import pyarrow as pa

    metric_names = list(dict.fromkeys(m for r in runs for t in r.trials for m in t.metrics))
    records = []
    if in_rows is None:
        in_rows = {(r.run_id, t.key) for r, t in row_sources(runs)}
    for r in runs:
        restored = restored_keys(r)
        for t in r.trials:
            b = t.benchmark
            rec: dict[str, Any] = {
                "run_id": r.run_id,
                "trial_key": t.key,
                "comparability_key": t.comparability_key,
                "track": t.track,
                "system": t.system,
                "system_id": t.system_id,
                "seed": int(t.seed),
                "repeat": int(t.repeat),
                "benchmark": b.get("name"),
                "revision": b.get("revision"),
                "split": b.get("split"),
                "n_samples": b.get("n_samples"),
                "corpus_provenance": b.get("corpus_provenance"),
                "started_at": t.started_at,
                "finished_at": t.finished_at,
                "n_rows": t.counts.get("rows"),
                "restored": t.key in restored,
                "in_rows": (r.run_id, t.key) in in_rows,
                "metrics": _json(t.metrics),
                "config": _json(t.config),
            }
            for m in metric_names:
                col = m if m not in TRIAL_COLUMNS else f"metric_{m}"
                value = t.metrics.get(m)
                rec[col] = None if value is None else float(value)
            records.append(rec)
    col_types = {c: pa.int64() for c in ("seed", "repeat", "n_samples", "n_rows")}
    col_types["restored"] = col_types["in_rows"] = pa.bool_()
    fields = [(c, col_types.get(c, pa.string())) for c in TRIAL_COLUMNS]
    fields += [(m if m not in TRIAL_COLUMNS else f"metric_{m}", pa.float64()) for m in metric_names]
    return pa.Table.from_pylist(records, schema=pa.schema(fields))


def _run_tables(con: duckdb.DuckDBPyConnection, runs: list[Run]) -> None:
    """One view per evaluation table over every run that has it (empty, typed, if none):
    evaluations of both layouts (lasagna.results.evaluation_views), read lazily from their
    Parquet; `evaluations` rows of now come from their manifests."""
    from lasagna.results import evaluation_views as views
    from lasagna.results import evaluations as ev

    for name, schema in ev.SCHEMAS.items():
        sources = [q for r in runs if (q := views.sql_source(r, name))]
        if name == ev.EVALUATIONS:
            mine = [views.table(r, name) for r in runs if views.trial_of(r) is not None]
            if mine:
                import pyarrow as pa

                con.register(f"_new_{name}", pa.concat_tables(mine))
                sources.append(f"SELECT * FROM _new_{name}")
        con.register(f"_empty_{name}", ev.empty(name))
        sources.append(f"SELECT * FROM _empty_{name}")  # the columns and types, always
        cols = ", ".join(f'"{c}"' for c in schema.names)
        union = " UNION ALL BY NAME ".join(f"({q})" for q in sources)
        con.execute(f"CREATE VIEW _{name} AS SELECT {cols} FROM ({union})")
        columns = SPAN_ALIASES if name == ev.SPANS else "*"
        con.execute(f"CREATE VIEW {name} AS SELECT {columns} FROM _{name}")
    for alias, name in ev.ALIASES.items():
        con.execute(f"CREATE VIEW {alias} AS SELECT * FROM {name}")


def connect(
    output_dir: Output = DEFAULT_OUTPUT,
    runs: list[Run] | None = None,
    warn: Callable[[str], None] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A duckdb connection with the views over every run under `output_dir` (`runs`: those
    runs, loaded already). A damaged trial file: left out of `rows` and said to `warn`, or
    refused (UserError) without one (lasagna.results.sql_rows)."""
    import duckdb

    runs = load_runs(output_dir) if runs is None else runs
    con = duckdb.connect()
    con.register("runs", runs_table(runs))
    if runs and not runs[0].store.local:
        con.register_filesystem(runs[0].store.fs)
    _run_tables(con, runs)
    con.register("trials", trials_table(runs, create_rows_view(con, runs, warn)))
    return con


def sql(
    output_dir: Output = DEFAULT_OUTPUT,
    query: str = "SELECT * FROM runs",
    warn: Callable[[str], None] | None = None,
    runs: list[Run] | None = None,
) -> pa.Table:
    """Run one SQL query over the views `runs`, `trials` and `rows`; returns an Arrow table.
    `warn` hears of each span attribute key the query names that no span has and of each
    damaged trial file left out of `rows`; `runs`: the runs under `output_dir`, loaded
    already."""
    import duckdb

    try:
        con = connect(output_dir, runs, warn)
    except duckdb.Error as err:  # a damaged file of a view other than rows
        raise UserError(
            Problem(
                f"cannot read the runs: {str(err).splitlines()[0]}",
                file=str(output_dir),
                fix="a run folder is damaged; re-run it (or remove that run folder)",
            )
        ) from err
    try:
        check_read_only(con, query)
        if warn is not None:
            for key in unknown_attributes(con, query):
                warn(
                    f"no span has the attribute {key!r}: that condition matches nothing "
                    "(SELECT DISTINCT unnest(map_keys(attributes)) FROM spans lists the keys)"
                )
        return con.sql(query).to_arrow_table()
    except duckdb.Error as err:
        raise UserError(
            Problem(
                f"the query failed: {str(err).splitlines()[0]}",
                field="query",
                fix="tables are runs, trials, rows, evaluations, evaluation_trials and spans; "
                'quote metric columns like "ndcg@10"',
            )
        ) from err
    except AttributeError as err:  # a statement with no result (e.g. CREATE)
        raise UserError(
            Problem("the query returned no table", field="query", fix="use a SELECT statement")
        ) from err
    finally:
        con.close()
