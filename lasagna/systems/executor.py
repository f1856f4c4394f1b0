"""The system an `evaluate()` call compares: its executor and evaluators, and their identity.

An executor's identity is its qualified name and the sha256 of its source (a class: the
class's source), so an edited executor is a different system and `resume=` never restores
rows it did not compute; an evaluator's is the same, or, for an object that says its own
(`identity()`, as an LLM judge does: its benchmark, model and prompt hashes), that. The
trial key of an evaluation hashes these with the data's revision (lasagna.evaluation.plan).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from lasagna.common.digest import json_sha256, text_sha256


def class_call(cls: type) -> Any:
    """The `__call__` a class defines for its instances (None when it defines none)."""
    for klass in cls.__mro__[:-1]:  # not object
        if "__call__" in vars(klass):
            return vars(klass)["__call__"]
    return None


def is_async(fn: Any) -> bool:
    """An `async def` function, or a class / instance whose `__call__` is one."""
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return inspect.iscoroutinefunction(fn)
    call = class_call(fn if inspect.isclass(fn) else type(fn))
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def qualified_name(obj: Any) -> str:
    """`module.qualname` of a function or class (of an instance: of its class)."""
    target = obj if inspect.isfunction(obj) or inspect.isclass(obj) else type(obj)
    if inspect.ismethod(obj):
        target = obj.__func__
    module = getattr(target, "__module__", None) or "?"
    return f"{module}.{getattr(target, '__qualname__', type(target).__name__)}"


def source_sha256(obj: Any) -> str:
    """The sha256 of the source of a function or class (of an instance: of its class);
    without source (a builtin, a REPL lambda): of its compiled code, or of its name."""
    target = obj if inspect.isfunction(obj) or inspect.isclass(obj) else type(obj)
    if inspect.ismethod(obj):
        target = obj.__func__
    try:
        return text_sha256(inspect.getsource(target))
    except (OSError, TypeError):
        code = getattr(target, "__code__", None)
        if code is not None:
            return text_sha256(repr((code.co_code, code.co_consts, code.co_names)))
        return text_sha256(qualified_name(obj))


def callable_identity(obj: Any) -> dict[str, Any]:
    """What identifies an executor or evaluator: its own `identity()` when it has one, else
    its qualified name and source hash."""
    own = getattr(obj, "identity", None)
    if callable(own) and not inspect.isclass(obj):
        try:
            return {"name": qualified_name(obj), **dict(own())}
        except Exception:  # noqa: BLE001 - an identity that fails falls back to the source
            pass
    return {"name": qualified_name(obj), "source_sha256": source_sha256(obj)}


@dataclass
class ExecutorSystem:
    """The sdk track's system: one executor, its evaluators, and how its rows are spread
    on Ray (`concurrency` rows in flight, `actors` for a callable class, `resources` per
    task or actor). `evaluation_id` is the run's id, for the spans (not in the key)."""

    executor: Any
    evaluators: dict[str, Any]
    concurrency: int = 16
    actors: int = 1
    resources: dict[str, float] = field(default_factory=dict)
    evaluation_id: str = ""
    quiet: bool = False
    kind: str = "executor"
    timeout: float | None = None  # seconds an executor call may take (not in the key)

    @property
    def name(self) -> str:
        return getattr(self.executor, "__qualname__", None) or type(self.executor).__name__

    def identity(self) -> dict[str, Any]:
        """The executor's and evaluators' identities (what the trial key hashes)."""
        return {
            "kind": self.kind,
            "executor": callable_identity(self.executor),
            "evaluators": {k: callable_identity(v) for k, v in self.evaluators.items()},
        }

    def config(self) -> dict[str, Any]:
        """The trial's config as results show it: identity plus placement."""
        limit = {} if self.timeout is None else {"timeout": self.timeout}  # older runs: none
        return self.identity() | {
            "concurrency": self.concurrency,
            "actors": self.actors,
            "resources": dict(self.resources),
            **limit,
        }

    def key_hash(self) -> str:
        return json_sha256(self.identity())

    def with_resources(self, resources: Any) -> ExecutorSystem:
        return self  # its placement is its own (evaluate()'s arguments)

    def checks(self, prepare: bool = True) -> list[Any]:
        return []  # evaluate() checked its callables before planning
