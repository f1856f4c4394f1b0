"""`lasagna.model(...)`: the chat-model client an executor or an evaluator calls.

    llm = lasagna.model("packaged:SmolLM2-135M-Instruct", max_tokens=24)

    def capital_of_country(data: dict) -> str:
        return llm.chat(f"What is the capital of {data['country']}? One word.")

Inside `evaluate()` the client's calls go to the run's shared server of that model (one
load serves every worker; lasagna.stages.model_hub routes them); anywhere else to an engine
this process loads on its first call. Inside a trial every request is an LLM span under the
current span (the EXECUTOR, or an EVALUATOR), with the model and its tokens in and out. The
client pickles as its spec, so a module-level client travels to Ray workers.

A spec is a model name (`packaged:...`, a local folder, a Hugging Face id, `gpt-4o-mini`,
`openai:NAME`), a `ModelSpec`, or a dict of ModelSpec fields; keyword settings override it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.models.base import ChatModel, ChatRequest, Completion, Message
from lasagna.models.draws import current_draw, draw_seed
from lasagna.models.spec import ModelSpec, model_backend

Router = Callable[[ModelSpec], ChatModel]  # a spec -> the engine its calls go to

_ROUTER: list[Router | None] = [None]  # set by the SDK's stages while they run a batch
_LOCAL: dict[str, ChatModel] = {}  # engines this process loaded, by spec (sampling aside)
_LOCK = threading.Lock()
SAMPLING = ("temperature", "max_tokens", "stop", "seed")


class ModelCallError(RuntimeError):
    """The model gave no reply (the backend's reason); a trial records it as its error."""


def as_spec(spec: Any = None, **settings: Any) -> ModelSpec:
    """A ModelSpec from a name, a ModelSpec(-like) or a dict, with `settings` on top."""
    from pydantic import ValidationError

    if spec is None:
        fields: dict[str, Any] = {}
    elif isinstance(spec, str):
        backend, name = model_backend(spec.strip())
        fields = {"model": name, "backend": backend}
    elif isinstance(spec, dict):
        fields = dict(spec)
    elif hasattr(spec, "model_dump"):
        fields = spec.model_dump()
    else:
        raise UserError(
            Problem(
                f"a model is a name, a ModelSpec or a dict, not {type(spec).__name__}",
                field="model",
                fix='lasagna.model("packaged:SmolLM2-135M-Instruct")',
            )
        )
    try:
        return ModelSpec(**(fields | settings))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "model"
        raise UserError(
            Problem(
                first["msg"],
                field=where,
                fix="use the fields of lasagna.models.spec.ModelSpec (model, backend, "
                "max_tokens, temperature, ...)",
            )
        ) from None


def route_calls(router: Router | None) -> None:
    """Where this process's clients send their calls from now on (None: a local engine)."""
    _ROUTER[0] = router


def engine_of(spec: ModelSpec) -> ChatModel:
    """The engine a call of `spec` goes to: the router's, or one loaded in this process."""
    router = _ROUTER[0]
    if router is not None:
        return router(spec)
    key = spec.model_dump_json(exclude=set(SAMPLING))
    with _LOCK:
        if key not in _LOCAL:
            from lasagna.models.registry import create_chat_model

            _LOCAL[key] = create_chat_model(spec)
        return _LOCAL[key]


class ModelClient:
    """A chat model by spec: `chat()` for one reply's text, `generate()` for a batch (the
    `ChatModel` protocol: judges and stages can use it too). `calls`: the model-call cache
    in front of the engine (lasagna.models.call_cache; None: off), inside the tracing, so a
    reply from the cache is a span too."""

    def __init__(self, spec: ModelSpec, calls: Any = None):
        self.spec = spec
        self.calls = calls

    def __reduce__(self) -> tuple[Any, tuple[ModelSpec, Any]]:
        return ModelClient, (self.spec, self.calls)  # the spec travels; the engine is found there

    def __repr__(self) -> str:
        return f"lasagna.model({self.spec.model!r}, backend={self.spec.backend!r})"

    @property
    def constrained_decoding(self) -> bool:
        from lasagna.models.registry import constrained_decoding

        return constrained_decoding(self.spec.backend)

    def _sampled(self, request: ChatRequest) -> ChatRequest:
        """The request with this client's sampling where it sets none (an engine shared by
        clients of other sampling must not apply its own); the seed is that of the
        evaluate() row's draw (lasagna.models.draws)."""
        from dataclasses import replace

        spec = self.spec
        seed = draw_seed(spec.seed, current_draw()) if request.seed is None else request.seed
        return replace(
            request,
            temperature=spec.temperature if request.temperature is None else request.temperature,
            max_tokens=spec.max_tokens if request.max_tokens is None else request.max_tokens,
            stop=tuple(spec.stop) if request.stop is None else request.stop,
            seed=seed,
        )

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        """One Completion per request, in order (failures have `error`); traced in a trial."""
        from lasagna.models.call_cache import with_call_cache
        from lasagna.models.instrument import traced_generate

        other = [r for r in requests if not isinstance(r, ChatRequest)]
        if isinstance(requests, str) or other:
            got = "a str" if isinstance(requests, str) else f"a {type(other[0]).__name__} in it"
            raise TypeError(
                f"generate() takes a list of ChatRequest (a batch), not {got}; for one "
                f"prompt use chat(text), which returns the reply's text: "
                f"lasagna.model({self.spec.model!r}).chat('...')"
            )
        requests = [self._sampled(r) for r in requests]
        engine = with_call_cache(engine_of(self.spec), self.calls, self.spec)
        return traced_generate(engine, self.spec, requests)

    def chat(
        self,
        messages: str | Sequence[Message | dict[str, str]],
        *,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> str:
        """The reply's text to a user message (or a list of chat messages); ModelCallError
        when the model gives none."""
        if isinstance(messages, str):
            chat = [Message(role="user", content=messages)]
        else:
            chat = [Message(role=m["role"], content=m["content"]) for m in messages]
        if system is not None:
            chat.insert(0, Message(role="system", content=system))
        request = ChatRequest(
            chat,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=None if stop is None else tuple(stop),
            json_schema=json_schema,
        )
        (done,) = self.generate([request])
        if done.error:
            raise ModelCallError(f"{self.spec.model}: {done.error}")
        return done.text


_CHECKED: set[str] = set()  # specs this process has checked already


def check_usable(spec: ModelSpec) -> None:
    """Refuse, at once, a model that cannot be used here, as a sweep's preflight refuses it
    (a local folder that does not exist, a hub id missing from the cache offline, an API
    model without its key): the mistake is named where the model was named, not on the
    first call inside a trial. Each spec is checked once per process."""
    key = spec.model_dump_json(exclude=set(SAMPLING))
    if key not in _CHECKED:
        from lasagna.models.registry import check_model

        check_model(spec, prepare=False)  # a packaged model: looked up, not converted
        _CHECKED.add(key)


def model(spec: Any = None, **settings: Any) -> ModelClient:
    """A client of the chat model `spec` names (see the module's docstring); a model that
    cannot be used here is refused at once (`check_usable`)."""
    client = ModelClient(as_spec(spec, **settings))
    check_usable(client.spec)
    return client
