"""Checks that run before Ray starts or any model loads: every model a pending trial names
must resolve (local path exists, hub id cached when offline, API key set; each system says
what to check: `SystemConfig.checks`), and the output and cache folders must be writable."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna.common.folders import unwritable
from lasagna.errors import UserError
from lasagna.results.fs import Store, write_error

if TYPE_CHECKING:
    from lasagna.sweep.plan import Trial


def preflight(trials: Iterable[Trial], prepare: bool = True, resources: Any = None) -> None:
    """Raise one UserError listing every model that cannot be used, each named by its
    system (the CLI has checked them with their sweep lines already: this is for plans built
    in Python, and converts the packaged model when `prepare`). `resources`: the sweep's
    stage defaults, applied to each system as the run applies them.

    prepare=False (`benchmark plan`): a packaged model is only looked up, not converted.
    """
    problems = []
    seen: set[str] = set()
    for trial in trials:
        labelled = [(trial.system, f"{trial.track} system '{trial.system_name}'")]
        labelled += [(j, f"judge '{j.display_name()}'") for j in trial.judges]
        for system, label in labelled:  # judged generation's judges too
            if resources is not None:
                system = system.with_resources(resources)
            marker = repr(system)
            if marker in seen:
                continue
            seen.add(marker)
            for check in system.checks(prepare=prepare):
                try:
                    check()
                except UserError as err:
                    named = [dataclasses.replace(p, message=f"{label}: {p.message}")
                             for p in err.problems]  # fmt: skip
                    problems.extend(p for p in named if p not in problems)
    if problems:
        raise UserError(problems, title="these models cannot be used (nothing was run):")


def check_writable_output(output: str) -> None:
    """Refuse an output folder that cannot hold results (a file in the way, no permission)
    before Ray starts or a model loads, not after the first trial. Creates nothing (on an
    object store, a probe object that is removed at once)."""
    store = Store(output)
    if not store.local:
        store.check_writable()  # one small probe object, written and removed
        return
    path = Path(store.root).absolute()
    err = unwritable(path)
    if err is not None:
        raise write_error(err, store.display, f"results under {err.filename}")
