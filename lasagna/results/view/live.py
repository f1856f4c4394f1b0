"""The live panel of `lasagna view`: running sweeps and evaluations under the root, from
their status files (`lasagna.results.status`) and the checkpoints of the trials they have
finished: trials done / total, failures, rate, time left, the current trial's stages, and
the latest finished trials with their main metric.

A run whose driver is gone without saying so (killed) is shown as stopped: on this host
its process is looked up; elsewhere a status silent for `SILENT_S` is shown as silent.
Finished runs stay in the panel for `RECENT_S`, with a link to the run they wrote.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

from lasagna.common.processes import alive
from lasagna.results.fs import Store
from lasagna.results.layout import CHECKPOINTS, TRIAL_JSON
from lasagna.results.model import failed_rows, safe_name
from lasagna.results.report.collect import metric_order, num
from lasagna.results.status import read_statuses

SILENT_S = 600.0
RECENT_S = 900.0
LATEST = 6  # finished trials listed per run


def duration(seconds: float | None) -> str:
    """'42 s', '3 min 05 s', '2 h 10 min'; '-' when unknown."""
    if seconds is None or seconds < 0:
        return "-"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _alive(doc: dict[str, Any], now: float) -> str:
    """ "running", "stopped" (its process is gone) or "silent" (no news from another host)."""
    if doc.get("host") == socket.gethostname():
        pid = doc.get("pid")
        return "stopped" if isinstance(pid, int) and pid > 0 and not alive(pid) else "running"
    return "running" if now - float(doc.get("updated_epoch") or 0) < SILENT_S else "silent"


class Live:
    """Reads the statuses (and the finished trials' checkpoints, each once) of one root."""

    def __init__(self, store: Store):
        self.store = store
        self._trials: dict[str, dict[str, Any] | None] = {}
        self._lock = threading.Lock()

    def trial(self, key: str) -> dict[str, Any] | None:
        """A finished trial's system, benchmark and main metric, from its checkpoint."""
        with self._lock:
            if key in self._trials:
                return self._trials[key]
        path = self.store.path(CHECKPOINTS, safe_name(key), TRIAL_JSON)
        try:
            meta = json.loads(self.store.read_bytes(path))
        except (OSError, ValueError):
            return None  # not there (yet): asked again next time
        metrics = meta.get("metrics") or {}
        names = metric_order(list(metrics), str(meta.get("track", "")))
        main = names[0] if names else None
        out = {
            "key": key,
            "system": meta.get("system"),
            "benchmark": (meta.get("benchmark") or {}).get("name"),
            "metric": main,
            "value": num(metrics.get(main)) if main else None,
            "rows": (meta.get("counts") or {}).get("rows"),
            "failed": failed_rows(meta.get("counts") or {}),
        }
        with self._lock:
            self._trials[key] = out
        return out

    def runs(self, landed: set[str]) -> list[dict[str, Any]]:
        """The panel's lines, running first; `landed`: ids of the runs the index holds."""
        now = time.time()
        out = []
        for doc in read_statuses(self.store):
            state = str(doc.get("state"))
            if state == "running":
                state = _alive(doc, now)
            updated = float(doc.get("updated_epoch", now))
            if state != "running" and now - updated > RECENT_S:
                continue
            out.append(self._line(doc, state, now, landed))
        out.sort(key=lambda r: (r["state"] != "running", -r["started_epoch"]))
        return out

    def _line(self, doc: dict[str, Any], state: str, now: float, landed: set[str]) -> dict:
        total = int(doc.get("total") or 0)
        ran, restored, failed = (int(doc.get(k) or 0) for k in ("done", "restored", "failed"))
        done = ran + restored
        started = float(doc.get("started_epoch") or now)
        end = now if state == "running" else float(doc.get("updated_epoch") or now)
        elapsed = max(end - started, 0.0)
        seconds = [float(s) for s in doc.get("seconds") or []]
        mean = sum(seconds) / len(seconds) if seconds else None
        left = max(total - done - failed, 0)
        current = doc.get("current")
        eta = None
        if state == "running" and mean is not None:
            into = now - float(current["started_epoch"]) if current else 0.0
            eta = max(left * mean - min(into, mean), 0.0)
        elif state == "running" and ran and elapsed:
            eta = left * elapsed / ran
        stages = []
        for s in doc.get("stages") or []:
            secs, n, of = float(s.get("seconds") or 0), int(s["done"]), int(s["total"])
            rate = n / secs if secs > 0 and n else None
            stages.append(
                s
                | {
                    "pct": 100 * n / of if of else 0,
                    "rate": f"{rate:.1f}/s" if rate else "-",
                    "eta": duration((of - n) / rate) if rate and not s.get("ended") else "-",
                }
            )
        latest = [t for k in reversed(doc.get("finished") or []) if (t := self.trial(k))]
        run = doc.get("run")
        return {
            "run_id": doc["run_id"],
            "kind": doc.get("kind", "sweep"),
            "name": doc.get("name") or doc.get("profile"),
            "command": doc.get("command"),
            "host": doc.get("host"),
            "state": state,
            "reason": doc.get("reason"),
            "started_epoch": started,
            "started_at": doc.get("started_at"),
            "total": total,
            "done": done,
            "ran": ran,
            "restored": restored,
            "failed": failed,
            "pct": 100 * done / total if total else 100.0,
            "pct_failed": 100 * failed / total if total else 0.0,
            "rate": f"{ran / elapsed * 60:.1f} trials/min" if ran and elapsed >= 1 else "-",
            "eta": duration(eta) if eta is not None else "-",
            "elapsed": duration(elapsed),
            "silent_for": duration(now - float(doc.get("updated_epoch") or now)),
            "current": current,
            "stages": stages,
            "failures": list(reversed(doc.get("failures") or []))[:LATEST],
            "latest": latest[:LATEST],
            "run": run,
            "landed": bool(run) and run in landed,
        }
