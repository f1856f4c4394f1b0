"""Refuse an evaluation before anything runs: executors and evaluators of the wrong shape."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.systems.executor import class_call, is_async  # noqa: F401 (re-exported)


def _binds(fn: Callable[..., Any], n: int) -> str | None:
    """None when `fn` accepts `n` positional arguments, else why not."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # builtins without a signature: let the call decide
    try:
        sig.bind(*range(n))
    except TypeError as err:
        return f"{getattr(fn, '__name__', fn)!s}{sig}: {err}"
    return None


def check_executor(executor: Any) -> None:
    """A function `(data)`, or a class whose instances are called `(data)` (built per actor)."""
    if inspect.isclass(executor):
        why = _binds(executor, 0)
        if why:
            raise UserError(
                Problem(
                    f"executor class {executor.__name__} cannot be built without arguments ({why})",
                    field="executor",
                    fix="give every __init__ parameter a default (each actor builds one "
                    "instance with no arguments)",
                )
            )
        if class_call(executor) is None:
            raise UserError(
                Problem(
                    f"executor class {executor.__name__} has no __call__(self, data)",
                    field="executor",
                    fix="define __call__(self, data) returning the output",
                )
            )
        why = _binds(class_call(executor), 2)  # self, data
    elif callable(executor):
        why = _binds(executor, 1)
    else:
        raise UserError(
            Problem(
                f"executor must be callable, not {type(executor).__name__}",
                field="executor",
                fix="pass a function def executor(data): ... (or async def)",
            )
        )
    if why:
        raise UserError(
            Problem(
                f"the executor must take one argument (the datapoint's data): {why}",
                field="executor",
                fix="define it as def executor(data): ...",
            )
        )


def check_evaluators(evaluators: Any) -> dict[str, Any]:
    """A dict name -> callable `(output, target)`; every problem listed at once."""
    if callable(evaluators) and not isinstance(evaluators, dict):
        name = getattr(evaluators, "__name__", "score")
        evaluators = {name: evaluators}
    if not isinstance(evaluators, dict):
        raise UserError(
            Problem(
                f"evaluators must be a dict name -> function, not {type(evaluators).__name__}",
                field="evaluators",
                fix='pass evaluators={"accuracy": accuracy}',
            )
        )
    problems = []
    for name, fn in evaluators.items():
        if not isinstance(name, str) or not name:
            problems.append(
                Problem(
                    f"evaluator name {name!r} is not a non-empty string",
                    field="evaluators",
                    fix="name it like 'accuracy'",
                )
            )
            continue
        if not callable(fn):
            problems.append(
                Problem(
                    f"is {type(fn).__name__}, not a function",
                    field=f"evaluators[{name!r}]",
                    fix="map the name to def fn(output, target): ...",
                )
            )
            continue
        why = _binds(fn, 2)
        if why:
            problems.append(
                Problem(
                    f"an evaluator takes (output, target): {why}",
                    field=f"evaluators[{name!r}]",
                    fix="define it as def fn(output, target): ... (target may go unused)",
                )
            )
    if problems:
        raise UserError(problems, title="the evaluators are refused; nothing ran")
    return dict(evaluators)


def check_picklable(executor: Any, evaluators: dict[str, Any], data: list[Any]) -> None:
    """Everything sent to Ray workers must pickle; say which part does not, and why."""
    from ray import cloudpickle

    parts: list[tuple[str, Any, str]] = [
        (
            "executor",
            executor,
            "build the client or model inside the function, or make the executor a class that "
            "builds it in __init__ (one per actor)",
        ),
        *(
            (
                f"evaluators[{name!r}]",
                fn,
                "build what it holds lazily inside the call (or in a Ray actor, as LLMJudge does)",
            )
            for name, fn in evaluators.items()
        ),
        ("data", data, "use plain values (str, numbers, lists, dicts) in data, target, metadata"),
    ]
    for field, value, fix in parts:
        try:
            cloudpickle.dumps(value)
        except Exception as err:
            raise UserError(
                Problem(
                    f"cannot be sent to Ray workers: {type(err).__name__}: {err} (a global it "
                    "uses, such as an API client, holds a lock, socket or file)",
                    field=field,
                    fix=fix,
                ),
                title="nothing ran",
            ) from err
