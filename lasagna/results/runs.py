"""Reading runs: every committed run under an output (a folder or URI), one run by id,
prefix, "latest" or folder, and a run's trials and tables loaded on demand.

Only a folder with a `manifest.json` is a run (the commit marker, see
`lasagna.results.run_writer`); hidden names (`.trials`, temporary folders) never are.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna.errors import Problem, UserError
from lasagna.results.fs import Store
from lasagna.results.layout import (
    DEFAULT_OUTPUT,
    MANIFEST,
    Output,
    parquet_source,
    read_parquet,
    refuse_unreadable,
)
from lasagna.results.model import TrialMeta, TrialResult

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import pyarrow as pa


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


EVALUATION = "evaluation"  # the manifest `kind` of an evaluate() run


def is_evaluation(run: Run) -> bool:
    """An evaluate() run (compared by its group name), not a benchmark run (leaderboards)."""
    return run.manifest.get("kind") == EVALUATION


def evaluation_info(run: Run) -> dict[str, Any]:
    """An evaluate() run's summary (name, group_name, averages, ...); {} for other runs."""
    return run.manifest.get("evaluation") or {}


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

    @property
    def location(self) -> str:
        """Where the run is, as people are shown it (`s3://...` on an object store)."""
        return self.store.shown(self.path)

    def rows_path(self, key: str) -> str:
        return f"{self.path}/{self._files[key]}"

    def rows(self, key: str) -> pa.Table:
        """The per-question rows of one trial (read once, then cached)."""
        if key not in self._rows:
            import pyarrow as pa

            path = self.rows_path(key)
            try:
                self._rows[key] = read_parquet(self.store, path)
            except (OSError, pa.ArrowException) as err:
                raise self._damaged(key, path, err) from err
        return self._rows[key]

    def rows_page(
        self, key: str, offset: int, limit: int, columns: list[str] | None = None
    ) -> tuple[pa.Table, int]:
        """Rows [offset, offset + limit) of one trial and its row count, reading only the
        Parquet row groups (and `columns`) they lie in: a page of a 100k-row trial costs
        one row group, not the file."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if key in self._rows:
            whole = self._rows[key]
            part = whole.slice(offset, limit)
            return (part.select(columns) if columns else part), whole.num_rows
        path = self.rows_path(key)
        try:
            with parquet_source(self.store, path) as (source, threads):
                meta = pq.ParquetFile(source)
                names = [c for c in columns if c in meta.schema_arrow.names] if columns else None
                groups, first, start = [], 0, 0
                for i in range(meta.num_row_groups):
                    n = meta.metadata.row_group(i).num_rows
                    if start + n > offset and start < offset + limit:
                        first = start if not groups else first
                        groups.append(i)
                    start += n
                if not groups:
                    empty = meta.schema_arrow.empty_table()
                    return (empty.select(names) if names else empty), start
                table = meta.read_row_groups(groups, columns=names, use_threads=threads)
        except (OSError, pa.ArrowException) as err:
            raise self._damaged(key, path, err) from err
        return table.slice(offset - first, limit), start

    def rows_with_ids(self, key: str, ids: list[str]) -> pa.Table:
        """The rows of one trial whose id is one of `ids` (row groups whose id statistics
        rule them out are not read)."""
        import pyarrow as pa

        if key in self._rows:
            import pyarrow.compute as pc

            whole = self._rows[key]
            return whole.filter(pc.is_in(whole["id"].cast(pa.string()), pa.array(ids)))
        path = self.rows_path(key)
        try:
            return read_parquet(self.store, path, filters=[("id", "in", list(ids))])
        except (OSError, pa.ArrowException) as err:
            raise self._damaged(key, path, err) from err

    def _damaged(self, key: str, path: str, err: Exception) -> UserError:
        return UserError(
            Problem(
                f"cannot read the rows of trial {key}: {err}",
                file=self.store.shown(path),
                fix="the run folder is damaged; re-run it",
            )
        )

    def table_names(self, key: str) -> list[str]:
        """The named tables of one trial ("rows" first; "spans", "verdicts", ...)."""
        return list(self._tables.get(key, {"rows": self._files[key]}))

    def trial_table_path(self, key: str, name: str) -> str | None:
        """The Parquet file of one named table of one trial, or None."""
        rel = self._tables.get(key, {}).get(name)
        return f"{self.path}/{rel}" if rel else None

    def table(self, key: str, name: str) -> pa.Table:
        """One named table of one trial ("rows" is `rows(key)`)."""
        if name == "rows":
            return self.rows(key)
        files = self._tables.get(key, {})
        if name not in files:
            raise KeyError(f"trial {key} has no table {name!r} (tables: {self.table_names(key)})")
        return read_parquet(self.store, f"{self.path}/{files[name]}")

    def result(self, key: str) -> TrialResult:
        names = [n for n in self.table_names(key) if n != "rows"]
        tables = {n: self.table(key, n) for n in names}
        return TrialResult.of(self.trial(key), self.rows(key), tables)

    def summary(self) -> RunSummary:
        m = self.manifest
        when = [str(m.get(k, "")) for k in ("created_at", "finished_at")]
        if m.get("kind") == EVALUATION:  # an evaluate() run: its group and executor
            ev = m.get("evaluation") or {}
            group = f"group {ev['group_name']}" if ev.get("group_name") else "-"
            n, tracks, names, systems = (
                int(ev.get("n_trials") or 0),
                [EVALUATION],
                [group],
                [str(ev.get("executor", "?"))],
            )
        else:
            n, tracks = len(self.trials), sorted({t.track for t in self.trials})
            names = sorted({str(t.benchmark.get("name", "?")) for t in self.trials})
            systems = list(dict.fromkeys(t.system for t in self.trials))
        profile = None if m.get("kind") == EVALUATION else m.get("profile")
        return RunSummary(self.run_id, self.path, *when, profile, n, tracks, names, systems)


def load_run(store: Store, folder: str) -> Run:
    """The run in `folder` (a path of `store`); UserError when its manifest is unreadable."""
    manifest_path = store.shown(f"{folder}/{MANIFEST}")  # for messages
    try:
        doc = json.loads(store.read_bytes(f"{folder}/{MANIFEST}"))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        raise UserError(
            Problem(f"unreadable run manifest: {err}", file=manifest_path, fix="re-run it")
        ) from err
    refuse_unreadable(doc.get("schema_version"), manifest_path)
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


def run_folders(store: Store) -> list[str]:
    """The names of the committed run folders under the store's root (a manifest inside)."""
    out = []
    for name in store.listdir(store.root):
        if name.startswith(".") or name.startswith("_"):
            continue
        if store.exists(store.path(name, MANIFEST)):
            out.append(name)
    return out


def load_runs(output_dir: Output = DEFAULT_OUTPUT) -> list[Run]:
    """Every committed run under the output, most recent first; a run whose manifest cannot
    be read is left out with a warning (opening it by its id says what is wrong), so one
    damaged folder does not hide the others."""
    store = Store(output_dir)
    runs = []
    for name in run_folders(store):
        try:
            runs.append(load_run(store, store.path(name)))
        except UserError as err:
            log.warning("left out damaged run folder %s: %s", name, err.problems[0].message)
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
        return load_run(direct, direct.root)
    store = Store(output_dir)
    names = run_folders(store)
    if ref in names:
        return load_run(store, store.path(ref))
    runs = load_runs(output_dir) if ref == "latest" or names else []
    if ref == "latest" and runs:
        return runs[0]
    matches = [n for n in names if n.startswith(ref)] if ref else []
    if len(matches) == 1:
        return load_run(store, store.path(matches[0]))
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
