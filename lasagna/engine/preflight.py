"""Checks that run before Ray starts or any model loads: every model a pending trial names
must resolve (local path exists, hub id cached when offline, API key set). Each system
says what to check (`SystemConfig.checks`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lasagna.errors import UserError

if TYPE_CHECKING:
    from lasagna.sweep.plan import Trial


def preflight(trials: Iterable[Trial], prepare: bool = True) -> None:
    """Raise one UserError listing every model that cannot be used.

    prepare=False (`benchmark plan`): a packaged model is only looked up, not converted.
    """
    problems = []
    seen: set[str] = set()
    for trial in trials:
        marker = repr(trial.system)
        if marker in seen:
            continue
        seen.add(marker)
        for check in trial.system.checks(prepare=prepare):
            try:
                check()
            except UserError as err:
                problems.extend(p for p in err.problems if p not in problems)
    if problems:
        raise UserError(problems, title="these models cannot be used (nothing was run):")
