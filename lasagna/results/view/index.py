"""What a results root holds, as `lasagna view` sees it: its runs (read once: a committed
run is never changed), the folders that look like runs but cannot be read, and a cache of
what the pages make from them.

The root is listed again at most once per `refresh_s`, however many browsers ask, so an
object store is not listed on every request. A run's manifest is read when its folder is
first seen; afterwards only new folders cost a read. Nothing here writes.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lasagna.errors import UserError
from lasagna.results.fs import Store
from lasagna.results.layout import MANIFEST, Output
from lasagna.results.runs import Run, load_run

CACHE_ENTRIES = 64  # pages' data kept (keyed by what they were made of)


@dataclass(frozen=True)
class Broken:
    """A folder with a manifest that cannot be read as a run."""

    name: str
    location: str
    error: str


class NotFound(LookupError):
    """No run (or group, trace, question) by that name: the message says what there is."""


class RootIndex:
    def __init__(self, output: Output, refresh_s: float = 1.0):
        self.store = Store(output)
        self.output = output
        self.refresh_s = refresh_s
        self._runs: dict[str, Run] = {}  # folder name -> run
        self._broken: dict[str, Broken] = {}
        self._listed = -1e9
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple, Any] = OrderedDict()
        self.version = ""

    @property
    def display(self) -> str:
        return self.store.display

    def refresh(self, force: bool = False) -> None:
        """List the root again (at most once per `refresh_s` unless `force`)."""
        with self._lock:
            if not force and time.monotonic() - self._listed < self.refresh_s:
                return
            self._listed = time.monotonic()
            try:
                names = [n for n in self.store.listdir(self.store.root) if n[:1] not in "._"]
            except UserError:
                names = []
            for gone in set(self._runs) - set(names):
                del self._runs[gone]
            self._broken = {k: v for k, v in self._broken.items() if k in names}
            for name in names:
                if name not in self._runs:
                    self._look_at(name)
            ids = sorted(r.run_id for r in self._runs.values()) + sorted(self._broken)
            self.version = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]

    def _look_at(self, name: str) -> None:
        folder = self.store.path(name)
        try:
            if not self.store.exists(f"{folder}/{MANIFEST}"):
                return  # not a run, or one still being written (its manifest comes last)
            self._runs[name] = load_run(self.store, folder)
            self._broken.pop(name, None)
        except UserError as err:
            self._broken[name] = Broken(name, self.store.shown(folder), str(err))

    def runs(self) -> list[Run]:
        """Every readable run, most recent first (as `load_runs` orders them)."""
        self.refresh()
        runs = list(self._runs.values())
        runs.sort(key=lambda r: (str(r.manifest.get("created_at", "")), r.run_id), reverse=True)
        return runs

    def broken(self) -> list[Broken]:
        self.refresh()
        return sorted(self._broken.values(), key=lambda b: b.name)

    def find(self, ref: str) -> Run:
        """A run by id, unique id prefix or "latest"; NotFound (or the folder's damage as a
        `Broken`, raised as DamagedRun) otherwise."""
        runs = self.runs()
        if ref == "latest" and runs:
            return runs[0]
        exact = [r for r in runs if r.run_id == ref]
        hits = exact or [r for r in runs if ref and r.run_id.startswith(ref)]
        if len(hits) == 1:
            return hits[0]
        damaged = self._broken.get(ref)
        if damaged is not None:
            raise DamagedRun(damaged)
        if hits:
            raise NotFound(
                f"run id prefix {ref!r} matches {len(hits)} runs: "
                + ", ".join(r.run_id for r in hits[:5])
            )
        recent = ", ".join(r.run_id for r in runs[:5])
        there = f"; the most recent are: {recent}" if recent else f": {self.display} has no runs"
        raise NotFound(f"no run {ref!r}{there}")

    def cached(self, key: tuple, make: Callable[[], Any]) -> Any:
        """`make()` once per `key` and set of runs (a new run makes every page anew)."""
        full = (self.version, *key)
        with self._lock:
            if full in self._cache:
                self._cache.move_to_end(full)
                return self._cache[full]
        value = make()
        with self._lock:
            self._cache[full] = value
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return value


class DamagedRun(LookupError):
    """The run folder asked for is there but cannot be read."""

    def __init__(self, broken: Broken):
        super().__init__(broken.error)
        self.broken = broken
