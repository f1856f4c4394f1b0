"""Run one trial: its track's pipeline of stages on Ray Data, then the track's aggregation.

    rows (the track's input columns) -> stage -> stage -> ... -> driver (row order restored)

The track (lasagna.tracks) decides the stages and the metrics; this module only builds the
input dataset, runs the stages, collects the rows and assembles the `TrialResult`. Ray must
be initialized by the caller (`lasagna.engine.ray_session`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lasagna.common.clock import now_iso
from lasagna.engine.row_failures import raise_if_every_row_failed, row_errors
from lasagna.metrics import METRIC_DEFINITIONS_VERSION
from lasagna.models.draws import for_draw
from lasagna.results.model import TrialResult
from lasagna.stages.progress import StageProgress
from lasagna.stages.stage import apply_stages, check_pipeline, spread_over_actors
from lasagna.stages.stopwatch import Stopwatch
from lasagna.tracks import Prepared, TrialSetup, get_track

if TYPE_CHECKING:  # the engine runs what the plan made; it never imports the sweep package
    import pyarrow as pa

    from lasagna.stages.pools import Pools
    from lasagna.sweep.plan import PlannedBenchmark, Trial
    from lasagna.systems import Resources

POSITION = "_pos"  # original row order, restored after the pipeline


def with_resources(system: Any, resources: Resources) -> Any:
    """The system with the sweep's stage defaults applied (explicit system values win)."""
    return system.with_resources(resources)


def rows_dataset(columns: dict[str, list], block_rows: int):
    """The pipeline's input: the columns as Arrow blocks of `block_rows` rows.

    `from_blocks` reads the blocks' metadata here, in the driver; `from_arrow` would ask a
    1-CPU Ray task for it, which never starts on a cluster whose CPUs are all held by pooled
    actors (a CPU-less head, 1-CPU workers each running an embedder)."""
    import pyarrow as pa
    import ray.data

    n = len(columns["id"])
    table = pa.table(columns)
    blocks = [table.slice(i, block_rows) for i in range(0, n, block_rows)] or [table]
    return ray.data.from_blocks(blocks)


def collect(ds, progress: StageProgress | None = None) -> pa.Table:
    """The dataset's rows on the driver, in the benchmark's row order (`progress` hears the
    rows of each batch as it arrives).

    Batches stream to a `RowSpool` on local disk as they arrive and come back memory-mapped,
    so the driver's heap never holds every row (100k questions x top-100 ids are hundreds
    of MiB); the checkpoint and the run folder's Parquet are then written from the map."""
    from lasagna.common import interrupts
    from lasagna.results.rows_stream import RowSpool

    spool = RowSpool()
    try:
        for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
            interrupts.check()  # a ^C Ray's code dropped stops the trial at the next batch
            if batch.num_rows:
                spool.write(batch)
                if progress is not None:
                    progress.advance(batch.num_rows)
        table = spool.table()
    finally:
        spool.discard()
    if table.num_columns == 0:
        return table
    return in_row_order(table).drop_columns([POSITION])


