"""Retriever configs: BM25, dense (an embedder + faiss) and their reciprocal-rank fusion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from lasagna.errors import KeyPath
from lasagna.models.embedders import PACKAGED_EMBEDDER
from lasagna.models.spec import StageResources
from lasagna.systems.base import (
    ResourcesBase,
    SystemConfig,
    left_out_at_default,
    register_stage,
)
from lasagna.systems.search_limits import check_faiss_gpu, check_gpu_index

register_stage("retrieve", "BM25 search actors")
register_stage("encode", "dense encoders (documents and questions)")
register_stage("search", "faiss search actors")

BM25_INDEX_FIELDS = ("kind", "k1", "b", "method", "stemmer", "stopwords")
EMBEDDING_FIELDS = ("model", "backend", "precision", "normalize", "max_seq_length")
NO_STEMMER = ("none", "null", "")  # BM25 `stemmer:` values meaning no stemming
DENSE_INDEX_FIELDS = ("kind", *EMBEDDING_FIELDS, "index", "nlist", "hnsw_m", "ef_construction")


class RetrieverConfig(SystemConfig):
    """What the retrieval stages ask of every retriever."""

    track = "retrieval"

    def parts(self) -> list[tuple[RetrieverConfig, KeyPath]]:
        """Each single retriever inside and where it sits: itself at (), or a hybrid's
        members at ("retrievers", i)."""
        return [(self, ())]

    def index_fields(self) -> dict[str, Any]:
        """The parts of the config that change the index it builds (the cache key)."""
        raise NotImplementedError

    def search_resources(self) -> StageResources:
        """The resources of its search stage's actor pool."""
        raise NotImplementedError

    def repeats_differ(self) -> bool:
        """BM25 and dense search rank the same on every repeat (nothing samples)."""
        return False

    def model_identity(self) -> dict[str, Any] | None:
        from lasagna.models.identity import embedder_identity

        dense = self.dense_parts()
        return {"embedders": [embedder_identity(d.model) for d in dense]} if dense else None

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        from lasagna.models.embedders import resolve_embedder
        from lasagna.models.precision import check_backend

        dense = self.dense_parts()
        on_gpu = [d for d in dense if d.search.num_gpus > 0]
        gpu_search = [lambda: check_faiss_gpu() for _ in on_gpu[:1]]
        gpu_search += [
            lambda d=d: check_gpu_index(d.index, d.vectors, d.top_k, d.nprobe) for d in on_gpu
        ]
        return (
            gpu_search
            + [lambda m=d.model: resolve_embedder(m) for d in dense]
            + [
                lambda d=d: check_backend(d.backend, d.precision, gpu=d.encode.num_gpus > 0)
                for d in dense
            ]
        )


class BM25Retriever(RetrieverConfig):
    """BM25 through bm25s. BEIR documents are indexed as title + text."""

    kind: Literal["bm25"] = "bm25"
    name: str | None = None  # display name; defaults to the kind
    k1: float = Field(default=1.5, ge=0)  # bm25s default (as in MTEB's bm25s baseline)
    b: float = Field(default=0.75, ge=0, le=1)
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    stemmer: str | None = "english"  # PyStemmer language, or none / null for none
    stopwords: str | None = "en"  # bm25s stopword list, or null for none
    top_k: int = Field(default=100, ge=1)
    retrieve: StageResources = StageResources(batch_size=256)  # the search actors

    @field_validator("stemmer")
    @classmethod
    def _known_stemmer(cls, value: str | None) -> str | None:
        """`none` (how tables label a BM25 without stemmer) means no stemming, like null; an
        unknown language is refused when the sweep is read, not when the index is built."""
        if value is None or value.strip().lower() in NO_STEMMER:
            return None
        import Stemmer

        try:
            Stemmer.Stemmer(value)
        except KeyError:
            raise ValueError(
                f"unknown stemmer language '{value}' (use one of "
                f"{', '.join(Stemmer.algorithms())}, or none for no stemming)"
            ) from None
        return value

    def index_fields(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in BM25_INDEX_FIELDS}

    def search_resources(self) -> StageResources:
        return self.retrieve

    def with_resources(self, resources: ResourcesBase) -> BM25Retriever:
        return self.model_copy(update={"retrieve": resources.on(self, "retrieve", "retrieve")})


