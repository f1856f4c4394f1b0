"""The chat-model backends by name: what `ModelSpec.backend` selects.

One entry per backend (a factory that loads the model, and whether it runs on the cluster's
own CPUs/GPUs or calls a remote API). The backends import only `lasagna.models.base`; this
module imports them lazily, inside the factories, so there is no import cycle and a run
loads only the backend it uses. A new backend is one `register_backend` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lasagna.models.packaged import API_BACKENDS

if TYPE_CHECKING:
    from lasagna.models.base import ChatModel


@dataclass(frozen=True)
class Backend:
    name: str
    factory: Callable[[Any], ChatModel]  # ModelSpec -> a loaded model (call once per actor)
    local: bool  # True: runs on this cluster (takes GPUs); False: a remote API
    constrained: bool = False  # decodes with a reply's JSON schema (not just asks for it)


_BACKENDS: dict[str, Backend] = {}


def register_backend(
    name: str, factory: Callable[[Any], ChatModel], *, local: bool, constrained: bool = False
) -> None:
    _BACKENDS[name] = Backend(name, factory, local, constrained)


def backend(name: str) -> Backend:
    if name not in _BACKENDS:
        raise KeyError(f"unknown backend '{name}' (backends: {', '.join(sorted(_BACKENDS))})")
    return _BACKENDS[name]


def is_local(name: str) -> bool:
    """True for a backend that loads the model on this cluster (vLLM, transformers)."""
    return backend(name).local


def constrained_decoding(name: str) -> bool:
    """True for a backend whose replies follow their JSON schema (what a client of a remote
    server of it tells the judges)."""
    return backend(name).constrained


def create_chat_model(spec: Any) -> ChatModel:
    """Build the backend a ModelSpec names (loads the model: call once per actor)."""
    return backend(spec.backend).factory(spec)


def check_model(spec: Any, prepare: bool = True) -> None:
    """Raise UserError when the model cannot be used: an API backend without its key, a
    local model that does not resolve (missing path, uncached hub id). prepare=False: a
    packaged model is only looked up, not converted."""
    if is_local(spec.backend):
        from lasagna.models.packaged import (
            packaged_gguf_path,
            packaged_name,
            resolve_generator_model,
        )

        name = packaged_name(spec.model)
        if not prepare and name is not None:
            packaged_gguf_path(name)
        else:
            resolve_generator_model(spec)
    else:
        from lasagna.models.api_backend import api_key

        api_key(spec.backend)


def _vllm(spec: Any) -> ChatModel:
    from lasagna.models.vllm_backend import VllmChatModel

    return VllmChatModel(spec)


def _transformers(spec: Any) -> ChatModel:
    from lasagna.models.hf_backend import HfChatModel

    return HfChatModel(spec)


def _api(spec: Any) -> ChatModel:
    from lasagna.models.api_backend import create_api_model

    return create_api_model(spec)


register_backend("vllm", _vllm, local=True, constrained=True)
register_backend("transformers", _transformers, local=True)
for _name in API_BACKENDS:
    register_backend(_name, _api, local=False)
