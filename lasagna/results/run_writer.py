"""Writing a run folder: `<output>/<run_id>/manifest.json` + `trials/<key>.parquet`, never
overwritten, never seen half-written.

- Local disk: the folder is built under a hidden temporary name and renamed into place
  (`Store.commit_dir`): readers see all of it or nothing.
- Object store: there is no rename, and moving every object is a copy of the whole run.
  The run id is unique (time + random), so the files are written under the run's own
  name and `manifest.json` is written LAST, as the commit marker, with a conditional PUT
  (`If-None-Match: *` on S3) so a run is never overwritten. Readers list only folders that
  have a manifest. While it writes, a lease object `.tmp-lease-<run_id>@<host>.<pid>.<hex>` at the
  top names the writer, so `remove_stale_temps` can remove the unmarked folder of a writer
  that died, and leaves one that is still being written.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from lasagna.common.clock import now_iso, now_stamp
from lasagna.common.version import lasagna_version
from lasagna.common.writers import lease_name, temp_name
from lasagna.errors import Problem, UserError
from lasagna.results.fs import Store
from lasagna.results.fs_errors import write_error
from lasagna.results.layout import MANIFEST, Output, dumps, safe_table, write_parquet
from lasagna.results.model import SCHEMA_VERSION, TrialResult, safe_name

if TYPE_CHECKING:
    import pyarrow as pa

RESERVED = {"schema_version", "lasagna_version", "run_id", "created_at", "finished_at", "trials"}


def new_run_id() -> str:
    """`YYYYmmdd-HHMMSS-<6 hex>` in UTC: sorts by time, unique without coordination."""
    return f"{now_stamp()}-{secrets.token_hex(3)}"


def write_run(
    output_dir: Output,
    run_id: str,
    manifest: dict[str, Any],
    trials: list[TrialResult],
    tables: dict[str, pa.Table] | None = None,
    files: dict[str, bytes] | None = None,
) -> str:
    """Write run `run_id` (manifest + one Parquet per trial) atomically; returns its folder.

    `tables` are run-level tables (an SDK evaluation's trials and spans), written as
    `tables/<name>.parquet` and listed in the manifest's `tables`. `files`: other files of
    the run folder by name (the run's log), written before the manifest.

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
        raise _exists(store, final)
    starts = [t.started_at for t in trials if t.started_at]
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "lasagna_version": lasagna_version(),
        "run_id": run_id,
        "created_at": manifest.get("created_at") or (min(starts) if starts else now_iso()),
        "finished_at": now_iso(),
    }
    doc |= {k: v for k, v in manifest.items() if k != "created_at"}
    if store.local:
        tmp = store.path(temp_name(run_id))
        try:
            _write_files(store, tmp, doc, trials, tables, files)
            store.write_bytes(f"{tmp}/{MANIFEST}", dumps(doc))
            store.commit_dir(tmp, final, MANIFEST, replace=False)
        except BaseException as err:
            store.rmtree(tmp)
            if isinstance(err, OSError):
                raise write_error(err, store.display, f"run {run_id}") from err
            raise
        return final
    lease = store.path(lease_name(run_id))
    try:
        store.write_bytes(lease, b"")
        _write_files(store, final, doc, trials, tables, files)
        store.write_new(f"{final}/{MANIFEST}", dumps(doc))  # the commit
    except FileExistsError as err:  # another writer committed this id first: keep its run
        raise _exists(store, final) from err
    except BaseException as err:
        store.rmtree(final)
        if isinstance(err, OSError):
            raise write_error(err, store.display, f"run {run_id}") from err
        raise
    finally:
        store.remove(lease)
    return final


def _exists(store: Store, final: str) -> UserError:
    return UserError(
        Problem(
            "a run with this id exists already; runs are never overwritten",
            file=store.shown(final),
            fix="use a new run id (lasagna.results.new_run_id())",
        )
    )


def _write_files(
    store: Store,
    base: str,
    doc: dict[str, Any],
    trials: list[TrialResult],
    tables: dict[str, pa.Table] | None,
    files: dict[str, bytes] | None = None,
) -> None:
    """Every Parquet file of the run under `base`; fills the manifest's `trials`/`tables`."""
    store.makedirs(f"{base}/trials")
    for name, data in (files or {}).items():
        store.write_bytes(f"{base}/{safe_name(name)}", data)
    entries = []
    for trial in trials:
        files = {"rows": f"trials/{trial.file_name}.parquet"}
        files |= {n: f"trials/{trial.file_name}.{safe_table(n)}.parquet" for n in trial.tables}
        for name, table in trial.all_tables().items():
            write_parquet(store, f"{base}/{files[name]}", table)
        entries.append(trial.meta.to_json() | {"rows_file": files["rows"], "tables": files})
    doc["trials"] = entries
    if tables:
        store.makedirs(f"{base}/tables")
        doc["tables"] = {}
        for name, table in tables.items():
            doc["tables"][name] = f"tables/{safe_name(name)}.parquet"
            write_parquet(store, f"{base}/{doc['tables'][name]}", table)
