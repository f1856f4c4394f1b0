"""The retrieval track: rank the corpus for every question, score each ranking (trec_eval).

rows (id, question, judgments) -> Search (actor pool: the index; a dense retriever's
     questions are encoded by the run's pooled embedder, lasagna.stages.embedding)
     -> score (tasks: one metric column per metric) -> mean over judged questions
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lasagna.tracks.base import Aggregate, Prepared, Track, TrialSetup

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.data.model import Benchmark
    from lasagna.stages.pools import Pools
    from lasagna.stages.stage import Stage
    from lasagna.stages.stopwatch import Stopwatch

JUDGMENT_COLUMNS = ("rel_ids", "rel_grades")


@dataclass
class RetrievalPrepared(Prepared):
    """A retriever's index, and the run's pooled embedders of its dense parts."""

    index_path: Any = None  # the cached index's folder (lasagna.cache.index)
    embedders: Any = None  # the pooled embedder servers (lasagna.stages.embedding); None: own


def question_columns(benchmark: Benchmark) -> dict[str, list]:
    """Every row's id, question and judgments (what search and scoring read)."""
    rel_ids, rel_grades = [], []
    for row in benchmark.rows:
        judged = benchmark.qrels.get(row.id, {})
        rel_ids.append(list(judged))
        rel_grades.append([int(g) for g in judged.values()])
    return {
        "id": [r.id for r in benchmark.rows],
        "question": [r.question or "" for r in benchmark.rows],
        "rel_ids": rel_ids,
        "rel_grades": rel_grades,
    }


def embedder_keys(retriever: Any) -> list[str]:
    """The run's embedder pools a retriever uses (one per dense part)."""
    from lasagna.stages.embedding import embedder_key, embedder_threads

    return [embedder_key(d, embedder_threads(d)) for d in retriever.dense_parts()]


def prestart_embedders(retriever: Any, pools: Pools) -> None:
    from lasagna.stages.embedding import embedder_key, embedder_threads, start_embedder_servers

    for d in retriever.dense_parts():
        n = embedder_threads(d)
        pools.prestart(embedder_key(d, n), lambda d=d, n=n: start_embedder_servers(d, n))


def prepare_retriever(
    benchmark: Benchmark, retriever: Any, watch: Stopwatch, pools: Pools | None
) -> tuple[Any, Any]:
    """(the retriever's index path, its pooled embedders): with the run's `pools`, the
    embedders are loaded on first use (`embedder_load` times it, 0 when an earlier stage
    or trial loaded it); without, None (each search actor loads its own)."""
    from lasagna.stages.retrieval import embedder_pools, ensure_index

    embedders = None
    if pools is not None and retriever.dense_parts():
        before = len(pools.built)
        with watch.time("embedder_load"):
            embedders = embedder_pools(pools, retriever)
        if len(pools.built) == before:
            watch.timings["embedder_load"] = 0.0
    with watch.time("index"):
        index_path = ensure_index(benchmark, retriever, pools=pools)
    return index_path, embedders


def search_block_rows(n: int) -> int:
    return max(64, min(1024, -(-n // 8)))  # ~8 blocks so stages overlap and actors share


def score_stage() -> Stage:
    from lasagna.metrics.retrieval_names import DEFAULT_KS, metric_names
    from lasagna.stages.scoring import score_retrieval_batch
    from lasagna.stages.stage import Stage

    return Stage(
        "score",
        score_retrieval_batch,
        inputs=("id", "doc_ids", "scores", *JUDGMENT_COLUMNS),
        outputs=metric_names(DEFAULT_KS),
        fn_kwargs={"ks": DEFAULT_KS},
    )


def retrieval_metrics(table: pa.Table) -> dict[str, float]:
    """Means over the questions that have judgments (the others carry null metrics)."""
    from lasagna.metrics.retrieval import mean_metrics
    from lasagna.metrics.retrieval_names import DEFAULT_KS, metric_names

    names = [n for n in metric_names(DEFAULT_KS) if n in table.column_names]
    per_query = {}
    for i, qid in enumerate(table.column("id").to_pylist()):
        values = {n: table.column(n)[i].as_py() for n in names}
        if all(v is not None for v in values.values()):
            per_query[qid] = values
    return mean_metrics(per_query)


class RetrievalTrack(Track):
    name = "retrieval"
    systems_field = "retrievers"
    description = "rank a corpus for each question; nDCG, recall, MRR, ... (trec_eval)"
    columns = (
        ("id", "string", "input", "the question's id"),
        ("question", "string", "input", "the question"),
        ("metadata", "string", "input", "the question's metadata (JSON text; {} when none)"),
        ("doc_ids", "list<item: string>", "search", "retrieved documents, best first"),
        ("scores", "list<item: double>", "search", "their retrieval scores"),
    )
    exports = ("trec",)  # its rows are rankings: TREC run files (lasagna.results.export)
    run_timing = "search_and_score"
    internal_columns = JUDGMENT_COLUMNS
    summary_columns = (("queries", "counts.judged"),)

    def system_type(self) -> Any:
        from lasagna.systems import Retriever

        return Retriever

    def needs(self, kind: str | None) -> tuple[str, ...]:
        return ("judged",)

    def input_columns(
        self, benchmark: Benchmark, system: Any, prepared: Prepared
    ) -> dict[str, list]:
        return question_columns(benchmark)

    def block_rows(self, benchmark: Benchmark, system: Any) -> int:
        return search_block_rows(len(benchmark.rows))

    def pool_keys(self, system: Any, trial: Any = None, resources: Any = None) -> list[str]:
        return embedder_keys(system)

    def asks(self, system: Any, trial: Any = None, resources: Any = None, gpus: float = 0):
        from lasagna.stages.asks import retriever_asks
        from lasagna.stages.placement import light_ask

        return [*retriever_asks(system), light_ask()]

    def prestart(self, system: Any, pools: Pools) -> None:
        prestart_embedders(system, pools)

    def prepare(self, setup: TrialSetup) -> RetrievalPrepared:
        index_path, embedders = prepare_retriever(
            setup.benchmark, setup.system, setup.watch, setup.pools
        )
        return RetrievalPrepared(setup.call_cache, index_path, embedders)

    def stages(self, benchmark: Benchmark, system: Any, prepared: RetrievalPrepared) -> list[Stage]:
        from lasagna.stages.retrieval import search_stage

        stage = search_stage(system, prepared.index_path, embedders=prepared.embedders)
        return [stage, score_stage()]

    def aggregate(self, rows: pa.Table, benchmark: Benchmark, prepared: Prepared) -> Aggregate:
        judged = sum(1 for r in benchmark.rows if benchmark.qrels.get(r.id))
        counts = {"rows": len(benchmark.rows), "judged": judged}
        if judged < len(benchmark.rows):  # e.g. questions of a corpus file with no judgments
            counts["unjudged"] = len(benchmark.rows) - judged
        return Aggregate(retrieval_metrics(rows), counts)
