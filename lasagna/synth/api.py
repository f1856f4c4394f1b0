"""`synthesize()`: documents -> checked synthetic questions, the function the CLI wraps."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lasagna.cache import model_calls_location
from lasagna.errors import Problem, UserError
from lasagna.synth.generate import SynthesisResult, run_plan
from lasagna.synth.mix import DEFAULT_MIX
from lasagna.synth.model_choice import check_synthesis_model, choose_model, model_label
from lasagna.synth.plan import SynthPlan, build_plan

DEFAULT_N = 200
DEFAULT_SEED = 0


def plan_synthesis(
    folder: str | Path,
    n: int = DEFAULT_N,
    mix: str | Mapping[str, float] = DEFAULT_MIX,
    seed: int = DEFAULT_SEED,
) -> SynthPlan:
    """The plan alone (what --dry-run prints): reads the documents, loads no model."""
    return build_plan(folder, n, mix, seed)


def synthesize(
    folder: str | Path,
    n: int = DEFAULT_N,
    mix: str | Mapping[str, float] = DEFAULT_MIX,
    seed: int = DEFAULT_SEED,
    model: str | None = None,
    *,
    address: str | None = None,
    cache: bool | str = True,
) -> SynthesisResult:
    """Write up to `n` questions from the documents under `folder` and check each one.

    `model` (else $MODEL_NAME) picks the model: a local one runs keyless on vLLM in Ray
    actors, an API one needs its key. Returns the kept rows (a list of dicts in the JSONL
    format) with `.counts()`, `.dropped` and `.plan` saying what was asked and dropped.
    `cache`: the model-call cache (True: $LASAGNA_CACHE/model-calls, False: off, or a
    folder / URI), so asking again with the same documents and seed computes nothing twice.
    """
    from lasagna.cache.roots import check_writable_cache
    from lasagna.synth.runner import model_complete

    problems: list[Problem] = []  # every problem at once, before Ray or a model starts

    def checked(check: Callable[[], Any]) -> Any:
        try:
            return check()
        except UserError as err:
            problems.extend(err.problems)

    spec = checked(lambda: choose_model(model))
    if spec is not None:
        checked(lambda: check_synthesis_model(spec))
    checked(check_writable_cache)  # converted models and model calls are kept there
    plan = checked(lambda: build_plan(folder, n, mix, seed))
    if problems:
        raise UserError(problems)
    with model_complete(spec, address, model_calls_location(cache)) as complete:
        return run_plan(plan, complete, model_label(spec))
