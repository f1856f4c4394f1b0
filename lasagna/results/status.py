"""The status file of a running sweep or evaluation, what `lasagna view` shows live:

    <output>/.status/<run id>.json

The driver replaces it atomically (`Store.write_atomic`: a reader sees the old file or the
new one) when a trial starts, finishes or fails, when a stage starts or ends, and at most
every `WRITE_EVERY_S` while a stage advances. It is small: counts, the current trial and its
stages, the durations of finished trials (for the rate and the time left), the last
failures, and the keys of the trials finished so far (their metrics are in their
checkpoints). The run folder stays the record; this file only says how far the run has got.
A status write that fails never stops a run (a warning says it once). Finished runs' files
older than `KEEP_FINISHED_S` are removed by the next run's start.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lasagna.common.clock import now_iso
from lasagna.results.fs import Store
from lasagna.results.layout import STATUS, Output, dumps

log = logging.getLogger("lasagna.results")

SCHEMA = 1
WRITE_EVERY_S = 0.5
FAILURES_KEPT = 20
KEEP_FINISHED_S = 24 * 3600


class RunStatus:
    """The status of one run, written by its driver (plain data: it travels into the
    driver processes of a long sweep, which go on writing the same file)."""

    def __init__(self, output: Output, run_id: str, kind: str, total: int, **facts: Any):
        self.output = str(output)
        self.run_id = run_id
        now = time.time()
        self.doc: dict[str, Any] = {
            "schema": SCHEMA,
            "run_id": run_id,
            "kind": kind,  # "sweep" or "evaluation"
            "state": "running",
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": now_iso(),
            "started_epoch": now,
            "updated_epoch": now,
            "total": total,
            "done": 0,  # trials finished by this run
            "restored": 0,  # trials restored by --resume (counted as done)
            "failed": 0,
            "failures": [],
            "seconds": [],  # wall seconds of each trial finished by this run
            "finished": [],  # keys of the trials finished by this run
            "current": None,
            "stages": [],
            "run": None,  # the run folder written, once finished
            **facts,
        }
        self._written = 0.0
        self._warned = False

    @property
    def path(self) -> str:
        return Store(self.output).path(STATUS, f"{self.run_id}.json")

    # ------------------------------------------------------------------ events
    def start(self) -> RunStatus:
        store = Store(self.output)
        try:
            store.makedirs(store.path(STATUS))
            _remove_old(store)
        except Exception:  # noqa: BLE001 - never a reason to fail the run
            pass
        self.write(force=True)
        return self

    def trial_started(self, index: int, **trial: Any) -> None:
        self.doc["current"] = {"index": index, "started_epoch": time.time(), **trial}
        self.doc["stages"] = []
        self.write(force=True)

    def trial_finished(self, key: str, seconds: float, n: int = 1) -> None:
        self.doc["done"] += n
        self.doc["seconds"].append(round(seconds, 3))
        self.doc["finished"].append(key)
        self.doc["current"] = None
        self.write(force=True)

    def trial_failed(self, key: str, system: str, reason: str, n: int = 1) -> None:
        self.doc["failed"] += n
        kept = self.doc["failures"][-(FAILURES_KEPT - 1) :]
        self.doc["failures"] = [*kept, {"key": key, "system": system, "reason": reason[:500]}]
        self.doc["current"] = None
        self.write(force=True)

    def advance(self, done: int, failed: int = 0, seconds: float | None = None) -> None:
        """Trials finished without keys of their own (an evaluation's batches)."""
        self.doc["done"] += done - failed
        self.doc["failed"] += failed
        if seconds is not None:
            self.doc["seconds"].append(round(seconds, 3))
        self.write(force=True)

    def stage(self, name: str, done: int, total: int, unit: str, seconds: float, ended: bool):
        """A stage of the current trial advanced (`lasagna.stages.progress` tells). Its start
        and end are always written: a start dropped by the throttle (it comes right after the
        trial's own write) would leave the panel without the stage until its first batch,
        minutes later for a slow model."""
        stages = [s for s in self.doc["stages"] if s["name"] != name]
        entry = {"name": name, "done": done, "total": total, "unit": unit}
        entry |= {"seconds": round(seconds, 3), "ended": ended}
        started = len(stages) == len(self.doc["stages"])
        self.doc["stages"] = [*stages, entry]
        self.write(force=ended or started)

    def finish(self, run: str | None, state: str = "finished", reason: str | None = None):
        self.doc |= {"state": state, "run": run, "current": None, "finished_at": now_iso()}
        if reason:
            self.doc["reason"] = reason[:500]
        self.write(force=True)

    @contextmanager
    def running(self) -> Iterator[RunStatus]:
        """Mark the run stopped if the body raises (^C: "interrupted"), once started."""
        try:
            yield self
        except KeyboardInterrupt:
            if self._written:
                self.finish(None, "interrupted", "interrupted (^C)")
            raise
        except BaseException as err:
            if self._written:
                self.finish(None, "failed", f"{type(err).__name__}: {err}")
            raise

    def reload(self) -> None:
        """Take back what a driver process wrote (it held a copy of this status), and write
        it as this process: the file named the driver process, gone now, and a view reads
        a gone writer as a stopped run until the next driver process writes."""
        try:
            doc = json.loads(Store(self.output).read_bytes(self.path))
        except (OSError, ValueError):
            return
        if isinstance(doc, dict) and doc.get("run_id") == self.run_id:
            self.doc = doc
            self.write(force=True)

    # ------------------------------------------------------------------ writing
    def write(self, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._written < WRITE_EVERY_S:
            return
        self._written = now
        self.doc["updated_epoch"] = now
        self.doc["pid"] = os.getpid()  # a driver process writes as itself
        try:
            Store(self.output).write_atomic(self.path, dumps(self.doc))
        except Exception as err:  # noqa: BLE001 - the run goes on without its status
            if not self._warned:
                log.warning("cannot write the run's status file %s: %s", self.path, err)
                self._warned = True


def _remove_old(store: Store) -> None:
    cutoff = time.time() - KEEP_FINISHED_S
    for doc in read_statuses(store):
        if doc.get("state") != "running" and float(doc.get("updated_epoch") or 0) < cutoff:
            store.remove(store.path(STATUS, f"{doc['run_id']}.json"))


def read_statuses(store: Store) -> list[dict[str, Any]]:
    """Every readable status file under the store's root, newest start first."""
    out = []
    for name in store.listdir(store.path(STATUS)):
        if name.startswith(".") or not name.endswith(".json"):
            continue  # a temporary sibling of a write under way
        try:
            doc = json.loads(store.read_bytes(store.path(STATUS, name)))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("schema") == SCHEMA and doc.get("run_id"):
            out.append(doc)
    out.sort(key=lambda d: float(d.get("started_epoch") or 0), reverse=True)
    return out


def unfinished_lines(output: Output) -> list[str]:
    """A line for each run under `output` that is running or was stopped before writing its
    run folder and not gone on with since, with what to do: `results list` would otherwise
    say "no runs" of an output whose interrupted run holds hours of checkpointed trials."""
    try:
        docs = read_statuses(Store(output))  # newest first
    except (OSError, ValueError):
        return []
    lines, later = [], set()  # later: the commands of the newer runs, --resume left out
    for doc in docs:
        state, command = doc.get("state"), str(doc.get("command") or "lasagna benchmark run ...")
        words = [w for w in command.split() if w != "--resume"]
        counts = f"{doc.get('done', 0)} of {doc.get('total', 0)} trial(s)"
        if state == "running":
            lines.append(
                f"running: {doc['run_id']} ({command}), {counts} done; watch it: lasagna view"
            )
        elif state in ("interrupted", "failed") and not doc.get("run"):
            if " ".join(words) not in later:
                lines.append(
                    f"{state}: {doc['run_id']} ({command}), {counts} checkpointed; "
                    f"to go on: {' '.join([*words, '--resume'])}"
                )
        later.add(" ".join(words))
    return lines
