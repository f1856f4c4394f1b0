"""Whether an actor computes: what the stall watchdog sees inside the actors.

A stage can be quiet for many minutes while its actors work: a batch of long answers from
a large model on CPUs reaches the driver only when the whole batch is done, and a model
loads for minutes before its first answer. Each actor that holds a model, an index or a
judge publishes the CPU seconds its process has used (every thread: a vLLM engine core
runs in the actor's process), every `BEAT_S`, in Ray's key-value store (it lives in the
GCS, so an actor on any node is seen). The watchdog (lasagna.engine.watchdog) counts an
actor that used `BUSY_SHARE` of a core over a period as progress. An actor that only waits
(a hung request, a lock, a server that does not answer) uses next to none, so a stall is
still found.
"""

from __future__ import annotations

import threading
import time

NAMESPACE = "lasagna"
BEAT_S = 2.0  # how often an actor publishes its CPU seconds
BUSY_SHARE = 0.25  # an actor that used a quarter of a core over a period computes
_publishing: set[str] = set()  # actors of this process that publish already


def _prefix(job_id: str) -> str:
    return f"cpu:{job_id}:"


def publish() -> None:
    """In a Ray actor: publish this process's CPU seconds from now on (once per actor;
    outside an actor, nothing)."""
    try:
        import ray

        if not ray.is_initialized():
            return
        context = ray.get_runtime_context()
        actor = context.get_actor_id()
        if actor is None or actor in _publishing:
            return
        key = _prefix(context.get_job_id()) + actor
    except Exception:  # noqa: BLE001 - publishing is best effort; it never fails an actor
        return
    _publishing.add(actor)
    threading.Thread(target=_publish, args=(key,), name="lasagna-busy", daemon=True).start()


def _publish(key: str) -> None:
    from ray.experimental.internal_kv import _internal_kv_put

    last = ""
    while True:
        used = f"{time.process_time():.1f}"
        if used != last:  # an idle actor writes nothing
            try:
                _internal_kv_put(key, used, namespace=NAMESPACE)
            except Exception:  # noqa: BLE001 - Ray is shutting down
                return
            last = used
        time.sleep(BEAT_S)


def _job(job_id: str | None) -> str | None:
    """`job_id`, else this process's Ray job; None without a Ray (asking for the runtime
    context would start one)."""
    import ray

    if not ray.is_initialized():
        return None
    return job_id or ray.get_runtime_context().get_job_id()


def cpu_seconds(job_id: str | None = None) -> dict[str, float]:
    """The driver's view: each publishing actor of this job (or `job_id`) -> the CPU
    seconds it used; {} when Ray's store cannot be read."""
    try:
        from ray.experimental.internal_kv import _internal_kv_list, internal_kv_get_gcs_client

        job = _job(job_id)
        if job is None:
            return {}
        keys = _internal_kv_list(_prefix(job), namespace=NAMESPACE)
        if not keys:
            return {}
        values = internal_kv_get_gcs_client().internal_kv_multi_get(keys, NAMESPACE.encode())
        return {key.decode(): float(value) for key, value in values.items()}
    except Exception:  # noqa: BLE001 - the watchdog never breaks a trial by itself
        return {}


def computing(before: dict[str, float], now: dict[str, float], secs: float) -> list[str]:
    """The actors that used `BUSY_SHARE` of a core or more over the `secs` between two
    reads (one first seen counts all it used: it started meanwhile)."""
    return [k for k, v in now.items() if v - before.get(k, 0.0) >= BUSY_SHARE * secs > 0]


def forget(job_id: str | None = None) -> None:
    """Remove this job's entries (a run on a long-lived cluster leaves none behind)."""
    try:
        from ray.experimental.internal_kv import _internal_kv_del

        job = _job(job_id)
        if job is not None:
            _internal_kv_del(_prefix(job), del_by_prefix=True, namespace=NAMESPACE)
    except Exception:  # noqa: BLE001 - Ray already gone: nothing is left to remove
        return
