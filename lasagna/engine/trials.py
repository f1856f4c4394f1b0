"""Run one trial as a Ray Data pipeline and return its `TrialResult`.

retrieval:   rows -> Search (actor pool) -> score (tasks) -> driver
generation:  rows [-> Search -> attach passages] -> Generate (actor pool) -> score -> driver

Ray must be initialized by the caller (`lasagna.engine.ray_session`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from lasagna.common.clock import now_iso
from lasagna.data.model import Benchmark
from lasagna.engine.progress import StageProgress
from lasagna.metrics import METRIC_DEFINITIONS_VERSION
from lasagna.metrics.qa import aggregate_qa
from lasagna.metrics.retrieval import DEFAULT_KS, mean_metrics, metric_names
from lasagna.results.model import TrialResult
from lasagna.sweep.plan import PlannedBenchmark, Trial
from lasagna.sweep.schema import Resources
from lasagna.sweep.systems import (
    BM25Retriever,
    ClosedBookGenerator,
    DenseRetriever,
    HybridRetriever,
    RagGenerator,
)

POSITION = "_pos"  # original row order, restored after the pipeline


@dataclass
class Stopwatch:
    """Seconds per named stage, in the order they ran."""

    timings: dict[str, float] = field(default_factory=dict)

    def time(self, name: str):
        watch = self

        class _Span:
            def __enter__(self):
                self.t0 = time.perf_counter()

            def __exit__(self, *exc):
                watch.timings[name] = watch.timings.get(name, 0.0) + time.perf_counter() - self.t0

        return _Span()


# ------------------------------------------------------------------ resources
def with_resources(system: Any, resources: Resources) -> Any:
    """The system with the sweep's stage defaults applied (explicit system values win)."""

    def stage(owner: Any, field: str, name: str) -> Any:
        own = getattr(owner, field)
        return resources.apply(name, own, field in owner.model_fields_set)

    if isinstance(system, BM25Retriever):
        return system.model_copy(update={"retrieve": stage(system, "retrieve", "retrieve")})
    if isinstance(system, DenseRetriever):
        return system.model_copy(
            update={
                "encode": stage(system, "encode", "encode"),
                "search": stage(system, "search", "search"),
            }
        )
    if isinstance(system, HybridRetriever):
        parts = tuple(with_resources(r, resources) for r in system.retrievers)
        return system.model_copy(update={"retrievers": parts})
    if isinstance(system, RagGenerator | ClosedBookGenerator):
        model = system.model.model_copy(
            update={"resources": stage(system.model, "resources", "generate")}
        )
        update: dict[str, Any] = {"model": model}
        if isinstance(system, RagGenerator):
            update["retriever"] = with_resources(system.retriever, resources)
        return system.model_copy(update=update)
    return system


# ------------------------------------------------------------------ pipelines
def _collect(ds, progress: StageProgress | None = None) -> pa.Table:
    """Materialize a dataset on the driver, in the benchmark's row order (`progress` hears
    the rows of each batch as it arrives)."""
    tables = []
    for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
        if batch.num_rows:
            tables.append(batch)
            if progress is not None:
                progress.advance(batch.num_rows)
    if not tables:
        return pa.table({})
    table = pa.concat_tables(tables, promote_options="default")
    return table.sort_by(POSITION).drop_columns([POSITION])


def _rows_dataset(columns: dict[str, list], block_rows: int):
    import ray.data

    n = len(columns["id"])
    table = pa.table(columns)
    blocks = [table.slice(i, block_rows) for i in range(0, n, block_rows)] or [table]
    return ray.data.from_arrow(blocks)


def _score_and_collect(
    ds, score, kwargs: dict, stage: str, watch: Stopwatch, rows: int
) -> pa.Table:
    """Append the per-batch scoring stage (light tasks), run the pipeline, collect in order."""
    ds = ds.map_batches(
        score, fn_kwargs=kwargs, batch_format="pyarrow", num_cpus=0.1, batch_size=None
    )
    label = stage.replace("_and_", "+")
    with watch.time(stage), StageProgress(label, rows) as progress:
        table = _collect(ds, progress)
    return table.drop_columns(["rel_ids", "rel_grades"])


