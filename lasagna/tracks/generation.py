"""The generation track: answer every question (from retrieved passages, or closed book) and
score the answers with SQuAD v2 rules.

rows (id, question, answers) [-> Search -> attach passages] -> Generate (actor pool: one
chat model each) -> score (tasks: em, f1, abstained) -> EM/F1 overall, HasAns, NoAns
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna.tracks.base import Aggregate, Track, TrialSetup
from lasagna.tracks.retrieval import JUDGMENT_COLUMNS, RetrievalPrepared, question_columns

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.data.model import Benchmark
    from lasagna.stages.pools import Pools
    from lasagna.stages.stage import Stage
    from lasagna.systems import Resources

GENERATOR_KINDS = ("rag", "closed_book")


@dataclass
class GenerationPrepared(RetrievalPrepared):
    """A RAG generator's retriever (its index, embedders, the corpus texts in the object
    store), the run's pool of its chat engines, and the judges scoring its answers."""

    retriever: Any = None  # the RAG retriever, top_k = the passages it attaches
    texts_ref: Any = None  # ray.put of doc id -> text
    pool: Any = None  # lasagna.stages.pools.Pool of the generator's engines; None: own
    judges: tuple = ()  # JudgeSystems scoring the answers (judged generation), resources set
    judge_pools: list = field(default_factory=list)  # the run's engines of each judge
    phased: bool = False  # generate, release the generator's engine, then judge


def judge_pools(judges: tuple, pools: Pools | None) -> list:
    """The run's engines of each judge (None for a code judge)."""
    from lasagna.stages.pools import pooled_engine

    return [pooled_engine(j.model, pools) if j.uses_model else None for j in judges]


def _judge_and_score(system: Any, prepared: GenerationPrepared) -> list[Stage]:
    """The stages after generation: each judge of judged generation, then the scores."""
    stages: list[Stage] = []
    if prepared.judges:
        from lasagna.stages.judging import judged_generation_stages

        cache, engines = prepared.call_cache, prepared.judge_pools or None
        stages = judged_generation_stages(prepared.judges, call_cache=cache, pools=engines)
    return [*stages, score_stage(system.abstain_phrases)]


def judges_of(trial: Any, resources: Resources | None) -> tuple:
    """The judges scoring a trial's answers (the plan's judged generation), with the
    sweep's stage defaults applied."""
    judges = tuple(getattr(trial, "judges", ()) or ())
    return judges if resources is None else tuple(j.with_resources(resources) for j in judges)


def score_stage(abstain_phrases: tuple[str, ...]) -> Stage:
    from lasagna.results.schema import columns_of
    from lasagna.stages.scoring import score_generation_batch
    from lasagna.stages.stage import Stage

    return Stage(
        "score",
        score_generation_batch,
        inputs=("prediction", "answers", "unanswerable", "error"),
        outputs=columns_of("score"),
        fn_kwargs={"abstain_phrases": tuple(abstain_phrases)},
    )


