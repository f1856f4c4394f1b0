"""Generator configs: a chat model (`ModelSpec`) answering from retrieved passages or alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from lasagna.models.registry import check_model
from lasagna.models.spec import ModelSpec
from lasagna.systems.base import ResourcesBase, SystemConfig, register_stage
from lasagna.systems.retrievers import BM25Retriever, Retriever

register_stage("generate", "generation model actors")

ABSTAIN_PHRASES = ("unanswerable", "i don't know", "cannot be answered")


class GeneratorConfig(SystemConfig):
    """What the generation stages ask of every generator."""

    track = "generation"
    kind: str
    prompt: str | None = None
    model: ModelSpec = ModelSpec()

    def describe(self) -> str:
        return f"{self.kind}:{self.model.model.removeprefix('packaged:')}"

    def template(self) -> str:
        """The prompt template it runs (the built-in one unless `prompt` is given)."""
        from lasagna.models.prompts import effective_template

        return effective_template(self.kind, self.prompt)  # type: ignore[arg-type]

    def model_identity(self) -> dict[str, Any] | None:
        from lasagna.models.identity import model_identity

        return model_identity(self.model, self.template())

    def with_resources(self, resources: ResourcesBase) -> GeneratorConfig:
        return self.model_copy(update={"model": self.model.with_resources(resources)})

    def repeats_differ(self) -> bool:
        """Only a sampled model draws anew per repeat (lasagna.models.draws)."""
        return self.model.temperature > 0

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        return [lambda: check_model(self.model, prepare=prepare)]

    def checks_at(self, prepare: bool = True) -> list[tuple[tuple[str, ...], Callable[[], None]]]:
        return [(("model",), lambda: check_model(self.model, prepare=prepare))]


class RagGenerator(GeneratorConfig):
    """Answer from the top-k passages of a retriever."""

    kind: Literal["rag"] = "rag"
    name: str | None = None
    retriever: Retriever = BM25Retriever()
    passages: int = Field(default=3, ge=1)  # top-k passages put in the prompt
    prompt: str | None = None  # a template with {question} and {context}; None = built-in
    abstain_phrases: tuple[str, ...] = ABSTAIN_PHRASES
    model: ModelSpec = ModelSpec()

    @field_validator("passages")
    @classmethod
    def _within_top_k(cls, passages: int, info: ValidationInfo) -> int:
        """More passages than the retriever returns would be a trial (and a key) that
        answers exactly as `passages: top_k` does."""
        top_k = getattr(info.data.get("retriever"), "top_k", None)
        if top_k is not None and passages > top_k:
            raise ValueError(
                f"passages ({passages}) is more than the retriever's top_k ({top_k}): only "
                f"{top_k} can be put in the prompt; use passages <= {top_k}, or raise top_k"
            )
        return passages

    def model_identity(self) -> dict[str, Any] | None:
        out = super().model_identity() or {}
        retriever = self.retriever.model_identity()
        return {**out, "retriever": retriever} if retriever is not None else out

    def with_resources(self, resources: ResourcesBase) -> RagGenerator:
        return self.model_copy(
            update={
                "model": self.model.with_resources(resources),
                "retriever": self.retriever.with_resources(resources),
            }
        )

    def dense_parts(self) -> list[Any]:
        return self.retriever.dense_parts()

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        return self.retriever.checks(prepare) + [lambda: check_model(self.model, prepare=prepare)]

    def checks_at(self, prepare: bool = True) -> list[tuple[tuple[str, ...], Callable[[], None]]]:
        own = [(("retriever",), c) for c in self.retriever.checks(prepare)]
        return own + [(("model",), lambda: check_model(self.model, prepare=prepare))]


class ClosedBookGenerator(GeneratorConfig):
    """Answer from the model alone."""

    kind: Literal["closed_book"] = "closed_book"
    name: str | None = None
    prompt: str | None = None  # a template with {question}; None = built-in
    abstain_phrases: tuple[str, ...] = ABSTAIN_PHRASES
    model: ModelSpec = ModelSpec()


Generator = Annotated[RagGenerator | ClosedBookGenerator, Field(discriminator="kind")]