class DenseRetriever(RetrieverConfig):
    """A sentence-transformers (or vLLM pooling) embedder with a faiss index."""

    kind: Literal["dense"] = "dense"
    name: str | None = None
    model: str = PACKAGED_EMBEDDER  # packaged name, a local path, or a model id
    # the transformer's runtime: torch, OpenVINO or ONNX Runtime (lasagna.models.runtimes);
    # auto: resolved when the config is validated (lasagna.models.precision), so keys and the
    # manifest hold what ran: the fastest setting measured on this hardware within the guard
    backend: Literal["auto", "torch", "onnx", "openvino"] = "auto"
    precision: Literal["auto", "fp32", "fp16", "bf16", "int8"] = "auto"
    index: Literal["flat", "ivf", "hnsw"] = "flat"  # flat = exact inner product
    # how the index stores the vectors: fp16 / bf16 halve it (lasagna.retrieval.dense)
    vectors: Literal["fp32", "fp16", "bf16"] = "fp32"
    # approximate indexes: None = chosen from the corpus size (lasagna.retrieval.ann)
    nlist: int | None = Field(default=None, ge=1)  # IVF lists: 4*sqrt(n), <= n/39
    nprobe: int | None = Field(default=None, ge=1)  # IVF lists searched: 2*sqrt(nlist), >= 16
    hnsw_m: int = Field(default=32, ge=2)  # HNSW links per node
    ef_construction: int | None = Field(default=None, ge=1)  # HNSW build: 80
    ef_search: int | None = Field(default=None, ge=1)  # HNSW query: 2*(top_k+16), >= 64
    normalize: bool | None = None  # None: follow the model's config (Normalize module)
    max_seq_length: int | None = None
    # text put before each question / document before encoding, as models trained with
    # instructions expect: e5 "query: " / "passage: ", bge's query instruction
    query_prefix: str = ""
    document_prefix: str = ""
    top_k: int = Field(default=100, ge=1)
    encode: StageResources = StageResources()
    search: StageResources = StageResources(batch_size=256)

    KEY_DEFAULTS: ClassVar[dict[str, Any]] = {
        "vectors": "fp32",
        "query_prefix": "",
        "document_prefix": "",
    }

    @model_validator(mode="before")
    @classmethod
    def _resolve_setting(cls, data: Any) -> Any:
        """`auto` backend / precision -> what this hardware runs (`resolve_setting`);
        `sentence-transformers` (the old name of the torch backend) -> torch."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("backend") == "sentence-transformers":
            data["backend"] = "torch"
        backend, precision = data.get("backend", "auto"), data.get("precision", "auto")
        if "auto" in (backend, precision):
            from lasagna.models.precision import resolve_setting

            encode = data.get("encode") or {}
            gpus = encode.get("num_gpus", 0) if isinstance(encode, dict) else encode.num_gpus
            data["backend"], data["precision"] = resolve_setting(backend, precision, gpu=gpus > 0)
        return data

    def describe(self) -> str:
        return f"dense:{self.model.removeprefix('packaged:')}"

    def dense_parts(self) -> list[DenseRetriever]:
        return [self]

    def embedding_fields(self) -> dict[str, Any]:
        """What the corpus vectors depend on: the model (its files' hash) and encoding."""
        from lasagna.models.identity import embedder_identity

        out = {f: getattr(self, f) for f in EMBEDDING_FIELDS}
        out["model"] = embedder_identity(self.model)
        if self.document_prefix:  # left out when empty: the keys made before it stay
            out["document_prefix"] = self.document_prefix
        return out

    def index_fields(self) -> dict[str, Any]:
        out = {f: getattr(self, f) for f in DENSE_INDEX_FIELDS}
        out.update(self.embedding_fields())
        later = ("vectors",)  # the prefixes: document_prefix is in embedding_fields, and
        # query_prefix changes what is searched for, not the index
        out.update({f: getattr(self, f) for f in later if not left_out_at_default(self, f)})
        return out

    def search_resources(self) -> StageResources:
        return self.search

    def with_resources(self, resources: ResourcesBase) -> DenseRetriever:
        return self.model_copy(
            update={
                "encode": resources.on(self, "encode", "encode"),
                "search": resources.on(self, "search", "search"),
            }
        )


# The members a hybrid fuses, chosen by `kind` so a typo reports one error, not one per member.
FusedRetriever = Annotated[BM25Retriever | DenseRetriever, Field(discriminator="kind")]


class HybridRetriever(RetrieverConfig):
    """Reciprocal rank fusion of two retrievers: score(d) = sum 1 / (rrf_k + rank)."""

    kind: Literal["hybrid"] = "hybrid"
    name: str | None = None
    retrievers: tuple[FusedRetriever, FusedRetriever]
    rrf_k: int = Field(default=60, ge=0)
    top_k: int = Field(default=100, ge=1)

    def describe(self) -> str:
        return "hybrid(" + "+".join(r.display_name() for r in self.retrievers) + ")"

    def dense_parts(self) -> list[DenseRetriever]:
        return [r for r in self.retrievers if isinstance(r, DenseRetriever)]

    def parts(self) -> list[tuple[RetrieverConfig, KeyPath]]:
        return [(r, ("retrievers", i)) for i, r in enumerate(self.retrievers)]

    def index_fields(self) -> dict[str, Any]:
        return {"kind": "hybrid", "parts": [r.index_fields() for r in self.retrievers]}

    def search_resources(self) -> StageResources:
        """Its dense part's `search`, else its first part's `retrieve`."""
        dense = self.dense_parts()
        return dense[0].search if dense else self.retrievers[0].search_resources()

    def with_resources(self, resources: ResourcesBase) -> HybridRetriever:
        parts = tuple(r.with_resources(resources) for r in self.retrievers)
        return self.model_copy(update={"retrievers": parts})


Retriever = Annotated[BM25Retriever | DenseRetriever | HybridRetriever, Field(discriminator="kind")]
AnyRetriever = BM25Retriever | DenseRetriever | HybridRetriever
