"""The retrieval track: rank the corpus for every question, score each ranking (trec_eval).

rows (id, question, judgments) -> Search (actor pool: index + query embedder)
     -> score (tasks: one metric column per metric) -> mean over judged questions
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lasagna.tracks.base import Aggregate, Track

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.data.model import Benchmark
    from lasagna.engine.pools import Pools
    from lasagna.engine.stage import Stage
    from lasagna.engine.stopwatch import Stopwatch

JUDGMENT_COLUMNS = ("rel_ids", "rel_grades")


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


def search_block_rows(n: int) -> int:
    return max(64, min(1024, -(-n // 8)))  # ~8 blocks so stages overlap and actors share


def score_stage() -> Stage:
    from lasagna.engine.scoring import score_retrieval_batch
    from lasagna.engine.stage import Stage
    from lasagna.metrics.retrieval_names import DEFAULT_KS, metric_names

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
    run_timing = "search_and_score"
    internal_columns = JUDGMENT_COLUMNS
    summary_columns = (("queries", "counts.judged"),)

    def needs(self, kind: str | None) -> tuple[str, ...]:
        return ("judged",)

    def input_columns(
        self, benchmark: Benchmark, system: Any, prepared: dict[str, Any]
    ) -> dict[str, list]:
        return question_columns(benchmark)

    def block_rows(self, benchmark: Benchmark, system: Any) -> int:
        return search_block_rows(len(benchmark.rows))

    def prepare(
        self,
        benchmark: Benchmark,
        system: Any,
        watch: Stopwatch,
        pools: Pools | None = None,
    ) -> dict[str, Any]:
        from lasagna.engine.retrieval import ensure_index

        with watch.time("index"):
            return {"index_path": ensure_index(benchmark, system)}

    def stages(self, benchmark: Benchmark, system: Any, prepared: dict[str, Any]) -> list[Stage]:
        from lasagna.engine.retrieval import search_stage

        return [search_stage(system, prepared["index_path"]), score_stage()]

    def aggregate(
        self, rows: pa.Table, benchmark: Benchmark, prepared: dict[str, Any]
    ) -> Aggregate:
        judged = sum(1 for r in benchmark.rows if benchmark.qrels.get(r.id))
        return Aggregate(retrieval_metrics(rows), {"rows": len(benchmark.rows), "judged": judged})
