"""The extractive track's system config and stages (imported when a sweep or trial needs
them, not when the plugin loads)."""

from __future__ import annotations

import re
from typing import Literal

import pyarrow as pa
from pydantic import Field

from lasagna.metrics.qa import compute_exact, compute_f1, get_tokens
from lasagna.models.spec import StageResources
from lasagna.stages.stage import Stage
from lasagna.systems.base import ResourcesBase, SystemConfig, register_stage

register_stage("extract", "extractive answer actors")  # a sweep's `resources.extract`
SENTENCE = re.compile(r"(?<=[.!?])\s+")


class Extractor(SystemConfig):
    """`{kind: overlap, max_words: 25}`: the best-overlapping sentence, at most max_words."""

    track = "extractive"
    kind: Literal["overlap"] = "overlap"
    name: str | None = None
    max_words: int = Field(default=25, ge=1, le=200)
    resources: StageResources = StageResources(num_cpus=0.2, actors=1, batch_size=64)

    def describe(self) -> str:
        return f"overlap:{self.max_words}"

    def with_resources(self, resources: ResourcesBase) -> Extractor:
        return self.model_copy(update={"resources": resources.on(self, "resources", "extract")})


class ExtractStage:
    """An actor: question + contexts -> the sentence sharing the most question words."""

    def __init__(self, max_words: int):
        self.max_words = max_words

    def answer(self, question: str, contexts: list[str]) -> str:
        asked = set(get_tokens(question))
        sentences = [s for c in contexts for s in SENTENCE.split(c) if s.strip()]
        best = max(sentences, key=lambda s: len(asked & set(get_tokens(s))), default="")
        return " ".join(best.split()[: self.max_words])

    def __call__(self, batch: pa.Table) -> pa.Table:
        questions = batch.column("question").to_pylist()
        contexts = batch.column("contexts").to_pylist()
        answers = [self.answer(q, c or []) for q, c in zip(questions, contexts, strict=True)]
        return batch.append_column("extract_answer", pa.array(answers, pa.string()))


def score_batch(batch: pa.Table) -> pa.Table:
    """SQuAD v2 EM / F1 of each extracted answer against the row's answers."""
    em, f1 = [], []
    for pred, golds in zip(
        batch.column("extract_answer").to_pylist(),
        batch.column("answers").to_pylist(),
        strict=True,
    ):
        golds = [g for g in golds or [] if get_tokens(g)] or [""]
        em.append(float(max(compute_exact(g, pred) for g in golds)))
        f1.append(max(compute_f1(g, pred) for g in golds))
    batch = batch.append_column("extract_em", pa.array(em, pa.float64()))
    return batch.append_column("extract_f1", pa.array(f1, pa.float64()))


def stages(system: Extractor) -> list[Stage]:
    return [
        Stage(
            "extract",
            ExtractStage,
            inputs=("question", "contexts"),
            outputs=("extract_answer",),
            constructor_kwargs={"max_words": system.max_words},
            resources=system.resources,
            resources_key="extract",
        ),
        Stage(
            "score",
            score_batch,
            inputs=("extract_answer", "answers"),
            outputs=("extract_em", "extract_f1"),
        ),
    ]