class GenerationTrack(Track):
    name = "generation"
    systems_field = "generators"
    description = "answer each question (RAG or closed book); EM / F1 with SQuAD v2 rules"
    kinds = GENERATOR_KINDS
    kind_label = "generator kind"
    run_timing = "generate_and_score"
    internal_columns = JUDGMENT_COLUMNS
    judgeable = True
    engine_field = "model"
    run_totals = ("judge_invalid_outputs",)  # judged generation: replies that did not parse
    summary_columns = (
        ("rows", "counts.rows"),
        ("failed", "counts.failed"),
        ("tok/s", "metrics.tokens_per_s"),
    )
    columns = (
        ("answers", "list<item: string>", "input", "the reference answers"),
        ("unanswerable", "bool", "input", "the row has no answer"),
        ("passages", "list<item: string>", "attach", "the texts put in the prompt"),
        (
            "passage_recall",
            "double",
            "attach",
            "share of the question's relevant documents among the passages (null: no judgments)",
        ),
        ("passage_hit", "double", "attach", "1 when a passage is relevant (null: no judgments)"),
        ("prediction", "string", "generate", "the model's answer ('' when it failed)"),
        ("error", "string", "generate", "why generation failed (null when it did not)"),
        ("latency_s", "double", "generate", "seconds of the row's engine batch"),
        ("prompt_tokens", "int64", "generate", "prompt length in tokens"),
        ("completion_tokens", "int64", "generate", "answer length in tokens"),
        ("batch_rows", "int64", "generate", "rows answered in the same engine batch"),
        ("batch_started_at", "double", "generate", "when the batch started (epoch seconds)"),
        ("engine_load_s", "double", "generate", "seconds the engine took to load"),
        ("cached", "bool", "generate", "from the model-call cache (null: not cacheable / off)"),
        ("em", "double", "score", "exact match (SQuAD v2)"),
        ("f1", "double", "score", "token F1 (SQuAD v2)"),
        ("abstained", "bool", "score", "the answer abstained"),
    )

    def system_type(self) -> Any:
        from lasagna.systems import Generator

        return Generator

    def needs(self, kind: str | None) -> tuple[str, ...]:
        return ("answers", "contexts") if kind == "rag" else ("answers",)

    def need_message(self, need: str, kind: str | None) -> tuple[str, str | None] | None:
        from lasagna.data.model import CLOSED_BOOK_ONLY

        return CLOSED_BOOK_ONLY if need == "contexts" else None

    def input_columns(
        self, benchmark: Benchmark, system: Any, prepared: GenerationPrepared
    ) -> dict[str, list]:
        columns = question_columns(benchmark)
        columns["answers"] = [list(r.answers) for r in benchmark.rows]
        columns["unanswerable"] = [bool(r.unanswerable) for r in benchmark.rows]
        if prepared.judges:  # judged generation: the judges see the gold passages too
            columns["gold_contexts"] = [list(r.contexts) for r in benchmark.rows]
        return columns

    def block_rows(self, benchmark: Benchmark, system: Any) -> int:
        return max(8, system.model.resources.batch_size)

    def pool_keys(
        self, system: Any, trial: Any = None, resources: Resources | None = None
    ) -> list[str]:
        """The embedder, the chat engine, then the judges' engines (a judge on the
        generator's model shares its engines)."""
        from lasagna.stages.pools import engine_pool_keys
        from lasagna.tracks.retrieval import embedder_keys

        keys = embedder_keys(system.retriever) if system.kind == "rag" else []
        judges = [
            k
            for j in judges_of(trial, resources)
            if j.uses_model
            for k in engine_pool_keys(j.model)
        ]
        return [*keys, *super().pool_keys(system), *judges]

    def asks(
        self, system: Any, trial: Any = None, resources: Resources | None = None, gpus: float = 0
    ):
        """Retrieval and generation pools, then the judges' (judged generation): two phases
        the engine may run one after the other (lasagna.stages.placement)."""
        from lasagna.stages.asks import generation_asks

        return generation_asks(system, judges_of(trial, resources), gpus)

    def prestart(self, system: Any, pools: Pools) -> None:
        if system.kind == "rag":  # the embedder only: the chat engine waits for its turn
            from lasagna.tracks.retrieval import prestart_embedders

            prestart_embedders(system.retriever, pools)

    def prepare(self, setup: TrialSetup) -> GenerationPrepared:
        system, pools = setup.system, setup.pools
        prepared = GenerationPrepared(setup.call_cache)
        if system.kind == "rag":
            import ray

            from lasagna.tracks.retrieval import prepare_retriever

            retriever = system.retriever.model_copy(update={"top_k": system.passages})
            benchmark = setup.benchmark
            prepared.index_path, prepared.embedders = prepare_retriever(
                benchmark, retriever, setup.watch, pools
            )
            prepared.retriever = retriever
            prepared.texts_ref = ray.put({d.id: d.text for d in benchmark.corpus.values()})
        prepared.pool = self.pooled_engine(system, pools)  # loads on first call
        prepared.judges = judges_of(setup.trial, setup.resources)
        prepared.phased = setup.phased and bool(prepared.judges)
        if not prepared.phased:  # phased: the judges' engines start after generation
            prepared.judge_pools = judge_pools(prepared.judges, pools)
        return prepared

    def later_stages(self, setup: TrialSetup, prepared: GenerationPrepared) -> list[Stage]:
        """Judging, once every answer is generated: the generator's engine (and a RAG
        generator's embedders) are released first, so the judges' engines have their CPUs
        and GPUs."""
        from lasagna.stages.pools import engine_pool_keys
        from lasagna.tracks.retrieval import embedder_keys

        if not prepared.phased:
            return []
        system = setup.system
        if setup.pools is not None:
            embedders = embedder_keys(system.retriever) if system.kind == "rag" else []
            setup.pools.drop([*embedders, *engine_pool_keys(system.model)])
        prepared.pool = None
        prepared.judge_pools = judge_pools(prepared.judges, setup.pools)
        return _judge_and_score(system, prepared)

    def stages(
        self, benchmark: Benchmark, system: Any, prepared: GenerationPrepared
    ) -> list[Stage]:
        from lasagna.stages.generation import attach_stage, generate_stage
        from lasagna.stages.retrieval import search_stage

        stages = []
        if system.kind == "rag":
            stages += [
                search_stage(prepared.retriever, prepared.index_path, embedders=prepared.embedders),
                attach_stage(prepared.texts_ref, system.passages),
            ]
        cache = prepared.call_cache
        stages.append(generate_stage(system, pool=prepared.pool, call_cache=cache))
        if prepared.phased:  # the judges and the scores come in `later_stages`
            return stages
        return stages + _judge_and_score(system, prepared)

    def aggregate(
        self, rows: pa.Table, benchmark: Benchmark, prepared: GenerationPrepared
    ) -> Aggregate:
        from lasagna.tracks.generation_metrics import generation_metrics

        metrics, counts = generation_metrics(rows)
        extra: dict[str, Any] = {}
        if prepared.judges:
            from lasagna.stages.judging import judge_metrics, judge_prefix, judge_warnings

            counts["judge_invalid_outputs"] = 0
            extra["judge_warnings"] = []
            for judge in prepared.judges:
                prefix = judge_prefix(judge.benchmark, judge.params)
                judged, judge_counts = judge_metrics(rows, prefix)
                metrics.update(judged)
                counts["judge_invalid_outputs"] += judge_counts.pop("judge_invalid_outputs")
                counts.update(judge_counts)
                extra["judge_warnings"] += judge_warnings(rows, judge.benchmark, prefix)
        loads = [x for x in rows.column("engine_load_s").to_pylist() if x is not None]
        timings = {"engine_load": max(loads, default=0.0)}
        return Aggregate(metrics, {"rows": len(benchmark.rows), **counts}, timings, extra)
