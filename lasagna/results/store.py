"""The result store: trial checkpoints (for --resume) and versioned, never-overwritten runs.

Layout under the output folder or URI:

    <output>/.trials/<key>/trial.json + rows.parquet      checkpoint of one finished trial
    <output>/<run_id>/manifest.json                        the run (commit marker)
    <output>/<run_id>/trials/<key>.parquet                 per-question rows of each trial

Names starting with '.' are never runs. Every write goes to a temporary folder first and is
committed by rename (see `lasagna.results.fs`), so a crash leaves no half-written result.
"""

from __future__ import annotations

import io
import json
import logging
import os
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna.common.clock import now_iso, now_stamp
from lasagna.common.version import lasagna_version
from lasagna.errors import Problem, UserError
from lasagna.results.fs import Store, json_default, stale_temps, temp_name, write_error
from lasagna.results.model import SCHEMA_VERSION, TrialMeta, TrialResult, safe_name
from lasagna.results.schema import READABLE_SCHEMAS as READABLE

if TYPE_CHECKING:  # pyarrow loads only when rows are read or written (fast `results list`)
    import pyarrow as pa

log = logging.getLogger("lasagna.results")

CHECKPOINTS = ".trials"
MANIFEST = "manifest.json"
TRIAL_JSON = "trial.json"
ROWS_FILE = "rows.parquet"
RESERVED = {"schema_version", "lasagna_version", "run_id", "created_at", "finished_at", "trials"}
DEFAULT_OUTPUT = "results"

Output = str | os.PathLike[str]


def new_run_id() -> str:
    """`YYYYmmdd-HHMMSS-<6 hex>` in UTC: sorts by time, unique without coordination."""
    return f"{now_stamp()}-{secrets.token_hex(3)}"


def _dumps(data: Any) -> bytes:
    return json.dumps(data, indent=2, default=json_default, allow_nan=True).encode()


def _write_parquet(store: Store, path: str, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    from lasagna.results.rows_stream import ROW_GROUP_ROWS

    with store.open_write(path) as fh:  # row group by row group: bounded encoder memory
        pq.write_table(table, fh, compression="zstd", row_group_size=ROW_GROUP_ROWS)


def _read_parquet(store: Store, path: str) -> pa.Table:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(store.read_bytes(path)))


def _safe_table(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"table name {name!r} must be a plain identifier (e.g. spans)")
    return name


def _refuse_newer(version: Any, where: str) -> None:
    """Refuse a result this lasagna cannot read: newer, or of an unknown older schema."""
    if isinstance(version, int) and version < SCHEMA_VERSION and version not in READABLE:
        raise UserError(
            Problem(
                f"written by an old lasagna (schema {version}; this reads schemas "
                f"{', '.join(map(str, READABLE))})",
                file=where,
                field="schema_version",
                fix="re-run the benchmark with this lasagna (its trial keys changed)",
            )
        )
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise UserError(
            Problem(
                f"written by a newer lasagna (schema {version}, this reads up to {SCHEMA_VERSION})",
                file=where,
                field="schema_version",
                fix="upgrade lasagna (pip install -U lasagna)",
            )
        )


# ---------------------------------------------------------------- clean-up
def remove_stale_temps(output_dir: Output) -> int:
    """Remove the temporary folders that killed runs left in `output_dir` (and its
    checkpoints); a folder another live run is writing is left alone. Returns how many."""
    store = Store(output_dir)
    removed = 0
    for folder in (store.path(), store.path(CHECKPOINTS)):
        for name in stale_temps(store.listdir(folder)):
            store.rmtree(f"{folder}/{name}")
            removed += 1
    return removed