def in_row_order(table: pa.Table) -> pa.Table:
    """`table` sorted by POSITION. Ray delivers blocks out of order but each one is a run of
    consecutive positions, so reordering the blocks (zero-copy) is enough; anything else is
    sorted in memory."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def pos_of(batch):
        return batch.column(POSITION)

    chunks = []
    for batch in table.to_batches():
        if batch.num_rows:
            pos = batch.column(POSITION)
            chunks.append((pc.min(pos).as_py(), pc.max(pos).as_py(), batch))
    chunks.sort(key=lambda c: c[0])
    expected = 0
    for lo, hi, batch in chunks:
        runs = lo == expected and hi - lo + 1 == batch.num_rows
        if not runs or not pc.all(pc.equal(pos_of(batch), pa.array(range(lo, hi + 1)))).as_py():
            return table.sort_by(POSITION)
        expected = hi + 1
    return pa.Table.from_batches([c[2] for c in chunks], schema=table.schema)


def stage_label(run_timing: str, judged: bool) -> str:
    """The progress line's name of a trial's pipeline ("search+score"); a judged generation
    trial's says "judge" too, since its rows arrive only once judged, which takes longer
    than generating them ("generate+judge+score")."""
    steps = run_timing.split("_and_")
    if judged and "judge" not in steps:
        steps.insert(max(1, len(steps) - 1), "judge")
    return "+".join(steps)


def run_pipeline(trial: Trial, setup: TrialSetup) -> tuple[pa.Table, Prepared]:
    """The trial's per-row table (the track's stages over the benchmark's rows) and what
    the track prepared for them."""
    track = get_track(trial.track)
    benchmark, system, watch = setup.benchmark, setup.system, setup.watch
    prepared = track.prepare(setup)
    if track.runs_own_rows:  # a track that runs its rows itself (no Ray Data stages)
        with watch.time(track.run_timing):
            own = track.run_rows(setup, prepared)
        if own is not None:
            return own, prepared
    columns = track.input_columns(benchmark, system, prepared)
    n = len(columns["id"])
    columns[POSITION] = list(range(n))
    stages = track.stages(benchmark, system, prepared)
    have = check_pipeline(stages, list(columns))
    cap, stages = spread_over_actors(stages, n)
    block_rows = min(track.block_rows(benchmark, system), cap)
    ds = apply_stages(rows_dataset(columns, block_rows), stages)
    label = stage_label(track.run_timing, bool(trial.judges))
    with watch.time(track.run_timing), StageProgress(label, n) as progress:
        if setup.phased:  # the first phase runs to its end, then releases its engines
            ds = ds.materialize()
            later = track.later_stages(setup, prepared)
            check_pipeline(later, have)
            later = spread_over_actors(later, n)[1]
            ds = apply_stages(ds, later)
        table = collect(ds, progress)
    internal = [c for c in track.internal_columns if c in table.column_names]
    return with_metadata(table.drop_columns(internal), benchmark), prepared


def with_metadata(table: pa.Table, benchmark: Any) -> pa.Table:
    """The rows with each question's metadata (JSON text), so a run can be read back by
    slice (`results show RUN --by KEY`, lasagna.results.slices) without the data file."""
    import pyarrow as pa

    from lasagna.results.slices import METADATA, metadata_column

    if METADATA in table.column_names or "id" not in table.column_names:
        return table
    rows = getattr(benchmark, "rows", None) or []
    column = metadata_column(table["id"].to_pylist(), rows)
    return table.append_column(METADATA, pa.array(column, pa.string()))


def trial_fields(trial: Trial, planned: PlannedBenchmark) -> dict[str, Any]:
    """What a TrialResult takes from the plan: keys, system, seed and the benchmark block."""
    data = planned.benchmark
    return {
        "key": trial.key,
        "comparability_key": trial.comparability_key,
        "track": trial.track,
        "system": trial.system_name,
        "config": trial.system_config,
        "benchmark": {
            "name": data.name,
            "revision": data.revision,
            "source": str(planned.path),
            "format": data.format,
            "split": trial.selection.get("split"),
            "n_samples": trial.selection.get("n_samples"),
            "filters": trial.selection.get("filters"),
            "sample_seed": trial.selection.get("sample_seed"),
            "corpus_provenance": getattr(data, "corpus_provenance", None),
            **_corpus_fields(planned),
        },
        "seed": trial.seed,
        "repeat": trial.repeat,
        "metric_definitions_version": METRIC_DEFINITIONS_VERSION,
    }


def _corpus_fields(planned: PlannedBenchmark) -> dict[str, Any]:
    """A named corpus's path and revision (absent otherwise, so older runs read the same)."""
    corpus = getattr(planned, "corpus_path", None)
    if corpus is None:
        return {}
    return {"corpus": str(corpus), "corpus_revision": planned.benchmark.corpus_revision}


def run_trial(
    trial: Trial,
    planned: PlannedBenchmark,
    resources: Resources,
    pools: Pools | None = None,
    call_cache: str | None = None,
    parts: Any = None,
    phased: bool = False,
) -> TrialResult:
    """Run one trial on Ray and return its result (not yet written anywhere). `pools`: the
    run's heavy pools (engines reused across trials); None loads them for this trial only.
    `call_cache`: the model-call cache's location (lasagna.cache); None: off. `parts`: the
    trial's checkpoint of finished rows (lasagna.results.partial), for tracks that save
    rows as they finish. `phased`: in two phases (lasagna.stages.placement: its pools do
    not all fit at once)."""
    track = get_track(trial.track)
    started = now_iso()
    watch = Stopwatch()
    # the sweep's stage defaults, and the repeat's sampling seed (lasagna.models.draws)
    system = for_draw(with_resources(trial.system, resources), trial.repeat)
    benchmark = planned.benchmark
    setup = TrialSetup(benchmark, system, watch, pools, call_cache, resources, trial, phased, parts)
    table, prepared = run_pipeline(trial, setup)
    failed = row_errors(table) if track.fails_when_every_row_fails else None
    raise_if_every_row_failed(failed)  # the endpoint is down, the key is wrong, ...
    summary = track.aggregate(table, benchmark, prepared)
    if failed:
        summary.extra["row_errors"] = failed  # the run summary says why (engine.summary)
    summary.metrics.update(track.catalog_metrics(table, benchmark))  # plugins' metrics
    for name, seconds in summary.timings.items():  # what the driver timed itself wins
        watch.timings.setdefault(name, seconds)
    return TrialResult(
        **trial_fields(trial, planned),
        metrics=summary.metrics,
        timings=watch.timings,
        counts=summary.counts,
        started_at=started,
        finished_at=now_iso(),
        extra=summary.extra,
        rows=table,
        tables=summary.tables,
    )
