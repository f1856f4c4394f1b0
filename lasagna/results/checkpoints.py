"""Trial checkpoints, what `--resume` restores: `<output>/.trials/<key>/`.

A checkpoint is a pointer plus an immutable version folder:

    .trials/<key>/trial.json               the pointer: the trial's metadata, and in `data`
                                           the name of the version folder with its tables
    .trials/<key>/v@<host>.<pid>.<hex>/    rows.parquet (+ one Parquet per named table)

A writer fills a version folder of its own, then replaces the pointer in one atomic step
(`Store.write_atomic`: `os.replace` locally, one PUT on an object store). A pointer rather
than a marker written last, because checkpoints are *replaced* (a trial re-run, two sweeps
that share a trial): an object store cannot swap a folder, and with files written in place
two writers of one key could interleave, or a reader pair one writer's metadata with the
other's rows. With the pointer every reader sees one complete version, the last commit
wins, and concurrent writers never touch each other's files. The version a commit replaces
is removed by that committer; those of writers that died before committing are removed by
`remove_stale_temps`. Checkpoints of older lasagna (tables beside trial.json) still load.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from lasagna.common.version import lasagna_version
from lasagna.common.writers import leased_run, stale_temps, version_name
from lasagna.results.fs import Store
from lasagna.results.fs_errors import write_error
from lasagna.results.layout import (
    CHECKPOINTS,
    MANIFEST,
    ROWS_FILE,
    STATUS,
    TRIAL_JSON,
    Output,
    dumps,
    read_parquet,
    refuse_unreadable,
    safe_table,
    write_parquet,
)
from lasagna.results.model import SCHEMA_VERSION, TrialMeta, TrialResult, safe_name

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger("lasagna.results")

READ_ATTEMPTS = 20  # a pointer replaced while it was being read: read the new one


def save_trial(output_dir: Output, result: TrialResult) -> str:
    """Checkpoint a finished trial atomically; returns its folder. Replaces an older copy."""
    store = Store(output_dir)
    folder = store.path(CHECKPOINTS, result.file_name)
    pointer = f"{folder}/{TRIAL_JSON}"
    previous = _version_named(store, pointer)
    version = version_name()
    data = f"{folder}/{version}"
    try:
        store.makedirs(data)
        write_parquet(store, f"{data}/{ROWS_FILE}", result.rows)
        for name, table in result.tables.items():
            write_parquet(store, f"{data}/{safe_table(name)}.parquet", table)
        meta = {"schema_version": SCHEMA_VERSION, "lasagna_version": lasagna_version()}
        meta |= result.meta.to_json() | {"tables": ["rows", *result.tables], "data": version}
        store.write_atomic(pointer, dumps(meta))  # the commit
    except BaseException as err:
        store.rmtree(data)
        store.rmdir_if_empty(folder)
        if isinstance(err, OSError):
            what = f"the checkpoint of trial {result.key}"
            raise write_error(err, store.path(CHECKPOINTS), what) from err
        raise
    if previous is not None:
        _drop_version(store, folder, previous)
    return folder


def has_checkpoint(output_dir: Output, key: str) -> bool:
    """A committed checkpoint of `key` exists (its pointer reads; the tables are not read)."""
    store = Store(output_dir)
    return _version_named(store, store.path(CHECKPOINTS, safe_name(key), TRIAL_JSON)) is not None


def _version_named(store: Store, pointer: str) -> str | None:
    """The version folder a pointer names ("" for an old checkpoint with its tables beside
    the pointer), or None when there is no readable pointer."""
    try:
        data = json.loads(store.read_bytes(pointer))
    except (OSError, ValueError):
        return None
    return str(data.get("data") or "") if isinstance(data, dict) else None


def _drop_version(store: Store, folder: str, version: str) -> None:
    if version:
        store.rmtree(f"{folder}/{version}")
        return
    for name in store.listdir(folder):  # an old checkpoint: its tables lie beside the pointer
        if name.endswith(".parquet"):
            store.remove(f"{folder}/{name}")


def load_trial(output_dir: Output, key: str, *, hold_tables: bool = True) -> TrialResult | None:
    """The checkpoint of `key`, or None when absent or unreadable (a warning says why).

    `hold_tables=False`: its tables are read and checked, then dropped; the result (a
    `StoredTrial`) reads them again when asked for. A driver holding thousands of finished
    trials until it writes the run then holds their metadata only."""
    store = Store(output_dir)
    folder = store.path(CHECKPOINTS, safe_name(key))
    pointer = _read_pointer(store, folder)
    for _ in range(READ_ATTEMPTS):
        if pointer is None:
            return None
        try:
            result = _read_checkpoint(store, folder, key, pointer)
            if result is None or hold_tables:
                return result
            return StoredTrial(result, output_dir, _tables_at(folder, json.loads(pointer)))
        except FileNotFoundError as err:
            again = _read_pointer(store, folder)
            if again == pointer:  # not a replacement under way: the version is gone
                log.warning("ignoring checkpoint %s (%s); the trial will re-run", folder, err)
                return None
            pointer = again  # replaced while it was read: read the new version
    log.warning("ignoring checkpoint %s (replaced while read, again and again)", folder)
    return None


def _read_pointer(store: Store, folder: str) -> bytes | None:
    try:
        return store.read_bytes(f"{folder}/{TRIAL_JSON}")
    except FileNotFoundError:
        return None
    except OSError as err:
        log.warning("ignoring unreadable checkpoint %s (%s); the trial will re-run", folder, err)
        return None


def _read_checkpoint(store: Store, folder: str, key: str, pointer: bytes) -> TrialResult | None:
    meta_path = f"{folder}/{TRIAL_JSON}"
    try:
        data = json.loads(pointer)
    except ValueError as err:
        log.warning("ignoring unreadable checkpoint %s (%s); the trial will re-run", folder, err)
        return None
    if not isinstance(data, dict):
        log.warning("ignoring malformed checkpoint %s; the trial will re-run", folder)
        return None
    refuse_unreadable(data.get("schema_version"), store.shown(meta_path))
    import pyarrow as pa

    try:
        meta = TrialMeta.from_json(data)
        if meta.key != key:
            raise ValueError(f"it holds trial {meta.key!r}, not {key!r}")
        names = list(dict.fromkeys(["rows", *data.get("tables", [])]))  # lists "rows" too
        tables = _read_tables(store, _tables_at(folder, data), names)
        rows = tables.pop("rows")
    except FileNotFoundError:
        raise
    except (OSError, ValueError, TypeError, pa.ArrowException) as err:
        log.warning("ignoring corrupt checkpoint %s (%s); the trial will re-run", folder, err)
        return None
    return TrialResult.of(meta, rows, tables)


def _tables_at(folder: str, pointer: dict) -> str:
    return f"{folder}/{pointer['data']}" if pointer.get("data") else folder  # else: old layout


def _read_tables(store: Store, tables_at: str, names: list[str]) -> dict[str, pa.Table]:
    """The named tables of one checkpoint version ("rows" is ROWS_FILE), each read once."""
    files = {name: ROWS_FILE if name == "rows" else f"{safe_table(name)}.parquet" for name in names}
    return {name: read_parquet(store, f"{tables_at}/{file}") for name, file in files.items()}


class StoredTrial(TrialResult):
    """A checkpointed trial held by its metadata: its tables are read from the checkpoint
    each time they are asked for (`load_trial(..., hold_tables=False)`)."""

    def __init__(self, result: TrialResult, output_dir: Output, tables_at: str):
        TrialMeta.__init__(self, **result.meta.to_json())
        self._output_dir = output_dir
        self._tables_at = tables_at
        self._names = ["rows", *result.tables]

    @property
    def rows(self) -> pa.Table:  # type: ignore[override]
        return self._read(rows=True, others=False)["rows"]

    @property
    def tables(self) -> dict[str, pa.Table]:  # type: ignore[override]
        return self._read(rows=False, others=True)

    def all_tables(self) -> dict[str, pa.Table]:
        return self._read(rows=True, others=True)

    def _read(self, *, rows: bool, others: bool) -> dict[str, pa.Table]:
        """The rows table and/or the other tables, each file read once."""
        names = (["rows"] if rows else []) + (self._names[1:] if others else [])
        try:
            return _read_tables(Store(self._output_dir), self._tables_at, names)
        except FileNotFoundError:  # another sweep has re-run this trial since: read its copy
            fresh = load_trial(self._output_dir, self.key)
            if fresh is None:
                raise
            found = fresh.all_tables().items()
            return {n: t for n, t in found if (rows if n == "rows" else others)}


def remove_stale_temps(output_dir: Output) -> int:
    """Remove what killed writers on this host left in `output_dir`: temporary folders and
    status files, uncommitted run folders (object stores) and checkpoint versions no pointer
    names. What a live writer (or one on another host) is writing is left alone. Returns
    how many."""
    store = Store(output_dir)
    removed = 0
    for folder in (store.path(), store.path(CHECKPOINTS), store.path(STATUS)):
        for name in stale_temps(store.listdir(folder)):
            store.rmtree(f"{folder}/{name}")
            removed += 1
            run_id = leased_run(name) if folder == store.path() else None
            if run_id and not store.exists(store.path(run_id, MANIFEST)):
                store.rmtree(store.path(run_id))  # the files of a run write that died
    names: dict[str, set[str]] = {}
    for rel in store.find(store.path(CHECKPOINTS)):
        parts = rel.split("/")
        if len(parts) >= 2 and not parts[0].startswith("."):
            names.setdefault(parts[0], set()).add(parts[1])
    for key_folder, inside in names.items():
        stale = stale_temps(sorted(inside))
        if not stale:
            continue
        folder = store.path(CHECKPOINTS, key_folder)
        current = _version_named(store, f"{folder}/{TRIAL_JSON}")
        for name in stale:
            if name != current:
                store.rmtree(f"{folder}/{name}")
                removed += 1
    return removed
