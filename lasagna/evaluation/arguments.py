"""evaluate()'s plain arguments, checked together: a call with several wrong arguments is
refused once, with every problem, rather than one fix per run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lasagna.errors import Problem, UserError

RESOURCE_KEYS = ("num_cpus", "num_gpus")


def refused_together(checks: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each check's value by name; raises one UserError with the problems of every check that
    failed (its own title when only one did), so the user fixes them all in one go."""
    values: dict[str, Any] = {}
    errors: list[UserError] = []
    for name, check in checks.items():
        try:
            values[name] = check()
        except UserError as err:
            errors.append(err)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        problems = [p for err in errors for p in err.problems]
        title = f"evaluate() is refused ({len(problems)} problems); nothing ran"
        raise UserError(problems, title=title)
    return values


def positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(
            Problem(f"must be a positive integer, not {value!r}", field=name, fix=f"{name}=1")
        )
    return value


def seconds(value: Any, name: str, zero: bool) -> float | None:
    """A duration argument: seconds (> 0, or >= 0 where `zero`) or None."""
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if value is not None and (bad or value < 0 or (value == 0 and not zero)):
        said = f"must be seconds {'>=' if zero else '>'} 0 or None, not {value!r}"
        raise UserError(Problem(said, field=name, fix=f"{name}=120"))
    return value


def resources(value: Any) -> dict[str, float]:
    """evaluate()'s `resources=`: what each executor task or actor asks Ray for; every wrong
    key is named."""
    if value is None:
        return {}
    fix = "resources={'num_cpus': 1, 'num_gpus': 0}"
    if not isinstance(value, dict):
        raise UserError(Problem(f"must be a dict, not {value!r}", field="resources", fix=fix))
    problems = []
    for key, amount in value.items():
        if key not in RESOURCE_KEYS:
            known = ", ".join(RESOURCE_KEYS)
            problems.append(
                Problem(f"unknown key {key!r} (keys: {known})", field="resources", fix=fix)
            )
            continue
        ok = isinstance(amount, int | float) and not isinstance(amount, bool) and amount >= 0
        if not ok or (key == "num_gpus" and amount > 1 and amount != int(amount)):
            problems.append(
                Problem(
                    f"{key} must be a number >= 0 (a share below 1, or whole GPUs), not {amount!r}",
                    field=f"resources.{key}",
                    fix=fix,
                )
            )
    if problems:
        raise UserError(problems)
    return {k: float(v) for k, v in value.items()}


def group_name_of(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise UserError(Problem(f"must be a string, not {value!r}", field="group_name"))
    return value


def metadata_of(value: Any) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise UserError(Problem("must be a dict", field="metadata", fix="metadata={'k': 'v'}"))
    return value