# ---------------------------------------------------------------- trial checkpoints
def save_trial(output_dir: Output, result: TrialResult) -> str:
    """Checkpoint a finished trial atomically; returns its folder. Replaces an older copy."""
    store = Store(output_dir)
    parent = store.path(CHECKPOINTS)
    final = store.path(CHECKPOINTS, result.file_name)
    tmp = store.path(CHECKPOINTS, temp_name(result.file_name))
    try:
        store.makedirs(tmp)
        _write_parquet(store, f"{tmp}/{ROWS_FILE}", result.rows)
        for name, table in result.tables.items():
            _write_parquet(store, f"{tmp}/{_safe_table(name)}.parquet", table)
        meta = {"schema_version": SCHEMA_VERSION, "lasagna_version": lasagna_version()}
        meta |= result.meta.to_json() | {"tables": ["rows", *result.tables]}
        store.write_bytes(f"{tmp}/{TRIAL_JSON}", _dumps(meta))
        store.commit_dir(tmp, final, TRIAL_JSON, replace=True)
    except OSError as err:
        store.rmtree(tmp)
        raise write_error(err, parent, f"the checkpoint of trial {result.key}") from err
    except BaseException:
        store.rmtree(tmp)
        raise
    return final


def load_trial(output_dir: Output, key: str) -> TrialResult | None:
    """The checkpoint of `key`, or None when absent or unreadable (a warning says why)."""
    store = Store(output_dir)
    folder = store.path(CHECKPOINTS, safe_name(key))
    meta_path = f"{folder}/{TRIAL_JSON}"
    if not store.exists(meta_path):
        return None
    try:
        data = json.loads(store.read_bytes(meta_path))
    except (OSError, ValueError) as err:
        log.warning("ignoring unreadable checkpoint %s (%s); the trial will re-run", folder, err)
        return None
    if not isinstance(data, dict):
        log.warning("ignoring malformed checkpoint %s; the trial will re-run", folder)
        return None
    _refuse_newer(data.get("schema_version"), meta_path)
    import pyarrow as pa

    try:
        meta = TrialMeta.from_json(data)
        if meta.key != key:
            raise ValueError(f"it holds trial {meta.key!r}, not {key!r}")
        rows = _read_parquet(store, f"{folder}/{ROWS_FILE}")
        tables = {
            name: _read_parquet(store, f"{folder}/{_safe_table(name)}.parquet")
            for name in data.get("tables", ["rows"])
            if name != "rows"
        }
    except (OSError, ValueError, TypeError, pa.ArrowException) as err:
        log.warning("ignoring corrupt checkpoint %s (%s); the trial will re-run", folder, err)
        return None
    return TrialResult.of(meta, rows, tables)


# ---------------------------------------------------------------- runs: writing
def write_run(
    output_dir: Output,
    run_id: str,
    manifest: dict[str, Any],
    trials: list[TrialResult],
    tables: dict[str, pa.Table] | None = None,
) -> str:
    """Write run `run_id` (manifest + one Parquet per trial) atomically; returns its folder.

    `tables` are run-level tables (an SDK evaluation's trials and spans), written as
    `tables/<name>.parquet` and listed in the manifest's `tables`.

    `manifest` carries the driver's fields (profile, config, machine, ray, sweep, started_at
    ...); the store adds the schema version, lasagna version, run id, times and the trials.
    """
    clash = RESERVED & set(manifest) - {"created_at"}
    if clash:
        raise ValueError(f"manifest fields {sorted(clash)} are set by write_run")
    if safe_name(run_id) != run_id:
        raise ValueError(f"run id {run_id!r} is not a safe folder name")
    keys = [t.key for t in trials]
    if len(set(keys)) != len(keys):
        raise ValueError("a run lists each trial key once")
    store = Store(output_dir)
    final = store.path(run_id)
    if store.exists(final):
        raise UserError(
            Problem(
                "a run with this id exists already; runs are never overwritten",
                file=final,
                fix="use a new run id (lasagna.results.new_run_id())",
            )
        )
    starts = [t.started_at for t in trials if t.started_at]
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "lasagna_version": lasagna_version(),
        "run_id": run_id,
        "created_at": manifest.get("created_at") or (min(starts) if starts else now_iso()),
        "finished_at": now_iso(),
    }
    doc |= {k: v for k, v in manifest.items() if k != "created_at"}
    tmp = store.path(temp_name(run_id))
    try:
        store.makedirs(f"{tmp}/trials")
        entries = []
        for trial in trials:
            files = {"rows": f"trials/{trial.file_name}.parquet"}
            files |= {n: f"trials/{trial.file_name}.{_safe_table(n)}.parquet" for n in trial.tables}
            for name, table in trial.all_tables().items():
                _write_parquet(store, f"{tmp}/{files[name]}", table)
            entries.append(trial.meta.to_json() | {"rows_file": files["rows"], "tables": files})
        doc["trials"] = entries
        if tables:
            store.makedirs(f"{tmp}/tables")
            doc["tables"] = {}
            for name, table in tables.items():
                doc["tables"][name] = f"tables/{safe_name(name)}.parquet"
                _write_parquet(store, f"{tmp}/{doc['tables'][name]}", table)
        store.write_bytes(f"{tmp}/{MANIFEST}", _dumps(doc))
        store.commit_dir(tmp, final, MANIFEST, replace=False)
    except OSError as err:
        store.rmtree(tmp)
        raise write_error(err, store.display, f"run {run_id}") from err
    except BaseException:
        store.rmtree(tmp)
        raise
    return final