def _input_columns(benchmark: Benchmark) -> dict[str, list]:
    """Every row's id, question and judgments, and its position to restore order later."""
    from lasagna.engine.scoring import retrieval_input_columns

    rows = benchmark.rows
    columns = retrieval_input_columns(
        [r.id for r in rows], [r.question or "" for r in rows], benchmark.qrels
    )
    columns[POSITION] = list(range(len(rows)))
    return columns


def _search_block_rows(n: int) -> int:
    return max(64, min(1024, -(-n // 8)))  # ~8 blocks so stages overlap and actors share


def run_retrieval(benchmark: Benchmark, system, watch: Stopwatch) -> pa.Table:
    """Rank the corpus for every row and score each ranked list (per batch, on Ray)."""
    from lasagna.engine.retrieval import ensure_index, retrieval_dataset
    from lasagna.engine.scoring import score_retrieval_batch

    with watch.time("index"):
        ensure_index(benchmark, system)
    columns = _input_columns(benchmark)
    ds = _rows_dataset(columns, _search_block_rows(len(benchmark.rows)))
    ds = retrieval_dataset(ds, benchmark, system)
    return _score_and_collect(
        ds, score_retrieval_batch, {"ks": DEFAULT_KS}, "search_and_score", watch, len(columns["id"])
    )


class AttachPassages:
    """Actor: holds the corpus texts; turns the top doc ids into prompt passages."""

    def __init__(self, texts_ref, passages: int):
        import ray

        self.texts: dict[str, str] = ray.get(texts_ref[0])
        self.passages = passages

    def __call__(self, batch: pa.Table) -> pa.Table:
        top = [ids[: self.passages] for ids in batch.column("doc_ids").to_pylist()]
        texts = [[self.texts[d] for d in ids] for ids in top]
        return batch.append_column("passages", pa.array(texts, type=pa.list_(pa.string())))


def run_generation(
    benchmark: Benchmark,
    system,
    watch: Stopwatch,
    judges: tuple = (),
    resources: Resources | None = None,
) -> pa.Table:
    """Generate an answer per row (after retrieval for rag) and score it (SQuAD v2 rules)."""
    import ray

    from lasagna.engine.actors import actor_pool
    from lasagna.engine.generation import generation_dataset
    from lasagna.engine.retrieval import ensure_index, retrieval_dataset
    from lasagna.engine.scoring import score_generation_batch

    rows = benchmark.rows
    columns = _input_columns(benchmark)
    columns["answers"] = [list(r.answers) for r in rows]
    columns["unanswerable"] = [bool(r.unanswerable) for r in rows]
    if judges:  # judged generation: the judges see each row's gold passages too
        columns["gold_contexts"] = [list(r.contexts) for r in rows]
    ds = _rows_dataset(columns, max(8, system.model.resources.batch_size))
    if isinstance(system, RagGenerator):
        retriever = system.retriever.model_copy(update={"top_k": system.passages})
        with watch.time("index"):
            ensure_index(benchmark, retriever)
        ds = retrieval_dataset(ds, benchmark, retriever)
        texts_ref = ray.put({d.id: d.text for d in benchmark.corpus.values()})
        ds = ds.map_batches(
            AttachPassages,
            fn_constructor_kwargs={"texts_ref": [texts_ref], "passages": system.passages},
            compute=actor_pool(1),
            num_cpus=0.1,
            batch_size=None,
            batch_format="pyarrow",
        )
    ds = generation_dataset(ds, system)
    if judges:
        from lasagna.engine.judging import judge_generated

        ds = judge_generated(ds, judges, resources or Resources())
    kwargs = {"abstain_phrases": tuple(system.abstain_phrases)}
    return _score_and_collect(
        ds, score_generation_batch, kwargs, "generate_and_score", watch, len(rows)
    )


# ------------------------------------------------------------------ trial
def retrieval_metrics(table: pa.Table) -> dict[str, float]:
    names = [n for n in metric_names(DEFAULT_KS) if n in table.column_names]
    per_query = {}
    for i, qid in enumerate(table.column("id").to_pylist()):
        values = {n: table.column(n)[i].as_py() for n in names}
        if all(v is not None for v in values.values()):
            per_query[qid] = values
    return mean_metrics(per_query)


def generation_metrics(table: pa.Table) -> tuple[dict[str, float], dict[str, int]]:
    """EM/F1 (HasAns/NoAns) over rows that generated, plus token counts and tokens/s.

    tokens_per_s: completion tokens per second the engine was busy (each batch's wall time
    counted once). pipeline_tokens_per_s: per second of wall time from the first batch's
    start to the last batch's end, so every idle gap between batches counts against it;
    actor and engine start-up come before the first batch and do not.
    """
    records = table.select(
        [
            "em",
            "f1",
            "unanswerable",
            "error",
            "latency_s",
            "batch_rows",
            "batch_started_at",
            "completion_tokens",
            "prompt_tokens",
        ]
    ).to_pylist()
    ok = [r for r in records if not r["error"]]
    agg = aggregate_qa(ok)
    metrics = {k: float(v) for k, v in agg.items() if v is not None and not k.endswith("total")}
    counts = {k: int(v) for k, v in agg.items() if v is not None and k.endswith("total")}
    tokens = sum(r["completion_tokens"] or 0 for r in records)
    counts["completion_tokens"] = tokens
    counts["prompt_tokens"] = sum(r["prompt_tokens"] or 0 for r in records)
    counts["failed"] = len(records) - len(ok)
    busy = sum((r["latency_s"] or 0.0) / max(1, r["batch_rows"] or 1) for r in records)
    if busy > 0:
        metrics["tokens_per_s"] = tokens / busy
    batches = [(r["batch_started_at"], r["latency_s"] or 0.0) for r in records]
    batches = [(t0, dt) for t0, dt in batches if t0 is not None]
    if batches:
        span = max(t0 + dt for t0, dt in batches) - min(t0 for t0, _ in batches)
        if span > 0:
            metrics["pipeline_tokens_per_s"] = tokens / span
    return metrics, counts


def run_trial(trial: Trial, planned: PlannedBenchmark, resources: Resources) -> TrialResult:
    """Run one trial on Ray and return its result (not yet written anywhere)."""
    if trial.track == "judge":
        from lasagna.engine.judging import run_judge_trial

        return run_judge_trial(trial, planned, resources)
    started = now_iso()
    watch = Stopwatch()
    system = with_resources(trial.system, resources)
    benchmark = planned.benchmark
    counts: dict[str, int] = {"rows": len(benchmark.rows)}
    if trial.track == "retrieval":
        table = run_retrieval(benchmark, system, watch)
        metrics = retrieval_metrics(table)
        counts["judged"] = sum(1 for r in benchmark.rows if benchmark.qrels.get(r.id))
    else:
        table = run_generation(benchmark, system, watch, trial.judges, resources)
        metrics, extra_counts = generation_metrics(table)
        counts.update(extra_counts)
        if trial.judges:
            from lasagna.engine.judging import judge_metrics, judge_prefix

            counts["judge_invalid_outputs"] = 0
            for judge in trial.judges:
                judged, judge_counts = judge_metrics(table, judge_prefix(judge.benchmark))
                metrics.update(judged)
                invalid = judge_counts.pop("judge_invalid_outputs")
                counts["judge_invalid_outputs"] += invalid
                counts.update(judge_counts)
        loads = [x for x in table.column("engine_load_s").to_pylist() if x is not None]
        watch.timings["engine_load"] = max(loads, default=0.0)
    return TrialResult(
        key=trial.key,
        comparability_key=trial.comparability_key,
        track=trial.track,  # type: ignore[arg-type]
        system=trial.system_name,
        config=trial.system_config,
        benchmark={
            "name": benchmark.name,
            "revision": benchmark.revision,
            "source": str(planned.path),
            "format": benchmark.format,
            "split": trial.selection.get("split"),
            "n_samples": trial.selection.get("n_samples"),
            "filters": trial.selection.get("filters"),
            "sample_seed": trial.selection.get("sample_seed"),
            "corpus_provenance": benchmark.corpus_provenance,
        },
        seed=trial.seed,
        repeat=trial.repeat,
        metrics=metrics,
        timings=watch.timings,
        counts=counts,
        started_at=started,
        finished_at=now_iso(),
        extra={"metric_definitions_version": METRIC_DEFINITIONS_VERSION},
        rows=table,
    )
