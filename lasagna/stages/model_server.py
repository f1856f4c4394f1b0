"""The one chat-model server: a Ray actor holding one chat model, and its clients.

Every pooled model call of a run goes through a `ModelServer`: the generation and judge
stages' actors (lasagna.stages.pools keys the pools by model spec), question synthesis
(lasagna.synth.runner), and in `evaluate()` the executors' `lasagna.model(...)` clients
and the LLM judges (through the run's hub, lasagna.stages.model_hub). A `RemoteModel` is
the `ChatModel` a caller holds: it forwards each batch to a server.

A server's callers are either a few stage actors that batch their rows already (a plain
actor: each call runs on its main thread, where vLLM's CPU engine runs fastest), or, when
`shared`, many small callers in many processes (a threaded actor): concurrent calls are
gathered for `BATCH_WINDOW_S` and sent to the engine as one batch.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

BATCH_WINDOW_S = 0.02  # how long a shared server's call waits for concurrent ones to batch with
MAX_CONCURRENT_CALLS = 256  # calls a shared server accepts at once (they batch)
MAX_REASON = 400  # characters of a failed load's reason


class ModelLoadError(RuntimeError):
    """A chat model that failed to load, with the backend's reason in one line (the
    backend's own exception may not survive the trip to the caller: vLLM's pydantic
    errors do not pickle)."""


def load_failure(spec: Any, err: Exception) -> Exception:
    """What a failed load raises to every caller: a UserError as it is (it names the fix),
    anything else as a ModelLoadError naming the model and the reason."""
    from lasagna.errors import UserError

    if isinstance(err, UserError):
        return err
    text = str(err).strip()
    errors = getattr(err, "errors", None)  # pydantic: the first error says it
    if callable(errors):
        try:
            text = str(errors()[0]["msg"])
        except Exception:  # noqa: BLE001 - not pydantic's after all: its text will do
            pass
    line = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if len(line) > MAX_REASON:
        line = line[: MAX_REASON - 3] + "..."
    reason = f"{type(err).__name__}: {line}" if line else type(err).__name__
    return ModelLoadError(f"model {spec.model!r} ({spec.backend}) failed to load: {reason}")


class ModelServer:
    """A Ray actor holding one chat model; `generate` answers a batch of requests.

    The model loads on the first `generate` (not when the actor starts), so a trial whose
    calls all come from the model-call cache never loads an engine; a `shared` server loads
    it when it starts, on the actor's main thread (its calls run on helper threads). A model
    that fails to load is not tried again: `ready` and every call raise that error (the
    actor stays, so Ray neither restarts it nor prints its creation's traceback).
    """

    def __init__(self, spec: Any, threads: int | None = None, shared: bool = False):
        from lasagna.stages.actors import start_actor

        start_actor(threads)
        self.spec = spec
        self.model: Any = None
        self.load_s = 0.0
        self.shared = shared
        self._queue: list[dict[str, Any]] = []
        self._queue_lock = threading.Lock()
        self._leader = threading.Lock()
        self.load_error: Exception | None = None
        if shared:
            try:
                self._load()
            except Exception:  # noqa: BLE001 - kept: ready() and every call raise it
                pass

    def _load(self) -> float:
        """Load the model if needed; the seconds this call spent loading it (0 if loaded)."""
        self._raise_load_error()
        if self.model is not None:
            return 0.0
        from lasagna.models.registry import create_chat_model

        t0 = time.perf_counter()
        try:
            self.model = create_chat_model(self.spec)
        except Exception as err:
            self.load_error = load_failure(self.spec, err)
            raise self.load_error from None
        self.load_s = time.perf_counter() - t0
        return self.load_s

    def ready(self) -> float:
        """The seconds the model took to load (0.0 while not loaded); returns at once, or
        raises the error its load failed with."""
        self._raise_load_error()
        return self.load_s

    def _raise_load_error(self) -> None:
        if self.load_error is not None:  # a fresh traceback each time, not a growing one
            raise self.load_error.with_traceback(None)

    def generate(self, requests: list) -> tuple[list, float]:
        """The completions, and the seconds this call waited for the model to load."""
        if not self.shared:
            waited = self._load()
            return self.model.generate(requests), waited
        self._raise_load_error()
        return self._batched(requests), 0.0

    def _batched(self, requests: list) -> list:
        """Answer `requests` in one engine call with every call that arrived meanwhile: the
        first caller to find no batch running leads it; the others wait for their share."""
        item: dict[str, Any] = {"requests": requests, "done": threading.Event()}
        with self._queue_lock:
            self._queue.append(item)
        while not item["done"].is_set():
            if self._leader.acquire(blocking=False):
                try:
                    time.sleep(BATCH_WINDOW_S)  # let concurrent callers join the batch
                    with self._queue_lock:
                        batch, self._queue = self._queue, []
                    if batch:
                        self._answer(batch)
                finally:
                    self._leader.release()
            else:
                item["done"].wait(0.05)
        if "crash" in item:
            raise item["crash"]
        return item["completions"]

    def _answer(self, batch: list[dict[str, Any]]) -> None:
        try:
            completions = self.model.generate([r for item in batch for r in item["requests"]])
        except Exception as exc:  # the engine itself failed: every caller hears it
            for item in batch:
                item["crash"] = exc
                item["done"].set()
            return
        at = 0
        for item in batch:
            n = len(item["requests"])
            item["completions"], at = completions[at : at + n], at + n
            item["done"].set()

    def close(self) -> None:
        close = getattr(self.model, "close", None)
        if close is not None:  # stop vLLM's worker processes before the actor goes
            close()


class RemoteModel:
    """A `ChatModel` that forwards to a pool's servers, round robin per batch.

    `load_s`: the seconds this client's calls waited for engines to load, in all (0 when
    they were loaded already, e.g. by an earlier trial).
    """

    def __init__(self, servers: list[Any], spec: Any = None):
        self.servers = servers
        self.spec = spec  # what it serves (LLM spans name the model)
        self.load_s = 0.0
        self._next = os.getpid()  # clients in different processes start on different servers

    @property
    def constrained_decoding(self) -> bool:
        """Whether the servers' backend decodes with a reply's schema (as the model there
        says: judges then close a cut reply rather than ask again)."""
        from lasagna.models.registry import constrained_decoding

        return self.spec is not None and constrained_decoding(self.spec.backend)

    def generate(self, requests: list) -> list:
        from lasagna.stages.actors import get_remote

        server = self.servers[self._next % len(self.servers)]
        self._next += 1
        completions, waited = get_remote(server.generate.remote(requests))
        self.load_s += waited
        return completions