# ---------------------------------------------------------------- runs: reading
@dataclass
class RunSummary:
    """One line of `lasagna results list`."""

    run_id: str
    path: str
    created_at: str
    finished_at: str
    profile: str | None
    n_trials: int
    tracks: list[str]
    benchmarks: list[str]
    systems: list[str]


@dataclass
class Run:
    """An opened run: its manifest, trial metadata, and per-question rows loaded on demand."""

    run_id: str
    path: str
    manifest: dict[str, Any]
    trials: list[TrialMeta]
    store: Store = field(repr=False)
    _rows: dict[str, pa.Table] = field(default_factory=dict, repr=False)
    _files: dict[str, str] = field(default_factory=dict, repr=False)
    _tables: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    def trial(self, key: str) -> TrialMeta:
        for t in self.trials:
            if t.key == key:
                return t
        raise KeyError(key)

    def table_path(self, name: str) -> str | None:
        """The Parquet file of a run-level table (see `write_run`), or None."""
        rel = (self.manifest.get("tables") or {}).get(name)
        return f"{self.path}/{rel}" if rel else None

    def rows_path(self, key: str) -> str:
        return f"{self.path}/{self._files[key]}"

    def rows(self, key: str) -> pa.Table:
        """The per-question rows of one trial (read once, then cached)."""
        if key not in self._rows:
            import pyarrow as pa

            path = self.rows_path(key)
            try:
                self._rows[key] = _read_parquet(self.store, path)
            except (OSError, pa.ArrowException) as err:
                raise UserError(
                    Problem(
                        f"cannot read the rows of trial {key}: {err}",
                        file=path,
                        fix="the run folder is damaged; re-run it",
                    )
                ) from err
        return self._rows[key]

    def table_names(self, key: str) -> list[str]:
        """The named tables of one trial ("rows" first; "spans", "verdicts", ...)."""
        return list(self._tables.get(key, {"rows": self._files[key]}))

    def table(self, key: str, name: str) -> pa.Table:
        """One named table of one trial ("rows" is `rows(key)`)."""
        if name == "rows":
            return self.rows(key)
        files = self._tables.get(key, {})
        if name not in files:
            raise KeyError(f"trial {key} has no table {name!r} (tables: {self.table_names(key)})")
        return _read_parquet(self.store, f"{self.path}/{files[name]}")

    def result(self, key: str) -> TrialResult:
        names = [n for n in self.table_names(key) if n != "rows"]
        tables = {n: self.table(key, n) for n in names}
        return TrialResult.of(self.trial(key), self.rows(key), tables)

    def summary(self) -> RunSummary:
        m = self.manifest
        if m.get("kind") == "evaluation":  # an evaluate() run: its group and executor
            ev = m.get("evaluation") or {}
            return RunSummary(
                run_id=self.run_id,
                path=self.path,
                created_at=str(m.get("created_at", "")),
                finished_at=str(m.get("finished_at", "")),
                profile=None,
                n_trials=int(ev.get("n_trials") or 0),
                tracks=["evaluation"],
                benchmarks=[f"group {ev['group_name']}" if ev.get("group_name") else "-"],
                systems=[str(ev.get("executor", "?"))],
            )
        return RunSummary(
            run_id=self.run_id,
            path=self.path,
            created_at=str(m.get("created_at", "")),
            finished_at=str(m.get("finished_at", "")),
            profile=m.get("profile"),
            n_trials=len(self.trials),
            tracks=sorted({t.track for t in self.trials}),
            benchmarks=sorted({str(t.benchmark.get("name", "?")) for t in self.trials}),
            systems=list(dict.fromkeys(t.system for t in self.trials)),
        )


