"""The extractive track: answer each question with the sentence of its contexts that shares
the most words with it (no model), and score the answers with SQuAD v2's EM and F1.

rows (id, question, answers, contexts) -> Extract (actor pool, `resources.extract`)
    -> score (tasks: extract_em, extract_f1) -> their means

The sweep key `extractors:` lists its systems (lasagna_example_plugin.extractor.Extractor);
the track's metrics are in the metric catalog below, so leaderboards, compare, SQL and the
report know them without importing the track.
"""

from __future__ import annotations

from typing import Any

from lasagna.metrics import catalog
from lasagna.tracks import Aggregate, Prepared, Track

catalog.register(
    "extract_f1",
    "extractive",
    "token F1 of the extracted answer (SQuAD v2)",
    level="main",
    primary=True,
)
catalog.register("extract_em", "extractive", "exact match of the extracted answer", level="main")


class ExtractiveTrack(Track):
    name = "extractive"
    systems_field = "extractors"
    description = "answer with the context sentence closest to the question; EM / F1"
    run_timing = "extract_and_score"
    columns = (
        ("contexts", "list<item: string>", "input", "the passages the answer is taken from"),
        ("extract_answer", "string", "extract", "the extracted sentence, cut to max_words"),
        ("extract_em", "double", "score", "exact match (SQuAD v2)"),
        ("extract_f1", "double", "score", "token F1 (SQuAD v2)"),
    )

    def system_type(self) -> Any:
        from lasagna_example_plugin.extractor import Extractor

        return Extractor

    def needs(self, kind: str | None) -> tuple[str, ...]:
        return ("answers", "contexts")

    def asks(self, system: Any, trial: Any = None, resources: Any = None, gpus: float = 0):
        """Its Extract actors and the light tasks: checked against the cluster before Ray
        starts, so a sweep asking for more than there is is refused, not left waiting."""
        from lasagna.stages.asks import actor_asks

        return actor_asks("extract actors", "extract", system.resources)

    def input_columns(self, benchmark: Any, system: Any, prepared: Prepared) -> dict[str, list]:
        rows = benchmark.rows
        return {
            "id": [r.id for r in rows],
            "question": [r.question or "" for r in rows],
            "answers": [list(r.answers) for r in rows],
            "contexts": [list(r.contexts) for r in rows],
        }

    def stages(self, benchmark: Any, system: Any, prepared: Prepared) -> list:
        from lasagna_example_plugin.extractor import stages

        return stages(system)

    def aggregate(self, rows: Any, benchmark: Any, prepared: Prepared) -> Aggregate:
        metrics = {}
        for name in ("extract_em", "extract_f1"):
            values = [v for v in rows.column(name).to_pylist() if v is not None]
            if values:
                metrics[name] = sum(values) / len(values)
        return Aggregate(metrics, {"rows": rows.num_rows})
