"""Profiles: partial sweeps (configs/profiles/<name>.yaml) a sweep or a single file starts from.

A profile's keys are defaults; every top-level key the sweep writes replaces the
profile's value for that key (a sweep's `retrievers:` replaces the profile's list).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lasagna.errors import Problem, UserError, dotted
from lasagna.sweep.profile_files import (  # noqa: F401  (list_profiles: lasagna.sweep's)
    list_profiles,
    profile_files,
    unknown_profile,
)
from lasagna.sweep.schema import Profile, Sweep
from lasagna.sweep.validate import issues_from, validate_document
from lasagna.sweep.yamlsrc import read_yaml


def load_profile(name: str) -> dict[str, Any]:
    """A profile's keys as written (validated); UserError listing the profiles if unknown."""
    problem = unknown_profile(name)
    if problem is not None:
        raise UserError(problem)
    path = profile_files()[name]
    data, lines = read_yaml(path)
    validate_document(Profile, data, str(path), lines)
    return dict(data or {})


def resolve(sweep: Sweep) -> Sweep:
    """Apply the sweep's profile: profile keys are defaults, the sweep's own keys win."""
    if sweep.profile is None:
        return sweep
    merged: dict[str, Any] = load_profile(sweep.profile)
    for key in sweep.model_fields_set:
        merged[key] = getattr(sweep, key)
    merged["profile"] = sweep.profile
    merged.setdefault("benchmarks", sweep.benchmarks)
    try:
        resolved = Sweep.model_validate(merged)
    except ValidationError as err:  # a profile key the sweep's other keys make invalid
        raise _user_error(err, merged, f"profile '{sweep.profile}' applied") from err
    resolved._source = sweep.source  # its lines are still the sweep file's
    return resolved


def sweep_for_path(
    path: str | Path,
    profile: str | None = "speed",
    *,
    split: str | None = None,
    n_samples: int | None = None,
    output: str | None = None,
    name: str | None = None,
    filters: dict[str, Any] | None = None,
    seed: int | None = None,
    trials: int | None = None,
    corpus: str | None = None,
) -> tuple[Sweep, Path]:
    """The sweep of `lasagna benchmark run DATA --profile P`: one benchmark, one profile.

    Returns the sweep and its base folder (the current directory), like `load_sweep`, so
    the single-file command goes through the same plan, keys and resume as a sweep file.
    """
    entry: dict[str, Any] = {"path": str(Path(path).expanduser().resolve())}
    for key, val in (
        ("name", name),
        ("split", split),
        ("n_samples", n_samples),
        ("filters", filters),
        ("corpus", str(Path(corpus).expanduser().resolve()) if corpus else None),
    ):
        if val is not None:
            entry[key] = val
    data: dict[str, Any] = {"benchmarks": [entry]}
    for key, val in (("profile", profile), ("output", output), ("seed", seed), ("trials", trials)):
        if val is not None:
            data[key] = val
    try:
        sweep = Sweep.model_validate(data)
    except ValidationError as err:
        raise _user_error(err, data, "command-line options") from err
    return sweep, Path.cwd()


def _user_error(err: ValidationError, data: Any, title: str) -> UserError:
    issues = issues_from(err, Sweep, data)
    return UserError(
        [Problem(i.message, field=dotted(i.path) or None, fix=i.fix) for i in issues],
        title=f"{title}: {len(issues)} problem(s)",
    )
