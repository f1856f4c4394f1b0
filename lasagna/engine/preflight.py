"""Checks that run before Ray starts or any model loads: every model a pending trial names
must resolve (local path exists, hub id cached when offline, API key set)."""

from __future__ import annotations

from collections.abc import Iterable

from lasagna.errors import UserError
from lasagna.sweep.plan import Trial
from lasagna.sweep.systems import ClosedBookGenerator, JudgeSystem, RagGenerator


def preflight(trials: Iterable[Trial], prepare: bool = True) -> None:
    """Raise one UserError listing every model that cannot be used.

    prepare=False (`benchmark plan`): a packaged model is only looked up, not converted.
    """
    from lasagna.models.api_backend import api_key
    from lasagna.models.packaged import (
        API_BACKENDS,
        packaged_gguf_path,
        packaged_name,
        resolve_generator_model,
    )
    from lasagna.retrieval.local import check_models

    problems = []
    seen: set[str] = set()
    for trial in trials:
        system = trial.system
        checks = []
        if isinstance(system, RagGenerator | ClosedBookGenerator | JudgeSystem):
            if isinstance(system, RagGenerator):
                checks.append(lambda s=system: check_models(s.retriever))
            spec = system.model
            if spec.backend in API_BACKENDS:
                checks.append(lambda b=spec.backend: api_key(b))
            elif not prepare and packaged_name(spec.model) is not None:
                checks.append(lambda s=spec: packaged_gguf_path(packaged_name(s.model)))
            else:
                checks.append(lambda s=spec: resolve_generator_model(s))
        else:
            checks.append(lambda s=system: check_models(s))
        marker = repr(system)
        if marker in seen:
            continue
        seen.add(marker)
        for check in checks:
            try:
                check()
            except UserError as err:
                problems.extend(p for p in err.problems if p not in problems)
    if problems:
        raise UserError(problems, title="these models cannot be used (nothing was run):")
