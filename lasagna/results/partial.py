"""The rows of an unfinished trial, checkpointed as they arrive: `.trials/<key>/parts/`.

A track whose rows finish one batch at a time (the sdk track: an executor's rows on Ray
tasks) saves each batch here as it returns, so a crash of a long trial loses no finished
row; `--resume` / `resume=` then runs only the rows the parts lack. Each part is one JSON
file, written atomically (`Store.write_atomic`), holding the batch's records, the span
records of their traces and the id of the run that wrote it. The parts sit beside the
trial's checkpoint (lasagna.results.checkpoints) in the same store and are removed once
that checkpoint is committed; a run without resume clears them first.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from typing import Any

from lasagna.results.fs import Store, json_default
from lasagna.results.layout import CHECKPOINTS, Output
from lasagna.results.model import safe_name

log = logging.getLogger("lasagna.results")

PARTS = "parts"


class TrialParts:
    """The parts of one trial key under one output."""

    def __init__(self, output: Output, key: str, run_id: str = ""):
        self.store = Store(output)
        self.key = key
        self.run_id = run_id
        self.folder = self.store.path(CHECKPOINTS, safe_name(key), PARTS)
        self._n = 0

    def save(self, records: list[dict[str, Any]], spans: list[dict[str, Any]]) -> None:
        """One batch, committed in one atomic write; a failed write only loses crash
        safety (a warning), never the run."""
        self._n += 1
        name = f"part-{os.getpid()}-{self._n:06d}-{uuid.uuid4().hex[:6]}.json"
        doc = {"run_id": self.run_id, "key": self.key, "records": records, "spans": spans}
        try:
            data = json.dumps(doc, default=json_default, allow_nan=True).encode()
            self.store.makedirs(self.folder)
            self.store.write_atomic(f"{self.folder}/{name}", data)
        except OSError as err:
            log.warning("could not checkpoint a batch in %s: %s", self.folder, err)

    def load(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
        """(records, spans, ids of the runs that wrote them) of every readable part."""
        records: list[dict[str, Any]] = []
        spans: list[dict[str, Any]] = []
        runs: set[str] = set()
        for name in sorted(self.store.listdir(self.folder)):
            if name.startswith(".") or not name.endswith(".json"):
                continue
            path = f"{self.folder}/{name}"
            try:
                doc = json.loads(self.store.read_bytes(path))
            except (OSError, ValueError) as err:
                log.warning("ignoring unreadable checkpoint part %s (%s)", path, err)
                continue
            records += doc.get("records") or []
            spans += doc.get("spans") or []
            runs.add(str(doc.get("run_id") or ""))
        return records, spans, runs

    def remove(self) -> None:
        self.store.rmtree(self.folder)
        self.store.rmdir_if_empty(self.store.path(CHECKPOINTS, safe_name(self.key)))
