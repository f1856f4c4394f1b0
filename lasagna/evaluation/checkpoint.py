"""Finished trials survive a crash: each batch's trials and spans are checkpointed as it
returns, under `<output>/.evaluations/<evaluation id>/`, each part committed atomically.
`evaluate(..., resume=ID)` keeps the checkpointed trials of that unfinished evaluation
whose task ids are still in the data and runs only the rest; the checkpoint is removed once
the run folder is committed."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from lasagna.errors import Problem, UserError
from lasagna.results.fs import Store, json_default, temp_name

log = logging.getLogger("lasagna.evaluation")

FOLDER = ".evaluations"
PART = "part.json"


class Checkpoint:
    def __init__(self, output: str | os.PathLike[str], evaluation_id: str):
        self.store = Store(output)
        self.id = evaluation_id
        self.folder = self.store.path(FOLDER, evaluation_id)
        self._parts = len(self.store.listdir(self.folder))

    def save(self, trials: list[dict[str, Any]], spans: list[dict[str, Any]]) -> None:
        """One batch, as a part folder committed by rename (never half-written)."""
        name = f"part-{self._parts:06d}"
        self._parts += 1
        tmp = self.store.path(FOLDER, self.id, temp_name(name))
        try:
            self.store.makedirs(tmp)
            doc = {"trials": trials, "spans": spans}
            data = json.dumps(doc, default=json_default, allow_nan=True).encode()
            self.store.write_bytes(f"{tmp}/{PART}", data)
            self.store.commit_dir(tmp, f"{self.folder}/{name}", PART, replace=True)
        except OSError as err:  # the run goes on; only the crash safety is lost
            self.store.rmtree(tmp)
            log.warning("could not checkpoint a batch in %s: %s", self.folder, err)

    def load(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        trials: list[dict[str, Any]] = []
        spans: list[dict[str, Any]] = []
        for name in self.store.listdir(self.folder):
            path = f"{self.folder}/{name}/{PART}"
            if name.startswith(".") or not self.store.exists(path):
                continue
            try:
                doc = json.loads(self.store.read_bytes(path))
            except (OSError, ValueError) as err:
                log.warning("ignoring unreadable checkpoint part %s (%s)", path, err)
                continue
            trials += doc["trials"]
            spans += doc["spans"]
        return trials, spans

    def remove(self) -> None:
        self.store.rmtree(self.folder)


def resumed(
    output: str | os.PathLike[str], evaluation_id: str, wanted: set[tuple[str, int]]
) -> tuple[Checkpoint, dict[tuple[str, int], dict[str, Any]], list[dict[str, Any]]]:
    """The checkpoint of an unfinished evaluation: its finished trials that are still
    wanted (lost-worker errors run again), and their spans."""
    store = Store(output)
    if store.exists(store.path(evaluation_id, "manifest.json")):
        raise UserError(
            Problem(
                f"evaluation {evaluation_id} finished already; nothing to resume",
                file=store.path(evaluation_id),
                fix="run a new evaluation (leave resume= out)",
            )
        )
    ckpt = Checkpoint(output, evaluation_id)
    trials, spans = ckpt.load()
    if not trials:
        raise UserError(
            Problem(
                f"no unfinished evaluation {evaluation_id!r} here",
                file=store.path(FOLDER),
                fix="give the id evaluate() printed when it started, and the same output=",
            )
        )
    done = {}
    for t in trials:
        key = (t["task_id"], int(t["trial_index"]))
        if key in wanted and t["trace_id"] is not None:
            done.setdefault(key, t)
    traces = {t["trace_id"] for t in done.values()}
    return ckpt, done, [s for s in spans if s["trace_id"] in traces]