def _load_run(store: Store, folder: str) -> Run:
    manifest_path = f"{folder}/{MANIFEST}"
    try:
        doc = json.loads(store.read_bytes(manifest_path))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        raise UserError(
            Problem(f"unreadable run manifest: {err}", file=manifest_path, fix="re-run it")
        ) from err
    _refuse_newer(doc.get("schema_version"), manifest_path)
    trials, files, tables = [], {}, {}
    for i, entry in enumerate(doc.get("trials", [])):
        try:
            meta = TrialMeta.from_json(entry)
        except TypeError as err:
            raise UserError(
                Problem(f"malformed trial entry: {err}", file=manifest_path, where=f"trials[{i}]")
            ) from err
        trials.append(meta)
        files[meta.key] = entry.get("rows_file", f"trials/{meta.file_name}.parquet")
        if isinstance(entry.get("tables"), dict):  # schema 2; schema 1 has rows only
            tables[meta.key] = dict(entry["tables"])
    run_id = str(doc.get("run_id") or folder.rstrip("/").rsplit("/", 1)[-1])
    return Run(run_id, folder, doc, trials, store, _files=files, _tables=tables)


def _run_folders(store: Store) -> list[str]:
    out = []
    for name in store.listdir(store.root):
        if name.startswith(".") or name.startswith("_"):
            continue
        if store.exists(store.path(name, MANIFEST)):
            out.append(name)
    return out


def load_runs(output_dir: Output = DEFAULT_OUTPUT) -> list[Run]:
    """Every committed run under the output, most recent first."""
    store = Store(output_dir)
    runs = [_load_run(store, store.path(name)) for name in _run_folders(store)]
    runs.sort(key=lambda r: (str(r.manifest.get("created_at", "")), r.run_id), reverse=True)
    return runs


def list_runs(output_dir: Output = DEFAULT_OUTPUT) -> list[RunSummary]:
    """A summary of every run, most recent first."""
    return [r.summary() for r in load_runs(output_dir)]


def run_holding(output_dir: Output, keys: list[str]) -> Run | None:
    """The most recent run that holds every one of `keys` (a --resume with nothing left to
    run references it instead of writing copies), or None."""
    wanted = set(keys)
    for run in load_runs(output_dir):
        if wanted <= {t.key for t in run.trials}:
            return run
    return None


def open_run(ref: str, output_dir: Output = DEFAULT_OUTPUT) -> Run:
    """Open a run by id (or unique id prefix, or "latest") under `output_dir`, or by its folder."""
    direct = Store(ref)
    if direct.exists(direct.path(MANIFEST)):
        return _load_run(direct, direct.root)
    store = Store(output_dir)
    names = _run_folders(store)
    if ref in names:
        return _load_run(store, store.path(ref))
    runs = load_runs(output_dir) if ref == "latest" or names else []
    if ref == "latest" and runs:
        return runs[0]
    matches = [n for n in names if n.startswith(ref)] if ref else []
    if len(matches) == 1:
        return _load_run(store, store.path(matches[0]))
    recent = [r.run_id for r in runs][:5]
    if len(matches) > 1:
        msg = f"run id prefix {ref!r} matches {len(matches)} runs: " + ", ".join(matches[:5])
        fix = "give more of the run id"
    elif recent:
        msg = f"no run {ref!r}; the most recent are: " + ", ".join(recent)
        fix = "use one of those ids (lasagna results list), or give a run folder path"
    else:
        msg = f"no run {ref!r}: there are no runs in {store.display}"
        fix = "run `lasagna benchmark run` first, or pass --output where your results are"
    raise UserError(Problem(msg, file=store.display, fix=fix))
