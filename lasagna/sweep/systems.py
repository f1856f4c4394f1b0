"""The systems a trial runs: retrievers, generators and their models, as strict configs.

One definition per concept, shared by the sweep schema, the profiles, the engine and the
trial key (a trial key hashes `model_dump(mode="json")` of these objects). Every model
forbids unknown keys so a typo is an error, not a silent default.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PACKAGED_EMBEDDER = "packaged:all-MiniLM-L6-v2"
PACKAGED_GENERATOR = "packaged:SmolLM2-135M-Instruct"


class StageResources(Strict):
    """Ray resources of one stage's actor pool."""

    num_cpus: float = 0.5  # fractional by default: 2-CPU machines must not starve read tasks
    num_gpus: float = 0.0
    actors: int = Field(default=1, ge=1)
    batch_size: int = Field(default=64, ge=1)


class BM25Retriever(Strict):
    """BM25 through bm25s. BEIR documents are indexed as title + text."""

    kind: Literal["bm25"] = "bm25"
    name: str | None = None  # display name; defaults to the kind
    k1: float = 1.5  # bm25s default (as in MTEB's bm25s baseline)
    b: float = 0.75
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    stemmer: str | None = "english"  # PyStemmer language, or null for none
    stopwords: str | None = "en"  # bm25s stopword list, or null for none
    top_k: int = Field(default=100, ge=1)
    retrieve: StageResources = StageResources(batch_size=256)  # the search actors


class DenseRetriever(Strict):
    """A sentence-transformers (or vLLM pooling) embedder with a faiss index."""

    kind: Literal["dense"] = "dense"
    name: str | None = None
    model: str = PACKAGED_EMBEDDER  # packaged name, a local path, or a model id
    backend: Literal["sentence-transformers", "vllm"] = "sentence-transformers"
    index: Literal["flat", "ivf", "hnsw"] = "flat"  # flat = exact inner product
    nlist: int | None = None  # IVF lists (default: ~4*sqrt(n))
    nprobe: int = 16
    hnsw_m: int = 32
    normalize: bool | None = None  # None: follow the model's config (Normalize module)
    max_seq_length: int | None = None
    top_k: int = Field(default=100, ge=1)
    encode: StageResources = StageResources()
    search: StageResources = StageResources(batch_size=256)


# The members a hybrid fuses, chosen by `kind` so a typo reports one error, not one per member.
FusedRetriever = Annotated[BM25Retriever | DenseRetriever, Field(discriminator="kind")]


class HybridRetriever(Strict):
    """Reciprocal rank fusion of two retrievers: score(d) = sum 1 / (rrf_k + rank)."""

    kind: Literal["hybrid"] = "hybrid"
    name: str | None = None
    retrievers: tuple[FusedRetriever, FusedRetriever]
    rrf_k: int = 60
    top_k: int = Field(default=100, ge=1)


Retriever = Annotated[BM25Retriever | DenseRetriever | HybridRetriever, Field(discriminator="kind")]


class ModelSpec(Strict):
    """A generation / judge model and how it runs."""

    model: str = PACKAGED_GENERATOR  # packaged name, local path, HF id, or API model name
    backend: Literal["vllm", "transformers", "openai", "anthropic"] = "vllm"
    dtype: str = "auto"  # "auto" = float32 on CPU, bfloat16 on GPU
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


class RagGenerator(Strict):
    """Answer from the top-k passages of a retriever."""

    kind: Literal["rag"] = "rag"
    name: str | None = None
    retriever: Retriever = BM25Retriever()
    passages: int = Field(default=3, ge=1)  # top-k passages put in the prompt
    prompt: str | None = None  # a template with {question} and {context}; None = built-in
    abstain_phrases: tuple[str, ...] = ("unanswerable", "i don't know", "cannot be answered")
    model: ModelSpec = ModelSpec()


class ClosedBookGenerator(Strict):
    """Answer from the model alone."""

    kind: Literal["closed_book"] = "closed_book"
    name: str | None = None
    prompt: str | None = None  # a template with {question}; None = built-in
    abstain_phrases: tuple[str, ...] = ("unanswerable", "i don't know", "cannot be answered")
    model: ModelSpec = ModelSpec()


Generator = Annotated[RagGenerator | ClosedBookGenerator, Field(discriminator="kind")]


def display_name(system: BaseModel) -> str:
    """The name shown in tables: the configured name, else a short description."""
    name = getattr(system, "name", None)
    if name:
        return name
    kind = getattr(system, "kind", type(system).__name__)
    if isinstance(system, DenseRetriever):
        return f"dense:{system.model.removeprefix('packaged:')}"
    if isinstance(system, HybridRetriever):
        return "hybrid(" + "+".join(display_name(r) for r in system.retrievers) + ")"
    if isinstance(system, RagGenerator | ClosedBookGenerator):
        return f"{kind}:{system.model.model.removeprefix('packaged:')}"
    if isinstance(system, JudgeSystem):
        return f"{system.benchmark}:{system.model.model.removeprefix('packaged:')}"
    return str(kind)


JUDGE_MODEL = ModelSpec(max_tokens=256, max_model_len=4096, resources=StageResources(batch_size=16))


class JudgeSystem(Strict):
    """A judge benchmark run by a judge model: `{benchmark: faithfulness, model: {...},
    parameters: {threshold: 0.7}}` (the spec's JobSpec parameters)."""

    kind: Literal["judge"] = "judge"
    name: str | None = None
    benchmark: str  # a judge benchmark id (see lasagna.judges.registry)
    model: ModelSpec = JUDGE_MODEL
    parameters: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @field_validator("benchmark")
    @classmethod
    def _known_benchmark(cls, value: str) -> str:
        from lasagna.judges.registry import get_benchmark

        try:
            return get_benchmark(value).ID
        except KeyError as err:
            raise ValueError(err.args[0]) from None

    @field_validator("parameters")
    @classmethod
    def _known_parameters(cls, value: dict) -> dict:
        from lasagna.judges.params import parse_params

        _, problems = parse_params(value)
        if problems:
            raise ValueError("; ".join(f"{p.message} ({p.fix})" for p in problems))
        return value

    @property
    def params(self):
        from lasagna.judges.params import parse_params

        return parse_params(self.parameters)[0]
