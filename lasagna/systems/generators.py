"""Generator configs: a chat model (`ModelSpec`) answering from retrieved passages or alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from lasagna.models.packaged import PACKAGED_GENERATOR
from lasagna.systems.base import Resources, StageResources, Strict, SystemConfig
from lasagna.systems.retrievers import BM25Retriever, Retriever

ABSTAIN_PHRASES = ("unanswerable", "i don't know", "cannot be answered")


class ModelSpec(Strict):
    """A generation / judge model and how it runs."""

    model: str = PACKAGED_GENERATOR  # packaged name, local path, HF id, or API model name
    backend: Literal["vllm", "transformers", "openai", "anthropic"] = "vllm"
    dtype: str = "auto"  # "auto" = bfloat16 on GPU and on CPUs with native bf16, else float32
    temperature: float = 0.0
    max_tokens: int = Field(default=64, ge=1)
    stop: tuple[str, ...] = ()
    seed: int = 0  # sampling seed (matters only when temperature > 0)
    max_model_len: int | None = 2048
    tensor_parallel_size: int = 1
    # vLLM: skip graph compilation. None = auto: eager on CPU (compiling costs 80-150 s of
    # start and gave no speed there), compiled on GPU.
    enforce_eager: bool | None = None
    base_url: str | None = None  # OpenAI-compatible endpoint
    resources: StageResources = StageResources(batch_size=16)

    def check(self, prepare: bool = True) -> None:
        """The model can be used here (local files resolve, or the API key is set)."""
        from lasagna.models.registry import check_model

        check_model(self, prepare=prepare)

    def with_resources(self, resources: Resources, stage: str = "generate") -> ModelSpec:
        return self.model_copy(update={"resources": resources.on(self, "resources", stage)})


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

    def with_resources(self, resources: Resources) -> GeneratorConfig:
        return self.model_copy(update={"model": self.model.with_resources(resources)})

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        return [lambda: self.model.check(prepare)]


class RagGenerator(GeneratorConfig):
    """Answer from the top-k passages of a retriever."""

    kind: Literal["rag"] = "rag"
    name: str | None = None
    retriever: Retriever = BM25Retriever()
    passages: int = Field(default=3, ge=1)  # top-k passages put in the prompt
    prompt: str | None = None  # a template with {question} and {context}; None = built-in
    abstain_phrases: tuple[str, ...] = ABSTAIN_PHRASES
    model: ModelSpec = ModelSpec()

    def model_identity(self) -> dict[str, Any] | None:
        out = super().model_identity() or {}
        retriever = self.retriever.model_identity()
        return {**out, "retriever": retriever} if retriever is not None else out

    def with_resources(self, resources: Resources) -> RagGenerator:
        return self.model_copy(
            update={
                "model": self.model.with_resources(resources),
                "retriever": self.retriever.with_resources(resources),
            }
        )

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        return self.retriever.checks(prepare) + [lambda: self.model.check(prepare)]


class ClosedBookGenerator(GeneratorConfig):
    """Answer from the model alone."""

    kind: Literal["closed_book"] = "closed_book"
    name: str | None = None
    prompt: str | None = None  # a template with {question}; None = built-in
    abstain_phrases: tuple[str, ...] = ABSTAIN_PHRASES
    model: ModelSpec = ModelSpec()


Generator = Annotated[RagGenerator | ClosedBookGenerator, Field(discriminator="kind")]
