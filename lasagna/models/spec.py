"""What a model is and where it runs, as plain data: the input of every model backend.

`ModelSpec` (a chat model: which, how it samples, how it is served) and `StageResources` (the
Ray resources of one stage's actor pool) live here, in the models layer, so the backends read
them without importing the systems that hold them.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, model_validator

PACKAGED_GENERATOR = "packaged:SmolLM2-135M-Instruct"  # the keyless default generator
API_PREFIXES = ("openai", "anthropic")  # "openai:NAME" names an API model
_OPENAI_NAMES = re.compile(r"^(gpt-|chatgpt-|o\d(?:$|-))", re.IGNORECASE)
_ANTHROPIC_NAMES = re.compile(r"^claude-", re.IGNORECASE)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


DEFAULT_MAX_RESTARTS = 3  # a lost node or a crashed worker: restart its actors this often


class StageResources(Strict):
    """Ray resources of one stage's actor pool, and how often Ray restarts its actors."""

    # fractional by default: 2-CPU machines must not starve read tasks; never negative (Ray
    # refuses that only when the actor is made, inside a trial)
    num_cpus: float = Field(default=0.5, ge=0)
    num_gpus: float = Field(default=0.0, ge=0)
    actors: int = Field(default=1, ge=1)
    batch_size: int = Field(default=64, ge=1)
    # custom Ray resources each actor needs, e.g. {"big_memory": 1}: pins a pool to the
    # nodes that advertise them (`ray start --resources`)
    resources: dict[str, NonNegativeFloat] = Field(default_factory=dict)
    # Ray restarts an actor whose worker or node died up to this often (-1: without limit)
    # and retries the calls it was running; 0: a lost actor fails the trial at once
    max_restarts: int = Field(default=DEFAULT_MAX_RESTARTS, ge=-1)


class StageDefaults(Protocol):
    """A sweep's stage defaults (lasagna.systems.Resources): what `with_resources` applies."""

    def on(self, owner: BaseModel, field: str, stage: str) -> StageResources: ...


class ModelSpec(Strict):
    """A generation / judge model and how it runs."""

    # how the engine is placed, not what it answers: left out of trial keys (as resources)
    PLACEMENT_FIELDS: ClassVar[tuple[str, ...]] = (
        "gpu_memory_utilization",
        "request_timeout",
        "max_retries",
    )

    model: str = PACKAGED_GENERATOR  # packaged name, local path, HF id, or API model name
    backend: Literal["vllm", "transformers", "openai", "anthropic"] = "vllm"
    dtype: str = "auto"  # "auto" = bfloat16 on GPU and on CPUs with native bf16, else float32
    temperature: float = Field(default=0.0, ge=0)  # 0: greedy
    max_tokens: int = Field(default=64, ge=1)
    stop: tuple[str, ...] = ()
    seed: int = 0  # sampling seed (matters only when temperature > 0)
    max_model_len: int | None = 2048
    tensor_parallel_size: int = Field(default=1, ge=1)
    # vLLM on a GPU: the share of the GPU's memory the engine may take. None = auto: vLLM's
    # default for a whole GPU; for a fractional GPU (resources.num_gpus below 1) that share
    # of the default, so engines sharing a GPU all start (each must leave room for the rest).
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    # vLLM: skip graph compilation. None = auto: eager on CPU (compiling costs 80-150 s of
    # start and gave no speed there), compiled on GPU.
    enforce_eager: bool | None = None
    base_url: str | None = None  # OpenAI-compatible endpoint
    # API models: the seconds one request may take, and the retries of a rate-limited (429),
    # overloaded (5xx) or dropped request, with the client's backoff (Retry-After honoured)
    request_timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=8, ge=0)
    resources: StageResources = StageResources(batch_size=16)

    @model_validator(mode="before")
    @classmethod
    def _api_model_names(cls, data: Any) -> Any:
        """`model: gpt-4o-mini` (or `openai:NAME`, `claude-...`) with no backend is an API
        model, as `lasagna.model("gpt-4o-mini")` is: the backend is read from the name."""
        if not isinstance(data, dict) or not isinstance(data.get("model"), str):
            return data
        backend, name = model_backend(data["model"])
        if "backend" not in data and backend != "vllm":
            return {**data, "backend": backend, "model": name}
        if data.get("backend") == backend and name != data["model"]:  # backend: openai too
            return {**data, "model": name}
        return data

    def with_resources(self, resources: StageDefaults, stage: str = "generate") -> ModelSpec:
        return self.model_copy(update={"resources": resources.on(self, "resources", stage)})


def model_backend(name: str) -> tuple[str, str]:
    """(backend, model) for a model name: an `openai:`/`anthropic:` prefix, a known API
    family, or else a local model on vLLM."""
    for backend in API_PREFIXES:
        if name.startswith(f"{backend}:"):
            return backend, name.removeprefix(f"{backend}:")
    if _OPENAI_NAMES.match(name):
        return "openai", name
    if _ANTHROPIC_NAMES.match(name):
        return "anthropic", name
    return "vllm", name
